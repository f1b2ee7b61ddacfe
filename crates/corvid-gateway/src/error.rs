//! The one place failures become HTTP answers, in the caller's dialect. An `ApiError` is a
//! canonical [`WireError`] (kind, wording, exact status, code, param) plus what only HTTP
//! carries (`Retry-After`) and the dialect to answer in; its status and body are always
//! `corvid_wire::codec::encode_error`'s, the same renderer the translation uses for an
//! upstream's error, so one failure reads the same on every path. OpenAI's
//! `{"error":{"message","type","param","code"}}` (Zed reads `error.message`; it is always there),
//! Anthropic's `{"type":"error","error":{"type","message"}}` in Anthropic's own words,
//! Gemini's `{"error":{"code","message","status"}}`.

use std::borrow::Cow;
use std::time::Duration;

use axum::Json;
use axum::response::{IntoResponse, Response};
use corvid_auth::AuthError;
use corvid_providers::{ProviderError, RouteError};
use corvid_wire::model::WireError;
use corvid_wire::{Dialect, codec};
use http::{HeaderValue, StatusCode};
use serde_json::Value;

#[cfg(test)]
mod tests;

/// An error answer.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// What failed; rendered by `codec::encode_error`.
    pub error: WireError,
    /// Sent as the `Retry-After` header (never in the body).
    pub retry_after: Option<Duration>,
    /// The dialect the answer is written in.
    pub dialect: Dialect,
}

impl ApiError {
    /// An answer with exactly `status`, of the kind the status means.
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self::from_wire(WireError::for_status(status.as_u16(), message))
    }

    /// A canonical error as an answer (OpenAI's dialect until [`ApiError::in_dialect`]).
    pub fn from_wire(error: WireError) -> Self {
        Self {
            error,
            retry_after: None,
            dialect: Dialect::OpenAiChat,
        }
    }

    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, message)
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, message)
    }

    /// With a code (any JSON; `null` or `None` leaves it unset).
    pub fn with_code(mut self, code: impl Into<Value>) -> Self {
        self.error = self.error.with_code(code);
        self
    }

    /// With the request field at fault.
    pub fn with_param(mut self, param: impl Into<Cow<'static, str>>) -> Self {
        self.error = self.error.with_param(param);
        self
    }

    /// The same error, answered in `dialect`.
    pub fn in_dialect(mut self, dialect: Dialect) -> Self {
        self.dialect = dialect;
        self
    }

    pub fn message(&self) -> &str {
        &self.error.message
    }

    /// The failure's own status, whatever the dialect (the ledger's): the exact one, else
    /// the kind's usual one.
    pub fn status(&self) -> StatusCode {
        let status = self.error.status.unwrap_or(self.error.kind.status());
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }

    /// The status and body sent: `codec::encode_error`'s for the dialect (so Anthropic
    /// clients get 529 `overloaded_error` for an unavailable upstream, as Anthropic answers).
    pub fn rendered(&self) -> (StatusCode, Value) {
        let (status, body) = codec::encode_error(self.dialect, &self.error);
        let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (status, body)
    }

    /// Maps an upstream failure. `oauth` says whether the credential is a SuperGrok sign-in,
    /// which changes what a 403 means.
    pub fn from_provider(error: &ProviderError, oauth: bool) -> Self {
        match error {
            ProviderError::Status {
                status,
                body,
                retry_after,
            } => {
                let (message, code) = upstream_message(body, *status);
                if *status == StatusCode::FORBIDDEN && oauth {
                    return Self::forbidden(format!(
                        "{} (xAI said: {message})",
                        corvid_auth::plan_lacks_api_access_message()
                    ))
                    .with_code(code);
                }
                let mut api = Self::new(*status, message).with_code(code);
                api.retry_after = *retry_after;
                api
            }
            // The causes say why (DNS, refused, TLS); the top line alone never does. A
            // connection that failed is an `api_error` with its cause for every dialect, never
            // Anthropic's "overloaded" (which tells Claude Code the model is busy).
            ProviderError::Connect { .. } | ProviderError::Transport { .. } => {
                let mut wire = WireError::new(
                    corvid_wire::model::ErrorKind::Api,
                    corvid_providers::error_chain(error),
                );
                wire.status = Some(StatusCode::BAD_GATEWAY.as_u16());
                Self::from_wire(wire)
            }
            ProviderError::Timeout { url } => Self::new(
                StatusCode::GATEWAY_TIMEOUT,
                format!("the upstream at {url} did not answer in time"),
            ),
            ProviderError::InvalidCredential => {
                Self::new(StatusCode::UNAUTHORIZED, error.to_string())
            }
            ProviderError::InvalidUrl { .. } => {
                Self::new(StatusCode::INTERNAL_SERVER_ERROR, error.to_string())
            }
            ProviderError::Auth(auth) => Self::from_auth(auth),
            ProviderError::Route(route) => Self::from_route(route),
            // A backend's own refusal (the Zed account), in its words, with its wait.
            ProviderError::Refused(refusal) => {
                let mut api = Self::new(refusal.status, refusal.message.clone());
                api.retry_after = refusal.retry_after;
                api
            }
        }
    }

    /// A model that could not be routed.
    pub fn from_route(error: &RouteError) -> Self {
        let message = error.to_string();
        let api = match error {
            RouteError::UnknownProvider { .. } | RouteError::UnknownModel { .. } => {
                Self::not_found(message).with_code("model_not_found")
            }
            RouteError::Ambiguous { .. } => Self::invalid_request(message),
            RouteError::Unavailable { .. } => Self::new(StatusCode::UNAUTHORIZED, message),
        };
        api.with_param("model")
    }

    /// A credential that could not be had: 502 when trying later may work, else 401.
    pub fn from_auth(error: &AuthError) -> Self {
        let status = if error.is_retryable() {
            StatusCode::BAD_GATEWAY
        } else {
            StatusCode::UNAUTHORIZED
        };
        Self::new(status, error.to_string())
    }
}

/// An upstream's error answer relayed as it came — status, body, `Retry-After` — when its body
/// is already an error of the caller's dialect (same-dialect pass-through): rebuilding it would
/// drop what only the provider's own shape carries (Gemini's `details`, with its `RetryInfo`;
/// Anthropic's `request_id`). A body in another shape (xAI's `{"code","error":"text"}` on the
/// OpenAI route) is rebuilt by [`ApiError::from_provider`] instead.
pub(crate) fn relayed_upstream_error(error: &ProviderError, inbound: Dialect) -> Option<Response> {
    let ProviderError::Status {
        status,
        body,
        retry_after,
    } = error
    else {
        return None;
    };
    let value: Value = serde_json::from_slice(body).ok()?;
    let error = value.get("error")?;
    let message = error.get("message").and_then(Value::as_str).is_some();
    let own_shape = match inbound {
        Dialect::Gemini => message && error.get("code").is_some_and(Value::is_u64),
        Dialect::Anthropic => message && value.get("type").and_then(Value::as_str) == Some("error"),
        Dialect::OpenAiChat | Dialect::OpenAiResponses => message,
    };
    if !own_shape {
        return None;
    }
    let mut response = (*status, Json(value)).into_response();
    if let Some(wait) = retry_after {
        insert_retry_after(&mut response, *wait);
    }
    Some(response)
}

/// Sets `Retry-After` in whole seconds: Zed parses whole seconds only, so a fraction rounds
/// up and a real wait is never sent as 0.
pub(crate) fn insert_retry_after(response: &mut Response, wait: Duration) {
    let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    if let Ok(value) = HeaderValue::from_str(&seconds.to_string()) {
        response
            .headers_mut()
            .insert(http::header::RETRY_AFTER, value);
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, body) = self.rendered();
        let mut response = (status, Json(body)).into_response();
        if let Some(wait) = self.retry_after {
            insert_retry_after(&mut response, wait);
        }
        response
    }
}

/// Pulls the message and code out of an upstream error body: xAI's `{"code","error":"text"}`,
/// OpenAI's `{"error":{"message","code"}}`, or plain text.
fn upstream_message(body: &[u8], status: StatusCode) -> (String, Option<Value>) {
    const LIMIT: usize = 2000;
    if let Ok(value) = serde_json::from_slice::<Value>(body) {
        let code = value
            .get("code")
            .or_else(|| value.pointer("/error/code"))
            .filter(|code| !code.is_null())
            .cloned();
        let message = value
            .get("error")
            .and_then(Value::as_str)
            .or_else(|| value.pointer("/error/message").and_then(Value::as_str))
            .or_else(|| value.get("message").and_then(Value::as_str))
            .or_else(|| value.get("detail").and_then(Value::as_str));
        if let Some(message) = message {
            return (truncate(message, LIMIT), code);
        }
    }
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.is_empty() {
        let reason = status.canonical_reason().unwrap_or("error");
        return (
            format!("upstream answered {} {reason}", status.as_u16()),
            None,
        );
    }
    (truncate(text, LIMIT), None)
}

fn truncate(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

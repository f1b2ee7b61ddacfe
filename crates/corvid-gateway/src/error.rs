//! The one place failures become HTTP answers, in the caller's dialect: OpenAI
//! `{"error":{"message","type","code","param"}}` (Zed reads `error.message`; it is always
//! there), Anthropic `{"type":"error","error":{"type","message"}}`, Gemini
//! `{"error":{"code","message","status"}}`.

use std::time::Duration;

use axum::Json;
use axum::response::{IntoResponse, Response};
use corvid_auth::AuthError;
use corvid_providers::{ProviderError, RouteError};
use http::{HeaderValue, StatusCode};
use serde_json::{Value, json};

use corvid_wire::Dialect;

/// An error answer.
#[derive(Debug, Clone)]
pub struct ApiError {
    pub status: StatusCode,
    /// OpenAI's `error.type`: `invalid_request_error`, `auth_error`, `not_found_error`, …
    pub kind: &'static str,
    pub message: String,
    /// The upstream's own code, when it gave one (boxed: a `Value` is large and errors travel
    /// in `Result`s on the request path).
    pub code: Option<Box<Value>>,
    /// The request field at fault, when known.
    pub param: Option<&'static str>,
    pub retry_after: Option<Duration>,
    /// The dialect the answer is written in.
    pub dialect: Dialect,
}

impl ApiError {
    /// The same error, answered in `dialect`.
    pub fn in_dialect(mut self, dialect: Dialect) -> Self {
        self.dialect = dialect;
        self
    }

    /// The status sent: Anthropic clients get 529 `overloaded_error` for an unavailable
    /// upstream, as Anthropic itself answers.
    pub fn wire_status(&self) -> StatusCode {
        match (self.dialect, self.status.as_u16()) {
            (Dialect::Anthropic, 502 | 503) => StatusCode::from_u16(529).unwrap_or(self.status),
            _ => self.status,
        }
    }

    pub fn new(status: StatusCode, kind: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            kind,
            message: message.into(),
            code: None,
            param: None,
            retry_after: None,
            dialect: Dialect::OpenAiChat,
        }
    }

    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_request_error", message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found_error", message)
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, "permission_error", message)
    }

    /// The JSON body (also used for in-stream error events).
    pub fn body(&self) -> Value {
        match self.dialect {
            Dialect::OpenAiChat | Dialect::OpenAiResponses => json!({
                "error": {
                    "message": self.message,
                    "type": self.kind,
                    "code": self.code.as_deref().cloned().unwrap_or(Value::Null),
                    "param": self.param,
                }
            }),
            Dialect::Anthropic => json!({
                "type": "error",
                "error": {"type": anthropic_type(self.wire_status()), "message": self.message}
            }),
            Dialect::Gemini => json!({
                "error": {
                    "code": self.status.as_u16(),
                    "message": self.message,
                    "status": google_status(self.status),
                }
            }),
        }
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
                    let mut api = Self::forbidden(format!(
                        "{} (xAI said: {message})",
                        corvid_auth::plan_lacks_api_access_message()
                    ));
                    api.code = code.map(Box::new);
                    return api;
                }
                let mut api = Self::new(*status, type_for_status(*status), message);
                api.code = code.map(Box::new);
                api.retry_after = *retry_after;
                api
            }
            // The causes say why (DNS, refused, TLS); the top line alone never does.
            ProviderError::Connect { .. } => Self::new(
                StatusCode::BAD_GATEWAY,
                "api_error",
                corvid_providers::error_chain(error),
            ),
            ProviderError::Timeout { url } => Self::new(
                StatusCode::GATEWAY_TIMEOUT,
                "timeout_error",
                format!("the upstream at {url} did not answer in time"),
            ),
            ProviderError::Transport { .. } => Self::new(
                StatusCode::BAD_GATEWAY,
                "api_error",
                corvid_providers::error_chain(error),
            ),
            ProviderError::InvalidCredential => {
                Self::new(StatusCode::UNAUTHORIZED, "auth_error", error.to_string())
            }
            ProviderError::InvalidUrl { .. } => Self::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "api_error",
                error.to_string(),
            ),
            ProviderError::Auth(auth) => Self::from_auth(auth),
            // A backend's own refusal (the Zed account), in its words, with its wait.
            ProviderError::Refused(refusal) => {
                let mut api = Self::new(
                    refusal.status,
                    type_for_status(refusal.status),
                    refusal.message.clone(),
                );
                api.retry_after = refusal.retry_after;
                api
            }
        }
    }

    /// A model that could not be routed.
    pub fn from_route(error: &RouteError) -> Self {
        let message = error.to_string();
        let mut api = match error {
            RouteError::UnknownProvider { .. } | RouteError::UnknownModel { .. } => {
                Self::new(StatusCode::NOT_FOUND, "not_found_error", message)
            }
            RouteError::Ambiguous { .. } => Self::invalid_request(message),
            RouteError::Unavailable { .. } => {
                Self::new(StatusCode::UNAUTHORIZED, "auth_error", message)
            }
        };
        if matches!(
            error,
            RouteError::UnknownProvider { .. } | RouteError::UnknownModel { .. }
        ) {
            api.code = Some(Box::new(Value::from("model_not_found")));
        }
        api.param = Some("model");
        api
    }

    pub fn from_auth(error: &AuthError) -> Self {
        let status = if error.is_retryable() {
            StatusCode::BAD_GATEWAY
        } else {
            StatusCode::UNAUTHORIZED
        };
        let kind = if error.is_retryable() {
            "api_error"
        } else {
            "auth_error"
        };
        Self::new(status, kind, error.to_string())
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
        let mut response = (self.wire_status(), Json(self.body())).into_response();
        if let Some(wait) = self.retry_after {
            insert_retry_after(&mut response, wait);
        }
        response
    }
}

/// OpenAI's error type for a status.
pub(crate) fn type_for_status(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 | 413 | 422 => "invalid_request_error",
        401 => "auth_error",
        403 => "permission_error",
        404 => "not_found_error",
        408 | 504 => "timeout_error",
        429 => "rate_limit_error",
        _ => "api_error",
    }
}

/// Anthropic's error type for a status (`wire-formats.md` §6.8).
fn anthropic_type(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 | 409 | 422 => "invalid_request_error",
        401 => "authentication_error",
        402 => "billing_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        504 | 408 => "timeout_error",
        529 | 502 | 503 => "overloaded_error",
        _ => "api_error",
    }
}

/// Google's canonical status name for a status.
fn google_status(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 | 413 | 422 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        409 => "ABORTED",
        429 => "RESOURCE_EXHAUSTED",
        501 => "UNIMPLEMENTED",
        503 | 502 | 529 => "UNAVAILABLE",
        504 | 408 => "DEADLINE_EXCEEDED",
        _ => "INTERNAL",
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

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use pretty_assertions::assert_eq;

    use super::*;

    fn status(code: u16, body: &str) -> ProviderError {
        ProviderError::Status {
            status: StatusCode::from_u16(code).unwrap(),
            body: Bytes::from(body.to_owned()),
            retry_after: None,
        }
    }

    #[test]
    fn rewraps_xai_error_bodies() {
        let api = ApiError::from_provider(
            &status(
                400,
                r#"{"code":"Client specified an invalid argument","error":"Incorrect API key provided"}"#,
            ),
            false,
        );
        assert_eq!(
            api.body(),
            json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error",
                             "code": "Client specified an invalid argument", "param": null}})
        );
    }

    #[test]
    fn keeps_openai_shaped_bodies_and_handles_text() {
        let api = ApiError::from_provider(
            &status(
                429,
                r#"{"error":{"message":"slow down","type":"rate_limit","code":"rate_limit_exceeded"}}"#,
            ),
            false,
        );
        assert_eq!(api.message, "slow down");
        assert_eq!(api.kind, "rate_limit_error");
        assert_eq!(api.code.as_deref(), Some(&json!("rate_limit_exceeded")));

        let api = ApiError::from_provider(&status(502, "<html>bad gateway</html>"), false);
        assert_eq!(api.message, "<html>bad gateway</html>");
        let api = ApiError::from_provider(&status(503, ""), false);
        assert_eq!(api.message, "upstream answered 503 Service Unavailable");
    }

    #[test]
    fn oauth_403_explains_the_plan() {
        let api = ApiError::from_provider(
            &status(403, r#"{"code":"permission-denied","error":"nope"}"#),
            true,
        );
        assert_eq!(api.status, StatusCode::FORBIDDEN);
        assert_eq!(api.kind, "permission_error");
        assert!(api.message.contains("api_key"), "{}", api.message);
        assert!(api.message.contains("nope"));
        let api = ApiError::from_provider(&status(403, r#"{"error":"nope"}"#), false);
        assert_eq!(api.message, "nope");
    }

    #[test]
    fn each_dialect_gets_its_own_shape() {
        let error = ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "api_error", "busy");
        assert_eq!(
            error
                .clone()
                .in_dialect(Dialect::Anthropic)
                .wire_status()
                .as_u16(),
            529
        );
        assert_eq!(
            error.clone().in_dialect(Dialect::Anthropic).body(),
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "busy"}})
        );
        assert_eq!(
            error.clone().in_dialect(Dialect::Gemini).body(),
            json!({"error": {"code": 503, "message": "busy", "status": "UNAVAILABLE"}})
        );
        assert_eq!(error.wire_status().as_u16(), 503);
        let missing = ApiError::new(StatusCode::UNAUTHORIZED, "auth_error", "no key")
            .in_dialect(Dialect::Anthropic);
        assert_eq!(missing.body()["error"]["type"], "authentication_error");
    }

    #[test]
    fn an_error_already_in_the_callers_dialect_is_relayed_as_it_came() {
        let gemini = r#"{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"45s"}]}}"#;
        let mut error = status(429, gemini);
        if let ProviderError::Status { retry_after, .. } = &mut error {
            *retry_after = Some(Duration::from_secs(45));
        }
        let response = relayed_upstream_error(&error, Dialect::Gemini).unwrap();
        assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(response.headers()[http::header::RETRY_AFTER], "45");
        let anthropic = r#"{"type":"error","error":{"type":"invalid_request_error","message":"bad"},"request_id":"req_1"}"#;
        assert!(relayed_upstream_error(&status(400, anthropic), Dialect::Anthropic).is_some());
        // Another dialect's shape, or xAI's flat one, is rebuilt.
        assert!(relayed_upstream_error(&status(400, anthropic), Dialect::Gemini).is_none());
        let xai = r#"{"code":"bad","error":"Incorrect API key provided"}"#;
        assert!(relayed_upstream_error(&status(400, xai), Dialect::OpenAiChat).is_none());
        assert!(relayed_upstream_error(&status(502, "<html>"), Dialect::Gemini).is_none());
    }

    #[test]
    fn retry_after_is_whole_seconds() {
        let mut api = ApiError::new(StatusCode::TOO_MANY_REQUESTS, "rate_limit_error", "x");
        api.retry_after = Some(Duration::from_millis(1200));
        let response = api.into_response();
        assert_eq!(response.headers()[http::header::RETRY_AFTER], "2");
    }
}

//! Error bodies: OpenAI's `{"error":{"message","type","param","code"}}`, and on the way in also
//! xAI's and Ollama's `{"code","error":"<string>"}` and vLLM's top-level `{"message","type"}`.

use serde::Serialize;
use serde_json::Value;

use crate::model::{ErrorKind, WireError};

/// The longest stretch of a non-JSON error body kept as the message (an HTML proxy page).
const MAX_RAW_MESSAGE: usize = 1000;

/// An upstream error reply (status + body) → canonical, keeping the upstream's message and
/// code. The kind comes from the status (`wire-formats.md` §6.8); an unusual 4xx (xAI's 410)
/// is refined by the body's `type`/`code`, else counts as an invalid request.
pub fn decode_error(status: u16, body: &[u8]) -> WireError {
    let fields = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|value| ErrorFields::read(&value));
    let by_body = fields.as_ref().and_then(ErrorFields::kind);
    let kind = match ErrorKind::from_status(status) {
        ErrorKind::Api if (400..500).contains(&status) => {
            by_body.unwrap_or(ErrorKind::InvalidRequest)
        }
        ErrorKind::Api if status < 400 => by_body.unwrap_or(ErrorKind::Api),
        kind => kind,
    };
    match fields {
        Some(fields) => WireError::new(
            kind,
            fields
                .message
                .unwrap_or_else(|| format!("upstream answered HTTP {status}")),
        )
        .with_code(fields.code),
        None => WireError::new(kind, raw_message(status, body)),
    }
}

/// Canonical error → the status and body an OpenAI client (Chat Completions or Responses)
/// expects. Zed reads `error.message` and classifies by status; the `code` is the upstream's,
/// kept as it came; the status is the error's exact one when it has one.
pub fn encode_error(error: &WireError) -> (u16, Value) {
    let body = ErrorBody::new(error);
    // Cannot fail: strings and a JSON value.
    let body = serde_json::to_value(&body).unwrap_or(Value::Null);
    (error.status.unwrap_or(error.kind.status()), body)
}

/// The error as it is read from a stream's `data: {"error":…}` line, where no status exists.
pub(crate) fn from_stream(value: &Value) -> Option<WireError> {
    let fields = ErrorFields::read(value)?;
    let kind = fields.kind().unwrap_or(ErrorKind::Api);
    Some(
        WireError::new(
            kind,
            fields
                .message
                .unwrap_or_else(|| "the upstream stream failed".to_owned()),
        )
        .with_code(fields.code),
    )
}

/// `{"error":{"message","type","param","code"}}`, the body and the in-stream error line alike.
#[derive(Debug, Serialize)]
pub(crate) struct ErrorBody<'a> {
    error: ErrorObject<'a>,
}

#[derive(Debug, Serialize)]
struct ErrorObject<'a> {
    message: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    param: Option<&'a str>,
    code: Option<&'a Value>,
}

impl<'a> ErrorBody<'a> {
    pub(crate) fn new(error: &'a WireError) -> Self {
        Self {
            error: ErrorObject {
                message: &error.message,
                kind: error_type(error.kind),
                param: error.param.as_deref(),
                code: error.code.as_deref(),
            },
        }
    }
}

/// OpenAI's `error.type` for a kind (also the Responses stream's fallback code).
pub(crate) fn error_type(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::InvalidRequest | ErrorKind::RequestTooLarge => "invalid_request_error",
        ErrorKind::Authentication => "authentication_error",
        ErrorKind::Permission => "permission_error",
        ErrorKind::NotFound => "not_found_error",
        ErrorKind::RateLimited => "rate_limit_error",
        ErrorKind::Api | ErrorKind::Overloaded => "server_error",
        ErrorKind::Timeout => "timeout_error",
    }
}

/// What an error body says, whatever its shape.
struct ErrorFields {
    message: Option<String>,
    kind: Option<String>,
    code: Option<String>,
}

impl ErrorFields {
    fn read(value: &Value) -> Option<Self> {
        if let Value::Array(items) = value {
            // Some OpenAI-compatible servers wrap the body in a one-element array.
            return Self::read(items.first()?);
        }
        let text =
            |value: &Value, key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
        match value.get("error") {
            Some(error @ Value::Object(_)) => Some(Self {
                message: text(error, "message"),
                kind: text(error, "type"),
                code: code(error.get("code")),
            }),
            // xAI and Ollama: `{"code":"…","error":"<message>"}`.
            Some(Value::String(message)) => Some(Self {
                message: Some(message.clone()),
                kind: None,
                code: code(value.get("code")),
            }),
            // vLLM: `{"object":"error","message","type","code"}`.
            _ => value
                .get("message")
                .and_then(Value::as_str)
                .map(|message| Self {
                    message: Some(message.to_owned()),
                    kind: text(value, "type"),
                    code: code(value.get("code")),
                }),
        }
    }

    /// The kind the body's `type`, else its `code`, names.
    fn kind(&self) -> Option<ErrorKind> {
        self.kind
            .as_deref()
            .and_then(kind_from_name)
            .or_else(|| self.code.as_deref().and_then(kind_from_name))
    }
}

/// A `code` as text: a string, or a number (vLLM puts the status there).
fn code(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::String(code) => Some(code.clone()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

/// The kind an error `type` or `code` names: OpenAI, Anthropic, vLLM and gRPC names, xAI's
/// gRPC status descriptions (`"Client specified an invalid argument"`), or a numeric status.
fn kind_from_name(name: &str) -> Option<ErrorKind> {
    if let Ok(status) = name.parse::<u16>() {
        return Some(ErrorKind::from_status(status));
    }
    let name = name.to_ascii_lowercase();
    let grpc = match name.as_str() {
        "client specified an invalid argument"
        | "the system is not in a state required for the operation's execution" => {
            Some(ErrorKind::InvalidRequest)
        }
        "the request does not have valid authentication credentials for the operation" => {
            Some(ErrorKind::Authentication)
        }
        "the caller does not have permission to execute the specified operation" => {
            Some(ErrorKind::Permission)
        }
        "some requested entity was not found" => Some(ErrorKind::NotFound),
        "some resource has been exhausted" => Some(ErrorKind::RateLimited),
        "the service is currently unavailable" => Some(ErrorKind::Overloaded),
        "deadline expired before operation could complete" => Some(ErrorKind::Timeout),
        "internal error" => Some(ErrorKind::Api),
        _ => None,
    };
    if grpc.is_some() {
        return grpc;
    }
    let name = name.replace(['-', ' '], "_");
    Some(match name.as_str() {
        "invalid_request_error"
        | "invalid_request"
        | "invalid_argument"
        | "badrequesterror"
        | "bad_request"
        | "context_length_exceeded"
        | "failed_precondition" => ErrorKind::InvalidRequest,
        "authentication_error"
        | "auth_error"
        | "invalid_api_key"
        | "unauthenticated"
        | "authenticationerror" => ErrorKind::Authentication,
        "permission_error" | "permission_denied" | "billing_error" | "permissiondeniederror" => {
            ErrorKind::Permission
        }
        "not_found_error" | "not_found" | "model_not_found" | "notfounderror" => {
            ErrorKind::NotFound
        }
        "request_too_large" => ErrorKind::RequestTooLarge,
        "rate_limit_error"
        | "rate_limit_exceeded"
        | "insufficient_quota"
        | "resource_exhausted"
        | "ratelimiterror" => ErrorKind::RateLimited,
        "overloaded_error" | "service_unavailable" | "unavailable" => ErrorKind::Overloaded,
        "timeout_error" | "timeout" | "deadline_exceeded" => ErrorKind::Timeout,
        "server_error" | "api_error" | "internal_error" | "internal" | "internalservererror" => {
            ErrorKind::Api
        }
        _ => return None,
    })
}

/// A non-JSON body as the message: its text, trimmed and cut at [`MAX_RAW_MESSAGE`] bytes (on
/// a character boundary); the status when it is empty.
fn raw_message(status: u16, body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.is_empty() {
        return format!("upstream answered HTTP {status}");
    }
    let mut end = text.len().min(MAX_RAW_MESSAGE);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

//! Gemini errors: `{"error":{"code":400,"message":"…","status":"INVALID_ARGUMENT"}}` (§6.8).

use serde_json::{Value, json};

use crate::model::{ErrorKind, WireError};

/// The Google RPC status names a client may see, for keeping an upstream's own status.
const STATUSES: [&str; 16] = [
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
];

/// An upstream error reply → canonical. The kind follows the HTTP status (§6.8); when the
/// status says nothing specific (a 500, or a 200 carrying an error), the Google status name
/// decides. The message is kept word for word and `code` is the Google status name.
pub fn decode_error(status: u16, body: &[u8]) -> WireError {
    let parsed: Option<Value> = serde_json::from_slice(body).ok();
    let error = parsed
        .as_ref()
        .and_then(|value| value.get("error"))
        .filter(|error| error.is_object());
    match error {
        Some(error) => error_from_object(status, error),
        None => {
            let text = String::from_utf8_lossy(body).trim().to_owned();
            let message = if text.is_empty() {
                format!("Gemini answered HTTP {status}")
            } else {
                text
            };
            WireError::new(ErrorKind::from_status(status), message)
        }
    }
}

/// How long a Gemini 429 asks the caller to wait, in whole seconds (rounded up), from the
/// `google.rpc.RetryInfo` entry of `error.details` (`"retryDelay": "27.5s"`). Gemini sends no
/// `Retry-After` header; this is its stand-in.
pub fn retry_after_seconds(body: &[u8]) -> Option<u64> {
    let value: Value = serde_json::from_slice(body).ok()?;
    let details = value.get("error")?.get("details")?.as_array()?;
    let delay = details.iter().find_map(|detail| {
        let kind = detail.get("@type").and_then(Value::as_str)?;
        kind.ends_with("google.rpc.RetryInfo")
            .then(|| detail.get("retryDelay").and_then(Value::as_str))
            .flatten()
    })?;
    let number = delay.strip_suffix('s')?;
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let whole: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    if !fraction.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let round_up = fraction.chars().any(|c| c != '0');
    Some(whole + u64::from(round_up))
}

/// The `error` object of a reply or of a stream line → canonical; `status` is the HTTP
/// status (0 inside a stream, where the object's own `code` stands for it).
pub(crate) fn error_from_object(status: u16, error: &Value) -> WireError {
    let google_status = error.get("status").and_then(Value::as_str);
    let http = match status {
        0 => error
            .get("code")
            .and_then(Value::as_u64)
            .and_then(|code| u16::try_from(code).ok())
            .unwrap_or(0),
        status => status,
    };
    let by_status = ErrorKind::from_status(http);
    let kind = match (by_status, google_status.and_then(kind_from_google)) {
        (ErrorKind::Api, Some(kind)) => kind,
        (kind, _) => kind,
    };
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .filter(|message| !message.is_empty())
        .map_or_else(|| format!("Gemini answered HTTP {http}"), str::to_owned);
    WireError::new(kind, message).with_code(google_status)
}

fn kind_from_google(status: &str) -> Option<ErrorKind> {
    Some(match status {
        "INVALID_ARGUMENT" | "FAILED_PRECONDITION" | "OUT_OF_RANGE" => ErrorKind::InvalidRequest,
        "UNAUTHENTICATED" => ErrorKind::Authentication,
        "PERMISSION_DENIED" => ErrorKind::Permission,
        "NOT_FOUND" => ErrorKind::NotFound,
        "RESOURCE_EXHAUSTED" => ErrorKind::RateLimited,
        "UNAVAILABLE" => ErrorKind::Overloaded,
        "DEADLINE_EXCEEDED" => ErrorKind::Timeout,
        "INTERNAL" | "UNKNOWN" | "DATA_LOSS" => ErrorKind::Api,
        _ => return None,
    })
}

/// The HTTP status and Google status name for a kind. Google never answers 413: a request too
/// large is an `INVALID_ARGUMENT`.
fn google_status(kind: ErrorKind) -> (u16, &'static str) {
    match kind {
        ErrorKind::InvalidRequest | ErrorKind::RequestTooLarge => (400, "INVALID_ARGUMENT"),
        ErrorKind::Authentication => (401, "UNAUTHENTICATED"),
        ErrorKind::Permission => (403, "PERMISSION_DENIED"),
        ErrorKind::NotFound => (404, "NOT_FOUND"),
        ErrorKind::RateLimited => (429, "RESOURCE_EXHAUSTED"),
        ErrorKind::Overloaded => (503, "UNAVAILABLE"),
        ErrorKind::Timeout => (504, "DEADLINE_EXCEEDED"),
        ErrorKind::Api => (500, "INTERNAL"),
    }
}

/// Canonical error → `(status, body)` for a Gemini client. A Google status name carried in
/// `code` (an upstream Gemini's own, e.g. `FAILED_PRECONDITION`) is kept when it belongs to the
/// same kind; an exact HTTP status the error carries is kept (as the body's `code` too).
pub fn encode_error(error: &WireError) -> (u16, Value) {
    (http_status(error), error_body(error))
}

fn http_status(error: &WireError) -> u16 {
    error.status.unwrap_or(google_status(error.kind).0)
}

/// Google's name for an exact HTTP status where it says more than the kind's name (Google's
/// own mapping: a conflict is `ABORTED`, a missing method `UNIMPLEMENTED`).
fn name_for_status(status: Option<u16>) -> Option<&'static str> {
    match status? {
        409 => Some("ABORTED"),
        501 => Some("UNIMPLEMENTED"),
        _ => None,
    }
}

/// The `{"error":{…}}` body, also written as an in-stream error line.
pub(crate) fn error_body(error: &WireError) -> Value {
    let status = error
        .code_str()
        .filter(|code| STATUSES.contains(code) && kind_from_google(code) == Some(error.kind))
        .or_else(|| name_for_status(error.status))
        .unwrap_or(google_status(error.kind).1);
    json!({ "error": { "code": http_status(error), "message": error.message, "status": status } })
}

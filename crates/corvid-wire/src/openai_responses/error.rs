//! Errors: the OpenAI shape `{"error":{"message","type","param","code"}}` (§6.8), xAI's
//! `{"code","error":"<string>"}`, and the codes of in-stream `error` events.

use serde_json::Value;

use crate::model::{ErrorKind, WireError};

/// Reads an upstream error reply, keeping its wording. The kind follows the status (§6.8),
/// except that xAI answers a bad key with 400: a 400 about the API key counts as
/// [`ErrorKind::Authentication`]. The code is the body's `code`, or failing that its `type`.
pub fn decode_error(status: u16, body: &[u8]) -> WireError {
    let mut parsed: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    // Some OpenAI-compatible servers wrap the body in a one-element array.
    if let Value::Array(items) = &mut parsed
        && items.len() == 1
    {
        parsed = items.remove(0);
    }
    let error = match &parsed["error"] {
        Value::Object(_) => &parsed["error"],
        _ => &parsed,
    };
    let text = |value: &Value| match value {
        Value::String(text) if !text.is_empty() => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    };
    let message = text(&error["message"])
        .or_else(|| text(&parsed["error"]))
        .or_else(|| {
            let raw = String::from_utf8_lossy(body).trim().to_owned();
            (!raw.is_empty() && !parsed.is_object()).then_some(raw)
        })
        .unwrap_or_else(|| format!("upstream answered HTTP {status}"));
    let code = text(&error["code"]).or_else(|| text(&error["type"]));
    let mut kind = ErrorKind::from_status(status);
    if status == 400 && is_bad_key(code.as_deref(), &message) {
        kind = ErrorKind::Authentication;
    }
    WireError::new(kind, message).with_code(code)
}

fn is_bad_key(code: Option<&str>, message: &str) -> bool {
    let message = message.to_ascii_lowercase();
    code == Some("invalid_api_key")
        || message.contains("incorrect api key")
        || message.contains("invalid api key")
}

/// The status and OpenAI-shaped body for a client: the same as a Chat Completions client
/// gets (one OpenAI error shape, one renderer).
pub fn encode_error(error: &WireError) -> (u16, Value) {
    crate::openai_chat::encode_error(error)
}

/// The kind of a failure reported inside a stream (`error` event, `response.failed`), by its
/// code.
pub(crate) fn kind_from_code(code: Option<&str>) -> ErrorKind {
    match code.unwrap_or_default() {
        "rate_limit_exceeded" | "rate_limit_error" | "insufficient_quota" => ErrorKind::RateLimited,
        "server_overloaded"
        | "overloaded"
        | "overloaded_error"
        | "service_unavailable"
        | "slow_down" => ErrorKind::Overloaded,
        "invalid_request_error"
        | "invalid_prompt"
        | "context_length_exceeded"
        | "bad_request"
        | "invalid_image"
        | "invalid_image_url" => ErrorKind::InvalidRequest,
        "invalid_api_key" | "authentication_error" => ErrorKind::Authentication,
        "timeout" | "timeout_error" => ErrorKind::Timeout,
        _ => ErrorKind::Api,
    }
}

/// A stream failure from an `error` event or a failed response's `error` object (whose
/// `message` and `code` may sit at the top or under `error`).
pub(crate) fn stream_error(value: &Value, fallback: &str) -> WireError {
    let error = if value["error"].is_object() {
        &value["error"]
    } else {
        value
    };
    let code = error["code"]
        .as_str()
        .or(error["type"].as_str().filter(|kind| *kind != "error"))
        .map(str::to_owned);
    let message = error["message"]
        .as_str()
        .filter(|message| !message.is_empty())
        .unwrap_or(fallback);
    WireError::new(kind_from_code(code.as_deref()), message).with_code(code)
}

//! Errors in Anthropic's shape: `{"type":"error","error":{"type","message"},"request_id"?}`,
//! statuses by wire-formats.md §6.8.

use serde_json::{Value, json};

use crate::model::{DecodeError, ErrorKind, WireError};

#[cfg(test)]
mod tests;

/// The longest stretch of a non-JSON error body kept as the message.
const MAX_RAW_MESSAGE: usize = 2000;

/// Anthropic's error type for billing problems (HTTP 402); canonical `Permission`, with this as
/// the code so that an Anthropic client gets 402 back.
const BILLING_ERROR: &str = "billing_error";

/// An upstream error reply → canonical, keeping the upstream's wording. Reads Anthropic's shape,
/// and the OpenAI-like shapes some Anthropic-compatible servers answer with; the error `type`
/// decides the kind when it is one of Anthropic's, the status otherwise.
pub fn decode_error(status: u16, body: &[u8]) -> WireError {
    let parsed: Option<Value> = serde_json::from_slice(body).ok();
    let error = parsed.as_ref().and_then(|body| body.get("error"));
    let message = match error {
        Some(Value::String(message)) => Some(message.clone()),
        Some(error) => error
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_owned),
        None => parsed
            .as_ref()
            .and_then(|body| body.get("message"))
            .and_then(Value::as_str)
            .map(str::to_owned),
    };
    let message = message.unwrap_or_else(|| raw_message(status, body));
    let code = error
        .and_then(|error| error.get("type").or_else(|| error.get("code")))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let kind = code
        .as_deref()
        .and_then(kind_from_type)
        .unwrap_or_else(|| ErrorKind::from_status(status));
    WireError::new(kind, message).with_code(code)
}

/// A request that could not be decoded, worded as Anthropic words its own refusals:
/// `messages.1.content: Field required` — a dotted path, then Anthropic's phrase. Claude Code
/// matches on Anthropic's wording to recover, so corvid's refusals on the Anthropic route read
/// the same.
pub fn request_error_message(error: &DecodeError) -> String {
    match error {
        DecodeError::Json(detail) => {
            format!("The request body is not valid JSON: {detail}")
        }
        DecodeError::Field { field, problem } => {
            format!("{}: {}", dotted_path(field), anthropic_phrase(problem))
        }
    }
}

/// `messages[1].content[0]` → `messages.1.content.0`.
fn dotted_path(field: &str) -> String {
    field
        .replace("][", ".")
        .replace(['[', ']'], ".")
        .replace("..", ".")
        .trim_end_matches('.')
        .to_owned()
}

/// corvid's problem phrases in Anthropic's (pydantic's) words; others, capitalised.
fn anthropic_phrase(problem: &str) -> String {
    let phrase = match problem {
        "is required" => "Field required",
        "must be a string" => "Input should be a valid string",
        "must be an array" => "Input should be a valid list",
        "must be a boolean" => "Input should be a valid boolean",
        "must be a number" => "Input should be a valid number",
        "must be a non-negative integer" => "Input should be a valid integer",
        "must be an object" | "must be a JSON object" => "Input should be a valid dictionary",
        other => {
            let other = other.strip_prefix("must be ").map_or_else(
                || other.to_owned(),
                |rest| format!("Input should be {rest}"),
            );
            let mut chars = other.chars();
            return match chars.next() {
                Some(first) => first.to_uppercase().chain(chars).collect(),
                None => other,
            }
            .replace('`', "'");
        }
    };
    phrase.to_owned()
}

/// Canonical error → (status, body) for an Anthropic client. 502/503 upstream failures are
/// already `Overloaded`, which Anthropic clients know as 529 `overloaded_error`; any other
/// exact status the error carries is kept. The type follows the kind (Anthropic's own
/// wording: Claude Code recovers by it).
pub fn encode_error(error: &WireError) -> (u16, Value) {
    let (status, _) = status_and_type(error);
    (status, error_body(error))
}

/// `{"type":"error","error":{"type","message"}}`: the reply body and the stream `error` event.
pub(crate) fn error_body(error: &WireError) -> Value {
    let (_, kind) = status_and_type(error);
    json!({"type": "error", "error": {"type": kind, "message": error.message}})
}

fn status_and_type(error: &WireError) -> (u16, &'static str) {
    let (usual, kind) = usual_status_and_type(error);
    match error.kind {
        ErrorKind::Overloaded => (usual, kind),
        _ => (error.status.unwrap_or(usual), kind),
    }
}

/// The status and type Anthropic answers a kind with; a billing problem (its code, or HTTP
/// 402) is its own type.
fn usual_status_and_type(error: &WireError) -> (u16, &'static str) {
    match error.kind {
        ErrorKind::Permission
            if error.code_str() == Some(BILLING_ERROR) || error.status == Some(402) =>
        {
            (402, BILLING_ERROR)
        }
        ErrorKind::InvalidRequest => (400, "invalid_request_error"),
        ErrorKind::Authentication => (401, "authentication_error"),
        ErrorKind::Permission => (403, "permission_error"),
        ErrorKind::NotFound => (404, "not_found_error"),
        ErrorKind::RequestTooLarge => (413, "request_too_large"),
        ErrorKind::RateLimited => (429, "rate_limit_error"),
        ErrorKind::Api => (500, "api_error"),
        ErrorKind::Timeout => (504, "timeout_error"),
        ErrorKind::Overloaded => (529, "overloaded_error"),
    }
}

/// An Anthropic error type → its kind; `None` for a type that is not Anthropic's.
pub(crate) fn kind_from_type(kind: &str) -> Option<ErrorKind> {
    Some(match kind {
        "invalid_request_error" => ErrorKind::InvalidRequest,
        "authentication_error" => ErrorKind::Authentication,
        BILLING_ERROR | "permission_error" => ErrorKind::Permission,
        "not_found_error" => ErrorKind::NotFound,
        "request_too_large" => ErrorKind::RequestTooLarge,
        "rate_limit_error" => ErrorKind::RateLimited,
        "api_error" => ErrorKind::Api,
        "overloaded_error" => ErrorKind::Overloaded,
        "timeout_error" => ErrorKind::Timeout,
        _ => return None,
    })
}

/// A body that is not an error object: its text (bounded), or the status when it is empty.
fn raw_message(status: u16, body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.is_empty() {
        return format!("upstream answered HTTP {status}");
    }
    match text.char_indices().nth(MAX_RAW_MESSAGE) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

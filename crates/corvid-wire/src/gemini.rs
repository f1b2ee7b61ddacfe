//! The Google Gemini codec: `POST /v1beta/models/{model}:generateContent` and
//! `:streamGenerateContent?alt=sse` (see `CODECS.md`, reference `wire-formats.md` §4).
//!
//! Where this module differs from the common contract:
//! - [`decode_request`] takes the model as a second argument: Gemini names it in the URL
//!   (`models/{model}`), not in the body. The body has no `stream` flag either (the method
//!   name says it), so the gateway sets [`ChatRequest::stream`](crate::model::ChatRequest)
//!   for `streamGenerateContent`.
//! - [`StreamOptions`] only carries the model name shown to the client.
//! - [`encode_models_list`] answers `GET /v1beta/models`.
//!
//! Gemini quirks handled here:
//! - tool-call ids are optional on the wire and refused in requests, so decoders synthesise
//!   stable ids and the request encoder pairs calls and results by name instead;
//! - `thoughtSignature` rides on `functionCall` parts and must come back unchanged, with a
//!   sentinel when it was lost;
//! - `finishReason` is `STOP` even when the model called tools;
//! - `candidatesTokenCount` excludes thinking tokens.

use serde_json::{Map, Value, json};

use crate::model::{FinishReason, Usage};

mod error;
mod request;
mod response;
mod schema;
mod stream;
mod upstream;
pub mod usage;

pub use error::{decode_error, encode_error, retry_after_seconds};
pub use request::decode_request;
pub use response::{decode_response, encode_response};
pub(crate) use stream::stream_error;
pub use stream::{StreamDecoder, StreamEncoder, StreamOptions};
pub use upstream::encode_request;

/// The `thoughtSignature` Gemini accepts in place of a signature that was lost (history from
/// another provider): it skips the validation of that turn.
pub const SKIP_SIGNATURE: &str = "skip_thought_signature_validator";

/// The body of `GET /v1beta/models`: one entry per `(id, display name)`.
pub fn encode_models_list(models: &[(&str, &str)]) -> Value {
    let models: Vec<Value> = models
        .iter()
        .map(|(id, display_name)| {
            json!({
                "name": format!("models/{id}"),
                "displayName": display_name,
                "supportedGenerationMethods":
                    ["generateContent", "streamGenerateContent", "countTokens"],
            })
        })
        .collect();
    json!({ "models": models })
}

/// A Gemini `finishReason` in the canonical vocabulary (§6.2). The caller turns it into
/// `ToolCalls` when the reply called a function (Gemini says `STOP` then).
pub(crate) fn finish_from_gemini(reason: &str) -> FinishReason {
    match reason {
        "MAX_TOKENS" => FinishReason::MaxTokens,
        "SAFETY"
        | "RECITATION"
        | "BLOCKLIST"
        | "PROHIBITED_CONTENT"
        | "SPII"
        | "LANGUAGE"
        | "IMAGE_SAFETY"
        | "IMAGE_PROHIBITED_CONTENT"
        | "IMAGE_RECITATION"
        | "IMAGE_OTHER" => FinishReason::ContentFilter,
        "MALFORMED_FUNCTION_CALL" | "UNEXPECTED_TOOL_CALL" | "TOO_MANY_TOOL_CALLS" => {
            FinishReason::MalformedToolCall
        }
        // STOP, OTHER, NO_IMAGE, FINISH_REASON_UNSPECIFIED and reasons added later.
        _ => FinishReason::EndTurn,
    }
}

/// The Gemini `finishReason` for a canonical one (§6.2): tool calls end with `STOP`.
pub(crate) fn finish_to_gemini(reason: FinishReason) -> &'static str {
    match reason {
        FinishReason::EndTurn
        | FinishReason::StopSequence
        | FinishReason::ToolCalls
        | FinishReason::PauseTurn => "STOP",
        FinishReason::MaxTokens | FinishReason::ContextOverflow => "MAX_TOKENS",
        FinishReason::ContentFilter => "SAFETY",
        FinishReason::MalformedToolCall => "MALFORMED_FUNCTION_CALL",
    }
}

/// `usageMetadata` → canonical (§6.5); the rules live in `usage.rs`, shared with the
/// gateway's relay.
pub(crate) fn usage_from_gemini(metadata: &Value) -> Usage {
    usage::from_value(metadata)
}

/// Canonical usage → `usageMetadata`; zero cache and thought counts are left out, as Gemini
/// does.
pub(crate) fn usage_to_gemini(usage: &Usage) -> Value {
    let mut metadata = Map::new();
    metadata.insert("promptTokenCount".into(), usage.total_input().into());
    if usage.cache_read > 0 {
        metadata.insert("cachedContentTokenCount".into(), usage.cache_read.into());
    }
    metadata.insert("candidatesTokenCount".into(), usage.visible_output().into());
    if usage.reasoning > 0 {
        metadata.insert("thoughtsTokenCount".into(), usage.reasoning.into());
    }
    metadata.insert("totalTokenCount".into(), usage.total().into());
    Value::Object(metadata)
}

/// Field `name` (camelCase) of `object`, or its snake_case spelling: Gemini's JSON parser
/// accepts both, and its curl examples use the latter (`system_instruction`, `inline_data`).
pub(crate) fn field<'a>(object: &'a Value, name: &str) -> Option<&'a Value> {
    object
        .get(name)
        .or_else(|| object.get(snake_case(name).as_str()))
}

/// `systemInstruction` → `system_instruction`.
pub(crate) fn snake_case(name: &str) -> String {
    let mut snake = String::with_capacity(name.len() + 4);
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            snake.push('_');
            snake.push(c.to_ascii_lowercase());
        } else {
            snake.push(c);
        }
    }
    snake
}

/// `system_instruction` → `systemInstruction`.
pub(crate) fn camel_case(name: &str) -> String {
    let mut camel = String::with_capacity(name.len());
    let mut upper = false;
    for c in name.chars() {
        if c == '_' && !camel.is_empty() {
            upper = true;
        } else if upper {
            camel.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            camel.push(c);
        }
    }
    camel
}

/// A deterministic id for a `functionCall` that has none. The reply's `responseId` is mixed
/// in so that identical calls in different replies get different ids.
pub(crate) fn reply_call_id(
    response_id: &str,
    name: &str,
    arguments: &str,
    index: usize,
) -> String {
    if response_id.is_empty() {
        crate::model::synthetic_call_id(name, arguments, index)
    } else {
        crate::model::synthetic_call_id(&format!("{response_id}/{name}"), arguments, index)
    }
}

#[cfg(test)]
mod tests;

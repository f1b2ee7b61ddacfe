//! The OpenAI Responses codec (`POST /v1/responses`), for OpenAI and xAI upstreams and for
//! Responses clients (the OpenAI SDKs, Zed models with `chat_completions: false`).
//!
//! Layout:
//! - [`decode_request`] (client body → [`ChatRequest`]) in `decode_request.rs`;
//! - [`encode_request`] ([`ChatRequest`] → upstream body, always `store: false`) in
//!   `encode_request.rs`;
//! - [`decode_response`] / [`encode_response`] (whole replies) in `response.rs`;
//! - [`StreamDecoder`] (upstream SSE → [`StreamEvent`]s) in `stream_decoder.rs`;
//! - [`StreamEncoder`] ([`StreamEvent`]s → client SSE) in `stream_encoder.rs`, with the event
//!   shapes in `events.rs`;
//! - [`decode_error`] / [`encode_error`] in `error.rs`.
//!
//! This file holds the mappings they share: usage (§6.5), finish reasons (§6.2), item ids and
//! reasoning text. What the dialect cannot carry is listed in `LOSSES.md`.
//!
//! [`ChatRequest`]: crate::model::ChatRequest
//! [`StreamEvent`]: crate::model::StreamEvent

use serde_json::{Value, json};

use crate::model::{FinishReason, Reasoning, Usage};

mod decode_request;
mod encode_request;
mod error;
mod events;
mod json;
mod response;
mod stream_decoder;
mod stream_encoder;
pub mod usage;

#[cfg(test)]
mod tests;

pub use decode_request::{decode_plain_request, decode_request};
pub use encode_request::encode_request;
pub use error::{decode_error, encode_error};
pub use response::{decode_response, encode_response, encode_response_body};
pub use stream_decoder::StreamDecoder;
pub(crate) use stream_encoder::stream_error;
pub use stream_encoder::{StreamEncoder, StreamOptions};

/// Reads a Responses `usage` object; the rules live in `usage.rs`, shared with the gateway's
/// relay.
pub(crate) fn usage_from_wire(usage: &Value) -> Usage {
    usage::from_value(usage)
}

/// A Responses `usage` object for `usage`.
pub(crate) fn usage_to_wire(usage: &Usage) -> Value {
    json!({
        "input_tokens": usage.total_input(),
        "input_tokens_details": {
            "cached_tokens": usage.cache_read,
            "cache_write_tokens": usage.cache_write,
        },
        "output_tokens": usage.output,
        "output_tokens_details": { "reasoning_tokens": usage.reasoning },
        "total_tokens": usage.total(),
    })
}

/// The canonical finish reason for a response `status` and `incomplete_details.reason`
/// (§6.2). Tool calls win over everything; a refusal counts as filtered.
pub(crate) fn finish_from_status(
    status: Option<&str>,
    incomplete_reason: Option<&str>,
    made_calls: bool,
    refused: bool,
) -> FinishReason {
    if made_calls {
        return FinishReason::ToolCalls;
    }
    match (status, incomplete_reason) {
        (Some("incomplete"), Some("max_output_tokens")) => FinishReason::MaxTokens,
        (Some("incomplete"), Some("content_filter")) => FinishReason::ContentFilter,
        (Some("incomplete"), None) => FinishReason::ContextOverflow,
        // `max_messages`, `steered` and reasons yet to come: a limit stopped the reply.
        (Some("incomplete"), Some(_)) => FinishReason::MaxTokens,
        _ if refused => FinishReason::ContentFilter,
        _ => FinishReason::EndTurn,
    }
}

/// The response `status` and `incomplete_details` that say `finish` (§6.2).
pub(crate) fn status_for(finish: FinishReason) -> (&'static str, Value) {
    match finish {
        FinishReason::MaxTokens => ("incomplete", json!({ "reason": "max_output_tokens" })),
        FinishReason::ContentFilter => ("incomplete", json!({ "reason": "content_filter" })),
        FinishReason::ContextOverflow => ("incomplete", Value::Null),
        FinishReason::EndTurn
        | FinishReason::StopSequence
        | FinishReason::ToolCalls
        | FinishReason::PauseTurn
        | FinishReason::MalformedToolCall => ("completed", Value::Null),
    }
}

/// A response id as Responses clients expect it (`resp_…`), from any dialect's message id.
pub(crate) fn response_id(id: &str) -> String {
    if id.starts_with("resp_") {
        id.to_owned()
    } else if id.is_empty() {
        "resp_corvid".to_owned()
    } else {
        format!("resp_{id}")
    }
}

/// The id of output item `output_index` of response `response_id`: `msg_…`, `rs_…`.
pub(crate) fn item_id(prefix: &str, response_id: &str, output_index: usize) -> String {
    let base = response_id.strip_prefix("resp_").unwrap_or(response_id);
    format!("{prefix}_{base}_{output_index}")
}

/// The item id (`fc_…`) of a function call, derived from its call id so it is stable across
/// turns and between streamed and whole replies.
pub(crate) fn function_call_item_id(call_id: &str) -> String {
    if call_id.starts_with("fc_") {
        call_id.to_owned()
    } else {
        format!("fc_{call_id}")
    }
}

/// The visible text of a `reasoning` item: its summary parts, or failing those its
/// `reasoning_text` content, joined by blank lines.
pub(crate) fn reasoning_item_text(item: &Value) -> String {
    let texts = |key: &str| -> Vec<&str> {
        item[key]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|part| part["text"].as_str())
            .filter(|text| !text.is_empty())
            .collect()
    };
    let summary = texts("summary");
    if summary.is_empty() {
        texts("content").join(REASONING_PART_SEPARATOR)
    } else {
        summary.join(REASONING_PART_SEPARATOR)
    }
}

/// Anthropic reasoning sent to a Responses client travels inside `encrypted_content`, which
/// clients keep and replay without reading it, marked by one of these prefixes: a thinking
/// `signature`, or `redacted_thinking` data. When the item comes back corvid restores it, so
/// Anthropic thinking survives a tool loop of a Responses client with an Anthropic upstream.
/// (Across the crate, encrypted reasoning with an item id is Responses'; without one it is
/// Anthropic's redacted thinking.)
const SIGNATURE_PREFIX: &str = "corvid-anthropic-signature:";
const REDACTED_PREFIX: &str = "corvid-anthropic-redacted:";

/// The `encrypted_content` a Responses client gets for reasoning: Responses' encrypted data as
/// it is, Anthropic's redacted data or signature marked; `None` when there is nothing opaque.
pub(crate) fn opaque_reasoning(
    encrypted: Option<&str>,
    has_item_id: bool,
    signature: Option<&str>,
) -> Option<String> {
    match (encrypted, signature) {
        // What corvid minted already says what it holds and where it came from.
        (Some(data), _) if has_item_id || crate::minted::is_minted(data) => Some(data.to_owned()),
        (None, Some(signature)) if crate::minted::is_minted(signature) => {
            Some(signature.to_owned())
        }
        (Some(data), _) => Some(format!("{REDACTED_PREFIX}{data}")),
        (None, Some(signature)) => Some(format!("{SIGNATURE_PREFIX}{signature}")),
        (None, None) => None,
    }
}

/// What an `encrypted_content` holds.
pub(crate) enum Opaque {
    /// Responses' encrypted reasoning.
    Encrypted(String),
    /// An Anthropic signature corvid marked.
    Signature(String),
    /// Anthropic redacted thinking corvid marked.
    Redacted(String),
}

impl Opaque {
    pub(crate) fn read(data: &str) -> Self {
        // Minted tokens stay whole until `minted::settle` opens them for the target provider.
        if crate::minted::is_minted(data) {
            return Self::Encrypted(data.to_owned());
        }
        if let Some(signature) = data.strip_prefix(SIGNATURE_PREFIX) {
            Self::Signature(signature.to_owned())
        } else if let Some(redacted) = data.strip_prefix(REDACTED_PREFIX) {
            Self::Redacted(redacted.to_owned())
        } else {
            Self::Encrypted(data.to_owned())
        }
    }

    /// Sets the fields of `reasoning` read from a `reasoning` item with this content. Responses'
    /// encrypted reasoning always gets an item id (`fallback_id` when the item had none, as
    /// Codex replays them); Anthropic's redacted thinking never has one.
    pub(crate) fn apply(self, reasoning: &mut Reasoning, fallback_id: impl FnOnce() -> String) {
        match self {
            Self::Encrypted(data) => {
                reasoning.encrypted = Some(data);
                reasoning.id.get_or_insert_with(fallback_id);
            }
            Self::Signature(signature) => reasoning.signature = Some(signature),
            Self::Redacted(data) => {
                reasoning.encrypted = Some(data);
                reasoning.id = None;
            }
        }
    }
}

/// Codex's namespaced tools (`{"type": "namespace", "name": "collaboration", "tools": […]}`)
/// live in the canonical model as one tool per function, named `<namespace>.<tool>`: a dot
/// cannot occur in a Responses function name, so the split back is unambiguous. Dialects
/// without namespaces get the name through [`wire_name`](crate::model::wire_name)
/// (`collaboration__spawn_agent`), and replies restore it through `NameMap`.
pub(crate) fn namespaced(namespace: &str, name: &str) -> String {
    format!("{namespace}.{name}")
}

/// A canonical tool name as a Responses client knows it: the namespace, if any, and the name.
pub(crate) fn split_namespace(name: &str) -> (Option<&str>, &str) {
    match name.split_once('.') {
        Some((namespace, name)) if !namespace.is_empty() && !name.is_empty() => {
            (Some(namespace), name)
        }
        _ => (None, name),
    }
}

/// What goes between two summary parts when they become one canonical reasoning text.
pub(crate) const REASONING_PART_SEPARATOR: &str = "\n\n";

/// The text of a message content part (`output_text`, `input_text`, `refusal`), if it has one.
pub(crate) fn content_part_text(part: &Value) -> Option<&str> {
    match part["type"].as_str() {
        Some("output_text" | "input_text" | "text") => part["text"].as_str(),
        Some("refusal") => part["refusal"].as_str(),
        _ => None,
    }
}

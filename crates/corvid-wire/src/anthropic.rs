//! The Anthropic Messages codec (`POST /v1/messages`): Claude Code's dialect, and the dialect of
//! Anthropic upstreams. `CODECS.md` is the contract, `LOSSES.md` lists what it drops.
//!
//! Layout: [`decode_request`] (`request.rs`), [`encode_request`] (`encode.rs`), whole replies
//! (`response.rs`), [`StreamDecoder`] (`stream.rs`), [`StreamEncoder`] (`stream_encoder.rs`),
//! errors (`error.rs`). The helpers below are the mapping tables every part shares.

use serde_json::{Value, json};

use crate::model::{ChatRequest, FinishReason, Part, ToolResultContent, Usage};

mod cache_breakpoints;
mod encode;
mod error;
mod request;
mod response;
mod stream;
mod stream_encoder;
mod system_turns;
pub mod usage;

#[cfg(test)]
mod tests;

pub use cache_breakpoints::encode_request_with_breakpoints;
pub use encode::{DEFAULT_MAX_TOKENS, MIN_THINKING_BUDGET, encode_request};
pub use error::{decode_error, encode_error, request_error_message};
pub use request::{decode_plain_request, decode_request};
pub use response::{decode_response, encode_response, encode_response_body};
pub use stream::StreamDecoder;
pub(crate) use stream_encoder::stream_error;
pub use stream_encoder::{StreamEncoder, StreamOptions};
pub use system_turns::{Folded, fold_system_turns, may_hold_system_turns};

/// What [`count_tokens_estimate`] charges for one image, whatever its size (Anthropic bills
/// about `width × height / 750`, capped near this for a 1.15 megapixel image).
pub const IMAGE_TOKEN_ESTIMATE: u64 = 1600;

/// A deterministic estimate of a request's input tokens, for `/v1/messages/count_tokens` and for
/// `message_start` when the upstream count is unknown: about four characters per token over
/// all text (system, messages, tool calls and results, reasoning, tool names, descriptions and
/// schemas), plus [`IMAGE_TOKEN_ESTIMATE`] per image.
pub fn count_tokens_estimate(request: &ChatRequest) -> u64 {
    let mut chars = 0_u64;
    let mut schema_chars = 0_u64;
    let mut images = 0_u64;
    let mut add = |text: &str| chars += text.chars().count() as u64;
    request.system.iter().for_each(|text| add(text));
    for part in request.messages.iter().flat_map(|message| &message.parts) {
        match part {
            Part::Text { text } | Part::System { text } => add(text),
            Part::Image(_) => images += 1,
            Part::ToolCall(call) => {
                add(&call.name);
                add(&call.arguments);
            }
            Part::ToolResult(result) => {
                for content in &result.content {
                    match content {
                        ToolResultContent::Text { text } => add(text),
                        ToolResultContent::Image(_) => images += 1,
                    }
                }
            }
            Part::Reasoning(reasoning) => add(&reasoning.text),
        }
    }
    for tool in &request.tools {
        add(&tool.name);
        add(tool.description.as_deref().unwrap_or_default());
        schema_chars += tool.parameters.compact_chars();
    }
    (chars + schema_chars).div_ceil(4) + images * IMAGE_TOKEN_ESTIMATE
}

/// Anthropic `stop_reason` → canonical (§6.2). Unknown values count as a natural end.
fn finish_from_wire(stop_reason: &str) -> FinishReason {
    match stop_reason {
        "stop_sequence" => FinishReason::StopSequence,
        "max_tokens" => FinishReason::MaxTokens,
        "tool_use" => FinishReason::ToolCalls,
        "refusal" => FinishReason::ContentFilter,
        "pause_turn" => FinishReason::PauseTurn,
        "model_context_window_exceeded" => FinishReason::ContextOverflow,
        _ => FinishReason::EndTurn,
    }
}

/// Canonical → Anthropic `stop_reason` (§6.2). A malformed tool call reads as `end_turn`.
fn finish_to_wire(finish: FinishReason) -> &'static str {
    match finish {
        FinishReason::EndTurn | FinishReason::MalformedToolCall => "end_turn",
        FinishReason::StopSequence => "stop_sequence",
        FinishReason::MaxTokens => "max_tokens",
        FinishReason::ToolCalls => "tool_use",
        FinishReason::ContentFilter => "refusal",
        FinishReason::PauseTurn => "pause_turn",
        FinishReason::ContextOverflow => "model_context_window_exceeded",
    }
}

/// An Anthropic `usage` object → canonical (§6.5); the rules live in `usage.rs`, shared with
/// the gateway's relay.
fn usage_from_wire(usage: Option<&Value>) -> Usage {
    usage::from_value(usage)
}

/// Tool arguments as an `input` object: `{}` when empty, not JSON, or not an object (the
/// API and Claude Code both require an object).
fn tool_input(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(input)) => Value::Object(input),
        _ => Value::Object(serde_json::Map::new()),
    }
}

/// Canonical usage → an Anthropic `usage` object, both cache fields always present, and the
/// thinking share in `output_tokens_details.thinking_tokens` when there is one.
fn usage_to_wire(usage: &Usage) -> Value {
    let mut wire = json!({
        "input_tokens": usage.input,
        "cache_creation_input_tokens": usage.cache_write,
        "cache_read_input_tokens": usage.cache_read,
        "output_tokens": usage.output,
    });
    if usage.reasoning > 0 {
        wire["output_tokens_details"] = json!({ "thinking_tokens": usage.reasoning });
    }
    wire
}

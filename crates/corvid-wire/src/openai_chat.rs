//! The OpenAI Chat Completions codec (`POST /v1/chat/completions`), see `CODECS.md`.
//!
//! The same dialect serves OpenAI, xAI and the OpenAI-compatible local servers (Ollama, vLLM):
//! their differences (reasoning as `reasoning_content` or `reasoning`, xAI's usage arithmetic,
//! xAI's string error bodies, whole tool calls in one delta) are absorbed by the decoders, and
//! the encoders write the strict shape Zed and the OpenAI SDKs accept.
//!
//! - [`decode_request`] / [`encode_request`]: client request → canonical → upstream body.
//! - [`decode_response`] / [`encode_response`]: whole replies.
//! - [`StreamDecoder`] / [`StreamEncoder`]: `data:` chunk streams ending in `data: [DONE]`.
//! - [`decode_error`] / [`encode_error`]: `{"error":{"message","type","param","code"}}` bodies.

mod error;
mod json;
mod request_decode;
mod request_encode;
mod response;
mod stream_chunk;
mod stream_decode;
mod stream_encode;
pub mod usage;

#[cfg(test)]
mod tests;

pub(crate) use error::error_type;
pub use error::{decode_error, encode_error};
pub use request_decode::decode_request;
pub use request_encode::{encode_body, encode_request};
pub use response::{decode_response, encode_response, encode_response_body};
pub use stream_decode::StreamDecoder;
pub(crate) use stream_encode::stream_error;
pub use stream_encode::{StreamEncoder, StreamOptions};

use crate::model::FinishReason;

/// An OpenAI `finish_reason` in the canonical vocabulary (`wire-formats.md` §6.2). Unknown
/// values count as a natural end.
fn finish_from_wire(reason: &str) -> FinishReason {
    match reason {
        "length" => FinishReason::MaxTokens,
        "tool_calls" | "function_call" => FinishReason::ToolCalls,
        "content_filter" => FinishReason::ContentFilter,
        _ => FinishReason::EndTurn,
    }
}

/// The OpenAI `finish_reason` for a canonical one. `tool_calls` says whether the reply made a
/// tool call: a natural end with calls is reported as `tool_calls`, the only value on which Zed
/// runs them (`wire-formats.md` §8 pitfall 3).
fn finish_to_wire(reason: FinishReason, tool_calls: bool) -> &'static str {
    match reason {
        FinishReason::ToolCalls => "tool_calls",
        FinishReason::MaxTokens | FinishReason::ContextOverflow => "length",
        FinishReason::ContentFilter => "content_filter",
        FinishReason::EndTurn
        | FinishReason::StopSequence
        | FinishReason::PauseTurn
        | FinishReason::MalformedToolCall => {
            if tool_calls {
                "tool_calls"
            } else {
                "stop"
            }
        }
    }
}

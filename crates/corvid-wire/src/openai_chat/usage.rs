//! An OpenAI chat `usage` object read into canonical counts (`wire-formats.md` §6.5), typed:
//! the decoders read it from a parsed chunk, the gateway's relay straight from the bytes of a
//! chunk or a whole reply. One set of rules for both, so a reply is ledgered the same whichever
//! path it took.

use serde::Deserialize;
use serde_json::Value;

use crate::counts::{self, Count, WithUsage};
use crate::model::Usage;
use crate::sse::Marker;

#[derive(Default, Deserialize)]
#[serde(default)]
pub(crate) struct ChatUsage {
    prompt_tokens: Count,
    completion_tokens: Count,
    total_tokens: Option<Count>,
    prompt_tokens_details: Option<PromptDetails>,
    completion_tokens_details: Option<CompletionDetails>,
    /// DeepSeek reports cache hits at the top level.
    prompt_cache_hit_tokens: Count,
    /// Some providers report cache writes at the top level.
    cache_write_tokens: Count,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct PromptDetails {
    cached_tokens: Count,
    cache_write_tokens: Count,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct CompletionDetails {
    reasoning_tokens: Count,
}

impl ChatUsage {
    /// `prompt_tokens` includes cached and cache-written tokens; `completion_tokens` includes
    /// reasoning, except on xAI, where `total_tokens = prompt + completion + reasoning`: a total
    /// that adds up that way (or reasoning larger than the completion) means the reasoning must
    /// be added to the output.
    pub(crate) fn usage(&self) -> Usage {
        let prompt = self.prompt_tokens.0;
        let mut completion = self.completion_tokens.0;
        let details = self.prompt_tokens_details.as_ref();
        let cached = match details.map_or(0, |details| details.cached_tokens.0) {
            0 => self.prompt_cache_hit_tokens.0,
            cached => cached,
        };
        let cache_write = match details.map_or(0, |details| details.cache_write_tokens.0) {
            0 => self.cache_write_tokens.0,
            written => written,
        };
        let reasoning = self
            .completion_tokens_details
            .as_ref()
            .map_or(0, |details| details.reasoning_tokens.0);
        let total = self.total_tokens.map(|total| total.0);
        let excludes_reasoning = reasoning > 0
            && (total == Some(prompt + completion + reasoning) || reasoning > completion);
        if excludes_reasoning {
            completion += reasoning;
        }
        Usage::from_openai(prompt, cached, cache_write, completion, reasoning)
    }
}

/// A parsed `usage` object; one that is not an object reads as no counts.
pub(crate) fn from_value(usage: &Value) -> Usage {
    ChatUsage::deserialize(usage)
        .map(|usage| usage.usage())
        .unwrap_or_default()
}

/// The usage in one streamed chunk, if it carries any.
pub fn from_event(payload: &[u8]) -> Option<Usage> {
    let chunk: WithUsage<ChatUsage> = counts::event(payload)?;
    chunk.usage.map(|usage| usage.usage())
}

/// The usage of a whole reply; only its `usage` object is parsed.
pub fn from_body(body: &[u8]) -> Option<Usage> {
    static USAGE: Marker = Marker::new(b"\"usage\"");
    counts::in_body::<ChatUsage>(&USAGE, body).map(|usage| usage.usage())
}

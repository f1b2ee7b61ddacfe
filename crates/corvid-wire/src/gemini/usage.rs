//! Gemini `usageMetadata` read into canonical counts (§6.5), typed: the decoders read it from
//! a parsed chunk, the gateway's relay straight from the bytes of a chunk or a whole reply. One
//! set of rules for both.

use serde::Deserialize;
use serde_json::Value;

use crate::counts::{self, Count};
use crate::model::Usage;
use crate::sse::Marker;

#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Metadata {
    prompt_token_count: Count,
    tool_use_prompt_token_count: Count,
    cached_content_token_count: Count,
    candidates_token_count: Count,
    thoughts_token_count: Count,
}

impl Metadata {
    /// `promptTokenCount` includes cached tokens and `candidatesTokenCount` excludes thoughts.
    /// Tool-use prompt tokens count as fresh input so that the total is kept.
    fn usage(&self) -> Usage {
        let prompt = self.prompt_token_count.0 + self.tool_use_prompt_token_count.0;
        let cached = self.cached_content_token_count.0;
        let thoughts = self.thoughts_token_count.0;
        Usage {
            input: prompt.saturating_sub(cached),
            cache_read: cached,
            cache_write: 0,
            output: self.candidates_token_count.0 + thoughts,
            reasoning: thoughts,
        }
    }
}

#[derive(Deserialize)]
struct Chunk {
    #[serde(rename = "usageMetadata")]
    usage_metadata: Option<Metadata>,
}

/// A parsed `usageMetadata` object; one that is not an object reads as no counts.
pub(crate) fn from_value(metadata: &Value) -> Usage {
    Metadata::deserialize(metadata)
        .map(|metadata| metadata.usage())
        .unwrap_or_default()
}

/// The usage in one streamed chunk, if it carries any.
pub fn from_event(payload: &[u8]) -> Option<Usage> {
    let chunk: Chunk = counts::event(payload)?;
    chunk.usage_metadata.map(|metadata| metadata.usage())
}

/// The usage of a whole reply; only its `usageMetadata` object is parsed.
pub fn from_body(body: &[u8]) -> Option<Usage> {
    static USAGE_METADATA: Marker = Marker::new(b"\"usageMetadata\"");
    counts::in_body::<Metadata>(&USAGE_METADATA, body).map(|metadata| metadata.usage())
}

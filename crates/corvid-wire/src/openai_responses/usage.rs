//! A Responses `usage` object read into canonical counts, typed: the decoders read it from a
//! parsed event, the gateway's relay straight from the bytes of an event or a whole reply. One
//! set of rules for both.

use serde::Deserialize;
use serde_json::Value;

use crate::counts::{self, Count, WithUsage};
use crate::model::Usage;
use crate::sse::Marker;

#[derive(Default, Deserialize)]
#[serde(default)]
struct ResponsesUsage {
    input_tokens: Count,
    output_tokens: Count,
    total_tokens: Option<Count>,
    input_tokens_details: Option<InputDetails>,
    output_tokens_details: Option<OutputDetails>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct InputDetails {
    cached_tokens: Count,
    cache_write_tokens: Count,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct OutputDetails {
    reasoning_tokens: Count,
}

impl ResponsesUsage {
    /// `input_tokens` includes cached tokens, `output_tokens` includes reasoning. A
    /// `total_tokens` that only adds up with the reasoning tokens on top (xAI's chat-style
    /// counting) means `output_tokens` left them out: they are added back.
    fn usage(&self) -> Usage {
        let input = self.input_tokens.0;
        let (cached, cache_write) = self
            .input_tokens_details
            .as_ref()
            .map_or((0, 0), |details| {
                (details.cached_tokens.0, details.cache_write_tokens.0)
            });
        let mut output = self.output_tokens.0;
        let reasoning = self
            .output_tokens_details
            .as_ref()
            .map_or(0, |details| details.reasoning_tokens.0);
        if reasoning > 0
            && self.total_tokens.map(|total| total.0) == Some(input + output + reasoning)
        {
            output += reasoning;
        }
        Usage::from_openai(input, cached, cache_write, output, reasoning)
    }
}

/// A terminal event: `{"response": {"usage": …}}`.
#[derive(Deserialize)]
struct ResponseEvent {
    response: Option<WithUsage<ResponsesUsage>>,
}

/// A parsed `usage` object; one that is not an object reads as no counts.
pub(crate) fn from_value(usage: &Value) -> Usage {
    ResponsesUsage::deserialize(usage)
        .map(|usage| usage.usage())
        .unwrap_or_default()
}

/// The usage in one streamed event (a terminal one carries the response's), if any.
pub fn from_event(payload: &[u8]) -> Option<Usage> {
    let event: ResponseEvent = counts::event(payload)?;
    event.response?.usage.map(|usage| usage.usage())
}

/// The usage of a whole reply; only its `usage` object is parsed.
pub fn from_body(body: &[u8]) -> Option<Usage> {
    static USAGE: Marker = Marker::new(b"\"usage\"");
    counts::in_body::<ResponsesUsage>(&USAGE, body).map(|usage| usage.usage())
}

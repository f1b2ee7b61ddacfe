//! An Anthropic `usage` object read into canonical counts (§6.5), typed: the decoders read it
//! from a parsed event, the gateway's relay straight from the bytes of an event or a whole
//! reply. One set of rules for both, the `message_delta` merge included.
//!
//! `input_tokens` already excludes cache reads and writes; `output_tokens` includes thinking,
//! whose share is `output_tokens_details.thinking_tokens` when given.

use serde::Deserialize;
use serde_json::Value;

use crate::counts::{self, Count, WithUsage};
use crate::model::Usage;
use crate::sse::Marker;

/// The counts one object carries; a missing one stays `None`, so a `message_delta` that
/// leaves it out keeps the count `message_start` gave.
#[derive(Default, Deserialize)]
#[serde(default)]
pub(crate) struct Counts {
    input_tokens: Option<Count>,
    cache_read_input_tokens: Option<Count>,
    cache_creation_input_tokens: Option<Count>,
    output_tokens: Option<Count>,
    output_tokens_details: Option<OutputDetails>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct OutputDetails {
    thinking_tokens: Option<Count>,
}

impl Counts {
    /// The counts given, each missing one as 0.
    fn usage(&self) -> Usage {
        let mut usage = Usage::default();
        self.update(&mut usage);
        usage
    }

    /// `usage` with the counts given here replacing its own (`output_tokens` is cumulative).
    pub(crate) fn update(&self, usage: &mut Usage) {
        let fields = [
            (self.input_tokens, &mut usage.input),
            (self.cache_read_input_tokens, &mut usage.cache_read),
            (self.cache_creation_input_tokens, &mut usage.cache_write),
            (self.output_tokens, &mut usage.output),
            (
                self.output_tokens_details
                    .as_ref()
                    .and_then(|details| details.thinking_tokens),
                &mut usage.reasoning,
            ),
        ];
        for (count, field) in fields {
            if let Some(count) = count {
                *field = count.0;
            }
        }
    }
}

/// A parsed `usage` object (`None` or not an object: no counts).
pub(crate) fn from_value(usage: Option<&Value>) -> Usage {
    counts_of(usage)
        .map(|counts| counts.usage())
        .unwrap_or_default()
}

/// The counts of a parsed `usage` object, when it is one.
pub(crate) fn counts_of(usage: Option<&Value>) -> Option<Counts> {
    Counts::deserialize(usage?).ok()
}

/// A streamed event: `message_start` has `{"message": {"usage": …}}`, `message_delta`
/// `{"usage": …}`.
#[derive(Deserialize)]
struct Event {
    message: Option<WithUsage<Counts>>,
    usage: Option<Counts>,
}

/// The stream's usage after one event, given the usage so far: a `message_start` sets it, a
/// `message_delta` updates the counts it repeats. `None` when the event carries none.
pub fn from_event(payload: &[u8], so_far: Option<Usage>) -> Option<Usage> {
    let event: Event = counts::event(payload)?;
    if let Some(start) = event.message.and_then(|message| message.usage) {
        return Some(start.usage());
    }
    let delta = event.usage?;
    let mut usage = so_far.unwrap_or_default();
    delta.update(&mut usage);
    Some(usage)
}

/// The usage of a whole reply; only its `usage` object is parsed.
pub fn from_body(body: &[u8]) -> Option<Usage> {
    static USAGE: Marker = Marker::new(b"\"usage\"");
    counts::in_body::<Counts>(&USAGE, body).map(|counts| counts.usage())
}

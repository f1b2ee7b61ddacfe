//! Watching a stream relayed unchanged (same-dialect pass-through) for the two things the
//! ledger needs: whether the dialect's end event went by, and the usage so far. The bytes are
//! never rebuilt; each event is looked at only if a cheap `memmem` marker says it may matter,
//! and only the usage object is then deserialised, typed, by the dialect's own `usage.rs`.

use crate::codec::Dialect;
use crate::model::Usage;
use crate::sse::{Marker, SseScanner};
use crate::{anthropic, gemini, openai_chat, openai_responses};

/// What the watch has seen so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Watch {
    /// The dialect's end event went by: the client has the whole reply.
    pub finished: bool,
    /// The latest usage the stream reported.
    pub usage: Option<Usage>,
}

/// A watch over one relayed stream of one dialect.
#[derive(Debug)]
pub struct StreamWatch {
    dialect: Dialect,
    scanner: SseScanner,
    seen: Watch,
}

/// The events that end a Responses stream.
static RESPONSES_TERMINAL: [Marker; 4] = [
    Marker::new(b"\"response.completed\""),
    Marker::new(b"\"response.incomplete\""),
    Marker::new(b"\"response.failed\""),
    Marker::new(b"\"response.done\""),
];
static USAGE: Marker = Marker::new(b"\"usage\"");
static MESSAGE_START: Marker = Marker::new(b"\"message_start\"");
static MESSAGE_DELTA: Marker = Marker::new(b"\"message_delta\"");
static MESSAGE_STOP: Marker = Marker::new(b"\"message_stop\"");
static FINISH_REASON: Marker = Marker::new(b"\"finishReason\"");
static USAGE_METADATA: Marker = Marker::new(b"\"usageMetadata\"");

impl StreamWatch {
    pub fn new(dialect: Dialect) -> Self {
        Self {
            dialect,
            scanner: SseScanner::new(),
            seen: Watch::default(),
        }
    }

    /// Looks at the next chunk of the stream; returns what has been seen up to its end.
    pub fn feed(&mut self, chunk: &[u8]) -> Watch {
        let dialect = self.dialect;
        let seen = &mut self.seen;
        self.scanner
            .feed(chunk, |payload| watch_event(dialect, payload, seen));
        self.seen
    }

    /// What has been seen so far.
    pub fn seen(&self) -> Watch {
        self.seen
    }

    /// The last chunk ended inside a line: whatever is written next must end it first.
    pub fn mid_line(&self) -> bool {
        self.scanner.mid_line()
    }
}

/// One event's `data` payload.
fn watch_event(dialect: Dialect, payload: &[u8], seen: &mut Watch) {
    match dialect {
        Dialect::OpenAiChat => {
            if payload.trim_ascii() == b"[DONE]" {
                seen.finished = true;
            } else if USAGE.is_in(payload)
                && let Some(usage) = openai_chat::usage::from_event(payload)
            {
                seen.usage = Some(usage);
            }
        }
        Dialect::OpenAiResponses => {
            if RESPONSES_TERMINAL
                .iter()
                .any(|marker| marker.is_in(payload))
            {
                seen.finished = true;
                if let Some(usage) = openai_responses::usage::from_event(payload) {
                    seen.usage = Some(usage);
                }
            }
        }
        Dialect::Anthropic => {
            if MESSAGE_STOP.is_in(payload) {
                seen.finished = true;
            } else if (MESSAGE_START.is_in(payload) || MESSAGE_DELTA.is_in(payload))
                && let Some(usage) = anthropic::usage::from_event(payload, seen.usage)
            {
                seen.usage = Some(usage);
            }
        }
        Dialect::Gemini => {
            if FINISH_REASON.is_in(payload) {
                seen.finished = true;
            }
            if USAGE_METADATA.is_in(payload)
                && let Some(usage) = gemini::usage::from_event(payload)
            {
                seen.usage = Some(usage);
            }
        }
    }
}

#[cfg(test)]
mod tests;

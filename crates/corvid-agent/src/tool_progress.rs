//! `tool_call_progress`: while the model streams a tool call's arguments (a whole file's content
//! can take minutes on a local model), which tool it is and how many bytes have arrived, so a
//! face shows more than a spinner. One event when a call starts, then at most one per call
//! every [`PROGRESS_EVERY`].

use std::collections::HashMap;
use std::time::{Duration, Instant};

use corvid_protocol::EventMsg;
use corvid_wire::model::StreamEvent;

/// The shortest time between two progress events of one call.
pub(crate) const PROGRESS_EVERY: Duration = Duration::from_millis(250);

/// The calls of one model reply being streamed, by the stream's index.
#[derive(Debug, Default)]
pub(crate) struct ToolProgress {
    calls: HashMap<u32, Preparing>,
}

#[derive(Debug)]
struct Preparing {
    call_id: Option<String>,
    tool: String,
    bytes: u64,
    /// When the last event for this call went out.
    said_at: Instant,
}

impl ToolProgress {
    /// The progress event `event` (seen at `now`) calls for, if any.
    pub(crate) fn saw(&mut self, event: &StreamEvent, now: Instant) -> Option<EventMsg> {
        match event {
            StreamEvent::ToolCallStart {
                index, id, name, ..
            } => {
                let call = Preparing {
                    call_id: Some(id.clone()).filter(|id| !id.is_empty()),
                    tool: name.clone(),
                    bytes: 0,
                    said_at: now,
                };
                let message = call.message();
                self.calls.insert(*index, call);
                Some(message)
            }
            StreamEvent::ToolCallArgs { index, delta } => {
                let call = self.calls.get_mut(index)?;
                call.bytes += delta.len() as u64;
                if now.duration_since(call.said_at) < PROGRESS_EVERY {
                    return None;
                }
                call.said_at = now;
                Some(call.message())
            }
            StreamEvent::ToolCallEnd { index, .. } => {
                self.calls.remove(index);
                None
            }
            _ => None,
        }
    }
}

impl Preparing {
    fn message(&self) -> EventMsg {
        EventMsg::ToolCallProgress {
            call_id: self.call_id.clone(),
            tool: self.tool.clone(),
            bytes: self.bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start(index: u32, id: &str, name: &str) -> StreamEvent {
        StreamEvent::ToolCallStart {
            index,
            id: id.to_owned(),
            name: name.to_owned(),
            signature: None,
        }
    }

    fn args(index: u32, delta: &str) -> StreamEvent {
        StreamEvent::ToolCallArgs {
            index,
            delta: delta.to_owned(),
        }
    }

    fn progress(call_id: Option<&str>, tool: &str, bytes: u64) -> Option<EventMsg> {
        Some(EventMsg::ToolCallProgress {
            call_id: call_id.map(str::to_owned),
            tool: tool.to_owned(),
            bytes,
        })
    }

    #[test]
    fn a_call_is_announced_at_once_then_at_most_every_interval_with_its_bytes() {
        let mut progress_of = ToolProgress::default();
        let t0 = Instant::now();
        assert_eq!(
            progress_of.saw(&start(0, "call-1", "write"), t0),
            progress(Some("call-1"), "write", 0)
        );
        // Pieces inside the interval are counted, not sent.
        assert_eq!(progress_of.saw(&args(0, "{\"path\":"), t0), None);
        let soon = t0 + PROGRESS_EVERY / 2;
        assert_eq!(progress_of.saw(&args(0, "\"a.rs\""), soon), None);
        let later = t0 + PROGRESS_EVERY;
        assert_eq!(
            progress_of.saw(&args(0, ",\"content\":\"x"), later),
            progress(Some("call-1"), "write", 27)
        );
        assert_eq!(progress_of.saw(&args(0, "y"), later), None);
    }

    #[test]
    fn calls_are_counted_apart_and_an_ended_call_says_no_more() {
        let mut progress_of = ToolProgress::default();
        let t0 = Instant::now();
        progress_of.saw(&start(0, "", "edit"), t0);
        progress_of.saw(&start(1, "call-2", "bash"), t0);
        let later = t0 + PROGRESS_EVERY;
        assert_eq!(
            progress_of.saw(&args(1, "{}"), later),
            progress(Some("call-2"), "bash", 2)
        );
        assert_eq!(
            progress_of.saw(&args(0, "abc"), later),
            progress(None, "edit", 3)
        );
        assert_eq!(
            progress_of.saw(&StreamEvent::ToolCallEnd { index: 0 }, later),
            None
        );
        assert_eq!(progress_of.saw(&args(0, "more"), later), None);
        assert_eq!(
            progress_of.saw(&StreamEvent::TextDelta { text: "hi".into() }, later),
            None
        );
    }
}

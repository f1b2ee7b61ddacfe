//! Canonical → client, streamed: `chat.completion.chunk` lines for Zed and the OpenAI SDKs.
//!
//! Zed is strict (`zed-and-xai.md` §4.3): every `data:` line is one JSON object on one line
//! with `id`, `object`, `created`, `model` and `choices`; with `include_usage`, every chunk
//! has `"usage": null` except a last one with `"choices": []` and integer counts. The encoder
//! writes each chunk as soon as its event arrives, except usage: it is held until the end, so
//! the usage chunk always follows the finish chunk, whichever event came first.

use serde::Serialize;

use super::error::ErrorBody;
use super::finish_to_wire;
use super::response::WireUsage;
use crate::model::{FinishReason, StreamEvent, Usage, WireError};

/// What the client-facing stream says about itself.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StreamOptions {
    /// The model name the client asked for, shown on every chunk.
    pub model: String,
    /// The completion id (`chatcmpl-…`) shown on every chunk; when empty, the upstream's id
    /// from the `Start` event is used (and likewise for an empty `model`).
    pub id: String,
    /// Unix seconds, shown on every chunk.
    pub created: i64,
    /// The client's `stream_options.include_usage`: a `"usage": null` on every chunk and a
    /// final usage chunk with `"choices": []`.
    pub include_usage: bool,
}

/// Encodes canonical events as a Chat Completions stream. Any event sequence gives valid
/// framing: a first chunk with `delta.role`, one finish chunk, the usage chunk, `[DONE]`; or,
/// after an `Error` event, `data: {"error":…}` and nothing more.
#[derive(Debug)]
pub struct StreamEncoder {
    options: StreamOptions,
    /// The role chunk was written.
    started: bool,
    /// The finish chunk was written.
    finished: bool,
    /// `[DONE]` or an error was written: the stream is over.
    closed: bool,
    /// The latest usage, written at the end.
    usage: Option<Usage>,
    /// Canonical tool indices in the order their calls started; the position is the wire
    /// index, so indices stay dense from 0 whatever the events say.
    tools: Vec<u32>,
}

impl StreamEncoder {
    /// An encoder for one reply.
    pub fn new(options: StreamOptions) -> Self {
        Self {
            options,
            started: false,
            finished: false,
            closed: false,
            usage: None,
            tools: Vec::new(),
        }
    }

    /// Writes what `event` adds to the stream (possibly nothing).
    pub fn encode(&mut self, event: &StreamEvent, out: &mut Vec<u8>) {
        if self.closed {
            return;
        }
        match event {
            StreamEvent::Start { id, model } => {
                // Chunks must agree on their id: only fill in what the first chunk will show.
                if !self.started {
                    if self.options.id.is_empty() {
                        self.options.id.clone_from(id);
                    }
                    if self.options.model.is_empty() {
                        self.options.model.clone_from(model);
                    }
                }
                self.start(out);
            }
            StreamEvent::TextDelta { text } if !text.is_empty() => self.delta(
                Delta {
                    content: Some(text),
                    ..Delta::default()
                },
                out,
            ),
            StreamEvent::ReasoningDelta { text } if !text.is_empty() => self.delta(
                Delta {
                    reasoning_content: Some(text),
                    ..Delta::default()
                },
                out,
            ),
            StreamEvent::ToolCallStart {
                index, id, name, ..
            } => {
                let wire = self.tools.len() as u32;
                self.tools.push(*index);
                let call = ToolCallDelta {
                    index: wire,
                    id: Some(id),
                    kind: Some("function"),
                    function: FunctionDelta {
                        name: Some(name),
                        arguments: Some(""),
                    },
                };
                self.tool_delta(call, out);
            }
            StreamEvent::ToolCallArgs { index, delta } if !delta.is_empty() => {
                // Arguments of a call that never started have nowhere to go.
                if let Some(wire) = self.tools.iter().position(|known| known == index) {
                    let call = ToolCallDelta {
                        index: wire as u32,
                        id: None,
                        kind: None,
                        function: FunctionDelta {
                            name: None,
                            arguments: Some(delta),
                        },
                    };
                    self.tool_delta(call, out);
                }
            }
            StreamEvent::Usage(usage) => self.usage = Some(*usage),
            StreamEvent::Finish(reason) => self.finish_chunk(*reason, out),
            StreamEvent::Error(error) => {
                stream_error(error, out);
                self.closed = true;
            }
            // Chat has no place for signatures or encrypted reasoning; empty deltas carry
            // nothing; a call's end is implied by the finish.
            StreamEvent::TextDelta { .. }
            | StreamEvent::ReasoningDelta { .. }
            | StreamEvent::ToolCallArgs { .. }
            | StreamEvent::ReasoningSignature { .. }
            | StreamEvent::ReasoningEncrypted { .. }
            | StreamEvent::ToolCallEnd { .. } => {}
        }
    }

    /// The stream is over: the finish chunk if none was written, the usage chunk (with
    /// `include_usage`), `data: [DONE]`. Nothing after an error.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        if self.closed {
            return;
        }
        self.finish_chunk(FinishReason::EndTurn, out);
        if self.options.include_usage {
            let usage = WireUsage::new(&self.usage.unwrap_or_default());
            self.write(Vec::new(), Some(Some(usage)), out);
        }
        out.extend_from_slice(b"data: [DONE]\n\n");
        self.closed = true;
    }

    /// The first chunk, `{"role":"assistant","content":""}`, once.
    fn start(&mut self, out: &mut Vec<u8>) {
        if self.started {
            return;
        }
        self.started = true;
        let delta = Delta {
            role: Some("assistant"),
            content: Some(""),
            ..Delta::default()
        };
        self.choice(delta, None, out);
    }

    fn delta(&mut self, delta: Delta<'_>, out: &mut Vec<u8>) {
        self.start(out);
        if !self.finished {
            self.choice(delta, None, out);
        }
    }

    fn tool_delta(&mut self, call: ToolCallDelta<'_>, out: &mut Vec<u8>) {
        let delta = Delta {
            tool_calls: vec![call],
            ..Delta::default()
        };
        self.delta(delta, out);
    }

    /// The chunk with `delta: {}` and the finish reason, once.
    fn finish_chunk(&mut self, reason: FinishReason, out: &mut Vec<u8>) {
        self.start(out);
        if self.finished {
            return;
        }
        self.finished = true;
        let reason = finish_to_wire(reason, !self.tools.is_empty());
        self.choice(Delta::default(), Some(reason), out);
    }

    fn choice(&self, delta: Delta<'_>, finish_reason: Option<&'static str>, out: &mut Vec<u8>) {
        let choice = Choice {
            index: 0,
            delta,
            finish_reason,
        };
        let usage = self.options.include_usage.then_some(None);
        self.write(vec![choice], usage, out);
    }

    /// One chunk. `usage`: `None` leaves the key out, `Some(None)` writes `null`.
    fn write(&self, choices: Vec<Choice<'_>>, usage: Option<Option<WireUsage>>, out: &mut Vec<u8>) {
        let chunk = Chunk {
            id: &self.options.id,
            object: "chat.completion.chunk",
            created: self.options.created,
            model: &self.options.model,
            choices,
            usage,
        };
        write_data(out, &chunk);
    }
}

/// `data: <json>` and the blank line. serde_json escapes line breaks inside strings, so the
/// JSON is always one line.
fn write_data(out: &mut Vec<u8>, value: &impl Serialize) {
    out.extend_from_slice(b"data: ");
    // Cannot fail: plain structs of strings and numbers, written into a Vec.
    let _ = serde_json::to_writer(&mut *out, value);
    out.extend_from_slice(b"\n\n");
}

#[derive(Serialize)]
struct Chunk<'a> {
    id: &'a str,
    object: &'static str,
    created: i64,
    model: &'a str,
    choices: Vec<Choice<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: Option<Option<WireUsage>>,
}

#[derive(Serialize)]
struct Choice<'a> {
    index: u32,
    delta: Delta<'a>,
    finish_reason: Option<&'static str>,
}

#[derive(Serialize, Default)]
struct Delta<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    role: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    content: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_content: Option<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<ToolCallDelta<'a>>,
}

#[derive(Serialize)]
struct ToolCallDelta<'a> {
    index: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
    function: FunctionDelta<'a>,
}

#[derive(Serialize)]
struct FunctionDelta<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    arguments: Option<&'a str>,
}

/// The error event that ends a chat stream: `data: {"error":…}`.
pub(crate) fn stream_error(error: &WireError, out: &mut Vec<u8>) {
    write_data(out, &ErrorBody::new(error));
}

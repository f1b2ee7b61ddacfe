//! corvid → client, streamed: canonical events into an Anthropic SSE stream, written for
//! Claude Code, which is strict about it (wire-formats.md §7, pitfalls 1, 6 and 7):
//!
//! - every event is an `event:` line equal to the data's `type`, then a `data:` line;
//! - exactly one `message_start` first, carrying the input count and both cache fields;
//! - one content block open at a time, indices dense from 0, never an empty block, every block
//!   closed before `message_delta`;
//! - `message_delta` carries the stop reason and the cumulative usage, so it waits until both
//!   `Finish` and `Usage` are known (an OpenAI upstream sends its usage after the finish), or
//!   until [`StreamEncoder::finish`];
//! - `message_stop` goes out only from [`StreamEncoder::finish`], when the caller knows the
//!   reply is whole: an `Error` that arrives after the provider's finish is still written as an
//!   `error` event, never swallowed behind a `message_stop` (issue 10, item 19).
//!
//! Parallel tool calls whose argument deltas interleave cannot stream side by side in one-block-
//! at-a-time framing: a call that starts while another tool block is open waits, its arguments
//! buffered, until that block ends.

use std::collections::VecDeque;

use serde_json::{Value, json};

use crate::json_text;
use crate::model::{FinishReason, StreamEvent, Usage, WireError, anthropic_safe_id};

use super::error::error_body;
use super::{finish_to_wire, usage_to_wire};

#[cfg(test)]
mod tests;

/// The message id used when neither the options nor the `Start` event give one.
const FALLBACK_ID: &str = "msg_corvid";

/// What the client is shown about the reply.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StreamOptions {
    /// The model name the client asked for.
    pub model: String,
    /// The message id to show (`msg_…`); empty to use the upstream's.
    pub id: String,
    /// The input token count for `message_start`, when known or estimated before the upstream
    /// reports it (see `count_tokens_estimate`); 0 when `None`.
    pub input_tokens: Option<u64>,
}

/// Encodes canonical events as an Anthropic Messages stream.
#[derive(Debug)]
pub struct StreamEncoder {
    options: StreamOptions,
    /// `message_start` was written.
    started: bool,
    /// `message_stop` or `error` was written: nothing more goes out.
    done: bool,
    /// `message_delta` was written: only `message_stop` or an `error` may follow.
    delta_written: bool,
    /// The index the next content block gets.
    next_block: u32,
    /// The content block currently open: its index and kind.
    open: Option<(u32, Open)>,
    /// Tool calls started while another tool block was open, in order.
    waiting: VecDeque<WaitingTool>,
    /// Canonical indices of the tool calls seen, to keep one start per call.
    tools_seen: Vec<u32>,
    usage: Option<Usage>,
    finish: Option<FinishReason>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    Text,
    Thinking,
    /// A tool_use block, by canonical tool index.
    Tool(u32),
    /// A redacted_thinking block (opened and closed at once).
    Redacted,
}

#[derive(Debug)]
struct WaitingTool {
    index: u32,
    id: String,
    name: String,
    arguments: String,
    ended: bool,
}

impl StreamEncoder {
    /// An encoder for one reply.
    pub fn new(options: StreamOptions) -> Self {
        Self {
            options,
            started: false,
            done: false,
            delta_written: false,
            next_block: 0,
            open: None,
            waiting: VecDeque::new(),
            tools_seen: Vec::new(),
            usage: None,
            finish: None,
        }
    }

    /// Writes what `event` makes complete.
    pub fn encode(&mut self, event: &StreamEvent, out: &mut Vec<u8>) {
        if self.done {
            return;
        }
        let content = !matches!(
            event,
            StreamEvent::Start { .. }
                | StreamEvent::Usage(_)
                | StreamEvent::Finish(_)
                | StreamEvent::Error(_)
        );
        if content && self.finish.is_some() {
            // Content after the finish has no place in the framing.
            return;
        }
        match event {
            StreamEvent::Start { id, model } => self.start(id, model, out),
            StreamEvent::TextDelta { text } if !text.is_empty() => {
                if self.open_kind() != Some(Open::Text) {
                    self.settle(out);
                    self.open_block(Open::Text, json!({"type": "text", "text": ""}), out);
                }
                self.text_delta("text_delta", "text", text, out);
            }
            StreamEvent::ReasoningDelta { text } if !text.is_empty() => {
                self.open_thinking(out);
                self.text_delta("thinking_delta", "thinking", text, out);
            }
            // The signature ends its thinking block (an empty one opens nothing).
            StreamEvent::ReasoningSignature { signature } => {
                if !signature.is_empty() {
                    self.open_thinking(out);
                    self.delta(
                        json!({"type": "signature_delta", "signature": signature}),
                        out,
                    );
                }
                if self.open_kind() == Some(Open::Thinking) {
                    self.close_open(out);
                }
            }
            // Anthropic's redacted thinking has no item id; Responses' encrypted reasoning
            // (which has one) means nothing to an Anthropic client.
            StreamEvent::ReasoningEncrypted { data, id: None } if !data.is_empty() => {
                self.settle(out);
                self.open_block(
                    Open::Redacted,
                    json!({"type": "redacted_thinking", "data": data}),
                    out,
                );
                self.close_open(out);
            }
            // Another provider's encrypted reasoning that corvid minted rides as the signature
            // of a thinking block, which Claude Code keeps and sends back verbatim.
            StreamEvent::ReasoningEncrypted { data, id: Some(_) }
                if crate::minted::is_minted(data) =>
            {
                self.open_thinking(out);
                self.delta(json!({"type": "signature_delta", "signature": data}), out);
                self.close_open(out);
            }
            StreamEvent::ToolCallStart {
                index, id, name, ..
            } => self.tool_start(*index, id, name, out),
            StreamEvent::ToolCallArgs { index, delta } if !delta.is_empty() => {
                if self.open_kind() == Some(Open::Tool(*index)) {
                    self.text_delta("input_json_delta", "partial_json", delta, out);
                } else if let Some(waiting) = self.waiting.iter_mut().find(|w| w.index == *index) {
                    waiting.arguments.push_str(delta);
                }
            }
            StreamEvent::ToolCallEnd { index } => {
                if self.open_kind() == Some(Open::Tool(*index)) {
                    self.close_open(out);
                    self.promote_waiting(out);
                } else if let Some(waiting) = self.waiting.iter_mut().find(|w| w.index == *index) {
                    waiting.ended = true;
                }
            }
            StreamEvent::Usage(usage) => {
                if self.delta_written {
                    return;
                }
                self.usage = Some(*usage);
                if self.finish.is_some() {
                    self.message_delta(out);
                }
            }
            StreamEvent::Finish(reason) => {
                if self.delta_written {
                    return;
                }
                self.settle(out);
                self.finish = Some(*reason);
                if self.usage.is_some() {
                    self.message_delta(out);
                }
            }
            StreamEvent::Error(error) => self.error(error, out),
            // Empty deltas, and foreign encrypted reasoning.
            StreamEvent::TextDelta { .. }
            | StreamEvent::ReasoningDelta { .. }
            | StreamEvent::ReasoningEncrypted { .. }
            | StreamEvent::ToolCallArgs { .. } => {}
        }
    }

    /// The stream is over: closes what is open and writes `message_delta` (with the reason
    /// and usage known so far) and `message_stop`, unless they or an `error` went out already.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        if !self.done {
            self.end(out);
        }
    }

    fn start(&mut self, id: &str, model: &str, out: &mut Vec<u8>) {
        if self.started {
            return;
        }
        self.started = true;
        let id = [self.options.id.as_str(), id]
            .into_iter()
            .find(|id| !id.is_empty())
            .unwrap_or(FALLBACK_ID)
            .to_owned();
        let model = if self.options.model.is_empty() {
            model.to_owned()
        } else {
            self.options.model.clone()
        };
        let usage = self.usage.unwrap_or(Usage {
            input: self.options.input_tokens.unwrap_or(0),
            ..Usage::default()
        });
        write_event(
            out,
            &json!({
                "type": "message_start",
                "message": {
                    "id": id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": null,
                    "stop_sequence": null,
                    "usage": usage_to_wire(&usage),
                },
            }),
        );
    }

    fn open_kind(&self) -> Option<Open> {
        self.open.map(|(_, kind)| kind)
    }

    fn open_thinking(&mut self, out: &mut Vec<u8>) {
        if self.open_kind() != Some(Open::Thinking) {
            self.settle(out);
            // `signature` is present from the start: Claude Code drops thinking blocks without
            // the field, and an unsigned (synthetic) block keeps `""`.
            self.open_block(
                Open::Thinking,
                json!({"type": "thinking", "thinking": "", "signature": ""}),
                out,
            );
        }
    }

    fn tool_start(&mut self, index: u32, id: &str, name: &str, out: &mut Vec<u8>) {
        if self.tools_seen.contains(&index) {
            return;
        }
        self.tools_seen.push(index);
        if matches!(self.open_kind(), Some(Open::Tool(_))) {
            self.waiting.push_back(WaitingTool {
                index,
                id: id.to_owned(),
                name: name.to_owned(),
                arguments: String::new(),
                ended: false,
            });
            return;
        }
        self.close_open(out);
        self.open_tool(index, id, name, out);
    }

    fn open_tool(&mut self, index: u32, id: &str, name: &str, out: &mut Vec<u8>) {
        self.open_block(
            Open::Tool(index),
            json!({"type": "tool_use", "id": anthropic_safe_id(id), "name": name, "input": {}}),
            out,
        );
    }

    /// After a tool block closed: the waiting calls take their turn, in order, until one that
    /// has not ended stays open.
    fn promote_waiting(&mut self, out: &mut Vec<u8>) {
        while let Some(tool) = self.waiting.pop_front() {
            self.open_tool(tool.index, &tool.id, &tool.name, out);
            if !tool.arguments.is_empty() {
                self.delta(
                    json!({"type": "input_json_delta", "partial_json": tool.arguments}),
                    out,
                );
            }
            if !tool.ended {
                return;
            }
            self.close_open(out);
        }
    }

    /// Before a block of another kind, or the end: close the open block, and write out the
    /// waiting tool calls whole.
    fn settle(&mut self, out: &mut Vec<u8>) {
        self.close_open(out);
        for tool in &mut self.waiting {
            tool.ended = true;
        }
        self.promote_waiting(out);
    }

    fn open_block(&mut self, kind: Open, block: Value, out: &mut Vec<u8>) {
        self.start("", "", out);
        self.close_open(out);
        let index = self.next_block;
        self.next_block += 1;
        self.open = Some((index, kind));
        write_event(
            out,
            &json!({"type": "content_block_start", "index": index, "content_block": block}),
        );
    }

    fn delta(&mut self, delta: Value, out: &mut Vec<u8>) {
        if let Some((index, _)) = self.open {
            write_event(
                out,
                &json!({"type": "content_block_delta", "index": index, "delta": delta}),
            );
        }
    }

    /// A delta of one string field, the most frequent events, written without a `Value`.
    fn text_delta(
        &mut self,
        kind: &'static str,
        field: &'static str,
        text: &str,
        out: &mut Vec<u8>,
    ) {
        if let Some((index, _)) = self.open {
            // Written by hand: `{"type":"content_block_delta","index":…,"delta":{"type":kind,
            // field:text}}`, the text serde writes for that value.
            out.extend_from_slice(
                b"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":",
            );
            json_text::write_u64(out, u64::from(index));
            out.extend_from_slice(b",\"delta\":{\"type\":");
            json_text::write_str(out, kind);
            out.push(b',');
            json_text::write_str(out, field);
            out.push(b':');
            json_text::write_str(out, text);
            out.extend_from_slice(b"}}\n\n");
        }
    }

    fn close_open(&mut self, out: &mut Vec<u8>) {
        if let Some((index, _)) = self.open.take() {
            write_event(out, &json!({"type": "content_block_stop", "index": index}));
        }
    }

    /// `message_delta` (unless written already) then `message_stop`.
    fn end(&mut self, out: &mut Vec<u8>) {
        self.message_delta(out);
        write_event(out, &json!({"type": "message_stop"}));
        self.done = true;
    }

    /// `message_delta`, once. A reply that made tool calls ends with `tool_use` even when the
    /// source said `end_turn`.
    fn message_delta(&mut self, out: &mut Vec<u8>) {
        if self.delta_written {
            return;
        }
        self.delta_written = true;
        self.start("", "", out);
        self.settle(out);
        let made_calls = !self.tools_seen.is_empty();
        let reason = match self.finish {
            Some(FinishReason::EndTurn) | None if made_calls => FinishReason::ToolCalls,
            Some(reason) => reason,
            None => FinishReason::EndTurn,
        };
        let usage = self.usage.unwrap_or(Usage {
            input: self.options.input_tokens.unwrap_or(0),
            ..Usage::default()
        });
        write_event(
            out,
            &json!({
                "type": "message_delta",
                "delta": {"stop_reason": finish_to_wire(reason), "stop_sequence": null},
                "usage": usage_to_wire(&usage),
            }),
        );
    }

    fn error(&mut self, error: &WireError, out: &mut Vec<u8>) {
        stream_error(error, out);
        self.done = true;
    }
}

/// One SSE event: an `event:` line equal to the data's `type`, the data on one line, a blank
/// line (pitfall 1).
fn write_event(out: &mut Vec<u8>, data: &Value) {
    let kind = data.get("type").and_then(Value::as_str).unwrap_or_default();
    out.extend_from_slice(b"event: ");
    out.extend_from_slice(kind.as_bytes());
    out.extend_from_slice(b"\ndata: ");
    crate::encoded::write_json(out, data);
    out.extend_from_slice(b"\n\n");
}

/// The `error` event that ends an Anthropic stream.
pub(crate) fn stream_error(error: &WireError, out: &mut Vec<u8>) {
    write_event(out, &error_body(error));
}

//! Upstream → corvid, streamed: Anthropic's SSE events into canonical [`StreamEvent`]s.
//!
//! The decoder dispatches on each `data:` payload's `type` (the `event:` line repeats it). It
//! keeps one entry per open content block, keyed by Anthropic's block index, so that deltas
//! reach the right place; tool blocks get dense canonical tool indices (block 0 text, blocks 1
//! and 2 tool_use → tools 0 and 1, pitfall 4).

use std::collections::HashMap;

use serde_json::Value;

use crate::model::{ErrorKind, FinishReason, NameMap, StreamEvent, Usage, WireError};
use crate::sse::SseScanner;

use super::error::kind_from_type;
use super::{finish_from_wire, usage_from_wire};

#[cfg(test)]
mod tests;

/// Decodes an Anthropic Messages stream, fed chunk by chunk (split anywhere).
#[derive(Debug)]
pub struct StreamDecoder {
    /// Restores tool names the encoder shortened.
    names: NameMap,
    scanner: SseScanner,
    /// `Start` was emitted (from `message_start`, or made up for a stream without one).
    started: bool,
    /// The content blocks started and not yet stopped, by Anthropic block index.
    blocks: HashMap<u64, Block>,
    /// The index of the last block started, for events that lack one.
    last_index: Option<u64>,
    /// The canonical index the next tool call gets.
    next_tool: u32,
    /// Usage so far: input and cache counts from `message_start`, output from `message_delta`.
    usage: Usage,
    /// `Finish` was emitted.
    finished: bool,
    /// `message_stop` or an `error` event arrived: the stream is over.
    ended: bool,
}

/// What an open content block is.
#[derive(Debug)]
enum Block {
    Text,
    Thinking {
        /// A non-empty `signature` in `content_block_start` (a server that sends the whole
        /// block there), emitted at the stop unless a `signature_delta` brings one.
        signature: Option<String>,
    },
    Tool {
        /// The canonical tool index.
        index: u32,
        /// A non-empty `input` in `content_block_start` (some servers send the whole call
        /// there), emitted at the stop unless `input_json_delta`s stream the arguments.
        initial: Option<String>,
    },
    /// A block the canonical model does not carry (server tool blocks…).
    Other,
}

impl StreamDecoder {
    /// A decoder for one reply; `names` is `NameMap::new(&request.tools)`.
    pub fn new(names: NameMap) -> Self {
        Self {
            names,
            scanner: SseScanner::new(),
            started: false,
            blocks: HashMap::new(),
            last_index: None,
            next_tool: 0,
            usage: Usage::default(),
            finished: false,
            ended: false,
        }
    }

    /// `message_stop` or an `error` event arrived: the stream is over.
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// Feeds the next chunk of the body; complete events are appended to `out`.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<StreamEvent>) {
        let mut scanner = std::mem::take(&mut self.scanner);
        scanner.feed(chunk, |payload| self.payload(payload, out));
        if scanner.overlong_lines() > 0 && !self.ended {
            self.corrupt("a line longer than 8 MiB", out);
        }
        self.scanner = scanner;
    }

    /// The body ended. A last event without its line end still counts; a stream that stopped
    /// before `message_stop` (or an `error` event) ends with `Error`.
    pub fn finish(&mut self, out: &mut Vec<StreamEvent>) {
        if self.scanner.mid_line() {
            self.feed(b"\n", out);
        }
        if !self.ended {
            self.ended = true;
            out.push(StreamEvent::Error(WireError::api(
                "the upstream stream ended before message_stop",
            )));
        }
    }

    fn payload(&mut self, payload: &[u8], out: &mut Vec<StreamEvent>) {
        if self.ended {
            return;
        }
        // A payload that is not one JSON object (cut short, invalid UTF-8) lost an event the
        // client would have seen: the stream fails rather than go on without it.
        let event = match serde_json::from_slice::<Value>(payload) {
            Ok(event) if event.is_object() => event,
            Ok(_) => return self.corrupt("not a JSON object", out),
            Err(problem) => return self.corrupt(&problem.to_string(), out),
        };
        match event.get("type").and_then(Value::as_str) {
            Some("message_start") => self.message_start(&event, out),
            Some("content_block_start") => self.block_start(&event, out),
            Some("content_block_delta") => self.block_delta(&event, out),
            Some("content_block_stop") => self.block_stop(&event, out),
            Some("message_delta") => self.message_delta(&event, out),
            Some("message_stop") => {
                if !self.finished {
                    self.ensure_started(out);
                    out.push(StreamEvent::Usage(self.usage));
                    self.finish_with(FinishReason::EndTurn, out);
                }
                self.ended = true;
            }
            Some("error") => {
                let error = event.get("error");
                let field = |name: &str| {
                    error
                        .and_then(|error| error.get(name))
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                };
                let code = field("type");
                out.push(StreamEvent::Error(
                    WireError::new(
                        code.as_deref()
                            .and_then(kind_from_type)
                            .unwrap_or(ErrorKind::Api),
                        field("message").unwrap_or_else(|| "upstream error".to_owned()),
                    )
                    .with_code(code),
                ));
                self.ended = true;
            }
            // `ping` and event types this decoder does not know.
            _ => {}
        }
    }

    /// A malformed event: the stream ends with an error.
    fn corrupt(&mut self, problem: &str, out: &mut Vec<StreamEvent>) {
        self.ended = true;
        out.push(StreamEvent::Error(WireError::api(format!(
            "the upstream sent a malformed stream event: {problem}"
        ))));
    }

    fn message_start(&mut self, event: &Value, out: &mut Vec<StreamEvent>) {
        let message = event.get("message");
        self.usage = usage_from_wire(message.and_then(|message| message.get("usage")));
        if !self.started {
            self.started = true;
            let field = |name: &str| {
                message
                    .and_then(|message| message.get(name))
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned()
            };
            out.push(StreamEvent::Start {
                id: field("id"),
                model: field("model"),
            });
        }
    }

    /// A stream that skipped `message_start` still begins with `Start`.
    fn ensure_started(&mut self, out: &mut Vec<StreamEvent>) {
        if !self.started {
            self.started = true;
            out.push(StreamEvent::Start {
                id: String::new(),
                model: String::new(),
            });
        }
    }

    fn block_start(&mut self, event: &Value, out: &mut Vec<StreamEvent>) {
        self.ensure_started(out);
        let index = match event.get("index").and_then(Value::as_u64) {
            Some(index) => index,
            None => self.last_index.map_or(0, |last| last + 1),
        };
        self.last_index = Some(index);
        let block = event.get("content_block");
        let text = |name: &str| {
            block
                .and_then(|block| block.get(name))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let entry = match block
            .and_then(|block| block.get("type"))
            .and_then(Value::as_str)
        {
            Some("text") => {
                push_text(out, text("text"));
                Block::Text
            }
            Some("thinking") => {
                let thinking = text("thinking");
                if !thinking.is_empty() {
                    out.push(StreamEvent::ReasoningDelta { text: thinking });
                }
                Block::Thinking {
                    signature: Some(text("signature")).filter(|s| !s.is_empty()),
                }
            }
            Some("redacted_thinking") => {
                out.push(StreamEvent::ReasoningEncrypted {
                    data: text("data"),
                    id: None,
                });
                Block::Other
            }
            Some("tool_use") => {
                let tool = self.next_tool;
                self.next_tool += 1;
                out.push(StreamEvent::ToolCallStart {
                    index: tool,
                    id: text("id"),
                    name: self.names.original(&text("name")),
                    signature: None,
                });
                let initial = block
                    .and_then(|block| block.get("input"))
                    .filter(|input| input.as_object().is_some_and(|input| !input.is_empty()))
                    .map(Value::to_string);
                Block::Tool {
                    index: tool,
                    initial,
                }
            }
            _ => Block::Other,
        };
        self.blocks.insert(index, entry);
    }

    fn block_delta(&mut self, event: &Value, out: &mut Vec<StreamEvent>) {
        self.ensure_started(out);
        let index = event
            .get("index")
            .and_then(Value::as_u64)
            .or(self.last_index)
            .unwrap_or(0);
        let Some(delta) = event.get("delta") else {
            return;
        };
        let text = |name: &str| {
            delta
                .get(name)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        match (
            delta.get("type").and_then(Value::as_str),
            self.blocks.get_mut(&index),
        ) {
            (Some("text_delta"), Some(Block::Text) | None) => push_text(out, text("text")),
            (Some("thinking_delta"), Some(Block::Thinking { .. }) | None) => {
                let thinking = text("thinking");
                if !thinking.is_empty() {
                    out.push(StreamEvent::ReasoningDelta { text: thinking });
                }
            }
            (Some("signature_delta"), block @ (Some(Block::Thinking { .. }) | None)) => {
                if let Some(Block::Thinking { signature }) = block {
                    *signature = None;
                }
                let signature = text("signature");
                if !signature.is_empty() {
                    out.push(StreamEvent::ReasoningSignature { signature });
                }
            }
            (Some("input_json_delta"), Some(Block::Tool { index, initial })) => {
                // Streamed arguments replace any `input` the start carried.
                *initial = None;
                let partial = text("partial_json");
                if !partial.is_empty() {
                    out.push(StreamEvent::ToolCallArgs {
                        index: *index,
                        delta: partial,
                    });
                }
            }
            // `citations_delta`, deltas of blocks not carried, and unknown delta types.
            _ => {}
        }
    }

    fn block_stop(&mut self, event: &Value, out: &mut Vec<StreamEvent>) {
        let index = event
            .get("index")
            .and_then(Value::as_u64)
            .or(self.last_index)
            .unwrap_or(0);
        match self.blocks.remove(&index) {
            Some(Block::Tool { index, initial }) => {
                if let Some(arguments) = initial {
                    out.push(StreamEvent::ToolCallArgs {
                        index,
                        delta: arguments,
                    });
                }
                out.push(StreamEvent::ToolCallEnd { index });
            }
            Some(Block::Thinking {
                signature: Some(signature),
            }) => out.push(StreamEvent::ReasoningSignature { signature }),
            _ => {}
        }
    }

    fn message_delta(&mut self, event: &Value, out: &mut Vec<StreamEvent>) {
        self.ensure_started(out);
        // `output_tokens` is cumulative; newer servers repeat the input and cache counts.
        if let Some(counts) = super::usage::counts_of(event.get("usage")) {
            counts.update(&mut self.usage);
        }
        out.push(StreamEvent::Usage(self.usage));
        let reason = event
            .get("delta")
            .and_then(|delta| delta.get("stop_reason"))
            .and_then(Value::as_str);
        if let Some(reason) = reason
            && !self.finished
        {
            self.finish_with(finish_from_wire(reason), out);
        }
    }

    /// Emits `Finish`: `ToolCalls` whenever a tool call was made, whatever the upstream said.
    fn finish_with(&mut self, reason: FinishReason, out: &mut Vec<StreamEvent>) {
        self.ensure_started(out);
        self.finished = true;
        let reason = if self.next_tool > 0 {
            FinishReason::ToolCalls
        } else {
            reason
        };
        out.push(StreamEvent::Finish(reason));
    }
}

fn push_text(out: &mut Vec<StreamEvent>, text: String) {
    if !text.is_empty() {
        out.push(StreamEvent::TextDelta { text });
    }
}

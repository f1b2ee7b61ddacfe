//! Upstream → canonical, streamed: `data: <chunk>` lines ending in `data: [DONE]`.
//!
//! The decoder is a state machine over chunks. Bytes go through [`SseScanner`], which hands
//! over each complete `data:` payload however the body was split; each payload is decoded at
//! once, so events leave as soon as their chunk is complete. Tool calls are tracked by their
//! upstream `index` (or, when an upstream leaves it out, by id), numbered densely from 0 in the
//! order they start, and closed together when the reply finishes: Chat streams never say that
//! one call is done, and some upstreams interleave the argument deltas of parallel calls.

use serde_json::Value;

use super::error;
use super::response::{decode_usage, finish, first_choice, reasoning_text};
use super::stream_chunk::Chunk;
use crate::model::{NameMap, StreamEvent, WireError, synthetic_call_id};
use crate::sse::SseScanner;

/// Decodes a Chat Completions stream chunk by chunk (see the module docs of
/// [`crate::openai_chat`]). Handles `reasoning_content`/`reasoning` deltas, tool calls split
/// into many deltas or whole in one, `tool_calls: []`, content and `finish_reason` in one
/// chunk, usage after the finish (`choices: []`), missing tool indices, `data: {"error":…}`
/// (an `Error` event) and a stream cut before `[DONE]` (an `Error` from [`Self::finish`]).
#[derive(Debug)]
pub struct StreamDecoder {
    names: NameMap,
    scanner: SseScanner,
    state: State,
    started: bool,
    /// `Finish` was emitted.
    finished: bool,
    /// The model refused (a `refusal` delta).
    refused: bool,
    calls: Vec<Call>,
    /// The canonical index of the next call to start.
    next_index: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Reading chunks.
    Open,
    /// `[DONE]` arrived: the stream is complete.
    Done,
    /// An error was reported; nothing more is read.
    Failed,
}

/// A tool call being streamed.
#[derive(Debug)]
struct Call {
    /// The upstream's `index`, when it gave one.
    wire_index: Option<u64>,
    /// The upstream's id, when it gave one.
    wire_id: Option<String>,
    /// The canonical index, given when `ToolCallStart` is emitted (it waits for the name).
    index: Option<u32>,
    /// Argument text that arrived before the name.
    pending: String,
}

impl StreamDecoder {
    /// A decoder for one reply; `names` restores tool names the request encoder shortened.
    pub fn new(names: NameMap) -> Self {
        Self {
            names,
            scanner: SseScanner::new(),
            state: State::Open,
            started: false,
            finished: false,
            refused: false,
            calls: Vec::new(),
            next_index: 0,
        }
    }

    /// `[DONE]` arrived or an error was reported: the stream is over.
    pub fn ended(&self) -> bool {
        self.state != State::Open
    }

    /// Feeds the next piece of the body (split anywhere); appends the events it completes.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<StreamEvent>) {
        let mut scanner = std::mem::take(&mut self.scanner);
        scanner.feed(chunk, |payload| self.payload(payload, out));
        if scanner.overlong_lines() > 0 && self.state == State::Open {
            self.fail(
                WireError::api("the upstream sent a line longer than 8 MiB"),
                out,
            );
        }
        self.scanner = scanner;
    }

    /// The body ended. A last line without its line break is still read; a stream that never
    /// said `[DONE]` (and reported no error) ends with an `Error` event, never a silent cut.
    pub fn finish(&mut self, out: &mut Vec<StreamEvent>) {
        if self.scanner.mid_line() {
            self.feed(b"\n", out);
        }
        if self.state == State::Open {
            self.state = State::Failed;
            out.push(StreamEvent::Error(WireError::api(
                "the upstream stream ended before `data: [DONE]`",
            )));
        }
    }

    fn payload(&mut self, payload: &[u8], out: &mut Vec<StreamEvent>) {
        if self.state != State::Open {
            return;
        }
        let payload = payload.trim_ascii();
        if payload.is_empty() {
            return;
        }
        if payload == b"[DONE]" {
            self.close(None, out);
            self.state = State::Done;
            return;
        }
        match Chunk::read(payload) {
            Some(chunk) if !tree_only_now() => self.typed_chunk(&chunk, out),
            _ => self.tree_chunk(payload, out),
        }
    }

    /// A chunk read by the fast path (see [`super::stream_chunk`]).
    fn typed_chunk(&mut self, chunk: &Chunk<'_>, out: &mut Vec<StreamEvent>) {
        if !self.started {
            self.started = true;
            out.push(StreamEvent::Start {
                id: chunk.id.as_str().unwrap_or_default().to_owned(),
                model: chunk.model.as_str().unwrap_or_default().to_owned(),
            });
        }
        if let Some(choice) = chunk.first_choice()
            && !self.finished
        {
            if let Some(delta) = &choice.delta {
                self.texts(
                    delta.reasoning_text(),
                    delta.content.as_str(),
                    delta.refusal.as_str(),
                    out,
                );
                for call in delta.tool_calls.iter().flatten() {
                    let (name, arguments) = match &call.function {
                        Some(function) => (function.name.as_str(), function.arguments()),
                        None => (None, String::new()),
                    };
                    self.tool_delta(call.index(), call.id.as_str(), arguments, name, out);
                }
                if let Some(function) = &delta.function_call {
                    let arguments = function.arguments();
                    self.tool_delta(Some(0), None, arguments, function.name.as_str(), out);
                }
            }
            if let Some(reason) = choice.finish_reason.as_str() {
                self.close(Some(reason), out);
            }
        }
        if let Some(usage) = chunk.usage() {
            out.push(StreamEvent::Usage(decode_usage(&usage)));
        }
    }

    /// A chunk read as a `Value` tree: the reference path, and the one for errors and odd
    /// shapes.
    fn tree_chunk(&mut self, payload: &[u8], out: &mut Vec<StreamEvent>) {
        let chunk = match serde_json::from_slice::<Value>(payload) {
            Ok(chunk) if chunk.is_object() => chunk,
            Ok(_) => {
                return self.fail(
                    WireError::api("the upstream sent a stream chunk that is not a JSON object"),
                    out,
                );
            }
            Err(problem) => {
                return self.fail(
                    WireError::api(format!(
                        "the upstream sent a malformed stream chunk: {problem}"
                    )),
                    out,
                );
            }
        };
        if chunk.get("error").is_some_and(|error| !error.is_null())
            && let Some(error) = error::from_stream(&chunk)
        {
            return self.fail(error, out);
        }
        if !self.started {
            self.started = true;
            let text = |key: &str| {
                chunk
                    .get(key)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned()
            };
            out.push(StreamEvent::Start {
                id: text("id"),
                model: text("model"),
            });
        }
        if let Some(choice) = chunk
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|choices| first_choice(choices))
        {
            self.choice(choice, out);
        }
        if let Some(usage) = chunk.get("usage").filter(|usage| usage.is_object()) {
            out.push(StreamEvent::Usage(decode_usage(usage)));
        }
    }

    fn choice(&mut self, choice: &Value, out: &mut Vec<StreamEvent>) {
        if self.finished {
            // Nothing belongs to the reply after its finish (only usage, read elsewhere).
            return;
        }
        if let Some(delta) = choice.get("delta").filter(|delta| delta.is_object()) {
            self.texts(
                reasoning_text(delta),
                delta.get("content").and_then(Value::as_str),
                delta.get("refusal").and_then(Value::as_str),
                out,
            );
            for call in delta
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let function = call.get("function").unwrap_or(&Value::Null);
                let index = call.get("index").and_then(Value::as_u64);
                let id = call.get("id").and_then(Value::as_str);
                let (name, arguments) = tree_function(function);
                self.tool_delta(index, id, arguments, name, out);
            }
            // The deprecated single `function_call`.
            if let Some(function) = delta.get("function_call").filter(|call| call.is_object()) {
                let (name, arguments) = tree_function(function);
                self.tool_delta(Some(0), None, arguments, name, out);
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.close(Some(reason), out);
        }
    }

    /// A delta's reasoning (already filtered non-empty), text and refusal, in that order.
    fn texts(
        &mut self,
        reasoning: Option<&str>,
        content: Option<&str>,
        refusal: Option<&str>,
        out: &mut Vec<StreamEvent>,
    ) {
        if let Some(text) = reasoning {
            out.push(StreamEvent::ReasoningDelta {
                text: text.to_owned(),
            });
        }
        if let Some(text) = content
            && !text.is_empty()
        {
            out.push(StreamEvent::TextDelta {
                text: text.to_owned(),
            });
        }
        if let Some(text) = refusal
            && !text.is_empty()
        {
            self.refused = true;
            out.push(StreamEvent::TextDelta {
                text: text.to_owned(),
            });
        }
    }

    /// One `tool_calls[]` delta: the call it belongs to, its start once the name is known, its
    /// argument text.
    fn tool_delta(
        &mut self,
        index: Option<u64>,
        id: Option<&str>,
        arguments: String,
        name: Option<&str>,
        out: &mut Vec<StreamEvent>,
    ) {
        let id = id.filter(|id| !id.is_empty());
        let slot = self.slot(index, id);
        let name = name.filter(|name| !name.is_empty());
        let Some(call) = self.calls.get_mut(slot) else {
            return;
        };
        if call.wire_id.is_none() {
            call.wire_id = id.map(str::to_owned);
        }
        if let Some(index) = call.index {
            if !arguments.is_empty() {
                out.push(StreamEvent::ToolCallArgs {
                    index,
                    delta: arguments,
                });
            }
        } else {
            call.pending.push_str(&arguments);
            let Some(name) = name else {
                return;
            };
            let index = self.next_index;
            self.next_index += 1;
            call.index = Some(index);
            out.push(StreamEvent::ToolCallStart {
                index,
                id: match &call.wire_id {
                    Some(id) => id.clone(),
                    None => synthetic_call_id(name, "", index as usize),
                },
                name: self.names.original(name),
                signature: None,
            });
            if !call.pending.is_empty() {
                out.push(StreamEvent::ToolCallArgs {
                    index,
                    delta: std::mem::take(&mut call.pending),
                });
            }
        }
    }

    /// The position of the call a delta belongs to, opening a new one when needed. With an
    /// index: the latest call with that index, unless the delta names another id (upstreams
    /// that number every parallel call 0). Without: the call with that id, else the last call.
    fn slot(&mut self, index: Option<u64>, id: Option<&str>) -> usize {
        let found = match index {
            Some(index) => self
                .calls
                .iter()
                .rposition(|call| call.wire_index == Some(index))
                .filter(|&slot| match (id, &self.calls[slot].wire_id) {
                    (Some(id), Some(known)) => id == known,
                    _ => true,
                }),
            None => match id {
                Some(id) => self
                    .calls
                    .iter()
                    .position(|call| call.wire_id.as_deref() == Some(id)),
                None => self.calls.len().checked_sub(1),
            },
        };
        found.unwrap_or_else(|| {
            self.calls.push(Call {
                wire_index: index,
                wire_id: None,
                index: None,
                pending: String::new(),
            });
            self.calls.len() - 1
        })
    }

    /// The reply is over (`finish_reason`, or `[DONE]` without one): every started call ends,
    /// then `Finish`, once.
    fn close(&mut self, reason: Option<&str>, out: &mut Vec<StreamEvent>) {
        if self.finished {
            return;
        }
        self.finished = true;
        // Calls that never got a name cannot be run and were never announced: they are dropped.
        let made_calls = self.next_index > 0;
        for index in 0..self.next_index {
            out.push(StreamEvent::ToolCallEnd { index });
        }
        out.push(StreamEvent::Finish(finish(
            reason,
            made_calls,
            self.refused,
        )));
    }

    fn fail(&mut self, error: WireError, out: &mut Vec<StreamEvent>) {
        self.state = State::Failed;
        out.push(StreamEvent::Error(error));
    }
}

/// A tree `function`'s name and arguments text (a string as it is; an object, which some
/// servers send for a whole call, as its compact JSON; else empty).
fn tree_function(function: &Value) -> (Option<&str>, String) {
    let arguments = match function.get("arguments") {
        Some(Value::String(arguments)) => arguments.clone(),
        Some(arguments @ Value::Object(_)) => arguments.to_string(),
        _ => String::new(),
    };
    (function.get("name").and_then(Value::as_str), arguments)
}

/// Whether a test asked for the tree path only.
#[cfg(not(test))]
fn tree_only_now() -> bool {
    false
}

#[cfg(test)]
fn tree_only_now() -> bool {
    TREE_ONLY.with(std::cell::Cell::get)
}

#[cfg(test)]
thread_local! {
    /// Tests: read every chunk through the tree, the reference the fast path is held to.
    static TREE_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Tests: runs `read` with every chunk read through the tree.
#[cfg(test)]
pub(super) fn tree_only<T>(read: impl FnOnce() -> T) -> T {
    TREE_ONLY.with(|only| only.set(true));
    let answer = read();
    TREE_ONLY.with(|only| only.set(false));
    answer
}

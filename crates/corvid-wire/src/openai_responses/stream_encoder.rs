//! corvid → client, streamed: canonical [`StreamEvent`]s into a Responses event stream.
//!
//! The stream is what OpenAI itself sends, so the official SDKs' stream helpers (which
//! accumulate items by `output_index` and check that `output_item.done` matches
//! `output_item.added`) accept it:
//!
//! - `response.created`, `response.in_progress` (an `in_progress` response, no output);
//! - text: `output_item.added` (message) → `content_part.added` → `output_text.delta`… →
//!   `output_text.done` → `content_part.done` → `output_item.done`;
//! - reasoning: `output_item.added` (reasoning) → `reasoning_summary_part.added` →
//!   `reasoning_summary_text.delta`… → `reasoning_summary_text.done` →
//!   `reasoning_summary_part.done` → `output_item.done` (with `encrypted_content`, which also
//!   carries an Anthropic signature, marked, so the client's replay brings it back);
//! - a tool call: `output_item.added` (function_call, empty arguments) →
//!   `function_call_arguments.delta`… → `.done` → `output_item.done`;
//! - `response.completed` (or `response.incomplete`) with the whole response and its usage.
//!
//! Each event is an `event: <type>` line and a one-line `data:` JSON with a `sequence_number`.
//! A message or reasoning item stays open until something else starts; tool calls stay open
//! until their `ToolCallEnd` (they may interleave). The terminal event waits for
//! [`StreamEncoder::finish`], since usage may follow `Finish`.

use std::io::Write as _;

use serde_json::Value;

use super::events::{self, At};
use super::response::{Envelope, UsageOut, function_call_item, message_item, reasoning_item};
use super::{function_call_item_id, item_id, opaque_reasoning, response_id, status_for};
use crate::json_text;
use crate::model::{FinishReason, StreamEvent, Usage, WireError};

/// What a streamed reply shows the client.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StreamOptions {
    /// The model name the client asked for (empty: the upstream's, from `Start`).
    pub model: String,
    /// The response id; `resp_` is prefixed when missing (empty: the upstream's id).
    pub id: String,
    /// `created_at`, Unix seconds.
    pub created_at: i64,
}

/// The message or reasoning item being streamed.
#[derive(Debug)]
struct Block {
    kind: BlockKind,
    output_index: usize,
    item_id: String,
    /// The text streamed into it so far.
    text: String,
}

#[derive(Debug, PartialEq, Eq)]
enum BlockKind {
    Message,
    /// `signature`: the Anthropic signature that ended this thinking, sent marked as
    /// `encrypted_content`.
    Reasoning {
        signature: Option<String>,
    },
}

impl Block {
    fn at(&self) -> At<'_> {
        At {
            item_id: &self.item_id,
            output_index: self.output_index,
        }
    }
}

/// A tool call being streamed.
#[derive(Debug)]
struct Call {
    index: u32,
    output_index: usize,
    call_id: String,
    item_id: String,
    name: String,
    arguments: String,
}

impl Call {
    fn at(&self) -> At<'_> {
        At {
            item_id: &self.item_id,
            output_index: self.output_index,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    NotStarted,
    Streaming,
    Ended,
}

/// Encodes canonical events as a Responses event stream (see the module docs).
#[derive(Debug)]
pub struct StreamEncoder {
    options: StreamOptions,
    id: String,
    model: String,
    sequence: u64,
    phase: Phase,
    /// Finished items by `output_index` (`null` while open).
    output: Vec<Value>,
    block: Option<Block>,
    /// Open tool calls (they may interleave).
    calls: Vec<Call>,
    made_calls: bool,
    usage: Usage,
    finish: Option<FinishReason>,
}

impl StreamEncoder {
    /// An encoder for one reply.
    pub fn new(options: StreamOptions) -> Self {
        Self {
            id: String::new(),
            model: options.model.clone(),
            options,
            sequence: 0,
            phase: Phase::NotStarted,
            output: Vec::new(),
            block: None,
            calls: Vec::new(),
            made_calls: false,
            usage: Usage::default(),
            finish: None,
        }
    }

    /// Writes the events for `event` to `out` (nothing after the stream ended or failed).
    pub fn encode(&mut self, event: &StreamEvent, out: &mut Vec<u8>) {
        if self.phase == Phase::Ended {
            return;
        }
        if let StreamEvent::Start { id, model } = event {
            self.begin(id, model, out);
            return;
        }
        self.begin("", "", out);
        match event {
            StreamEvent::Start { .. } => {}
            StreamEvent::TextDelta { text } => self.text(text, out),
            StreamEvent::ReasoningDelta { text } => self.reasoning(text, out),
            StreamEvent::ReasoningSignature { signature } => self.signature(signature, out),
            StreamEvent::ReasoningEncrypted { data, id } => {
                self.encrypted(data, id.as_deref(), out);
            }
            StreamEvent::ToolCallStart {
                index, id, name, ..
            } => self.call_start(*index, id, name, out),
            StreamEvent::ToolCallArgs { index, delta } => self.call_arguments(*index, delta, out),
            StreamEvent::ToolCallEnd { index } => {
                if let Some(position) = self.calls.iter().position(|call| call.index == *index) {
                    self.call_end(position, out);
                }
            }
            StreamEvent::Usage(usage) => self.usage = *usage,
            StreamEvent::Finish(reason) => {
                self.finish = Some(*reason);
                self.close_all(out);
            }
            StreamEvent::Error(error) => self.error(error, out),
        }
    }

    /// The stream is over: closes open items and writes `response.completed` (or
    /// `response.incomplete`) with the whole response. Nothing after an error.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        if self.phase == Phase::Ended {
            return;
        }
        self.begin("", "", out);
        self.close_all(out);
        self.phase = Phase::Ended;
        let finish = match self.finish {
            _ if self.made_calls => FinishReason::ToolCalls,
            Some(reason) => reason,
            None => FinishReason::EndTurn,
        };
        let (status, incomplete_details) = status_for(finish);
        let kind = if status == "completed" {
            "response.completed"
        } else {
            "response.incomplete"
        };
        let output = std::mem::take(&mut self.output);
        let response = Envelope::new(
            &self.id,
            &self.model,
            self.options.created_at,
            (status, incomplete_details),
            &output,
            Some(UsageOut::new(&self.usage)),
        );
        write_lifecycle(out, kind, &response, self.sequence);
        self.sequence += 1;
    }

    fn begin(&mut self, upstream_id: &str, upstream_model: &str, out: &mut Vec<u8>) {
        if self.phase != Phase::NotStarted {
            return;
        }
        self.phase = Phase::Streaming;
        let id = if self.options.id.is_empty() {
            upstream_id
        } else {
            &self.options.id
        };
        self.id = response_id(id);
        if self.model.is_empty() {
            upstream_model.clone_into(&mut self.model);
        }
        let response = Envelope::new(
            &self.id,
            &self.model,
            self.options.created_at,
            ("in_progress", Value::Null),
            [(); 0],
            None,
        );
        for kind in ["response.created", "response.in_progress"] {
            write_lifecycle(out, kind, &response, self.sequence);
            self.sequence += 1;
        }
    }

    fn text(&mut self, text: &str, out: &mut Vec<u8>) {
        if text.is_empty() {
            return;
        }
        if !matches!(&self.block, Some(block) if block.kind == BlockKind::Message) {
            let block = self.open_block(BlockKind::Message, out);
            let event = events::content_part("added", block.at(), "");
            self.emit(event, out);
        }
        if let Some(block) = &mut self.block {
            block.text.push_str(text);
            let at = At {
                item_id: &block.item_id,
                output_index: block.output_index,
            };
            write_delta(out, Delta::Text, at, text, &mut self.sequence);
        }
    }

    fn reasoning(&mut self, text: &str, out: &mut Vec<u8>) {
        if text.is_empty() {
            return;
        }
        // Text after a signature belongs to the next thinking block.
        if !self.reasoning_open() {
            self.open_block(BlockKind::Reasoning { signature: None }, out);
        }
        let Some(block) = &mut self.block else {
            return;
        };
        let first = block.text.is_empty();
        block.text.push_str(text);
        if first {
            let part_added = events::summary_part("added", block.at(), "");
            self.emit(part_added, out);
        }
        // `emit` needed the whole encoder; the block is still the one just written to.
        if let Some(block) = &self.block {
            write_delta(out, Delta::Summary, block.at(), text, &mut self.sequence);
        }
    }

    /// Whether a reasoning item without a signature is open (more thinking can join it).
    fn reasoning_open(&self) -> bool {
        matches!(
            &self.block,
            Some(Block {
                kind: BlockKind::Reasoning { signature: None },
                ..
            })
        )
    }

    /// A signature ends the thinking just streamed; one without thinking text (Anthropic's
    /// omitted display) is a reasoning item of its own.
    fn signature(&mut self, signature: &str, out: &mut Vec<u8>) {
        if !self.reasoning_open() {
            self.open_block(BlockKind::Reasoning { signature: None }, out);
        }
        if let Some(block) = &mut self.block {
            block.kind = BlockKind::Reasoning {
                signature: Some(signature.to_owned()),
            };
        }
    }

    /// Encrypted reasoning ends the reasoning item being streamed (whose id stays: the client
    /// saw it), or comes as a reasoning item of its own with the upstream's id. Anthropic's
    /// redacted thinking (no id) is sent marked, to be recognised when the client replays it.
    fn encrypted(&mut self, data: &str, id: Option<&str>, out: &mut Vec<u8>) {
        let Some(data) = opaque_reasoning(Some(data), id.is_some(), None) else {
            return;
        };
        if !self.reasoning_open() {
            self.close_block(out);
            let output_index = self.reserve_output();
            let item_id = id.map_or_else(|| item_id("rs", &self.id, output_index), str::to_owned);
            let added = events::item("added", output_index, reasoning_item(&item_id, "", None));
            self.emit(added, out);
            self.block = Some(Block {
                kind: BlockKind::Reasoning { signature: None },
                output_index,
                item_id,
                text: String::new(),
            });
        }
        if let Some(block) = self.block.take() {
            self.finish_reasoning(&block, Some(&data), out);
        }
    }

    /// Closes what is open and opens a message or reasoning item at the next output index.
    fn open_block(&mut self, kind: BlockKind, out: &mut Vec<u8>) -> &Block {
        self.close_block(out);
        let output_index = self.reserve_output();
        let (item_id, item) = match kind {
            BlockKind::Message => {
                let item_id = item_id("msg", &self.id, output_index);
                let item = message_item(&item_id, "in_progress", &[]);
                (item_id, item)
            }
            BlockKind::Reasoning { .. } => {
                let item_id = item_id("rs", &self.id, output_index);
                let item = reasoning_item(&item_id, "", None);
                (item_id, item)
            }
        };
        self.emit(events::item("added", output_index, item), out);
        self.block.insert(Block {
            kind,
            output_index,
            item_id,
            text: String::new(),
        })
    }

    fn close_block(&mut self, out: &mut Vec<u8>) {
        let Some(block) = self.block.take() else {
            return;
        };
        match &block.kind {
            BlockKind::Message => {
                self.emit(events::text_done(block.at(), &block.text), out);
                self.emit(events::content_part("done", block.at(), &block.text), out);
                let item = message_item(&block.item_id, "completed", &[&block.text]);
                self.item_done(block.output_index, item, out);
            }
            BlockKind::Reasoning { signature } => {
                let opaque = opaque_reasoning(None, false, signature.as_deref());
                self.finish_reasoning(&block, opaque.as_deref(), out);
            }
        }
    }

    fn finish_reasoning(&mut self, block: &Block, encrypted: Option<&str>, out: &mut Vec<u8>) {
        if !block.text.is_empty() {
            self.emit(events::summary_done(block.at(), &block.text), out);
            self.emit(events::summary_part("done", block.at(), &block.text), out);
        }
        let item = reasoning_item(&block.item_id, &block.text, encrypted);
        self.item_done(block.output_index, item, out);
    }

    fn call_start(&mut self, index: u32, call_id: &str, name: &str, out: &mut Vec<u8>) {
        if self.calls.iter().any(|call| call.index == index) {
            return;
        }
        self.close_block(out);
        self.made_calls = true;
        let output_index = self.reserve_output();
        let item = function_call_item(call_id, name, "", "in_progress");
        self.emit(events::item("added", output_index, item), out);
        self.calls.push(Call {
            index,
            output_index,
            call_id: call_id.to_owned(),
            item_id: function_call_item_id(call_id),
            name: name.to_owned(),
            arguments: String::new(),
        });
    }

    fn call_arguments(&mut self, index: u32, delta: &str, out: &mut Vec<u8>) {
        let Some(call) = self.calls.iter_mut().find(|call| call.index == index) else {
            return;
        };
        if delta.is_empty() {
            return;
        }
        call.arguments.push_str(delta);
        write_delta(out, Delta::Arguments, call.at(), delta, &mut self.sequence);
    }

    /// Ends the call at `position` in `calls`; a call that got no arguments gets `{}`.
    fn call_end(&mut self, position: usize, out: &mut Vec<u8>) {
        if self.calls[position].arguments.trim().is_empty() {
            let index = self.calls[position].index;
            self.call_arguments(index, "{}", out);
        }
        let call = self.calls.remove(position);
        self.emit(
            events::arguments_done(call.at(), &call.name, &call.arguments),
            out,
        );
        let item = function_call_item(&call.call_id, &call.name, &call.arguments, "completed");
        self.item_done(call.output_index, item, out);
    }

    fn close_all(&mut self, out: &mut Vec<u8>) {
        self.close_block(out);
        while !self.calls.is_empty() {
            self.call_end(0, out);
        }
    }

    fn reserve_output(&mut self) -> usize {
        self.output.push(Value::Null);
        self.output.len() - 1
    }

    fn item_done(&mut self, output_index: usize, item: Value, out: &mut Vec<u8>) {
        let mut event = events::item("done", output_index, item);
        self.emit_in_place(&mut event, out);
        // The item moves into the final `output` once written: no copy of its text.
        if let Some(slot) = self.output.get_mut(output_index) {
            *slot = event["item"].take();
        }
    }

    fn error(&mut self, error: &WireError, out: &mut Vec<u8>) {
        self.phase = Phase::Ended;
        self.emit(error_data(error), out);
    }

    /// Writes one event: `event: <type>`, `data: <json with sequence_number>`, blank line.
    fn emit(&mut self, mut data: Value, out: &mut Vec<u8>) {
        self.emit_in_place(&mut data, out);
    }

    /// [`Self::emit`] of an event the caller keeps (it adds `sequence_number`).
    fn emit_in_place(&mut self, data: &mut Value, out: &mut Vec<u8>) {
        data["sequence_number"] = Value::from(self.sequence);
        self.sequence += 1;
        out.extend_from_slice(b"event: ");
        out.extend_from_slice(data["type"].as_str().unwrap_or_default().as_bytes());
        out.extend_from_slice(b"\ndata: ");
        // Serialised, not `Display`ed: the same compact text without `core::fmt`.
        crate::encoded::write_json(out, data);
        out.extend_from_slice(b"\n\n");
    }
}

/// The delta events, the most frequent ones.
#[derive(Clone, Copy)]
enum Delta {
    /// `response.output_text.delta`.
    Text,
    /// `response.reasoning_summary_text.delta`.
    Summary,
    /// `response.function_call_arguments.delta`.
    Arguments,
}

/// Writes a delta event by hand, numbered `sequence` (then advanced): the same text as the
/// value `events::text_delta`, `summary_delta` or `arguments_delta` makes, its fields in that
/// order, then the sequence number.
fn write_delta(out: &mut Vec<u8>, delta: Delta, at: At<'_>, text: &str, sequence: &mut u64) {
    // The event's type, and what comes between `output_index` and `delta` and after `delta`.
    let (kind, between, after): (&[u8], &[u8], &[u8]) = match delta {
        Delta::Text => (
            b"response.output_text.delta",
            b",\"content_index\":0",
            b",\"logprobs\":[]",
        ),
        Delta::Summary => (
            b"response.reasoning_summary_text.delta",
            b",\"summary_index\":0",
            b"",
        ),
        Delta::Arguments => (b"response.function_call_arguments.delta", b"", b""),
    };
    out.extend_from_slice(b"event: ");
    out.extend_from_slice(kind);
    out.extend_from_slice(b"\ndata: {\"type\":\"");
    out.extend_from_slice(kind);
    out.extend_from_slice(b"\",\"item_id\":");
    json_text::write_str(out, at.item_id);
    out.extend_from_slice(b",\"output_index\":");
    json_text::write_u64(out, at.output_index as u64);
    out.extend_from_slice(between);
    out.extend_from_slice(b",\"delta\":");
    json_text::write_str(out, text);
    out.extend_from_slice(after);
    out.extend_from_slice(b",\"sequence_number\":");
    json_text::write_u64(out, *sequence);
    out.extend_from_slice(b"}\n\n");
    *sequence += 1;
}

/// A lifecycle event (`response.created`, `.in_progress`, `.completed`, `.incomplete`),
/// written from the typed envelope: the same text as `events::lifecycle` of `envelope`'s value
/// with its `sequence_number` last.
fn write_lifecycle<O: serde::Serialize>(
    out: &mut Vec<u8>,
    kind: &str,
    response: &Envelope<'_, O>,
    sequence_number: u64,
) {
    #[derive(serde::Serialize)]
    struct Lifecycle<'a, R> {
        #[serde(rename = "type")]
        kind: &'a str,
        response: &'a R,
        sequence_number: u64,
    }
    out.extend_from_slice(b"event: ");
    out.extend_from_slice(kind.as_bytes());
    out.extend_from_slice(b"\ndata: ");
    crate::encoded::write_json(
        out,
        &Lifecycle {
            kind,
            response,
            sequence_number,
        },
    );
    out.extend_from_slice(b"\n\n");
}

/// An `error` event's data: the error's own code, else the type its kind maps to.
fn error_data(error: &WireError) -> Value {
    let code = error
        .code_str()
        .unwrap_or(crate::openai_chat::error_type(error.kind));
    events::error(code, &error.message)
}

/// The error event that ends a Responses stream whose other events this encoder did not write
/// (a relayed one), so without a `sequence_number` of its own.
pub(crate) fn stream_error(error: &WireError, out: &mut Vec<u8>) {
    // Writing to a Vec cannot fail.
    let _ = write!(out, "event: error\ndata: {}\n\n", error_data(error));
}

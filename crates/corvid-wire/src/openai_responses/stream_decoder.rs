//! Upstream → corvid, streamed: Responses SSE events into canonical [`StreamEvent`]s.
//!
//! The stream is a series of typed events about output items, each item addressed by its
//! `item_id` and `output_index`. Text and reasoning arrive as deltas; function-call arguments
//! arrive as deltas keyed by the item id (`fc_…`), not the call id, so the decoder keeps item id
//! → call (pitfall 10). Providers differ in what they repeat: OpenAI may send arguments or text
//! only in the `.done` events (pitfall 5), xAI sends complete arguments in `output_item.added`
//! (pitfall 23), and a terminal `response` may list items no event announced. Every text or
//! argument is therefore emitted once: from its deltas if there were any, else from whichever
//! later event carries it whole.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::error::stream_error;
use super::{
    Opaque, REASONING_PART_SEPARATOR, content_part_text, finish_from_status, reasoning_item_text,
};
use crate::model::{NameMap, StreamEvent, WireError, synthetic_call_id};
use crate::sse::SseScanner;

/// Which stream of an item a text belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Channel {
    /// A message content part (`output_text` or `refusal`), by `content_index`.
    Content,
    /// A reasoning summary part, by `summary_index`.
    Summary,
    /// A reasoning `reasoning_text` part, by `content_index`.
    ReasoningText,
}

/// One part of one item: item key, channel, part index.
type PartKey = (String, Channel, u64);

/// A function call being streamed.
#[derive(Debug)]
struct Call {
    index: u32,
    /// The arguments emitted so far.
    arguments: String,
    /// The arguments came whole with the item (xAI): deltas would repeat them.
    whole_at_start: bool,
    ended: bool,
}

/// Decodes a Responses event stream chunk by chunk (see the module docs).
#[derive(Debug)]
pub struct StreamDecoder {
    names: NameMap,
    scanner: SseScanner,
    started: bool,
    /// A terminal event or an error was seen: the rest is ignored.
    ended: bool,
    calls: Vec<Call>,
    /// Item key (item id, and `#<output_index>`) → position in `calls`.
    call_keys: HashMap<String, usize>,
    /// `output_index` → item id, for events that carry only the index.
    item_ids: HashMap<u64, String>,
    /// Parts whose text was emitted.
    streamed: HashSet<PartKey>,
    /// The reasoning part that emitted text last, by item key (to separate summary parts).
    last_reasoning_part: HashMap<String, (Channel, u64)>,
    /// Items whose `output_item.done` was handled.
    done_items: HashSet<String>,
    refused: bool,
}

impl StreamDecoder {
    /// A decoder for one reply; `names` restores tool names the request encoder shortened.
    pub fn new(names: NameMap) -> Self {
        Self {
            names,
            scanner: SseScanner::new(),
            started: false,
            ended: false,
            calls: Vec::new(),
            call_keys: HashMap::new(),
            item_ids: HashMap::new(),
            streamed: HashSet::new(),
            last_reasoning_part: HashMap::new(),
            done_items: HashSet::new(),
            refused: false,
        }
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

    /// The body ended. A stream without `response.completed` (or another terminal event) was
    /// cut short: that is an [`StreamEvent::Error`], never a silent truncation.
    pub fn finish(&mut self, out: &mut Vec<StreamEvent>) {
        // A body may end right after its last `data:` line, without the line end.
        self.feed(b"\n", out);
        if !self.ended {
            self.ended = true;
            out.push(StreamEvent::Error(WireError::api(
                "the upstream stream ended before the response was complete",
            )));
        }
    }

    fn payload(&mut self, payload: &[u8], out: &mut Vec<StreamEvent>) {
        if self.ended {
            return;
        }
        // `[DONE]` (some compatible servers) and empty `data:` lines carry nothing. Any other
        // payload that is not one JSON object (cut short, invalid UTF-8) lost an event the
        // client would have seen: the stream fails rather than go on without it.
        let trimmed = payload.trim_ascii();
        if trimmed.is_empty() || trimmed == b"[DONE]" {
            return;
        }
        let event = match serde_json::from_slice::<Value>(trimmed) {
            Ok(event) if event.is_object() => event,
            Ok(_) => return self.corrupt("not a JSON object", out),
            Err(problem) => return self.corrupt(&problem.to_string(), out),
        };
        let kind = event["type"].as_str().unwrap_or_default();
        match kind {
            "response.created" | "response.in_progress" | "response.queued" => {
                self.start(&event["response"], out);
            }
            "response.output_item.added" => {
                self.start(&Value::Null, out);
                self.item_added(&event, out);
            }
            "response.output_item.done" => {
                self.start(&Value::Null, out);
                let key = self.item_key(&event["item"], &event["output_index"]);
                self.item_done(&event["item"], key, out);
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                self.refused |= kind == "response.refusal.delta";
                let part = self.part_key(&event, Channel::Content, "content_index");
                self.text(part, event["delta"].as_str(), out);
            }
            "response.output_text.done" => {
                let part = self.part_key(&event, Channel::Content, "content_index");
                self.text_once(part, event["text"].as_str(), out);
            }
            "response.refusal.done" => {
                self.refused = true;
                let part = self.part_key(&event, Channel::Content, "content_index");
                self.text_once(part, event["refusal"].as_str(), out);
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                let part = self.reasoning_part_key(&event, kind);
                self.reasoning(part, event["delta"].as_str(), out);
            }
            "response.reasoning_summary_text.done" | "response.reasoning_text.done" => {
                let part = self.reasoning_part_key(&event, kind);
                if !self.streamed.contains(&part) {
                    self.reasoning(part, event["text"].as_str(), out);
                }
            }
            "response.function_call_arguments.delta" => self.arguments_delta(&event, out),
            "response.function_call_arguments.done" => {
                if let Some(position) = self.find_call(&event) {
                    self.complete_arguments(position, event["arguments"].as_str(), out);
                }
            }
            "response.completed" | "response.incomplete" | "response.failed" | "response.done" => {
                self.terminal(kind, &event["response"], out);
            }
            "error" => {
                self.ended = true;
                out.push(StreamEvent::Error(stream_error(
                    &event,
                    "upstream stream error",
                )));
            }
            _ => {}
        }
    }

    fn start(&mut self, response: &Value, out: &mut Vec<StreamEvent>) {
        if !self.started {
            self.started = true;
            out.push(StreamEvent::Start {
                id: response["id"].as_str().unwrap_or_default().to_owned(),
                model: response["model"].as_str().unwrap_or_default().to_owned(),
            });
        }
    }

    /// The key of an item: its id, else its output index.
    fn item_key(&mut self, item: &Value, output_index: &Value) -> String {
        match (item["id"].as_str(), output_index.as_u64()) {
            (Some(id), Some(index)) => {
                self.item_ids.insert(index, id.to_owned());
                id.to_owned()
            }
            (Some(id), None) => id.to_owned(),
            (None, index) => self.index_key(index),
        }
    }

    /// The key of the item an event is about: `item_id`, else the item at `output_index`.
    fn event_item_key(&self, event: &Value) -> String {
        match event["item_id"].as_str() {
            Some(id) => id.to_owned(),
            None => self.index_key(event["output_index"].as_u64()),
        }
    }

    fn index_key(&self, index: Option<u64>) -> String {
        let index = index.unwrap_or_default();
        self.item_ids
            .get(&index)
            .cloned()
            .unwrap_or_else(|| format!("#{index}"))
    }

    fn part_key(&self, event: &Value, channel: Channel, index_field: &str) -> PartKey {
        let index = event[index_field].as_u64().unwrap_or_default();
        (self.event_item_key(event), channel, index)
    }

    fn reasoning_part_key(&self, event: &Value, kind: &str) -> PartKey {
        if kind.starts_with("response.reasoning_summary_text") {
            self.part_key(event, Channel::Summary, "summary_index")
        } else {
            self.part_key(event, Channel::ReasoningText, "content_index")
        }
    }

    fn text(&mut self, part: PartKey, text: Option<&str>, out: &mut Vec<StreamEvent>) {
        let Some(text) = text.filter(|text| !text.is_empty()) else {
            return;
        };
        self.streamed.insert(part);
        out.push(StreamEvent::TextDelta {
            text: text.to_owned(),
        });
    }

    /// Emits a part's whole text unless its deltas already did.
    fn text_once(&mut self, part: PartKey, text: Option<&str>, out: &mut Vec<StreamEvent>) {
        if !self.streamed.contains(&part) {
            self.text(part, text, out);
        }
    }

    /// Emits reasoning text, with a blank line first when it starts a new part of an item
    /// that already streamed one (summary parts are paragraphs).
    fn reasoning(&mut self, part: PartKey, text: Option<&str>, out: &mut Vec<StreamEvent>) {
        let Some(text) = text.filter(|text| !text.is_empty()) else {
            return;
        };
        let (item, channel, index) = &part;
        let previous = self
            .last_reasoning_part
            .insert(item.clone(), (*channel, *index));
        let text = match previous {
            Some(previous) if previous != (*channel, *index) => {
                format!("{REASONING_PART_SEPARATOR}{text}")
            }
            _ => text.to_owned(),
        };
        self.streamed.insert(part);
        out.push(StreamEvent::ReasoningDelta { text });
    }

    fn item_added(&mut self, event: &Value, out: &mut Vec<StreamEvent>) {
        let item = &event["item"];
        let key = self.item_key(item, &event["output_index"]);
        if item["type"] == "function_call" {
            self.open_call(item, key, event["output_index"].as_u64(), out);
        }
    }

    /// The call for a `function_call` item, announcing it the first time. Arguments the item
    /// already carries are emitted at once.
    fn open_call(
        &mut self,
        item: &Value,
        key: String,
        output_index: Option<u64>,
        out: &mut Vec<StreamEvent>,
    ) -> usize {
        if let Some(&position) = self.call_keys.get(&key) {
            return position;
        }
        let position = self.calls.len();
        let index = u32::try_from(position).unwrap_or(u32::MAX);
        let name = item["name"].as_str().unwrap_or_default();
        let id = item["call_id"]
            .as_str()
            .or(item["id"].as_str())
            .map_or_else(|| synthetic_call_id(name, "", position), str::to_owned);
        out.push(StreamEvent::ToolCallStart {
            index,
            id,
            name: self.names.original(name),
            signature: None,
        });
        let arguments = item["arguments"].as_str().unwrap_or_default();
        if !arguments.is_empty() {
            out.push(StreamEvent::ToolCallArgs {
                index,
                delta: arguments.to_owned(),
            });
        }
        self.calls.push(Call {
            index,
            arguments: arguments.to_owned(),
            whole_at_start: !arguments.is_empty(),
            ended: false,
        });
        if let Some(output_index) = output_index {
            self.call_keys.insert(format!("#{output_index}"), position);
        }
        self.call_keys.insert(key, position);
        position
    }

    /// The call an argument event is about: by item id, else output index, else the latest
    /// open call.
    fn find_call(&self, event: &Value) -> Option<usize> {
        let by_id = event["item_id"]
            .as_str()
            .and_then(|id| self.call_keys.get(id));
        let by_index = || {
            event["output_index"]
                .as_u64()
                .and_then(|index| self.call_keys.get(&format!("#{index}")))
        };
        by_id
            .or_else(by_index)
            .copied()
            .or_else(|| self.calls.iter().rposition(|call| !call.ended))
    }

    fn arguments_delta(&mut self, event: &Value, out: &mut Vec<StreamEvent>) {
        let Some(position) = self.find_call(event) else {
            return;
        };
        let delta = event["delta"].as_str().unwrap_or_default();
        let call = &mut self.calls[position];
        if delta.is_empty() || call.whole_at_start || call.ended {
            return;
        }
        call.arguments.push_str(delta);
        out.push(StreamEvent::ToolCallArgs {
            index: call.index,
            delta: delta.to_owned(),
        });
    }

    /// Reconciles the emitted arguments with the complete ones: emits what is missing when the
    /// emitted text is a prefix of them, nothing when they match (or cannot be reconciled).
    fn complete_arguments(
        &mut self,
        position: usize,
        arguments: Option<&str>,
        out: &mut Vec<StreamEvent>,
    ) {
        let call = &mut self.calls[position];
        let Some(arguments) = arguments else {
            return;
        };
        if let Some(missing) = arguments.strip_prefix(call.arguments.as_str())
            && !missing.is_empty()
        {
            call.arguments.push_str(missing);
            out.push(StreamEvent::ToolCallArgs {
                index: call.index,
                delta: missing.to_owned(),
            });
        }
    }

    fn end_call(&mut self, position: usize, out: &mut Vec<StreamEvent>) {
        let call = &mut self.calls[position];
        if !call.ended {
            call.ended = true;
            out.push(StreamEvent::ToolCallEnd { index: call.index });
        }
    }

    fn item_done(&mut self, item: &Value, key: String, out: &mut Vec<StreamEvent>) {
        if !self.done_items.insert(key.clone()) {
            return;
        }
        match item["type"].as_str() {
            Some("function_call") => {
                let output_index = self
                    .item_ids
                    .iter()
                    .find_map(|(index, id)| (*id == key).then_some(*index));
                let position = self.open_call(item, key, output_index, out);
                self.complete_arguments(position, item["arguments"].as_str(), out);
                self.end_call(position, out);
            }
            Some("message") => {
                for (index, part) in item["content"].as_array().into_iter().flatten().enumerate() {
                    self.refused |= part["type"] == "refusal";
                    let part_key = (key.clone(), Channel::Content, index as u64);
                    self.text_once(part_key, content_part_text(part), out);
                }
            }
            Some("reasoning") => {
                if !self.last_reasoning_part.contains_key(&key) {
                    let text = reasoning_item_text(item);
                    self.reasoning((key.clone(), Channel::Summary, 0), Some(&text), out);
                }
                if let Some(data) = item["encrypted_content"].as_str() {
                    out.push(match Opaque::read(data) {
                        // Responses' encrypted reasoning always has an item id.
                        Opaque::Encrypted(data) => StreamEvent::ReasoningEncrypted {
                            data,
                            id: Some(item["id"].as_str().map_or_else(
                                || format!("rs_{}", key.trim_start_matches('#')),
                                str::to_owned,
                            )),
                        },
                        Opaque::Signature(signature) => {
                            StreamEvent::ReasoningSignature { signature }
                        }
                        Opaque::Redacted(data) => {
                            StreamEvent::ReasoningEncrypted { data, id: None }
                        }
                    });
                }
            }
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

    /// `response.completed`, `.incomplete`, `.failed` or xAI's `response.done`: items the
    /// events left unfinished are completed from the response, then usage and the finish
    /// reason (or the failure) close the stream.
    fn terminal(&mut self, kind: &str, response: &Value, out: &mut Vec<StreamEvent>) {
        self.start(response, out);
        self.ended = true;
        if kind == "response.failed" || response["status"] == "failed" {
            out.push(StreamEvent::Error(stream_error(
                &response["error"],
                "the upstream response failed",
            )));
            return;
        }
        for (position, item) in response["output"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let key = self.item_key(item, &Value::from(position));
            self.item_done(item, key, out);
        }
        for position in 0..self.calls.len() {
            self.end_call(position, out);
        }
        if !response["usage"].is_null() {
            out.push(StreamEvent::Usage(super::usage_from_wire(
                &response["usage"],
            )));
        }
        let status = response["status"].as_str().or(match kind {
            "response.incomplete" => Some("incomplete"),
            _ => Some("completed"),
        });
        out.push(StreamEvent::Finish(finish_from_status(
            status,
            response["incomplete_details"]["reason"].as_str(),
            !self.calls.is_empty(),
            self.refused,
        )));
    }
}

//! Streams: `streamGenerateContent?alt=sse`, where every `data:` line is a whole
//! `GenerateContentResponse` holding the next parts, and the last one holds `finishReason` and
//! complete `usageMetadata`. There is no end marker: the stream ends when the body closes.

use serde_json::{Map, Value, json};

use super::error::{error_body, error_from_object};
use super::response::{Chunk, Piece, call_part};
use super::{finish_to_gemini, usage_to_gemini};
use crate::model::{FinishReason, NameMap, StreamEvent, Usage, WireError};
use crate::sse::SseScanner;

/// Upstream Gemini stream → canonical events.
///
/// Text and thought parts become deltas as they arrive. A `functionCall` arrives whole, so it
/// becomes `ToolCallStart` (with its `thoughtSignature`), one `ToolCallArgs` holding all the
/// arguments, and `ToolCallEnd`. Usage is reported whenever it changes: early chunks carry the
/// prompt's count, the last one the complete counts (reported just before `Finish`), and a
/// chunk after the finish may still change them. A `data: {"error":…}` line is an
/// `Error`; so is a body that ends before any `finishReason`.
#[derive(Debug)]
pub struct StreamDecoder {
    names: NameMap,
    scanner: SseScanner,
    started: bool,
    /// Tool calls seen so far (the next call's index).
    calls: u32,
    /// `Finish` has been emitted.
    finished: bool,
    usage: Option<Usage>,
    usage_sent: Option<Usage>,
    /// An `Error` has been emitted: the rest of the body is ignored.
    failed: bool,
}

impl StreamDecoder {
    /// A decoder; `names` restores tool names the request encoder shortened.
    pub fn new(names: NameMap) -> Self {
        Self {
            names,
            scanner: SseScanner::new(),
            started: false,
            calls: 0,
            finished: false,
            usage: None,
            usage_sent: None,
            failed: false,
        }
    }

    /// Feeds the next bytes of the body (split anywhere); complete events go to `out`.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<StreamEvent>) {
        let mut payloads: Vec<Vec<u8>> = Vec::new();
        self.scanner
            .feed(chunk, |payload| payloads.push(payload.to_vec()));
        for payload in payloads {
            self.payload(&payload, out);
        }
        if self.scanner.overlong_lines() > 0 && !self.failed {
            self.fail(
                WireError::api("the Gemini stream sent a line longer than 8 MiB"),
                out,
            );
        }
    }

    /// The body ended: a last line without its line end still counts; a stream that never
    /// said why it finished was cut, which is an `Error`.
    pub fn finish(&mut self, out: &mut Vec<StreamEvent>) {
        if self.scanner.mid_line() {
            self.feed(b"\n", out);
        }
        if self.failed || self.finished {
            return;
        }
        self.fail(
            WireError::api("the Gemini stream ended before its finishReason"),
            out,
        );
    }

    fn payload(&mut self, payload: &[u8], out: &mut Vec<StreamEvent>) {
        let payload = payload.trim_ascii();
        if self.failed || payload.is_empty() || payload == b"[DONE]" {
            return;
        }
        let value = match serde_json::from_slice::<Value>(payload) {
            Ok(value) if value.is_object() => value,
            Ok(_) => {
                let message = "the Gemini stream sent a chunk that is not a JSON object";
                self.fail(WireError::api(message), out);
                return;
            }
            Err(error) => {
                let message = format!("the Gemini stream sent invalid JSON: {error}");
                self.fail(WireError::api(message), out);
                return;
            }
        };
        if let Some(error) = value.get("error") {
            self.fail(error_from_object(0, error), out);
            return;
        }
        let chunk = Chunk::read(&value, &self.names, self.calls as usize);
        if !self.started {
            self.started = true;
            out.push(StreamEvent::Start {
                id: chunk.response_id.clone(),
                model: chunk.model.clone(),
            });
        }
        if chunk.usage.is_some() {
            self.usage = chunk.usage;
        }
        // Counts so far (the prompt's, early on) go before the content they precede; the
        // final counts go with the finish, after the last parts.
        if chunk.finish.is_none() || self.finished {
            self.send_usage(out);
        }
        for piece in chunk.pieces {
            match piece {
                Piece::Text(text) => out.push(StreamEvent::TextDelta { text }),
                Piece::Thought(text) => out.push(StreamEvent::ReasoningDelta { text }),
                Piece::Call(call) => {
                    let index = self.calls;
                    self.calls += 1;
                    out.push(StreamEvent::ToolCallStart {
                        index,
                        id: call.id,
                        name: call.name,
                        signature: call.signature,
                    });
                    out.push(StreamEvent::ToolCallArgs {
                        index,
                        delta: call.arguments,
                    });
                    out.push(StreamEvent::ToolCallEnd { index });
                }
                // Generated images have no stream event (LOSSES.md).
                Piece::Image(_) => {}
            }
        }
        if let Some(reason) = chunk.finish
            && !self.finished
        {
            self.send_usage(out);
            let reason = if self.calls > 0 {
                FinishReason::ToolCalls
            } else {
                reason
            };
            out.push(StreamEvent::Finish(reason));
            self.finished = true;
        }
    }

    fn send_usage(&mut self, out: &mut Vec<StreamEvent>) {
        if let Some(usage) = self.usage
            && self.usage_sent != Some(usage)
        {
            self.usage_sent = Some(usage);
            out.push(StreamEvent::Usage(usage));
        }
    }

    fn fail(&mut self, error: WireError, out: &mut Vec<StreamEvent>) {
        self.failed = true;
        out.push(StreamEvent::Error(error));
    }
}

/// What a [`StreamEncoder`] needs to know about the reply it writes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StreamOptions {
    /// The model name shown to the client (`modelVersion`).
    pub model: String,
}

/// Canonical events → a Gemini SSE stream for a client (such as the google-genai SDK).
///
/// Each event is written as it comes, as a `data:` line holding a `GenerateContentResponse`
/// with the new parts. A tool call is written as one `functionCall` part (id, name, arguments
/// object, `thoughtSignature`) once its arguments are complete, because Gemini clients read
/// calls whole. Each chunk carries the `usageMetadata` known so far; `finishReason` and the
/// final counts go on a last chunk written by [`finish`](Self::finish), since usage may come
/// after `Finish`. Anthropic signatures and
/// encrypted reasoning have no Gemini form and are dropped.
#[derive(Debug)]
pub struct StreamEncoder {
    model: String,
    response_id: String,
    /// Calls whose arguments are still streaming: index, id, name, signature, arguments.
    open_calls: Vec<OpenCall>,
    made_calls: bool,
    finish: Option<FinishReason>,
    usage: Option<Usage>,
    /// The stream is over (finished or failed): nothing more is written.
    done: bool,
}

#[derive(Debug)]
struct OpenCall {
    index: u32,
    id: String,
    name: String,
    signature: Option<String>,
    arguments: String,
}

impl OpenCall {
    fn part(&self) -> Value {
        call_part(
            &self.id,
            &self.name,
            &self.arguments,
            self.signature.as_deref(),
        )
    }
}

impl StreamEncoder {
    /// An encoder for one reply.
    pub fn new(options: StreamOptions) -> Self {
        Self {
            model: options.model,
            response_id: String::new(),
            open_calls: Vec::new(),
            made_calls: false,
            finish: None,
            usage: None,
            done: false,
        }
    }

    /// Writes what `event` adds to the stream (possibly nothing yet).
    pub fn encode(&mut self, event: &StreamEvent, out: &mut Vec<u8>) {
        if self.done {
            return;
        }
        match event {
            StreamEvent::Start { id, .. } => self.response_id.clone_from(id),
            StreamEvent::TextDelta { text } if !text.is_empty() => {
                self.write_parts(vec![json!({ "text": text })], out);
            }
            StreamEvent::ReasoningDelta { text } if !text.is_empty() => {
                self.write_parts(vec![json!({ "text": text, "thought": true })], out);
            }
            // Another provider's opaque reasoning, minted by corvid, rides as a thought part's
            // `thoughtSignature`.
            StreamEvent::ReasoningSignature { signature: token }
            | StreamEvent::ReasoningEncrypted { data: token, .. }
                if crate::minted::is_minted(token) =>
            {
                self.write_parts(
                    vec![json!({ "text": "", "thought": true, "thoughtSignature": token })],
                    out,
                );
            }
            StreamEvent::TextDelta { .. }
            | StreamEvent::ReasoningDelta { .. }
            | StreamEvent::ReasoningSignature { .. }
            | StreamEvent::ReasoningEncrypted { .. } => {}
            StreamEvent::ToolCallStart {
                index,
                id,
                name,
                signature,
            } => {
                self.made_calls = true;
                self.open_calls.push(OpenCall {
                    index: *index,
                    id: id.clone(),
                    name: name.clone(),
                    signature: signature.clone(),
                    arguments: String::new(),
                });
            }
            StreamEvent::ToolCallArgs { index, delta } => {
                if let Some(call) = self.open_calls.iter_mut().find(|call| call.index == *index) {
                    call.arguments.push_str(delta);
                }
            }
            StreamEvent::ToolCallEnd { index } => {
                if let Some(position) = self.open_calls.iter().position(|c| c.index == *index) {
                    let call = self.open_calls.remove(position);
                    self.write_parts(vec![call.part()], out);
                }
            }
            StreamEvent::Usage(usage) => self.usage = Some(*usage),
            StreamEvent::Finish(reason) => self.finish = Some(*reason),
            StreamEvent::Error(error) => {
                self.done = true;
                write_line(&error_body(error), out);
            }
        }
    }

    /// Ends the stream: calls still open are written as they stand, then the last chunk with
    /// `finishReason` (`STOP` for tool calls) and `usageMetadata`.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        if self.done {
            return;
        }
        self.done = true;
        let parts: Vec<Value> = self.open_calls.drain(..).map(|call| call.part()).collect();
        let reason = match self.finish {
            _ if self.made_calls => FinishReason::ToolCalls,
            Some(reason) => reason,
            None => FinishReason::EndTurn,
        };
        let mut chunk = self.chunk(parts);
        chunk["candidates"][0]["finishReason"] = finish_to_gemini(reason).into();
        write_line(&chunk, out);
    }

    fn write_parts(&self, parts: Vec<Value>, out: &mut Vec<u8>) {
        write_line(&self.chunk(parts), out);
    }

    fn chunk(&self, parts: Vec<Value>) -> Value {
        let mut chunk = Map::new();
        chunk.insert(
            "candidates".into(),
            json!([{ "content": { "role": "model", "parts": parts }, "index": 0 }]),
        );
        // Like Gemini, every chunk carries the counts known so far.
        if let Some(usage) = &self.usage {
            chunk.insert("usageMetadata".into(), usage_to_gemini(usage));
        }
        chunk.insert("modelVersion".into(), self.model.clone().into());
        if !self.response_id.is_empty() {
            chunk.insert("responseId".into(), self.response_id.clone().into());
        }
        Value::Object(chunk)
    }
}

/// One SSE event, framed as Gemini frames it.
fn write_line(value: &Value, out: &mut Vec<u8>) {
    out.extend_from_slice(b"data: ");
    out.extend_from_slice(value.to_string().as_bytes());
    out.extend_from_slice(b"\r\n\r\n");
}

#[cfg(test)]
pub(crate) mod tests;

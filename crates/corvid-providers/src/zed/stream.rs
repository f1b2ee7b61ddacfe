//! Zed's `/completions` reply, decoded incrementally: newline-delimited JSON in, canonical
//! [`StreamEvent`]s out (reference §5.2). Pure: no IO, no clock.
//!
//! Each line is either a bare provider event, or — in *wrapped* mode, when the reply carried
//! `x-zed-server-supports-status-messages` — `{"event": <provider event>}` or
//! `{"status": …}`. Provider events go, one at a time, to corvid-wire's stream decoder for that
//! provider's dialect, framed as the SSE `data:` line it expects; statuses are handled here:
//!
//! - `queued` / `started` produce no event (see [`ZedStreamDecoder::status`]);
//! - `failed` becomes an [`StreamEvent::Error`] and ends the stream;
//! - `stream_ended` completes it. In wrapped mode a body that ends without it was cut short:
//!   an `Error`, never a silent success. In bare mode the provider's own end marker decides.
//!
//! In wrapped mode the provider's own end (its `Finish`, and whatever follows it) is held back
//! until `stream_ended` arrives: a client encoder that saw the finish would close the reply as
//! a success before corvid could know it was whole. A reply cut after the provider's end comes
//! out as its content, its usage, then the `Error` — never the `Finish`.
//!
//! Chat Completions chunks (xAI, Baseten) carry no `[DONE]` on this path, so the decoder adds
//! one when the reply is complete.

use corvid_wire::model::{NameMap, StreamEvent, WireError};
use corvid_wire::{anthropic, gemini, openai_chat, openai_responses};
use http::HeaderMap;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::account::ZedPlan;
use super::error::{ZedFailure, classify_code, payment_message, seconds};
use super::models::ZedProvider;

/// The longest line accepted (a provider event with a large tool call fits many times over).
const MAX_LINE: usize = 16 * 1024 * 1024;
/// The response header that turns status lines on.
pub const SERVER_STATUS_HEADER: &str = "x-zed-server-supports-status-messages";

/// How the reply's lines are shaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZedFraming {
    /// `{"event": …}` / `{"status": …}` lines, ending with `stream_ended`.
    Wrapped,
    /// Each line is a bare provider event.
    Bare,
}

impl ZedFraming {
    /// Wrapped when the reply carries the server's status header (presence only).
    pub fn from_headers(headers: &HeaderMap) -> Self {
        if headers.contains_key(SERVER_STATUS_HEADER) {
            Self::Wrapped
        } else {
            Self::Bare
        }
    }
}

/// The last status line seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZedStatus {
    /// Waiting in Zed's queue at this position.
    Queued { position: u64 },
    /// Generation began.
    Started,
    /// The reply is complete.
    StreamEnded,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Open,
    /// `stream_ended` arrived (or, in bare mode, the body ended).
    Ended,
    /// A failure was reported; the rest is ignored.
    Failed,
}

/// corvid-wire's decoder for the provider's dialect.
#[derive(Debug)]
enum Inner {
    Anthropic(anthropic::StreamDecoder),
    Responses(openai_responses::StreamDecoder),
    Chat(openai_chat::StreamDecoder),
    Gemini(gemini::StreamDecoder),
}

impl Inner {
    fn new(provider: ZedProvider, names: NameMap) -> Self {
        match provider {
            ZedProvider::Anthropic => Self::Anthropic(anthropic::StreamDecoder::new(names)),
            ZedProvider::OpenAi => Self::Responses(openai_responses::StreamDecoder::new(names)),
            ZedProvider::XAi | ZedProvider::Baseten => {
                Self::Chat(openai_chat::StreamDecoder::new(names))
            }
            ZedProvider::Google => Self::Gemini(gemini::StreamDecoder::new(names)),
        }
    }

    fn feed(&mut self, chunk: &[u8], out: &mut Vec<StreamEvent>) {
        match self {
            Self::Anthropic(decoder) => decoder.feed(chunk, out),
            Self::Responses(decoder) => decoder.feed(chunk, out),
            Self::Chat(decoder) => decoder.feed(chunk, out),
            Self::Gemini(decoder) => decoder.feed(chunk, out),
        }
    }

    fn finish(&mut self, out: &mut Vec<StreamEvent>) {
        match self {
            Self::Anthropic(decoder) => decoder.finish(out),
            Self::Responses(decoder) => decoder.finish(out),
            Self::Chat(decoder) => decoder.finish(out),
            Self::Gemini(decoder) => decoder.finish(out),
        }
    }
}

/// Decodes one `/completions` reply, fed chunk by chunk (split anywhere).
#[derive(Debug)]
pub struct ZedStreamDecoder {
    provider: ZedProvider,
    framing: ZedFraming,
    inner: Inner,
    line: Vec<u8>,
    /// The current line grew past [`MAX_LINE`].
    overlong: bool,
    state: State,
    /// The provider's decoder emitted `Finish`.
    finish_seen: bool,
    /// The provider's decoder emitted `Error` (it is then over).
    inner_failed: bool,
    /// Wrapped mode: the provider's `Finish` and the events after it, waiting for
    /// `stream_ended`.
    held: Vec<StreamEvent>,
    status: Option<ZedStatus>,
    failure: Option<ZedFailure>,
    plan: Option<ZedPlan>,
}

impl ZedStreamDecoder {
    /// A decoder for a reply from a model of `provider`; `names` is
    /// `NameMap::new(&request.tools)`.
    pub fn new(provider: ZedProvider, framing: ZedFraming, names: NameMap) -> Self {
        Self {
            provider,
            framing,
            inner: Inner::new(provider, names),
            line: Vec::new(),
            overlong: false,
            state: State::Open,
            finish_seen: false,
            inner_failed: false,
            held: Vec::new(),
            status: None,
            failure: None,
            plan: None,
        }
    }

    /// The account's plan, named in payment failures.
    pub fn with_plan(mut self, plan: Option<ZedPlan>) -> Self {
        self.plan = plan;
        self
    }

    pub fn framing(&self) -> ZedFraming {
        self.framing
    }

    /// The last status line seen (`queued`, `started`, `stream_ended`).
    pub fn status(&self) -> Option<ZedStatus> {
        self.status
    }

    /// The failure Zed reported, if any (with its `retry_after`).
    pub fn failure(&self) -> Option<&ZedFailure> {
        self.failure.as_ref()
    }

    /// Whether the reply is complete (`stream_ended`, or a bare reply's end).
    pub fn is_complete(&self) -> bool {
        self.state == State::Ended
    }

    /// Whether nothing more will come out: complete, failed, or cut short.
    pub fn is_done(&self) -> bool {
        self.state != State::Open
    }

    /// Feeds the next chunk of the body; complete events are appended to `out`.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<StreamEvent>) {
        let mut rest = chunk;
        while let Some(end) = rest.iter().position(|&byte| byte == b'\n') {
            let (piece, tail) = rest.split_at(end);
            rest = &tail[1..];
            if self.overlong {
                self.overlong = false;
                self.line.clear();
                self.fail_decode("a line longer than 16 MiB", out);
                continue;
            }
            if self.line.is_empty() {
                self.handle_line(piece, out);
            } else {
                let mut line = std::mem::take(&mut self.line);
                line.extend_from_slice(piece);
                self.handle_line(&line, out);
            }
        }
        if self.line.len() + rest.len() > MAX_LINE {
            self.overlong = true;
            self.line.clear();
        } else if !self.overlong {
            self.line.extend_from_slice(rest);
        }
    }

    /// The body ended. A last line without its newline still counts. In wrapped mode a reply
    /// without `stream_ended` ends with an `Error`; in bare mode the provider's decoder judges.
    pub fn finish(&mut self, out: &mut Vec<StreamEvent>) {
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.handle_line(&line, out);
        }
        if self.state != State::Open {
            return;
        }
        match self.framing {
            ZedFraming::Wrapped => {
                self.state = State::Failed;
                self.release_unfinished(out);
                out.push(StreamEvent::Error(WireError::api(
                    "the Zed stream ended unexpectedly (no `stream_ended`): the reply was cut short",
                )));
            }
            ZedFraming::Bare => {
                self.state = State::Ended;
                self.status = Some(ZedStatus::StreamEnded);
                // A chat reply is whole once its finish reason came.
                self.end_inner(self.finish_seen, out);
            }
        }
    }

    fn handle_line(&mut self, line: &[u8], out: &mut Vec<StreamEvent>) {
        if self.state != State::Open {
            return;
        }
        let line = line.trim_ascii();
        if line.is_empty() {
            return;
        }
        match self.framing {
            ZedFraming::Bare => self.provider_event(line, out),
            ZedFraming::Wrapped => match serde_json::from_slice::<WrappedLine<'_>>(line) {
                Ok(WrappedLine {
                    event: Some(event),
                    status: None,
                }) => self.provider_event(event.get().as_bytes(), out),
                Ok(WrappedLine {
                    event: None,
                    status: Some(status),
                }) => self.status_line(&status, out),
                Ok(_) => self.fail_decode(
                    "a line that is not exactly one of `event` and `status`",
                    out,
                ),
                Err(err) => self.fail_decode(&format!("an unreadable line ({err})"), out),
            },
        }
    }

    /// One provider event, as the SSE `data:` line the provider's decoder reads.
    fn provider_event(&mut self, event: &[u8], out: &mut Vec<StreamEvent>) {
        let mut framed = Vec::with_capacity(event.len() + 8);
        framed.extend_from_slice(b"data: ");
        framed.extend_from_slice(event);
        framed.extend_from_slice(b"\n\n");
        let mut produced = Vec::new();
        self.inner.feed(&framed, &mut produced);
        self.route(produced, out);
    }

    /// Passes the provider decoder's events on. In wrapped mode, while the reply is open, its
    /// `Finish` and everything after it wait in `held` for `stream_ended`; an `Error` goes out
    /// at once, after the held content (its `Finish` dropped).
    fn route(&mut self, produced: Vec<StreamEvent>, out: &mut Vec<StreamEvent>) {
        let hold = self.framing == ZedFraming::Wrapped && self.state == State::Open;
        for event in produced {
            match event {
                StreamEvent::Error(_) => {
                    self.inner_failed = true;
                    self.release_unfinished(out);
                    out.push(event);
                }
                StreamEvent::Finish(_) if hold => {
                    self.finish_seen = true;
                    self.held.push(event);
                }
                StreamEvent::Finish(_) => {
                    self.finish_seen = true;
                    out.push(event);
                }
                _ if hold && !self.held.is_empty() => self.held.push(event),
                _ => out.push(event),
            }
        }
    }

    /// The reply failed or was cut short: the held events go out without their `Finish`.
    fn release_unfinished(&mut self, out: &mut Vec<StreamEvent>) {
        out.extend(
            self.held
                .drain(..)
                .filter(|event| !matches!(event, StreamEvent::Finish(_))),
        );
    }

    fn status_line(&mut self, status: &Value, out: &mut Vec<StreamEvent>) {
        match status {
            Value::String(unit) => match unit.as_str() {
                "started" => self.status = Some(ZedStatus::Started),
                "stream_ended" => {
                    self.state = State::Ended;
                    self.status = Some(ZedStatus::StreamEnded);
                    self.end_inner(true, out);
                }
                // Unknown unit statuses are ignored, as Zed does.
                _ => {}
            },
            Value::Object(map) if map.len() == 1 => {
                if let Some(queued) = map.get("queued") {
                    match queued["position"].as_u64() {
                        Some(position) => self.status = Some(ZedStatus::Queued { position }),
                        None => self.fail_decode("a `queued` status without a position", out),
                    }
                } else if let Some(failed) = map.get("failed") {
                    match serde_json::from_value::<FailedWire>(failed.clone()) {
                        Ok(failed) if failed.request_id_is_valid() => self.failed(failed, out),
                        Ok(_) => self
                            .fail_decode("a `failed` status whose request_id is not a UUID", out),
                        Err(err) => {
                            self.fail_decode(&format!("an unreadable `failed` status ({err})"), out)
                        }
                    }
                } else {
                    self.fail_decode("an unknown status", out);
                }
            }
            _ => self.fail_decode("an unknown status", out),
        }
    }

    /// The reply is complete: let the provider's decoder close it (adding the `[DONE]` chat
    /// chunks lack on this path, when `chat_done`).
    fn end_inner(&mut self, chat_done: bool, out: &mut Vec<StreamEvent>) {
        out.append(&mut self.held);
        if self.inner_failed {
            return;
        }
        let mut produced = Vec::new();
        if self.provider.is_chat() && chat_done {
            self.inner.feed(b"data: [DONE]\n\n", &mut produced);
        }
        self.inner.finish(&mut produced);
        self.route(produced, out);
    }

    fn failed(&mut self, failed: FailedWire, out: &mut Vec<StreamEvent>) {
        let mut message = failed.message;
        let (kind, status) = classify_code(&failed.code, &mut message);
        let payment_required = status == Some(402);
        let shown = if payment_required {
            payment_message(self.plan, &message)
        } else {
            let retry = failed
                .retry_after
                .and_then(seconds)
                .map(|after| format!(" (retry after {:.1} s)", after.as_secs_f64()))
                .unwrap_or_default();
            format!("Zed reported a failure ({}): {message}{retry}", failed.code)
        };
        self.state = State::Failed;
        self.release_unfinished(out);
        out.push(StreamEvent::Error(
            WireError::new(kind, shown).with_code(failed.code.clone()),
        ));
        self.failure = Some(ZedFailure {
            code: failed.code,
            message,
            request_id: failed.request_id,
            retry_after: failed.retry_after.and_then(seconds),
            kind,
            status,
            payment_required,
        });
    }

    fn fail_decode(&mut self, what: &str, out: &mut Vec<StreamEvent>) {
        if self.state != State::Open {
            return;
        }
        self.state = State::Failed;
        self.release_unfinished(out);
        out.push(StreamEvent::Error(WireError::api(format!(
            "the Zed stream sent {what}"
        ))));
    }
}

/// A wrapped line: exactly one of the two keys, lowercase (`{"Event":…}` is refused).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WrappedLine<'a> {
    #[serde(borrow, default)]
    event: Option<&'a RawValue>,
    #[serde(default)]
    status: Option<Value>,
}

#[derive(Deserialize)]
struct FailedWire {
    code: String,
    #[serde(default)]
    message: String,
    #[serde(default)]
    request_id: Option<String>,
    #[serde(default)]
    retry_after: Option<f64>,
}

impl FailedWire {
    fn request_id_is_valid(&self) -> bool {
        self.request_id
            .as_deref()
            .is_none_or(corvid_auth::zed::is_uuid)
    }
}

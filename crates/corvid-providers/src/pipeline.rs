//! One model call, the same for the gateway's translation and the agent: resolve (a [`Route`])
//! → prepare (the provider's quirks, what may cross between providers) → encode (the
//! provider's dialect and field rules) → post (retries before any output) → decode (canonical
//! events, or one whole reply).
//!
//! Every backend sits behind it — an HTTP provider, or the Zed account, which encodes for each
//! of its models itself — so callers never ask which one they have. A failure before the reply
//! is a [`CallError`] (one [`ProviderError`], one retry decision, one classification); a reply
//! that breaks after it started ends with one `Error` event worded by [`broken_stream`],
//! whichever caller reads it.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::BytesMut;
use corvid_wire::Dialect;
use corvid_wire::codec::{self, Decoder};
use corvid_wire::encoded::EncodedBody;
use corvid_wire::model::{
    ChatRequest, ChatResponse, ErrorKind, NameMap, ResponseBuilder, StreamEvent, WireError,
};
use futures_util::{Stream, StreamExt};
use http_body::Body;
use http_body_util::BodyExt;

use crate::error::CallError;
use crate::quirks::{prepare_request, settle_encoded};
use crate::registry::{Route, dialect_of};
use crate::transport::{UpstreamBody, is_timeout};
use crate::zed::ZedService;

/// Whole replies larger than this are refused rather than held in memory.
const WHOLE_REPLY_LIMIT: usize = 64 * 1024 * 1024;

/// A request prepared for its provider, ready to send.
pub struct ModelCall {
    route: Route,
    request: ChatRequest,
    backend: Prepared,
}

/// What the backend needs to send the call.
enum Prepared {
    /// An HTTP provider: the body in its dialect, where it goes, the tool names it shortened.
    Http {
        dialect: Dialect,
        encoded: EncodedBody,
        path: String,
        names: NameMap,
    },
    /// The Zed account: it writes each model's own provider's dialect itself.
    Account(Arc<ZedService>),
}

impl Route {
    /// Prepares `request` for this route: the provider's model name and quirks, what corvid
    /// minted for another provider settled and Anthropic-only lines left behind, then the body
    /// encoded in the provider's dialect with its field rules. `request.stream` decides
    /// whether the reply is asked for as a stream.
    pub fn prepare(self, mut request: ChatRequest) -> ModelCall {
        let provider = &self.provider;
        let outbound = dialect_of(provider.kind());
        prepare_request(provider, &self.model, &mut request);
        corvid_wire::crossing::prepare(&mut request, provider.name(), outbound);
        let backend = match provider.account() {
            Some(account) => Prepared::Account(account),
            None => {
                let names = NameMap::new(&request.tools);
                let mut encoded = codec::encode_body(outbound, &request);
                settle_encoded(provider, &self.model, &mut encoded);
                Prepared::Http {
                    dialect: outbound,
                    path: codec::endpoint_path(outbound, &self.model, request.stream),
                    encoded,
                    names,
                }
            }
        };
        ModelCall {
            route: self,
            request,
            backend,
        }
    }
}

impl ModelCall {
    /// Asks an OpenAI-dialect provider to keep this conversation's prompt cache under `key`
    /// (`prompt_cache_key`, unless the body already names one): requests of one conversation
    /// then reach the same cache, which a translated client could not ask for.
    pub fn keep_cache_key(&mut self, key: &str) {
        if let Prepared::Http {
            dialect: Dialect::OpenAiChat | Dialect::OpenAiResponses,
            encoded: body,
            ..
        } = &mut self.backend
            && !body.contains("prompt_cache_key")
        {
            body.push("prompt_cache_key", key);
        }
    }

    /// The request as the provider will get it (after its quirks).
    pub fn request(&self) -> &ChatRequest {
        &self.request
    }

    /// The body as sent, for `log_prompts`; `None` for the Zed account (its body is written
    /// per model when the call is sent).
    pub fn prompt_text(&self) -> Option<String> {
        match &self.backend {
            Prepared::Http { encoded, .. } => Some(encoded.to_text()),
            Prepared::Account(_) => None,
        }
    }

    /// Sends the call, retrying before any output as every provider's calls are retried.
    /// Resolves once the provider has answered with success (for the Zed account: once its
    /// reply got past any failure reported before output).
    pub async fn send(self) -> Result<ModelReply, CallError> {
        let provider = self.route.provider.name().to_owned();
        match self.backend {
            Prepared::Http {
                dialect,
                encoded,
                path,
                names,
            } => {
                let sent = self
                    .route
                    .upstream()
                    .post_encoded(&path, &encoded, self.route.in_place_retries())
                    .await?;
                Ok(ModelReply {
                    status: sent.response.status().as_u16(),
                    attempts: sent.attempts,
                    provider,
                    body: ReplyBody::Http {
                        body: sent.response.into_body(),
                        dialect,
                        names,
                    },
                })
            }
            Prepared::Account(account) => {
                let model = account
                    .model(&self.route.model)
                    .await
                    .map_err(|error| CallError { error, attempts: 0 })?;
                let (completion, attempts) = account.completion(&self.request, &model).await?;
                Ok(ModelReply {
                    status: 200,
                    attempts,
                    provider,
                    body: ReplyBody::Events(Box::pin(completion)),
                })
            }
        }
    }
}

/// A provider's successful answer, its body not yet read.
pub struct ModelReply {
    status: u16,
    attempts: u32,
    provider: String,
    body: ReplyBody,
}

enum ReplyBody {
    /// An HTTP provider's body: a stream for its decoder, or a whole reply.
    Http {
        body: UpstreamBody,
        dialect: Dialect,
        names: NameMap,
    },
    /// A backend that yields canonical events itself (the Zed account).
    Events(Pin<Box<dyn Stream<Item = StreamEvent> + Send>>),
}

/// Why a whole (non-streamed) reply could not be had.
#[derive(Debug, Clone, PartialEq)]
pub enum WholeFailure {
    /// The reply broke off, went quiet or was too large.
    Broken(WireError),
    /// The reply arrived but could not be decoded.
    Unreadable(String),
    /// The provider reported a failure inside its reply, or it ended unfinished.
    Reported(WireError),
}

impl ModelReply {
    /// The provider's status (200 for the Zed account).
    pub fn status(&self) -> u16 {
        self.status
    }

    /// Requests sent, 1 when the first one was answered.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// The reply as canonical events, for a call whose request was streamed.
    pub fn into_stream(self) -> ModelStream {
        let source = match self.body {
            ReplyBody::Http {
                body,
                dialect,
                names,
            } => Source::Bytes {
                body,
                decoder: Box::new(Decoder::new(dialect, names)),
            },
            ReplyBody::Events(events) => Source::Events(events),
        };
        ModelStream {
            source,
            pending: VecDeque::new(),
            done: false,
            provider: self.provider,
        }
    }

    /// The whole reply, for a call whose request was not streamed (the Zed account streams
    /// always; its events are gathered).
    pub async fn whole(self) -> Result<ChatResponse, WholeFailure> {
        match self.body {
            ReplyBody::Http {
                body,
                dialect,
                names,
            } => {
                let collected = collect(body).await.map_err(WholeFailure::Broken)?;
                codec::decode_response(dialect, &collected, &names).map_err(|error| {
                    WholeFailure::Unreadable(format!(
                        "the upstream reply could not be read: {error}"
                    ))
                })
            }
            ReplyBody::Events(mut events) => {
                let mut builder = ResponseBuilder::new();
                while let Some(event) = events.next().await {
                    builder.push(&event);
                }
                builder.finish().map_err(WholeFailure::Reported)
            }
        }
    }
}

async fn collect(mut body: UpstreamBody) -> Result<BytesMut, WireError> {
    let mut collected = BytesMut::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|error| WireError {
            message: format!("the upstream reply broke off: {error}"),
            ..broken_stream(error.as_ref())
        })?;
        if let Ok(data) = frame.into_data() {
            if collected.len() + data.len() > WHOLE_REPLY_LIMIT {
                return Err(WireError::api("the upstream reply is too large"));
            }
            collected.extend_from_slice(&data);
        }
    }
    Ok(collected)
}

/// The one wording of a stream that broke after it started (cut mid-way, or silent past the
/// idle timeout), for every caller: the translation, the agent, the pass-through, the Zed
/// account.
pub fn broken_stream(error: &(dyn std::error::Error + 'static)) -> WireError {
    if is_timeout(error) {
        WireError::new(
            ErrorKind::Timeout,
            "the upstream stopped sending (idle timeout)",
        )
    } else {
        WireError::api(format!("the upstream stream broke: {error}"))
    }
}

/// A provider's reply as canonical events. It ends at the dialect's own end (even when the
/// connection stays open); a broken or cut reply ends with an `Error` event.
pub struct ModelStream {
    source: Source,
    pending: VecDeque<StreamEvent>,
    done: bool,
    provider: String,
}

/// Where the events come from: a provider's bytes through its decoder, or a backend that
/// decodes its own reply (the Zed account).
enum Source {
    Bytes {
        body: UpstreamBody,
        decoder: Box<Decoder>,
    },
    Events(Pin<Box<dyn Stream<Item = StreamEvent> + Send>>),
}

impl ModelStream {
    /// The provider answering.
    pub fn provider(&self) -> &str {
        &self.provider
    }

    /// Whether the reply is over and every event was handed out (a caller may close its own
    /// stream in the frame that carried the last events).
    pub fn is_over(&self) -> bool {
        self.done && self.pending.is_empty()
    }

    /// Appends the events of the next piece of the reply to `out` (all that one upstream
    /// frame held: a caller re-encoding them writes one frame too). `Ready(false)` once the
    /// reply is over and nothing was added.
    pub fn poll_events(&mut self, cx: &mut Context<'_>, out: &mut Vec<StreamEvent>) -> Poll<bool> {
        loop {
            if !self.pending.is_empty() {
                out.extend(self.pending.drain(..));
                return Poll::Ready(true);
            }
            if self.done {
                return Poll::Ready(false);
            }
            let before = out.len();
            match &mut self.source {
                Source::Events(events) => match events.as_mut().poll_next(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Some(event)) => out.push(event),
                    Poll::Ready(None) => self.done = true,
                },
                Source::Bytes { body, decoder } => match Pin::new(body).poll_frame(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Some(Ok(frame))) => {
                        if let Ok(data) = frame.into_data() {
                            decoder.feed(&data, out);
                            // The dialect's own end, even if the connection stays open.
                            self.done = decoder.ended();
                        }
                    }
                    Poll::Ready(None) => {
                        decoder.finish(out);
                        self.done = true;
                    }
                    Poll::Ready(Some(Err(error))) => {
                        out.push(StreamEvent::Error(broken_stream(error.as_ref())));
                        self.done = true;
                    }
                },
            }
            if out.len() > before {
                return Poll::Ready(true);
            }
        }
    }
}

impl Stream for ModelStream {
    type Item = StreamEvent;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<StreamEvent>> {
        let this = self.get_mut();
        if let Some(event) = this.pending.pop_front() {
            return Poll::Ready(Some(event));
        }
        let mut events = Vec::new();
        match this.poll_events(cx, &mut events) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(false) => Poll::Ready(None),
            Poll::Ready(true) => {
                let mut events = events.into_iter();
                let first = events.next();
                this.pending.extend(events);
                Poll::Ready(first)
            }
        }
    }
}

#[cfg(test)]
mod tests;

//! Different dialects in and out: the client's request, decoded into the canonical model, goes
//! through corvid-providers' one model-call pipeline (the agent's too), and the reply's
//! canonical events are encoded back into the client's dialect — streamed replies event by
//! event as they arrive (first-token latency preserved), whole replies at once. This module
//! owns only that encoding, the minted tokens, and the ledger row.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use axum::Json;
use axum::body::Body;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use corvid_providers::{ModelStream, ProviderError, Route, WholeFailure};
use corvid_store::Outcome;
use corvid_wire::anthropic;
use corvid_wire::model::{ChatRequest, ErrorKind, StreamEvent, Usage, WireError};
use http::{HeaderValue, StatusCode};
use http_body::Frame;

use crate::error::ApiError;
use crate::exchange::Exchange;
use crate::log_text::Clean;
use crate::routed::{Attempt, Failed};
use crate::state::AppState;
use corvid_providers::dialect_of;
use corvid_wire::Dialect;
use corvid_wire::codec::{self, Encoder, EncoderSetup};
use corvid_wire::minted::Minter;

/// One request to translate.
pub(crate) struct Translation<'a> {
    pub(crate) state: &'a AppState,
    pub(crate) route: Route,
    pub(crate) inbound: Dialect,
    pub(crate) route_name: &'static str,
    /// The model name as the client wrote it (echoed back in replies).
    pub(crate) client_model: String,
    pub(crate) request: ChatRequest,
    /// OpenAI chat clients: whether they asked for a usage chunk.
    pub(crate) include_usage: bool,
    pub(crate) started: Instant,
    /// The pool key and task rule, for the ledger.
    pub(crate) tag: crate::routed::Tag,
    /// The conversation's `prompt_cache_key` for a provider that keeps caches by it.
    pub(crate) cache_key: Option<String>,
}

impl Translation<'_> {
    /// Translates and sends; a failure before any output is kept apart (the route may try
    /// elsewhere), a reply that broke after it started is answered as it is.
    pub(crate) async fn attempt(self) -> Attempt {
        let inbound = self.inbound;
        match self.send().await {
            Ok(response) => Ok(response),
            Err(Sent::Refused(error)) => Ok(error.in_dialect(inbound).into_response()),
            Err(Sent::Failed(failed)) => Err(failed),
        }
    }

    async fn send(self) -> Result<Response, Sent> {
        let Self {
            state,
            route,
            inbound,
            route_name,
            client_model,
            request,
            include_usage,
            started,
            tag,
            cache_key,
        } = self;
        let provider = Arc::clone(&route.provider);
        let outbound = dialect_of(provider.kind());
        let model = route.model.clone();
        // The one pipeline: the provider's quirks, what crosses between providers, its dialect.
        let mut call = route.prepare(request);
        if let Some(key) = &cache_key {
            call.keep_cache_key(key);
        }
        let minter = Minter::new(provider.name(), inbound);
        let stream = call.request().stream;
        // Only an Anthropic stream's `message_start` reads it, before the upstream's count.
        let input_estimate = (stream && inbound == Dialect::Anthropic)
            .then(|| anthropic::count_tokens_estimate(call.request()));
        let prompt = state
            .config()
            .log_prompts
            .then(|| call.prompt_text())
            .flatten();
        let mut exchange = Exchange {
            state: state.clone(),
            route: route_name,
            inbound,
            provider: provider.name().to_owned(),
            model,
            started,
            attempts: 0,
            prompt,
            ticket: crate::access::take_ticket(),
            tag,
        };
        let reply = match call.send().await {
            Ok(reply) => reply,
            Err(failed) => {
                let error = &failed.error;
                tracing::warn!(route = route_name, provider = %provider.name(), model = %Clean(&exchange.model), error = %Clean(&corvid_providers::error_chain(error)), "upstream call failed");
                exchange.attempts = failed.attempts;
                let (status, response) = error_response(
                    error,
                    outbound,
                    inbound,
                    provider.upstream().credential().mode(),
                );
                exchange.finish(status, Outcome::Error, None, None);
                return Err(Sent::Failed(Failed::new(failed.error, response)));
            }
        };
        exchange.attempts = reply.attempts();
        let status = reply.status();
        let setup = EncoderSetup {
            model: client_model.clone(),
            id: new_id(inbound),
            created: unix_now(),
            include_usage,
            input_tokens: input_estimate,
        };
        if stream {
            let body = TranslateBody {
                source: reply.into_stream(),
                encoder: Encoder::new(inbound, setup),
                minter,
                events: Vec::new(),
                ended: false,
                outcome: Outcome::Cancelled,
                usage: None,
                status,
                ttfb_ms: None,
                exchange,
                closing: None,
            };
            let mut response = Response::new(Body::new(body));
            let headers = response.headers_mut();
            headers.insert(
                http::header::CONTENT_TYPE,
                HeaderValue::from_static("text/event-stream"),
            );
            headers.insert(
                http::header::CACHE_CONTROL,
                HeaderValue::from_static("no-cache"),
            );
            return Ok(response);
        }
        match reply.whole().await {
            Ok(mut reply) => {
                if reply.created == 0 {
                    reply.created = unix_now();
                }
                minter.response(&mut reply);
                let ttfb = Some(started.elapsed().as_millis() as u64);
                exchange.finish(status, Outcome::Ok, ttfb, Some(reply.usage));
                let body = codec::encode_response_body(inbound, &reply, &client_model);
                let mut response = Response::new(Body::from(body));
                response.headers_mut().insert(
                    http::header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                );
                Ok(response)
            }
            Err(failure) => {
                let (outcome, refusal) = whole_failure(failure, inbound);
                exchange.finish(status, outcome, None, None);
                Err(Sent::Refused(refusal))
            }
        }
    }
}

/// Why a translation did not answer with the provider's reply.
enum Sent {
    /// The call failed before any output.
    Failed(Failed),
    /// The whole reply could not be had.
    Refused(ApiError),
}

/// A whole reply that could not be had: a break is a 502 (the stream went wrong), an
/// unreadable body a 502 (an error), a failure the provider reported keeps its kind's status.
fn whole_failure(failure: WholeFailure, inbound: Dialect) -> (Outcome, ApiError) {
    match failure {
        WholeFailure::Broken(error) => (
            Outcome::StreamError,
            ApiError::new(StatusCode::BAD_GATEWAY, error.message),
        ),
        WholeFailure::Unreadable(message) => (
            Outcome::Error,
            ApiError::new(StatusCode::BAD_GATEWAY, message),
        ),
        WholeFailure::Reported(error) => {
            let status = StatusCode::from_u16(codec::encode_error(inbound, &error).0)
                .unwrap_or(StatusCode::BAD_GATEWAY);
            (Outcome::StreamError, ApiError::new(status, error.message))
        }
    }
}

/// An upstream failure, answered in the client's dialect with the upstream's wording kept.
fn error_response(
    error: &ProviderError,
    outbound: Dialect,
    inbound: Dialect,
    mode: corvid_config::AuthMode,
) -> (u16, Response) {
    if let ProviderError::Status {
        status,
        body,
        retry_after,
    } = error
        && !(status.as_u16() == 403 && mode == corvid_config::AuthMode::OAuth)
    {
        let wire = codec::decode_error(outbound, status.as_u16(), body);
        let (code, json) = codec::encode_error(inbound, &wire);
        let mut response =
            (StatusCode::from_u16(code).unwrap_or(*status), Json(json)).into_response();
        if let Some(wait) = retry_after {
            let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
            if let Ok(value) = HeaderValue::from_str(&seconds.to_string()) {
                response
                    .headers_mut()
                    .insert(http::header::RETRY_AFTER, value);
            }
        }
        return (status.as_u16(), response);
    }
    let status = error.status_code();
    let oauth = mode == corvid_config::AuthMode::OAuth;
    (
        status,
        ApiError::from_provider(error, oauth)
            .in_dialect(inbound)
            .into_response(),
    )
}

fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| elapsed.as_secs() as i64)
        .unwrap_or_default()
}

fn new_id(dialect: Dialect) -> String {
    let random = rand::random::<u64>();
    match dialect {
        Dialect::OpenAiChat => format!("chatcmpl-{random:016x}"),
        Dialect::OpenAiResponses => format!("resp_{random:016x}"),
        Dialect::Anthropic => format!("msg_{random:016x}"),
        Dialect::Gemini => format!("{random:016x}"),
    }
}

/// The translated stream: the pipeline's canonical events → encoder → client bytes, one
/// upstream frame at a time.
struct TranslateBody {
    source: ModelStream,
    encoder: Encoder,
    /// Wraps the provider's opaque tokens before the client sees them.
    minter: Minter,
    events: Vec<StreamEvent>,
    ended: bool,
    outcome: Outcome,
    usage: Option<Usage>,
    status: u16,
    ttfb_ms: Option<u64>,
    exchange: Exchange,
    /// The shutdown gate, looked at once the body first waits.
    closing: Option<crate::closing::Watch>,
}

impl http_body::Body for TranslateBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        let this = self.get_mut();
        loop {
            if this.ended {
                return Poll::Ready(None);
            }
            let mut out = Vec::new();
            match this.source.poll_events(cx, &mut this.events) {
                Poll::Pending => return this.wait(cx),
                Poll::Ready(more) => {
                    this.encode_pending(&mut out);
                    // The dialect's own end (Anthropic's `message_stop`…) ends the client's
                    // stream in the same frame, even when the upstream keeps its connection
                    // open.
                    if !more || this.source.is_over() {
                        this.finish(&mut out);
                    }
                }
            }
            if !out.is_empty() {
                if this.ttfb_ms.is_none() {
                    this.ttfb_ms = Some(this.exchange.started.elapsed().as_millis() as u64);
                }
                return Poll::Ready(Some(Ok(Frame::data(Bytes::from(out)))));
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.ended
    }
}

impl TranslateBody {
    /// The source has nothing yet: wait, unless the shutdown grace is over — then the stream
    /// ends with an error event.
    fn wait(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        let state = &self.exchange.state;
        let closing = self.closing.get_or_insert_with(|| state.closing_watch());
        if !closing.closed(cx) {
            return Poll::Pending;
        }
        let mut out = Vec::new();
        self.events.push(StreamEvent::Error(WireError::new(
            ErrorKind::Overloaded,
            crate::closing::MESSAGE.to_owned(),
        )));
        self.encode_pending(&mut out);
        self.finish(&mut out);
        Poll::Ready(Some(Ok(Frame::data(Bytes::from(out)))))
    }

    fn encode_pending(&mut self, out: &mut Vec<u8>) {
        for mut event in self.events.drain(..) {
            self.minter.event(&mut event);
            match &event {
                StreamEvent::Usage(usage) => self.usage = Some(*usage),
                StreamEvent::Error(error) => {
                    tracing::warn!(route = self.exchange.route, model = %Clean(&self.exchange.model), message = %Clean(&error.message), "stream failed after the response started");
                    self.outcome = Outcome::StreamError;
                }
                _ => {}
            }
            self.encoder.encode(&event, out);
        }
    }

    fn finish(&mut self, out: &mut Vec<u8>) {
        self.encoder.finish(out);
        self.ended = true;
        if self.outcome == Outcome::Cancelled {
            self.outcome = Outcome::Ok;
        }
    }
}

impl Drop for TranslateBody {
    fn drop(&mut self) {
        self.exchange
            .finish(self.status, self.outcome, self.ttfb_ms, self.usage);
    }
}

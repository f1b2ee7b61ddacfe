//! Different dialects in and out: decode the client's request into the canonical model,
//! encode it for the provider, and turn the reply back — streamed replies event by event as
//! they arrive (first-token latency preserved), whole replies at once.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use axum::Json;
use axum::body::Body;
use axum::response::{IntoResponse, Response};
use bytes::{Bytes, BytesMut};
use corvid_providers::{ProviderError, Route, UpstreamBody, is_timeout};
use corvid_store::Outcome;
use corvid_wire::anthropic;
use corvid_wire::model::{ChatRequest, ErrorKind, NameMap, StreamEvent, Usage, WireError};
use futures_util::Stream;
use http::{HeaderValue, StatusCode};
use http_body::Frame;
use http_body_util::BodyExt;

use crate::error::ApiError;
use crate::exchange::Exchange;
use crate::log_text::Clean;
use crate::state::AppState;
use corvid_providers::dialect_of;
use corvid_wire::Dialect;
use corvid_wire::codec::{self, Decoder, Encoder, EncoderSetup};
use corvid_wire::minted::Minter;

/// Whole replies larger than this are refused rather than held in memory.
const WHOLE_REPLY_LIMIT: usize = 64 * 1024 * 1024;

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
}

impl Translation<'_> {
    pub(crate) async fn send(self) -> Result<Response, ApiError> {
        let Self {
            state,
            route,
            inbound,
            route_name,
            client_model,
            mut request,
            include_usage,
            started,
        } = self;
        let provider = &route.provider;
        let outbound = dialect_of(provider.kind());
        corvid_providers::prepare_request(provider, &route.model, &mut request);
        // What corvid minted for another provider, and Anthropic-only lines, stay behind.
        corvid_wire::crossing::prepare(&mut request, provider.name(), outbound);
        let minter = Minter::new(provider.name(), inbound);
        if let Some(zed) = provider.zed_service() {
            let setup = EncoderSetup {
                model: client_model.clone(),
                id: new_id(inbound),
                created: unix_now(),
                include_usage,
                input_tokens: (inbound == Dialect::Anthropic)
                    .then(|| anthropic::count_tokens_estimate(&request)),
            };
            let exchange = Exchange {
                state: state.clone(),
                route: route_name,
                inbound,
                provider: provider.name().to_owned(),
                model: route.model.clone(),
                started,
                attempts: 1,
                prompt: None,
            };
            return zed_completion(zed, &route.model, request, inbound, setup, exchange, minter)
                .await;
        }
        let names = NameMap::new(&request.tools);
        let stream = request.stream;
        let input_estimate =
            (inbound == Dialect::Anthropic).then(|| anthropic::count_tokens_estimate(&request));
        let mut encoded = codec::encode_request(outbound, &request);
        corvid_providers::quirks::settle_encoded(provider, &route.model, &mut encoded);
        let prompt = state.config().log_prompts.then(|| encoded.to_string());
        let path = codec::endpoint_path(outbound, &route.model, stream);
        let mut exchange = Exchange {
            state: state.clone(),
            route: route_name,
            inbound,
            provider: provider.name().to_owned(),
            model: route.model.clone(),
            started,
            attempts: 0,
            prompt,
        };
        let sent = provider.upstream().post_encoded(&path, &encoded).await;
        let upstream = match sent {
            Ok(upstream) => upstream,
            Err(failed) => {
                let error = &failed.error;
                tracing::warn!(route = route_name, provider = %provider.name(), model = %Clean(&route.model), error = %Clean(&corvid_providers::error_chain(error)), "upstream call failed");
                exchange.attempts = failed.attempts;
                let (status, response) = error_response(
                    error,
                    outbound,
                    inbound,
                    provider.upstream().credential().mode(),
                );
                exchange.finish(status, Outcome::Error, None, None);
                return Ok(response);
            }
        };
        exchange.attempts = upstream.attempts;
        let status = upstream.response.status().as_u16();
        let setup = EncoderSetup {
            model: client_model.clone(),
            id: new_id(inbound),
            created: unix_now(),
            include_usage,
            input_tokens: input_estimate,
        };
        if stream {
            let body = TranslateBody {
                source: Source::Bytes {
                    inner: upstream.response.into_body(),
                    decoder: Box::new(Decoder::new(outbound, names)),
                },
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
        let collected = match collect(upstream.response.into_body()).await {
            Ok(collected) => collected,
            Err(message) => {
                exchange.finish(status, Outcome::StreamError, None, None);
                return Err(ApiError::new(StatusCode::BAD_GATEWAY, message).in_dialect(inbound));
            }
        };
        match codec::decode_response(outbound, &collected, &names) {
            Ok(mut reply) => {
                if reply.created == 0 {
                    reply.created = unix_now();
                }
                minter.response(&mut reply);
                let ttfb = Some(started.elapsed().as_millis() as u64);
                exchange.finish(status, Outcome::Ok, ttfb, Some(reply.usage));
                Ok(Json(codec::encode_response(inbound, &reply, &client_model)).into_response())
            }
            Err(error) => {
                exchange.finish(status, Outcome::Error, None, None);
                Err(ApiError::new(
                    StatusCode::BAD_GATEWAY,
                    format!("the upstream reply could not be read: {error}"),
                )
                .in_dialect(inbound))
            }
        }
    }
}

/// A model on the signed-in Zed account: its events come already decoded.
async fn zed_completion(
    zed: &corvid_providers::ZedService,
    model: &str,
    request: ChatRequest,
    inbound: Dialect,
    setup: EncoderSetup,
    mut exchange: Exchange,
    minter: Minter,
) -> Result<Response, ApiError> {
    let model = match zed.model(model).await {
        Ok(model) => model,
        Err(error) => {
            let refusal = zed_model_error(error);
            exchange.finish(refusal.status().as_u16(), Outcome::Error, None, None);
            return Err(refusal.in_dialect(inbound));
        }
    };
    let stream = request.stream;
    // Retried before any output as every provider is (5xx, 429, …, `max_retries`).
    let (completion, attempts) = zed.completion(&request, &model).await;
    exchange.attempts = attempts;
    let completion = match completion {
        Ok(completion) => completion,
        Err(error) => {
            tracing::warn!(route = exchange.route, provider = "zed", model = %exchange.model, error = %corvid_providers::error_chain(&error), "Zed call failed");
            exchange.finish(error.status(), Outcome::Error, None, None);
            return Err(zed_error(&error).in_dialect(inbound));
        }
    };
    if stream {
        let body = TranslateBody {
            source: Source::Events(Box::pin(completion)),
            encoder: Encoder::new(inbound, setup),
            minter,
            events: Vec::new(),
            ended: false,
            outcome: Outcome::Cancelled,
            usage: None,
            status: 200,
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
    let mut builder = corvid_wire::model::ResponseBuilder::new();
    let mut completion = completion;
    while let Some(event) = futures_util::StreamExt::next(&mut completion).await {
        builder.push(&event);
    }
    match builder.finish() {
        Ok(mut reply) => {
            reply.created = unix_now();
            minter.response(&mut reply);
            exchange.finish(
                200,
                Outcome::Ok,
                Some(exchange.started.elapsed().as_millis() as u64),
                Some(reply.usage),
            );
            Ok(Json(codec::encode_response(inbound, &reply, &setup.model)).into_response())
        }
        Err(error) => {
            exchange.finish(200, Outcome::StreamError, None, None);
            Err(ApiError::from_wire(error).in_dialect(inbound))
        }
    }
}

/// A Zed failure before any output: its status, its causes, and its `retry_after` as the
/// client's `Retry-After`.
pub(crate) fn zed_error(error: &corvid_providers::zed::ZedError) -> ApiError {
    let status = StatusCode::from_u16(error.status()).unwrap_or(StatusCode::BAD_GATEWAY);
    let mut api = ApiError::new(status, corvid_providers::error_chain(error));
    if let corvid_providers::zed::ZedError::Status { retry_after, .. } = error {
        api.retry_after = *retry_after;
    }
    api
}

/// A Zed model that could not be looked up: Zed's own failure (a refused sign-in is a 401
/// saying to run `corvid login zed`), or a 404 listing what the account offers.
pub(crate) fn zed_model_error(error: corvid_providers::ZedModelError) -> ApiError {
    match error {
        corvid_providers::ZedModelError::Zed(error) => zed_error(&error),
        unlisted @ corvid_providers::ZedModelError::Unlisted { .. } => {
            ApiError::not_found(unlisted.to_string())
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
    let status = match error {
        ProviderError::Status { status, .. } => status.as_u16(),
        _ => 0,
    };
    let oauth = mode == corvid_config::AuthMode::OAuth;
    (
        status,
        ApiError::from_provider(error, oauth)
            .in_dialect(inbound)
            .into_response(),
    )
}

async fn collect(mut body: UpstreamBody) -> Result<BytesMut, String> {
    let mut collected = BytesMut::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|error| format!("the upstream reply broke off: {error}"))?;
        if let Ok(data) = frame.into_data() {
            if collected.len() + data.len() > WHOLE_REPLY_LIMIT {
                return Err("the upstream reply is too large".to_owned());
            }
            collected.extend_from_slice(&data);
        }
    }
    Ok(collected)
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

/// Where a translated stream's events come from: a provider's bytes through its decoder, or a
/// client that already yields canonical events (a Zed account).
enum Source {
    Bytes {
        inner: UpstreamBody,
        decoder: Box<Decoder>,
    },
    Events(Pin<Box<dyn Stream<Item = StreamEvent> + Send>>),
}

/// The translated stream: upstream bytes → decoder → canonical events → encoder → client
/// bytes, one upstream frame at a time.
struct TranslateBody {
    source: Source,
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
            match &mut this.source {
                Source::Bytes { inner, decoder } => match Pin::new(inner).poll_frame(cx) {
                    Poll::Pending => return this.wait(cx),
                    Poll::Ready(Some(Ok(frame))) => {
                        let Ok(data) = frame.into_data() else {
                            continue;
                        };
                        decoder.feed(&data, &mut this.events);
                        // The dialect's own end (Anthropic's `message_stop`…) ends the client's
                        // stream, even when the upstream keeps its connection open.
                        let ended = decoder.ended();
                        this.encode_pending(&mut out);
                        if ended {
                            this.finish(&mut out);
                        }
                    }
                    Poll::Ready(None) => {
                        decoder.finish(&mut this.events);
                        this.encode_pending(&mut out);
                        this.finish(&mut out);
                    }
                    Poll::Ready(Some(Err(error))) => {
                        this.events
                            .push(StreamEvent::Error(broken_stream(error.as_ref())));
                        this.encode_pending(&mut out);
                        this.finish(&mut out);
                    }
                },
                Source::Events(events) => match events.as_mut().poll_next(cx) {
                    Poll::Pending => return this.wait(cx),
                    Poll::Ready(Some(event)) => {
                        this.events.push(event);
                        this.encode_pending(&mut out);
                    }
                    Poll::Ready(None) => {
                        this.encode_pending(&mut out);
                        this.finish(&mut out);
                    }
                },
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

fn broken_stream(error: &(dyn std::error::Error + 'static)) -> WireError {
    let (kind, message) = if is_timeout(error) {
        (
            ErrorKind::Timeout,
            "the upstream stopped sending (idle timeout)".to_owned(),
        )
    } else {
        (
            ErrorKind::Api,
            format!("the upstream stream broke: {error}"),
        )
    };
    WireError::new(kind, message)
}

//! Relaying an upstream response of the caller's own dialect, as it arrives.
//!
//! The body is forwarded frame by frame, never buffered whole. Streamed (SSE) bodies are also
//! watched on the side by corvid-wire's `StreamWatch`, which notices the dialect's end event and
//! reads usage; a non-streamed body keeps cheap handles to its chunks (no copy) so corvid-wire
//! can read its usage once it is sent. The gateway never reads a dialect's JSON itself. If the
//! upstream fails after the 200 went out, a streaming client gets one error event in its own
//! dialect (written by corvid-wire) and the stream closes; a non-streamed body is cut off.
//!
//! Dropping the response body — which hyper does when the client goes away — drops the
//! upstream response with it, closing that connection: the upstream request is cancelled. The
//! ledger row is written on drop, so a cancelled request is recorded too; a stream whose end
//! event went by is whole for the client, so it is `ok` even if the client left before the
//! upstream closed.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use corvid_providers::{BoxError, UpstreamBody};
use corvid_store::Outcome;
use corvid_wire::codec::{self, StreamWatch};
use corvid_wire::model::{Usage, WireError};
use http::{HeaderName, HeaderValue};
use http_body::{Body as _, Frame, SizeHint};

use crate::body;
use crate::closing::{self, Watch};
use crate::exchange::Exchange;
use crate::log_text::Clean;

/// Non-streamed bodies larger than this are not kept for usage reading.
const KEEP_FOR_USAGE: usize = 1024 * 1024;

/// Named once: a header name given as `&str` is parsed again on every lookup.
const X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");
const REQUEST_ID: HeaderName = HeaderName::from_static("request-id");

/// Builds the client's response from the upstream's: its status and content type, no
/// hop-by-hop or length headers copied, and the body relayed as it arrives.
pub(crate) fn relay(upstream: http::Response<UpstreamBody>, exchange: Exchange) -> Response {
    let status = upstream.status();
    let content_type = upstream.headers().get(http::header::CONTENT_TYPE).cloned();
    let request_id = upstream
        .headers()
        .get(&X_REQUEST_ID)
        .or_else(|| upstream.headers().get(&REQUEST_ID))
        .cloned();
    let streaming = content_type
        .as_ref()
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("text/event-stream"));
    let ttfb_ms = exchange.started.elapsed().as_millis() as u64;
    // A non-streamed body keeps its exact length, so hyper sends a Content-Length of its own
    // and writes headers and body together.
    let length = if streaming {
        None
    } else {
        upstream.body().size_hint().exact()
    };
    let body = RelayBody {
        inner: upstream.into_body(),
        length,
        streaming,
        watch: StreamWatch::new(exchange.inbound),
        finished: false,
        ended: false,
        outcome: Outcome::Cancelled,
        usage: None,
        kept: Vec::new(),
        kept_bytes: 0,
        relayed: 0,
        closing: None,
        status: status.as_u16(),
        ttfb_ms,
        exchange,
    };

    let mut response = Response::new(Body::new(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        http::header::CONTENT_TYPE,
        content_type.unwrap_or_else(|| HeaderValue::from_static("application/json")),
    );
    if streaming {
        headers.insert(
            http::header::CACHE_CONTROL,
            HeaderValue::from_static("no-cache"),
        );
    }
    if let Some(id) = request_id {
        headers.insert(X_REQUEST_ID, id);
    }
    response
}

/// The relayed body: upstream frames, passed on as they arrive.
struct RelayBody {
    inner: UpstreamBody,
    /// The exact length of a non-streamed body, when the upstream said.
    length: Option<u64>,
    streaming: bool,
    /// The stream's end event and usage, as corvid-wire reads them.
    watch: StreamWatch,
    /// The dialect's end event went by.
    finished: bool,
    /// Nothing more will be sent.
    ended: bool,
    /// What the ledger will say; `Cancelled` until the body ends.
    outcome: Outcome,
    usage: Option<Usage>,
    /// A non-streamed body's chunks (shared, not copied), for reading usage at the end.
    kept: Vec<Bytes>,
    kept_bytes: usize,
    /// Bytes passed on so far.
    relayed: u64,
    /// The shutdown gate, looked at once the body first waits.
    closing: Option<Watch>,
    status: u16,
    ttfb_ms: u64,
    exchange: Exchange,
}

impl http_body::Body for RelayBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        let this = self.get_mut();
        if this.ended {
            return Poll::Ready(None);
        }
        loop {
            let item = match Pin::new(&mut this.inner).poll_frame(cx) {
                Poll::Pending => {
                    let state = &this.exchange.state;
                    let closing = this.closing.get_or_insert_with(|| state.closing_watch());
                    if closing.closed(cx) {
                        let cut = this.fail(closing::MESSAGE.to_owned());
                        return Poll::Ready(cut.map(|result| result.map(Frame::data)));
                    }
                    return Poll::Pending;
                }
                Poll::Ready(None) => None,
                Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                    Ok(data) => Some(Ok(data)),
                    // Trailers carry nothing for the client here.
                    Err(_) => continue,
                },
                Poll::Ready(Some(Err(error))) => Some(Err(error)),
            };
            return Poll::Ready(this.next(item).map(|result| result.map(Frame::data)));
        }
    }

    fn is_end_stream(&self) -> bool {
        self.ended
    }

    fn size_hint(&self) -> SizeHint {
        self.length.map(SizeHint::with_exact).unwrap_or_default()
    }
}

impl RelayBody {
    /// What to send for the upstream's next item (`None`: the body is complete).
    fn next(
        &mut self,
        item: Option<Result<Bytes, BoxError>>,
    ) -> Option<Result<Bytes, std::io::Error>> {
        match item {
            Some(Ok(chunk)) => {
                self.relayed += chunk.len() as u64;
                if self.streaming {
                    let seen = self.watch.feed(&chunk);
                    self.finished = seen.finished;
                    self.usage = seen.usage;
                } else {
                    if self.kept_bytes + chunk.len() <= KEEP_FOR_USAGE {
                        self.kept_bytes += chunk.len();
                        self.kept.push(chunk.clone());
                    }
                    // With a known length hyper stops polling after the last byte and drops
                    // the body: the reply is complete here, not at a `None` that never comes.
                    if self.inner.is_end_stream() || self.length == Some(self.relayed) {
                        self.ended = true;
                        self.outcome = Outcome::Ok;
                    }
                }
                Some(Ok(chunk))
            }
            None => {
                self.ended = true;
                if self.streaming && !self.finished {
                    return Some(Ok(
                        self.error_event("the upstream closed the stream before it finished")
                    ));
                }
                self.outcome = Outcome::Ok;
                None
            }
            Some(Err(error)) => {
                // Worded as the translation and the agent word a broken reply.
                let message = corvid_providers::broken_stream(error.as_ref()).message;
                self.fail(message)
            }
        }
    }

    /// Ends the body on a failure: a stream with one error event in its dialect, a whole
    /// reply by breaking off (its length was promised).
    fn fail(&mut self, message: String) -> Option<Result<Bytes, std::io::Error>> {
        self.ended = true;
        if self.streaming && self.finished {
            // The client already has the whole reply; an error after its end has no place.
            self.outcome = Outcome::Ok;
            return None;
        }
        if self.streaming {
            return Some(Ok(self.error_event(&message)));
        }
        self.outcome = Outcome::StreamError;
        Some(Err(std::io::Error::other(message)))
    }

    /// One error event in the stream's dialect, after ending any half-written line.
    fn error_event(&mut self, message: &str) -> Bytes {
        tracing::warn!(route = self.exchange.route, model = %Clean(&self.exchange.model), message = %Clean(message), "stream failed after the response started");
        self.outcome = Outcome::StreamError;
        let mut event = Vec::new();
        if self.watch.mid_line() {
            event.extend_from_slice(b"\n\n");
        }
        codec::encode_stream_error(self.exchange.inbound, &WireError::api(message), &mut event);
        Bytes::from(event)
    }
}

impl Drop for RelayBody {
    /// hyper drops the body before it flushes the last bytes, so the ledger's share — usage
    /// out of a whole reply, the log line, the row — is handed to the bookkeeping thread,
    /// with the time the exchange ended.
    fn drop(&mut self) {
        let mut exchange = self.exchange.take();
        let kept = std::mem::take(&mut self.kept);
        // The client has the whole reply once the end event went by, even if it left before
        // the upstream closed the stream (Codex CLI does, right after `response.completed`).
        let outcome = match self.outcome {
            Outcome::Cancelled if self.finished => Outcome::Ok,
            outcome => outcome,
        };
        let (streaming, status, ttfb_ms, usage) =
            (self.streaming, self.status, self.ttfb_ms, self.usage);
        let state = exchange.state.clone();
        let ended = Instant::now();
        state.later(move || {
            let usage = match usage {
                None if !streaming && !kept.is_empty() => {
                    codec::usage_from_body(exchange.inbound, &body::join(kept))
                }
                usage => usage,
            };
            exchange.finish_at(ended, status, outcome, Some(ttfb_ms), usage);
        });
    }
}

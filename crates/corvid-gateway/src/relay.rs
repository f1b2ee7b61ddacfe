//! Relaying an upstream response to the client as it arrives.
//!
//! The body is forwarded chunk by chunk, never buffered whole. Streamed (SSE) bodies are also
//! watched line by line on the side, to notice the end marker and read usage. If the upstream
//! fails after the 200 went out, the client gets one error event in its own dialect and the
//! stream closes; a non-streamed body is cut off instead (its status is already sent).
//!
//! Dropping the response body — which hyper does when the client goes away — drops the
//! upstream response with it, closing that connection: the upstream request is cancelled.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use corvid_providers::{BoxError, UpstreamBody, is_timeout};
use corvid_wire::sse::{SseScanner, contains};
use http::HeaderValue;
use http_body::{Body as _, Frame, SizeHint};
use serde_json::{Value, json};

use crate::error::ApiError;

/// Which API the stream speaks, for its end marker and its error event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StreamKind {
    /// OpenAI chat completions: ends with `data: [DONE]`.
    ChatCompletions,
    /// OpenAI Responses: ends with a terminal `response.*` event.
    Responses,
}

/// What the request log line says about a request.
#[derive(Debug)]
pub(crate) struct RequestLog {
    pub(crate) route: &'static str,
    pub(crate) model: String,
    pub(crate) started: Instant,
    pub(crate) attempts: u32,
}

/// Builds the client's response from the upstream's: its status and content type, no
/// hop-by-hop or length headers, and the body relayed as it arrives.
pub(crate) fn relay(
    upstream: http::Response<UpstreamBody>,
    kind: StreamKind,
    log: RequestLog,
) -> Response {
    let status = upstream.status();
    let content_type = upstream.headers().get(http::header::CONTENT_TYPE).cloned();
    let request_id = upstream.headers().get("x-request-id").cloned();
    let streaming = content_type
        .as_ref()
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("text/event-stream"));
    let ttfb_ms = log.started.elapsed().as_millis() as u64;

    // A non-streamed body keeps its exact length, so hyper sends a Content-Length of its own
    // (nothing is copied from upstream) and writes headers and body together.
    let length = if streaming {
        None
    } else {
        upstream.body().size_hint().exact()
    };
    let body = RelayBody {
        inner: upstream.into_body(),
        length,
        kind,
        streaming,
        scanner: SseScanner::new(),
        finished: false,
        ended: false,
        usage: None,
        log,
        ttfb_ms,
        bytes: 0,
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
        headers.insert("x-request-id", id);
    }
    response
}

/// The events that end a Responses stream.
const RESPONSES_TERMINAL: [&[u8]; 4] = [
    b"\"response.completed\"",
    b"\"response.incomplete\"",
    b"\"response.failed\"",
    b"\"response.done\"",
];

/// The usage object at `pointer` in one event's JSON, if it is there.
fn usage_at(payload: &[u8], pointer: &str) -> Option<Value> {
    let event: Value = serde_json::from_slice(payload).ok()?;
    event
        .pointer(pointer)
        .filter(|usage| usage.is_object())
        .cloned()
}

/// The relayed body: upstream chunks, passed on as they arrive.
struct RelayBody {
    inner: UpstreamBody,
    /// The exact length of a non-streamed body, when the upstream said.
    length: Option<u64>,
    kind: StreamKind,
    streaming: bool,
    scanner: SseScanner,
    /// The end marker went by.
    finished: bool,
    /// Nothing more will be sent.
    ended: bool,
    usage: Option<Value>,
    log: RequestLog,
    ttfb_ms: u64,
    bytes: usize,
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
                Poll::Pending => return Poll::Pending,
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
                self.bytes += chunk.len();
                if self.streaming {
                    self.watch(&chunk);
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
                self.log_finished("ok");
                None
            }
            Some(Err(error)) => {
                self.ended = true;
                let message = if is_timeout(error.as_ref()) {
                    "the upstream stopped sending (idle timeout)".to_owned()
                } else {
                    format!("the upstream stream broke: {error}")
                };
                if self.streaming {
                    return Some(Ok(self.error_event(&message)));
                }
                self.log_finished("broken");
                Some(Err(std::io::Error::other(message)))
            }
        }
    }

    fn watch(&mut self, chunk: &[u8]) {
        let kind = self.kind;
        let (finished, usage) = (&mut self.finished, &mut self.usage);
        self.scanner.feed(chunk, |payload| match kind {
            StreamKind::ChatCompletions => {
                if payload.trim_ascii() == b"[DONE]" {
                    *finished = true;
                } else if contains(payload, b"\"usage\"") {
                    *usage = usage_at(payload, "/usage").or(usage.take());
                }
            }
            StreamKind::Responses => {
                if RESPONSES_TERMINAL
                    .iter()
                    .any(|marker| contains(payload, marker))
                {
                    *finished = true;
                    *usage = usage_at(payload, "/response/usage").or(usage.take());
                }
            }
        });
    }

    /// One error event in the stream's dialect, after ending any half-written line.
    fn error_event(&mut self, message: &str) -> Bytes {
        tracing::warn!(route = self.log.route, model = %self.log.model, message, "stream failed after the response started");
        self.log_finished("stream_error");
        let prefix = if self.scanner.mid_line() { "\n\n" } else { "" };
        let event = match self.kind {
            StreamKind::ChatCompletions => {
                let error = ApiError::new(http::StatusCode::BAD_GATEWAY, "api_error", message);
                format!("{prefix}data: {}\n\n", error.body())
            }
            StreamKind::Responses => {
                let error = json!({"type": "error", "code": "upstream_error", "message": message, "param": null});
                format!("{prefix}event: error\ndata: {error}\n\n")
            }
        };
        Bytes::from(event)
    }

    fn log_finished(&self, outcome: &'static str) {
        let usage = self.usage.as_ref();
        let tokens = |a: &str, b: &str| {
            usage
                .and_then(|usage| usage.get(a).or_else(|| usage.get(b)))
                .and_then(Value::as_u64)
        };
        tracing::info!(
            route = self.log.route,
            model = %self.log.model,
            outcome,
            attempts = self.log.attempts,
            ttfb_ms = self.ttfb_ms,
            duration_ms = self.log.started.elapsed().as_millis() as u64,
            bytes = self.bytes,
            input_tokens = tokens("prompt_tokens", "input_tokens"),
            output_tokens = tokens("completion_tokens", "output_tokens"),
            "request finished"
        );
    }
}

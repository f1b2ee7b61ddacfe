//! A `/completions` reply being read: the body's chunks go through a [`ZedStreamDecoder`] as
//! they arrive, and canonical events come out as a [`Stream`]. Nothing is buffered beyond the
//! current line and the events of the last chunk.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use corvid_wire::model::{ErrorKind, StreamEvent, WireError};
use futures_util::stream::BoxStream;
use futures_util::{Stream, StreamExt};

use super::error::ZedFailure;
use super::stream::{ZedFraming, ZedStreamDecoder};

/// A streamed completion. Poll it as a `Stream<Item = StreamEvent>` (or call
/// [`ZedCompletion::next_event`]); it ends after the reply's last event, which is an
/// `Error` when the reply failed or was cut short.
pub struct ZedCompletion {
    body: BoxStream<'static, Result<Bytes, reqwest::Error>>,
    decoder: ZedStreamDecoder,
    pending: VecDeque<StreamEvent>,
    done: bool,
}

impl std::fmt::Debug for ZedCompletion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZedCompletion")
            .field("decoder", &self.decoder)
            .field("pending", &self.pending.len())
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl ZedCompletion {
    pub(crate) fn new(response: reqwest::Response, decoder: ZedStreamDecoder) -> Self {
        Self {
            body: response.bytes_stream().boxed(),
            decoder,
            pending: VecDeque::new(),
            done: false,
        }
    }

    /// Whether the reply sends status lines.
    pub fn framing(&self) -> ZedFraming {
        self.decoder.framing()
    }

    /// The decoder, for the last status and a reported failure (with its `retry_after`).
    pub fn decoder(&self) -> &ZedStreamDecoder {
        &self.decoder
    }

    /// The next event, or `None` at the end.
    pub async fn next_event(&mut self) -> Option<StreamEvent> {
        self.next().await
    }

    /// Reads up to the reply's first output (anything but `Start` and `Usage`) and keeps what
    /// it read for the stream to yield. When that first output is the failure Zed reported,
    /// returns it: nothing has reached the client yet, so the call may be retried or answered
    /// with an error status instead of a stream.
    pub async fn failure_before_output(&mut self) -> Option<ZedFailure> {
        let mut read = VecDeque::new();
        let mut failure = None;
        while let Some(event) = self.next().await {
            let output = !matches!(event, StreamEvent::Start { .. } | StreamEvent::Usage(_));
            if matches!(event, StreamEvent::Error(_)) {
                failure = self.decoder.failure().cloned();
            }
            read.push_back(event);
            if output {
                break;
            }
        }
        // What was read goes out first, before anything still pending.
        read.append(&mut self.pending);
        self.pending = read;
        failure
    }
}

impl Stream for ZedCompletion {
    type Item = StreamEvent;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<StreamEvent>> {
        let this = self.get_mut();
        loop {
            if let Some(event) = this.pending.pop_front() {
                return Poll::Ready(Some(event));
            }
            if this.done {
                return Poll::Ready(None);
            }
            let mut out = Vec::new();
            match this.body.poll_next_unpin(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Ok(chunk))) => {
                    this.decoder.feed(&chunk, &mut out);
                    // Whatever follows `stream_ended` or a failure is not read.
                    this.done = this.decoder.is_done();
                }
                Poll::Ready(Some(Err(err))) => {
                    this.done = true;
                    let kind = if err.is_timeout() {
                        ErrorKind::Timeout
                    } else {
                        ErrorKind::Api
                    };
                    out.push(StreamEvent::Error(WireError::new(
                        kind,
                        format!("the connection to Zed broke mid-reply: {err}"),
                    )));
                }
                Poll::Ready(None) => {
                    this.done = true;
                    this.decoder.finish(&mut out);
                }
            }
            this.pending.extend(out);
        }
    }
}

//! A deadline on reading a request's body, so a client that sends its headers and then
//! trickles the body (slowloris, second half) cannot hold a connection forever.
//!
//! The timer is armed only when the body has to be waited for twice. The first wait is nearly
//! always hyper's hand-over of bytes it has already read (its connection task moves them into
//! the body's channel and wakes the handler), so that wait asks for one more poll instead —
//! which the hand-over's wake-up usually answers anyway — and a body that came with its
//! headers never touches the timer wheel.

use std::future::Future as _;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use tokio::time::Sleep;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The body did not arrive in time.
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive within {0:?}")]
pub(crate) struct SlowBody(Duration);

/// `inner`, failing once it has been waited for longer than `limit` in all.
pub(crate) struct Deadline<B> {
    inner: B,
    limit: Duration,
    /// The body has been waited for once already.
    waited: bool,
    timer: Option<Pin<Box<Sleep>>>,
}

impl<B> Deadline<B> {
    pub(crate) fn new(inner: B, limit: Duration) -> Self {
        Self {
            inner,
            limit,
            waited: false,
            timer: None,
        }
    }
}

impl<B> Body for Deadline<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = self.get_mut();
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            return Poll::Ready(frame.map(|frame| frame.map_err(Into::into)));
        }
        if !this.waited {
            this.waited = true;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        let limit = this.limit;
        let timer = this
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        if timer.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Some(Err(Box::new(SlowBody(limit)))));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

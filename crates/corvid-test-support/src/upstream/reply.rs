//! The scripted answers a test queues: [`Reply`], how a stream ends, and the test's end of a
//! fed stream.

use std::time::Duration;

use bytes::Bytes;
use http::StatusCode;
use serde_json::Value;

/// One scripted answer.
#[derive(Debug)]
pub enum Reply {
    /// A complete response with a JSON body.
    Json {
        status: StatusCode,
        body: Value,
        headers: Vec<(String, String)>,
    },
    /// A `text/event-stream` response written piece by piece, each after its delay.
    Stream {
        chunks: Vec<(Duration, Bytes)>,
        end: StreamEnd,
    },
    /// A `text/event-stream` response whose pieces the test releases one by one through the
    /// [`StreamFeed`] returned by [`Reply::fed`]; dropping the feed ends the body cleanly.
    Fed(tokio::sync::mpsc::UnboundedReceiver<Bytes>),
    /// Accept the request and never answer (no status line either).
    Hang,
}

/// The test's end of a [`Reply::Fed`] stream.
#[derive(Debug, Clone)]
pub struct StreamFeed(tokio::sync::mpsc::UnboundedSender<Bytes>);

impl StreamFeed {
    /// Sends one piece of the body now; false when the client already went away.
    pub fn send(&self, bytes: &str) -> bool {
        self.0.send(Bytes::from(bytes.to_owned())).is_ok()
    }

    /// Sends `data: <event>` and a blank line.
    pub fn event(&self, event: &str) -> bool {
        self.send(&format!("data: {event}\n\n"))
    }
}

/// How a scripted stream ends after its last chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamEnd {
    /// A normal end of body.
    Finish,
    /// The connection breaks without finishing the body.
    Abort,
}

impl Reply {
    /// 200 with this JSON body.
    pub fn ok(body: Value) -> Self {
        Self::status(StatusCode::OK, body)
    }

    /// This status with this JSON body.
    pub fn status(status: StatusCode, body: Value) -> Self {
        Self::Json {
            status,
            body,
            headers: Vec::new(),
        }
    }

    /// Adds a response header (e.g. `Retry-After`) to a JSON reply.
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        if let Self::Json { headers, .. } = &mut self {
            headers.push((name.to_owned(), value.to_owned()));
        }
        self
    }

    /// A stream the test feeds piece by piece.
    pub fn fed() -> (StreamFeed, Self) {
        let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
        (StreamFeed(sender), Self::Fed(receiver))
    }

    /// An SSE stream of `data:` events, each sent `gap` after the previous one, ending cleanly.
    pub fn sse(events: &[&str], gap: Duration) -> Self {
        let chunks = events
            .iter()
            .map(|event| (gap, Bytes::from(format!("data: {event}\n\n"))))
            .collect();
        Self::Stream {
            chunks,
            end: StreamEnd::Finish,
        }
    }
}

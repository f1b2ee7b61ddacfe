//! Turns a [`Reply`] into an HTTP response: a JSON body, a timed or fed event stream, or nothing.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use http::HeaderValue;

use super::reply::{Reply, StreamEnd};
use super::server::Shared;
use super::stream_guard::StreamGuard;

pub(super) fn render(reply: Reply, shared: Arc<Shared>) -> Response {
    match reply {
        Reply::Json {
            status,
            body,
            headers,
        } => {
            let mut response = Response::new(Body::from(body.to_string()));
            *response.status_mut() = status;
            let map = response.headers_mut();
            map.insert("content-type", HeaderValue::from_static("application/json"));
            for (name, value) in headers {
                if let (Ok(name), Ok(value)) = (
                    http::HeaderName::from_bytes(name.as_bytes()),
                    HeaderValue::from_str(&value),
                ) {
                    map.insert(name, value);
                }
            }
            response
        }
        Reply::Stream { chunks, end } => {
            let guard = StreamGuard {
                shared,
                finished: false,
            };
            let stream = futures_util::stream::unfold(
                (chunks.into_iter(), guard, end),
                |(mut chunks, mut guard, end)| async move {
                    match chunks.next() {
                        Some((delay, bytes)) => {
                            tokio::time::sleep(delay).await;
                            Some((Ok(bytes), (chunks, guard, end)))
                        }
                        None => {
                            guard.mark_finished();
                            match end {
                                StreamEnd::Finish => None,
                                StreamEnd::Abort => {
                                    // Let the chunks written so far reach the client first.
                                    tokio::time::sleep(Duration::from_millis(50)).await;
                                    Some((
                                        Err(std::io::Error::other("scripted abort")),
                                        (chunks, guard, StreamEnd::Finish),
                                    ))
                                }
                            }
                        }
                    }
                },
            );
            let mut response = Response::new(Body::from_stream(stream));
            response.headers_mut().insert(
                "content-type",
                HeaderValue::from_static("text/event-stream"),
            );
            response
        }
        Reply::Fed(receiver) => {
            let guard = StreamGuard {
                shared,
                finished: false,
            };
            let stream = futures_util::stream::unfold(
                (receiver, guard),
                |(mut receiver, mut guard)| async move {
                    match receiver.recv().await {
                        Some(bytes) => Some((Ok::<_, std::io::Error>(bytes), (receiver, guard))),
                        None => {
                            guard.mark_finished();
                            None
                        }
                    }
                },
            );
            let mut response = Response::new(Body::from_stream(stream));
            response.headers_mut().insert(
                "content-type",
                HeaderValue::from_static("text/event-stream"),
            );
            response
        }
        Reply::Hang => Response::new(Body::empty()),
    }
}

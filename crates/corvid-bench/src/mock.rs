//! `corvid-bench mock-upstream`: a fast fake of an OpenAI-compatible
//! `/v1/chat/completions`, on one thread so it stays cheap.

use std::convert::Infallible;
use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::future::Either as StreamEither;
use futures_util::{Stream, StreamExt as _};
use http::header::{CACHE_CONTROL, CONTENT_TYPE};
use http::{HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Either, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use tokio::net::TcpListener;

use crate::payload;
use crate::server;

type EventFrames =
    std::iter::Map<std::vec::IntoIter<Bytes>, fn(Bytes) -> Result<Frame<Bytes>, Infallible>>;
type Events = futures_util::stream::Iter<EventFrames>;
/// A stream's events, then (for a held stream) nothing, until the client goes away.
type HeldEvents =
    futures_util::stream::Chain<Events, futures_util::stream::Pending<<Events as Stream>::Item>>;
type MockBody = Either<Full<Bytes>, StreamBody<StreamEither<Events, HeldEvents>>>;

/// Events a held stream sends before it goes quiet: the role and the first words.
const HELD_EVENTS: usize = 2;

struct Answers {
    completion: Bytes,
    events: Vec<Bytes>,
}

/// Serves on `port`: plain HTTP/1.1, or HTTP/2 over TLS with `tls` (the server certificate
/// and its key).
pub(crate) fn run(port: u16, tls: Option<(PathBuf, PathBuf)>) -> anyhow::Result<()> {
    crate::procs::exit_when_parent_exits();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await?;
        let answers = Arc::new(Answers {
            completion: payload::chat_completion(),
            events: payload::chat_stream_events(),
        });
        let handler = move |request| {
            let answers = Arc::clone(&answers);
            async move { Ok::<_, Infallible>(answer(request, &answers).await) }
        };
        let acceptor = match tls {
            None => None,
            Some((cert, key)) => Some(crate::tls::acceptor(&cert, &key)?),
        };
        server::serve(listener, acceptor, handler).await
    })
}

async fn answer(request: Request<Incoming>, answers: &Answers) -> Response<MockBody> {
    if request.method() == Method::GET && request.uri().path() == "/healthz" {
        // Lets a plain forwarding proxy stand in for corvid when testing
        // the bench itself.
        return plain(StatusCode::OK, r#"{"status":"ok"}"#);
    }
    if request.method() != Method::POST || request.uri().path() != "/v1/chat/completions" {
        return plain(StatusCode::NOT_FOUND, "not found");
    }
    // Read the whole request before answering, as a real upstream must.
    let body = match request.into_body().collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => return plain(StatusCode::BAD_REQUEST, "unreadable body"),
    };
    if payload::wants_stream(&body) {
        // `corvid-bench idle-streams` asks for streams that stay open, as a model thinking
        // for a long time keeps them.
        let events = if payload::wants_hold(&body) {
            let first = answers.events.iter().take(HELD_EVENTS).cloned().collect();
            let frames: EventFrames = Vec::into_iter(first).map(data_frame);
            StreamEither::Right(
                futures_util::stream::iter(frames).chain(futures_util::stream::pending()),
            )
        } else {
            let frames: EventFrames = answers.events.clone().into_iter().map(data_frame);
            StreamEither::Left(futures_util::stream::iter(frames))
        };
        let mut response = Response::new(Either::Right(StreamBody::new(events)));
        let headers = response.headers_mut();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
        headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        response
    } else {
        let mut response = Response::new(Either::Left(Full::new(answers.completion.clone())));
        response
            .headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        response
    }
}

fn data_frame(event: Bytes) -> Result<Frame<Bytes>, Infallible> {
    Ok(Frame::data(event))
}

fn plain(status: StatusCode, text: &'static str) -> Response<MockBody> {
    let mut response = Response::new(Either::Left(Full::new(Bytes::from_static(text.as_bytes()))));
    *response.status_mut() = status;
    response
}

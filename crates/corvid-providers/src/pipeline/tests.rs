//! The pipeline's reply side: events come in the batches the upstream's frames hold, a stream
//! ends at its dialect's own end, and a broken body reads the one way every caller reads it.

use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use corvid_wire::Dialect;
use corvid_wire::model::{ErrorKind, FinishReason, NameMap, StreamEvent};
use futures_util::StreamExt;
use http_body::Frame;
use http_body_util::{BodyExt, StreamBody};

use super::{ModelStream, Source, broken_stream};
use crate::transport::{BoxError, IdleTimeout, UpstreamBody};

/// A body that yields `pieces` in order, then never ends (a connection kept open).
fn body(pieces: Vec<Result<&'static str, BoxError>>) -> UpstreamBody {
    let frames = pieces
        .into_iter()
        .map(|piece| piece.map(|text| Frame::data(Bytes::from_static(text.as_bytes()))));
    StreamBody::new(futures_util::stream::iter(frames).chain(futures_util::stream::pending()))
        .boxed_unsync()
}

fn chat_stream(body: UpstreamBody) -> ModelStream {
    ModelStream {
        source: Source::Bytes {
            body,
            decoder: Box::new(corvid_wire::codec::Decoder::new(
                Dialect::OpenAiChat,
                NameMap::default(),
            )),
        },
        pending: Default::default(),
        done: false,
        provider: "xai".to_owned(),
    }
}

const TWO_DELTAS_AND_DONE: &str = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n\
data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\"},\"finish_reason\":\"stop\"}]}\n\n\
data: [DONE]\n\n";

#[test]
fn one_frame_is_one_batch_and_the_dialects_end_ends_the_stream() {
    let mut stream = chat_stream(body(vec![Ok(TWO_DELTAS_AND_DONE)]));
    let waker = futures_util::task::noop_waker();
    let mut cx = Context::from_waker(&waker);
    let mut events = Vec::new();
    assert_eq!(stream.poll_events(&mut cx, &mut events), Poll::Ready(true));
    let texts: Vec<&str> = events
        .iter()
        .filter_map(|event| match event {
            StreamEvent::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(texts, ["a", "b"], "{events:?}");
    assert!(
        events.contains(&StreamEvent::Finish(FinishReason::EndTurn)),
        "{events:?}"
    );
    // `[DONE]` went by: over, though the connection stays open.
    assert!(stream.is_over());
    let mut more = Vec::new();
    assert_eq!(stream.poll_events(&mut cx, &mut more), Poll::Ready(false));
    assert!(more.is_empty());
}

#[tokio::test]
async fn a_broken_body_ends_with_the_one_wording() {
    let cut: BoxError = Box::new(std::io::Error::other("connection reset"));
    let stream = chat_stream(body(vec![
        Ok("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n"),
        Err(cut),
    ]));
    let events: Vec<StreamEvent> = stream.collect().await;
    let Some(StreamEvent::Error(error)) = events.last() else {
        panic!("{events:?}");
    };
    assert_eq!(error.kind, ErrorKind::Api);
    assert_eq!(error.message, "the upstream stream broke: connection reset");

    let quiet: BoxError = Box::new(IdleTimeout(Duration::from_secs(1)));
    let error = broken_stream(quiet.as_ref());
    assert_eq!(error.kind, ErrorKind::Timeout);
    assert_eq!(error.message, "the upstream stopped sending (idle timeout)");
}

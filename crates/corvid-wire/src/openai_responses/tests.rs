//! Tests of the Responses codec, by area (`tests/*.rs`); the helpers they share are here.
//!
//! Inputs are fixtures under `tests/fixtures/openai_responses/`; decoders are checked with
//! whole-value `assert_eq!`, encoders with insta JSON snapshots (SSE output is snapshotted as a
//! list of `{event, data}` after checking its framing).

use serde_json::Value;

use super::{StreamDecoder, StreamEncoder, StreamOptions};
use crate::model::{ChatResponse, NameMap, ResponseBuilder, StreamEvent};

mod errors;
mod pitfalls;
mod request;
mod response;
mod stream_decoder;
mod stream_encoder;

/// The bytes of a fixture.
fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/openai_responses/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|error| panic!("{path}: {error}"))
}

/// A fixture as JSON.
fn fixture_json(name: &str) -> Value {
    serde_json::from_slice(&fixture(name)).unwrap()
}

/// Decodes a stream fed in `chunks`, then finishes it.
fn decode_chunks<'a>(
    chunks: impl IntoIterator<Item = &'a [u8]>,
    names: &NameMap,
) -> Vec<StreamEvent> {
    let mut decoder = StreamDecoder::new(names.clone());
    let mut events = Vec::new();
    for chunk in chunks {
        decoder.feed(chunk, &mut events);
    }
    decoder.finish(&mut events);
    events
}

/// Decodes a stream whole, and checks that every split into two chunks and feeding it one byte
/// at a time give the same events.
fn decode_stream(bytes: &[u8], names: &NameMap) -> Vec<StreamEvent> {
    let whole = decode_chunks([bytes], names);
    for split in 0..=bytes.len() {
        let (head, tail) = bytes.split_at(split);
        assert_eq!(
            decode_chunks([head, tail], names),
            whole,
            "split at byte {split}"
        );
    }
    assert_eq!(
        decode_chunks(bytes.chunks(1), names),
        whole,
        "one byte at a time"
    );
    whole
}

/// Decodes a stream fixture (every chunking, see [`decode_stream`]).
fn decode_fixture(name: &str) -> Vec<StreamEvent> {
    decode_stream(&fixture(name), &NameMap::default())
}

/// The whole reply a stream of events builds.
fn build(events: &[StreamEvent]) -> ChatResponse {
    let mut builder = ResponseBuilder::new();
    events.iter().for_each(|event| builder.push(event));
    builder.finish().unwrap()
}

/// Stream encoder options used throughout.
fn options() -> StreamOptions {
    StreamOptions {
        model: "gpt-5".to_owned(),
        id: "resp_client1".to_owned(),
        created_at: 1_767_000_000,
    }
}

/// Encodes `events` then finishes the stream.
fn encode_stream(events: &[StreamEvent], options: StreamOptions) -> String {
    let mut encoder = StreamEncoder::new(options);
    let mut out = Vec::new();
    for event in events {
        encoder.encode(event, &mut out);
    }
    encoder.finish(&mut out);
    String::from_utf8(out).unwrap()
}

/// Parses encoder output into `{event, data}` values, checking the framing on the way: every
/// event is an `event:` line naming `data.type`, then one `data:` line of JSON, then a blank
/// line, and `sequence_number`s count up from 0.
fn parse_sse(text: &str) -> Vec<Value> {
    assert!(text.ends_with("\n\n"), "the stream ends with a blank line");
    let mut events = Vec::new();
    for (position, block) in text.trim_end_matches('\n').split("\n\n").enumerate() {
        let lines: Vec<&str> = block.split('\n').collect();
        let [event_line, data_line] = lines.as_slice() else {
            panic!("event {position} is not two lines: {block:?}");
        };
        let name = event_line.strip_prefix("event: ").unwrap();
        let data: Value = serde_json::from_str(data_line.strip_prefix("data: ").unwrap()).unwrap();
        assert_eq!(data["type"], name, "event line matches data.type");
        assert_eq!(
            data["sequence_number"], position,
            "sequence numbers count up"
        );
        events.push(serde_json::json!({ "event": name, "data": data }));
    }
    events
}

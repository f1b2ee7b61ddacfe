//! Property tests for every stream decoder and every request decoder: random chunking and
//! random corruption never panic, never yield a damaged stream reported as complete, and valid
//! input decodes the same however it is chunked.
//!
//! Valid provider streams are made by the same dialect's stream encoder from random canonical
//! events (the encoder writes what the decoder reads); valid request bodies are written per
//! dialect from random text. The suite runs a few cases per property; a long run:
//! `PROPTEST_CASES=100000 cargo test -p corvid-wire --test props --release`.
//! The harness (case count, random replies, chunked feeding, damage) is
//! `corvid_test_support::props`, shared with corvid-providers' `zed_props`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use corvid_test_support::props::{
    chunk_sizes, config, damage, damaged, damaged_body, encoded, failed, feed_in_pieces, reply,
    sse_payloads, text,
};
use corvid_wire::Dialect;
use corvid_wire::codec::{self, Decoder};
use corvid_wire::fim::CompletionRequest;
use corvid_wire::model::{FinishReason, NameMap, StreamEvent};
use proptest::prelude::*;
use serde_json::json;

const DIALECTS: [Dialect; 4] = [
    Dialect::OpenAiChat,
    Dialect::OpenAiResponses,
    Dialect::Anthropic,
    Dialect::Gemini,
];

/// `bytes` decoded as a provider stream of `dialect`, fed in pieces of the given sizes (cycled;
/// none: all at once).
fn decode(dialect: Dialect, bytes: &[u8], sizes: &[usize]) -> Vec<StreamEvent> {
    let mut decoder = Decoder::new(dialect, NameMap::default());
    let mut events = Vec::new();
    feed_in_pieces(bytes, sizes, |chunk| decoder.feed(chunk, &mut events));
    decoder.finish(&mut events);
    events
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn valid_streams_decode_the_same_however_they_are_chunked(
        events in reply(),
        sizes in chunk_sizes(),
    ) {
        for dialect in DIALECTS {
            let bytes = encoded(dialect, &events);
            let whole = decode(dialect, &bytes, &[]);
            prop_assert!(!failed(&whole), "{dialect:?}: {whole:?}\n{}", String::from_utf8_lossy(&bytes));
            prop_assert_eq!(&decode(dialect, &bytes, &sizes), &whole, "{:?}", dialect);
            prop_assert_eq!(&decode(dialect, &bytes, &[1]), &whole, "{:?} byte by byte", dialect);
        }
    }

    #[test]
    fn a_damaged_event_never_passes_for_a_complete_stream(
        events in reply(),
        sizes in chunk_sizes(),
        which in any::<usize>(),
        damage in damage(),
    ) {
        for dialect in DIALECTS {
            let bytes = encoded(dialect, &events);
            let Some(broken) = damaged(&bytes, &sse_payloads(&bytes), which, &damage) else { continue };
            let decoded = decode(dialect, &broken, &sizes);
            // An event after the stream's end may be ignored; anything else must fail.
            prop_assert!(
                failed(&decoded) || decoded == decode(dialect, &bytes, &[]),
                "{dialect:?} {damage:?}: {decoded:?}\n{}",
                String::from_utf8_lossy(&broken)
            );
        }
    }

    #[test]
    fn a_stream_cut_anywhere_fails_or_was_already_complete(
        events in reply(),
        sizes in chunk_sizes(),
        at in any::<usize>(),
    ) {
        for dialect in DIALECTS {
            let bytes = encoded(dialect, &events);
            let cut = &bytes[..at % bytes.len().max(1)];
            let decoded = decode(dialect, cut, &sizes);
            prop_assert!(
                failed(&decoded) || decoded == decode(dialect, &bytes, &[]),
                "{dialect:?} cut at {}: {decoded:?}",
                cut.len()
            );
        }
    }

    #[test]
    fn random_bytes_and_random_flips_never_panic(
        events in reply(),
        garbage in prop::collection::vec(any::<u8>(), 0..512),
        flips in prop::collection::vec((any::<usize>(), any::<u8>()), 1..8),
        sizes in chunk_sizes(),
    ) {
        for dialect in DIALECTS {
            decode(dialect, &garbage, &sizes);
            let mut bytes = encoded(dialect, &events);
            for (at, byte) in &flips {
                let length = bytes.len().max(1);
                if let Some(slot) = bytes.get_mut(at % length) {
                    *slot = *byte;
                }
            }
            decode(dialect, &bytes, &sizes);
        }
    }
}

/// A client request body in `dialect`, from random text.
fn request_body(dialect: Dialect, system: &str, user: &str, answer: &str, stream: bool) -> Vec<u8> {
    let body = match dialect {
        Dialect::OpenAiChat => json!({
            "model": "m", "stream": stream, "temperature": 0.5,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
                {"role": "assistant", "content": answer},
                {"role": "user", "content": [{"type": "text", "text": user}]},
            ],
            "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
        }),
        Dialect::OpenAiResponses => json!({
            "model": "m", "stream": stream, "instructions": system,
            "input": [
                {"role": "user", "content": user},
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": answer}]},
                {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "c1", "output": answer},
            ],
            "tools": [{"type": "function", "name": "f", "parameters": {"type": "object"}}],
        }),
        Dialect::Anthropic => json!({
            "model": "m", "stream": stream, "max_tokens": 64, "system": system,
            "messages": [
                {"role": "user", "content": user},
                {"role": "assistant", "content": [
                    {"type": "text", "text": answer},
                    {"type": "tool_use", "id": "t1", "name": "f", "input": {"a": answer}},
                ]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": user}]},
            ],
            "tools": [{"name": "f", "input_schema": {"type": "object"}}],
        }),
        Dialect::Gemini => json!({
            "systemInstruction": {"parts": [{"text": system}]},
            "contents": [
                {"role": "user", "parts": [{"text": user}]},
                {"role": "model", "parts": [{"text": answer}, {"functionCall": {"name": "f", "args": {"a": answer}}}]},
                {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {"result": user}}}]},
            ],
            "generationConfig": {"temperature": 0.5},
        }),
    };
    body.to_string().into_bytes()
}

fn decode_request(dialect: Dialect, body: &[u8]) -> Result<String, String> {
    codec::decode_request(dialect, body, "m")
        .map(|request| format!("{request:?}"))
        .map_err(|error| error.to_string())
}

fn decode_fim(body: &[u8]) -> Result<String, String> {
    CompletionRequest::from_json(body)
        .map(|request| format!("{request:?}"))
        .map_err(|error| error.to_string())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn request_decoders_read_valid_bodies_and_refuse_damaged_ones(
        system in text(),
        user in text(),
        answer in text(),
        stream in any::<bool>(),
        damage in damage(),
    ) {
        for dialect in DIALECTS {
            let body = request_body(dialect, &system, &user, &answer, stream);
            let valid = decode_request(dialect, &body);
            prop_assert!(valid.is_ok(), "{dialect:?}: {valid:?}");
            let broken = decode_request(dialect, &damaged_body(&body, &damage));
            // Damage inside a field the decoder skips may go unseen; it must not change what
            // was read.
            prop_assert!(broken.is_err() || broken == valid, "{dialect:?} {damage:?}: {broken:?}");
        }
        let fim = json!({"model": "m", "prompt": user, "suffix": answer, "max_tokens": 16})
            .to_string()
            .into_bytes();
        let valid = decode_fim(&fim);
        prop_assert!(valid.is_ok(), "{valid:?}");
        let broken = decode_fim(&damaged_body(&fim, &damage));
        prop_assert!(broken.is_err() || broken == valid, "fim {damage:?}: {broken:?}");
    }

    #[test]
    fn request_decoders_never_panic_on_random_bytes(
        garbage in prop::collection::vec(any::<u8>(), 0..512),
        system in text(),
        flips in prop::collection::vec((any::<usize>(), any::<u8>()), 1..8),
    ) {
        for dialect in DIALECTS {
            let _ = decode_request(dialect, &garbage);
            let mut body = request_body(dialect, &system, &system, &system, true);
            for (at, byte) in &flips {
                let length = body.len();
                body[at % length] = *byte;
            }
            let _ = decode_request(dialect, &body);
        }
        let _ = decode_fim(&garbage);
    }
}

#[test]
fn a_line_too_long_to_keep_fails_every_stream_decoder() {
    let events = [
        StreamEvent::Start {
            id: "reply-1".to_owned(),
            model: "model-1".to_owned(),
        },
        StreamEvent::TextDelta {
            text: "kept".to_owned(),
        },
        StreamEvent::Finish(FinishReason::EndTurn),
    ];
    for dialect in DIALECTS {
        let bytes = encoded(dialect, &events);
        // An event too long to keep, in the middle of the stream.
        let spans = sse_payloads(&bytes);
        let (start, _) = spans[spans.len() / 2];
        let mut long = bytes[..start].to_vec();
        long.extend_from_slice(br#"{"text":""#);
        long.resize(long.len() + 9 * 1024 * 1024, b'a');
        long.extend_from_slice(b"\"}\n\n");
        long.extend_from_slice(&bytes[start..]);
        let decoded = decode(dialect, &long, &[64 * 1024]);
        assert!(failed(&decoded), "{dialect:?}: {decoded:?}");
    }
}

use pretty_assertions::assert_eq;
use serde_json::Value;

use super::*;
use crate::gemini::reply_call_id;
use crate::gemini::tests::fixture;
use crate::model::ErrorKind;

/// Decodes `chunks` in order, then ends the body.
fn run(chunks: &[&[u8]]) -> Vec<StreamEvent> {
    let mut decoder = StreamDecoder::new(NameMap::default());
    let mut out = Vec::new();
    for chunk in chunks {
        decoder.feed(chunk, &mut out);
    }
    decoder.finish(&mut out);
    out
}

/// Decodes `bytes` whole, split in two at every byte, and one byte at a time; all must agree.
pub(crate) fn decode_every_split(bytes: &[u8]) -> Vec<StreamEvent> {
    let whole = run(&[bytes]);
    for split in 0..=bytes.len() {
        let (head, tail) = bytes.split_at(split);
        assert_eq!(run(&[head, tail]), whole, "split at byte {split}");
    }
    let bytes: Vec<&[u8]> = bytes.chunks(1).collect();
    assert_eq!(run(&bytes), whole, "one byte at a time");
    whole
}

/// The chunks an encoder wrote, checking Gemini's framing: `data: <one-line JSON>\r\n\r\n`.
pub(crate) fn sse_chunks(bytes: &[u8]) -> Vec<Value> {
    let text = std::str::from_utf8(bytes).unwrap();
    assert!(text.ends_with("\r\n\r\n"), "ends an event: {text:?}");
    text.split_terminator("\r\n\r\n")
        .map(|event| {
            let json = event.strip_prefix("data: ").expect("a data line");
            assert!(!json.contains(['\n', '\r']), "one line: {json}");
            serde_json::from_str(json).unwrap()
        })
        .collect()
}

fn encode(events: &[StreamEvent]) -> Vec<u8> {
    let mut encoder = StreamEncoder::new(StreamOptions {
        model: "gemini-2.5-pro".into(),
    });
    let mut out = Vec::new();
    for event in events {
        encoder.encode(event, &mut out);
    }
    encoder.finish(&mut out);
    out
}

fn start(id: &str, model: &str) -> StreamEvent {
    StreamEvent::Start {
        id: id.into(),
        model: model.into(),
    }
}

fn text(text: &str) -> StreamEvent {
    StreamEvent::TextDelta { text: text.into() }
}

fn thought(text: &str) -> StreamEvent {
    StreamEvent::ReasoningDelta { text: text.into() }
}

fn call_start(index: u32, id: &str, name: &str, signature: Option<&str>) -> StreamEvent {
    StreamEvent::ToolCallStart {
        index,
        id: id.into(),
        name: name.into(),
        signature: signature.map(str::to_owned),
    }
}

fn args(index: u32, delta: &str) -> StreamEvent {
    StreamEvent::ToolCallArgs {
        index,
        delta: delta.into(),
    }
}

fn call_end(index: u32) -> StreamEvent {
    StreamEvent::ToolCallEnd { index }
}

fn usage(input: u64, cache_read: u64, output: u64, reasoning: u64) -> StreamEvent {
    StreamEvent::Usage(Usage {
        input,
        cache_read,
        cache_write: 0,
        output,
        reasoning,
    })
}

#[test]
fn decodes_a_text_stream() {
    assert_eq!(
        decode_every_split(&fixture("stream_text.sse")),
        vec![
            start("g2", "gemini-2.5-flash"),
            usage(9, 0, 0, 0),
            text("Hi "),
            text("there."),
            usage(9, 0, 4, 0),
            StreamEvent::Finish(FinishReason::EndTurn),
        ]
    );
}

#[test]
fn decodes_thoughts_text_and_parallel_calls() {
    let first = r#"{"path":"a.rs"}"#;
    // As the provider wrote it (serde_json keeps key order: `preserve_order`).
    let second = r#"{"path":"b.rs","limit":20}"#;
    assert_eq!(
        decode_every_split(&fixture("stream_thinking_tools.sse")),
        vec![
            start("r77", "gemini-2.5-pro"),
            usage(20, 100, 0, 0),
            thought("**Planning** I need "),
            thought("both files."),
            text("Reading them now."),
            call_start(
                0,
                &reply_call_id("r77", "read_file", first, 0),
                "read_file",
                Some("CiQBSig==")
            ),
            args(0, first),
            call_end(0),
            call_start(
                1,
                &reply_call_id("r77", "read_file", second, 1),
                "read_file",
                None
            ),
            args(1, second),
            call_end(1),
            usage(20, 100, 70, 30),
            StreamEvent::Finish(FinishReason::ToolCalls),
        ]
    );
}

#[test]
fn decodes_an_error_mid_stream() {
    assert_eq!(
        decode_every_split(&fixture("stream_error.sse")),
        vec![
            start("e1", "gemini-2.5-flash"),
            text("Let me"),
            StreamEvent::Error(
                WireError::new(
                    ErrorKind::Overloaded,
                    "The model is overloaded. Please try again later."
                )
                .with_code("UNAVAILABLE")
            ),
        ]
    );
}

#[test]
fn a_stream_cut_before_its_finish_is_an_error() {
    assert_eq!(
        decode_every_split(&fixture("stream_cut.sse")),
        vec![
            start("c1", "gemini-2.5-flash"),
            text("Half an ans"),
            StreamEvent::Error(WireError::new(
                ErrorKind::Api,
                "the Gemini stream ended before its finishReason"
            )),
        ]
    );
    assert_eq!(
        run(&[b""]),
        vec![StreamEvent::Error(WireError::new(
            ErrorKind::Api,
            "the Gemini stream ended before its finishReason"
        ))],
        "an empty body"
    );
}

#[test]
fn usage_after_the_finish_is_reported_again() {
    let body = concat!(
        "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"ok\"}]},\"finishReason\":\"STOP\"}],",
        "\"usageMetadata\":{\"promptTokenCount\":5,\"totalTokenCount\":5}}\n\n",
        "data: {\"usageMetadata\":{\"promptTokenCount\":5,\"candidatesTokenCount\":1,\"totalTokenCount\":6}}\n\n",
        "data: {\"usageMetadata\":{\"promptTokenCount\":5,\"candidatesTokenCount\":1,\"totalTokenCount\":6}}\n\n",
    );
    assert_eq!(
        decode_every_split(body.as_bytes()),
        vec![
            start("", ""),
            text("ok"),
            usage(5, 0, 0, 0),
            StreamEvent::Finish(FinishReason::EndTurn),
            usage(5, 0, 1, 0),
        ]
    );
}

#[test]
fn a_last_line_without_its_line_end_counts() {
    let body = br#"data: {"candidates":[{"content":{"parts":[{"text":"x"}]},"finishReason":"MAX_TOKENS","index":0}]}"#;
    assert_eq!(
        decode_every_split(body),
        vec![
            start("", ""),
            text("x"),
            StreamEvent::Finish(FinishReason::MaxTokens),
        ]
    );
}

#[test]
fn invalid_json_is_an_error_and_ends_decoding() {
    let events = run(&[b"data: {\"candidates\":\n\ndata: {\"candidates\":[]}\n\n"]);
    assert_eq!(events.len(), 1, "{events:?}");
    assert!(matches!(
        &events[0],
        StreamEvent::Error(WireError {
            kind: ErrorKind::Api,
            ..
        })
    ));
}

#[test]
fn unknown_parts_and_signature_only_parts_are_skipped() {
    let body = concat!(
        "data: {\"candidates\":[{\"content\":{\"parts\":[",
        "{\"executableCode\":{\"language\":\"PYTHON\",\"code\":\"1+1\"}},",
        "{\"text\":\"\",\"thoughtSignature\":\"sig\"},",
        "{\"text\":\"2\"}]},\"finishReason\":\"STOP\",\"index\":0}]}\r\n\r\n",
    );
    assert_eq!(
        decode_every_split(body.as_bytes()),
        vec![
            start("", ""),
            text("2"),
            StreamEvent::Finish(FinishReason::EndTurn)
        ]
    );
}

#[test]
fn encodes_a_text_stream() {
    let bytes = encode(&[
        start("msg_1", "upstream-model"),
        text("Hi "),
        text(""),
        text("there."),
        usage(9, 0, 4, 0),
        StreamEvent::Finish(FinishReason::EndTurn),
    ]);
    insta::assert_json_snapshot!(sse_chunks(&bytes));
}

#[test]
fn encodes_reasoning_text_and_interleaved_parallel_calls() {
    let bytes = encode(&[
        start("resp_9", "gpt-5"),
        thought("Need "),
        StreamEvent::ReasoningSignature {
            signature: "anthropic-sig".into(),
        },
        StreamEvent::ReasoningEncrypted {
            data: "opaque".into(),
            id: Some("rs_1".into()),
        },
        thought("two files."),
        text("Reading."),
        call_start(0, "call_a", "read", Some("gemini-sig")),
        args(0, "{\"pa"),
        call_start(1, "call_b", "read", None),
        args(1, "{\"path\":"),
        args(0, "th\":\"a.rs\"}"),
        args(1, "\"b.rs\"}"),
        call_end(1),
        call_end(0),
        StreamEvent::Finish(FinishReason::ToolCalls),
        usage(20, 100, 70, 30),
    ]);
    insta::assert_json_snapshot!(sse_chunks(&bytes));
}

#[test]
fn calls_left_open_are_written_with_the_finish() {
    let bytes = encode(&[
        call_start(0, "call_a", "ls", None),
        args(0, "{\"all\":true}"),
        call_start(1, "call_b", "pwd", None),
        StreamEvent::Finish(FinishReason::EndTurn),
    ]);
    insta::assert_json_snapshot!(sse_chunks(&bytes));
}

#[test]
fn encodes_an_error_mid_stream_and_stops() {
    let mut encoder = StreamEncoder::new(StreamOptions {
        model: "gemini-2.5-flash".into(),
    });
    let mut out = Vec::new();
    encoder.encode(&text("Let me"), &mut out);
    encoder.encode(
        &StreamEvent::Error(
            WireError::new(ErrorKind::RateLimited, "Slow down").with_code("rate_limit_error"),
        ),
        &mut out,
    );
    encoder.encode(&text("ignored"), &mut out);
    encoder.encode(&StreamEvent::Finish(FinishReason::EndTurn), &mut out);
    encoder.finish(&mut out);
    insta::assert_json_snapshot!(sse_chunks(&out));
}

#[test]
fn an_encoded_stream_decodes_to_the_same_events() {
    let events = decode_every_split(&fixture("stream_thinking_tools.sse"));
    let mut encoder = StreamEncoder::new(StreamOptions {
        model: "gemini-2.5-pro".into(),
    });
    let mut bytes = Vec::new();
    for event in &events {
        encoder.encode(event, &mut bytes);
    }
    encoder.finish(&mut bytes);
    let mut decoder = StreamDecoder::new(NameMap::default());
    let mut again = Vec::new();
    decoder.feed(&bytes, &mut again);
    decoder.finish(&mut again);
    assert_eq!(again, events);
}

#[test]
fn an_error_decoded_from_an_encoded_stream_keeps_its_kind() {
    let error = WireError::new(
        ErrorKind::Timeout,
        "Deadline expired before operation could complete.",
    )
    .with_code("DEADLINE_EXCEEDED");
    let bytes = encode(&[start("x", "m"), StreamEvent::Error(error.clone())]);
    assert_eq!(run(&[&bytes]), vec![StreamEvent::Error(error)]);
}

#[test]
fn usage_known_early_rides_on_every_chunk() {
    // An Anthropic upstream: input counts at `message_start`, output counts at the end.
    let bytes = encode(&[
        start("msg_2", "claude"),
        usage(10, 300, 1, 0),
        text("Hello"),
        usage(10, 300, 25, 0),
        StreamEvent::Finish(FinishReason::EndTurn),
    ]);
    insta::assert_json_snapshot!(sse_chunks(&bytes));
}

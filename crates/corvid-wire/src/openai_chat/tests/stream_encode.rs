//! The stream encoder: strict framing for every canonical sequence, snapshots of the chunks.

use pretty_assertions::assert_eq;
use serde_json::Value;

use super::{assert_strict, decode_stream, encode_stream, fixture, options, payloads};
use crate::model::{ErrorKind, FinishReason, NameMap, StreamEvent, Usage, WireError};

fn text(text: &str) -> StreamEvent {
    StreamEvent::TextDelta {
        text: text.to_owned(),
    }
}

fn tool_start(index: u32, id: &str, name: &str) -> StreamEvent {
    StreamEvent::ToolCallStart {
        index,
        id: id.to_owned(),
        name: name.to_owned(),
        signature: None,
    }
}

fn args(index: u32, delta: &str) -> StreamEvent {
    StreamEvent::ToolCallArgs {
        index,
        delta: delta.to_owned(),
    }
}

fn start() -> StreamEvent {
    StreamEvent::Start {
        id: "msg_01Hm".to_owned(),
        model: "claude-sonnet-4-5".to_owned(),
    }
}

const USAGE: Usage = Usage {
    input: 18,
    cache_read: 1000,
    cache_write: 200,
    output: 64,
    reasoning: 20,
};

#[test]
fn encodes_a_text_stream() {
    let events = decode_stream(&fixture("stream_text.sse"), &NameMap::default());
    let stream = encode_stream(options(true), &events);
    assert_strict(&stream, true);
    snapshot!("stream_text", payloads(&stream));
}

#[test]
fn encodes_reasoning_then_text_then_tool_calls() {
    let events = [
        start(),
        StreamEvent::ReasoningDelta {
            text: "Need the file.".to_owned(),
        },
        StreamEvent::ReasoningSignature {
            signature: "EpcBCkgIBh".to_owned(),
        },
        StreamEvent::ReasoningEncrypted {
            data: "opaque".to_owned(),
            id: None,
        },
        text("Reading it."),
        tool_start(0, "toolu_01Rf", "read_file"),
        args(0, r#"{"path":"#),
        args(0, r#""src/lib.rs"}"#),
        StreamEvent::ToolCallEnd { index: 0 },
        tool_start(1, "toolu_01Rg", "grep"),
        args(1, r#"{"q":"fn"}"#),
        StreamEvent::ToolCallEnd { index: 1 },
        StreamEvent::Usage(USAGE),
        StreamEvent::Finish(FinishReason::ToolCalls),
    ];
    let stream = encode_stream(options(true), &events);
    assert_strict(&stream, true);
    snapshot!("stream_reasoning_text_tools", payloads(&stream));
}

#[test]
fn encodes_parallel_calls_with_interleaved_arguments() {
    let events = decode_stream(&fixture("stream_parallel_tools.sse"), &NameMap::default());
    let stream = encode_stream(options(true), &events);
    assert_strict(&stream, true);
    snapshot!("stream_parallel_tools", payloads(&stream));
}

#[test]
fn usage_before_the_finish_is_written_after_the_finish_chunk() {
    let events = [
        start(),
        text("Hi"),
        StreamEvent::Usage(USAGE),
        StreamEvent::Finish(FinishReason::EndTurn),
    ];
    let stream = encode_stream(options(true), &events);
    assert_strict(&stream, true);
    let payloads = payloads(&stream);
    assert_eq!(payloads[2]["choices"][0]["finish_reason"], "stop");
    assert_eq!(
        payloads[3]["usage"],
        serde_json::json!({
            "prompt_tokens": 1218, "completion_tokens": 64, "total_tokens": 1282,
            "prompt_tokens_details": {"cached_tokens": 1000, "cache_write_tokens": 200},
            "completion_tokens_details": {"reasoning_tokens": 20},
        })
    );
    // Usage after the finish: the same stream.
    let after = [
        start(),
        text("Hi"),
        StreamEvent::Finish(FinishReason::EndTurn),
        StreamEvent::Usage(USAGE),
    ];
    assert_eq!(encode_stream(options(true), &after), stream);
}

#[test]
fn without_include_usage_there_is_no_usage_at_all() {
    let events = [
        start(),
        text("Hi"),
        StreamEvent::Usage(USAGE),
        StreamEvent::Finish(FinishReason::EndTurn),
    ];
    let stream = encode_stream(options(false), &events);
    assert_strict(&stream, false);
    assert_eq!(payloads(&stream).len(), 4, "role, text, finish, [DONE]");
}

#[test]
fn an_error_mid_stream_is_an_error_line_and_the_end() {
    let events = [
        start(),
        text("Partial"),
        StreamEvent::Error(
            WireError::new(ErrorKind::Overloaded, "Overloaded").with_code("overloaded_error"),
        ),
        text("ignored"),
        StreamEvent::Finish(FinishReason::EndTurn),
    ];
    let stream = encode_stream(options(true), &events);
    let text = String::from_utf8(stream.clone()).unwrap();
    assert!(!text.contains("[DONE]"), "{text}");
    assert!(text.ends_with(
        "data: {\"error\":{\"message\":\"Overloaded\",\"type\":\"server_error\",\"param\":null,\"code\":\"overloaded_error\"}}\n\n"
    ));
    snapshot!("stream_error", payloads(&stream));
}

#[test]
fn an_error_before_anything_is_only_the_error() {
    let error = WireError::new(ErrorKind::RateLimited, "Rate limit reached");
    let stream = encode_stream(options(true), &[StreamEvent::Error(error)]);
    assert_eq!(
        String::from_utf8(stream).unwrap(),
        "data: {\"error\":{\"message\":\"Rate limit reached\",\"type\":\"rate_limit_error\",\"param\":null,\"code\":null}}\n\n"
    );
}

#[test]
fn an_empty_stream_is_still_complete() {
    let stream = encode_stream(options(true), &[]);
    assert_strict(&stream, true);
    let payloads = payloads(&stream);
    assert_eq!(payloads.len(), 4, "role, finish, usage, [DONE]");
    assert_eq!(payloads[1]["choices"][0]["finish_reason"], "stop");
    assert_eq!(payloads[2]["usage"]["total_tokens"], 0);
}

#[test]
fn the_upstream_id_is_used_when_the_client_has_none() {
    let mut options = options(false);
    options.id = String::new();
    options.model = String::new();
    let stream = encode_stream(options, &[start(), text("x")]);
    for chunk in &payloads(&stream)[..3] {
        assert_eq!(chunk["id"], "msg_01Hm");
        assert_eq!(chunk["model"], "claude-sonnet-4-5");
    }
}

#[test]
fn each_finish_reason_is_written() {
    for (reason, wire) in [
        (FinishReason::EndTurn, "stop"),
        (FinishReason::StopSequence, "stop"),
        (FinishReason::MaxTokens, "length"),
        (FinishReason::ToolCalls, "tool_calls"),
        (FinishReason::ContentFilter, "content_filter"),
        (FinishReason::ContextOverflow, "length"),
        (FinishReason::PauseTurn, "stop"),
        (FinishReason::MalformedToolCall, "stop"),
    ] {
        let stream = encode_stream(
            options(true),
            &[start(), text("x"), StreamEvent::Finish(reason)],
        );
        assert_strict(&stream, true);
        assert_eq!(
            payloads(&stream)[2]["choices"][0]["finish_reason"],
            wire,
            "{reason:?}"
        );
    }
}

#[test]
fn a_stream_survives_a_chat_hop() {
    for name in [
        "stream_text.sse",
        "stream_tool_args.sse",
        "stream_parallel_tools.sse",
        "stream_xai_tool.sse",
        "stream_odd_shapes.sse",
    ] {
        let names = NameMap::default();
        let events = decode_stream(&fixture(name), &names);
        let stream = encode_stream(options(true), &events);
        assert_strict(&stream, true);
        let mut again = decode_stream(&stream, &names);
        assert_eq!(
            again[0],
            StreamEvent::Start {
                id: "chatcmpl-corvid1".to_owned(),
                model: "supergrok".to_owned()
            }
        );
        again[0] = events[0].clone();
        // A stream without usage gets a zero usage chunk.
        if !events
            .iter()
            .any(|event| matches!(event, StreamEvent::Usage(_)))
        {
            assert_eq!(again.pop(), Some(StreamEvent::Usage(Usage::default())));
        }
        assert_eq!(again, events, "{name}");
    }
}

#[test]
fn chunks_are_written_as_soon_as_their_event_arrives() {
    let mut encoder = crate::openai_chat::StreamEncoder::new(options(false));
    let mut out = Vec::new();
    encoder.encode(&start(), &mut out);
    assert_eq!(payloads(&out).len(), 1, "the role chunk");
    for (event, count) in [
        (text("a"), 2),
        (tool_start(0, "c", "f"), 3),
        (args(0, "{}"), 4),
    ] {
        encoder.encode(&event, &mut out);
        assert_eq!(payloads(&out).len(), count, "{event:?}");
    }
    let last: Vec<Value> = payloads(&out);
    assert_eq!(
        last[3]["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"],
        "{}"
    );
}

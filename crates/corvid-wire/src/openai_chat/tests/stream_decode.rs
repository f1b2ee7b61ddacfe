//! The stream decoder, every fixture fed whole, split at every byte and byte by byte.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::{decode_stream, fixture};
use crate::model::{ErrorKind, FinishReason, NameMap, StreamEvent, Usage, WireError};

fn start(id: &str, model: &str) -> StreamEvent {
    StreamEvent::Start {
        id: id.to_owned(),
        model: model.to_owned(),
    }
}

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

fn usage(input: u64, output: u64) -> StreamEvent {
    StreamEvent::Usage(Usage {
        input,
        output,
        ..Usage::default()
    })
}

/// A stream of `chunks` (each a chunk's `choices[0]` plus any top-level fields), then
/// `[DONE]`.
pub(super) fn sse(chunks: &[Value]) -> Vec<u8> {
    let mut body = String::new();
    for chunk in chunks {
        body.push_str(&format!("data: {chunk}\n\n"));
    }
    body.push_str("data: [DONE]\n\n");
    body.into_bytes()
}

/// A chunk with one choice.
pub(super) fn chunk(delta: Value, finish_reason: Option<&str>) -> Value {
    json!({"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
           "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]})
}

#[test]
fn decodes_a_text_stream() {
    let events = decode_stream(&fixture("stream_text.sse"), &NameMap::default());
    assert_eq!(
        events,
        [
            start("chatcmpl-9f3", "gpt-4.1"),
            text("Hi "),
            text("there."),
            StreamEvent::Finish(FinishReason::EndTurn),
            usage(14, 4),
        ]
    );
}

#[test]
fn decodes_tool_arguments_streamed_in_many_deltas() {
    let events = decode_stream(&fixture("stream_tool_args.sse"), &NameMap::default());
    assert_eq!(
        events,
        [
            start("chatcmpl-9f5", "gpt-4.1"),
            tool_start(0, "call_r1", "read_file"),
            args(0, "{\""),
            args(0, "path"),
            args(0, "\":\"src/"),
            args(0, "lib.rs\"}"),
            StreamEvent::ToolCallEnd { index: 0 },
            StreamEvent::Finish(FinishReason::ToolCalls),
            usage(61, 17),
        ]
    );
}

#[test]
fn decodes_parallel_tool_calls_with_interleaved_arguments() {
    let events = decode_stream(&fixture("stream_parallel_tools.sse"), &NameMap::default());
    assert_eq!(
        events,
        [
            start("chatcmpl-9f6", "gpt-4.1"),
            text("Reading both."),
            tool_start(0, "call_a", "read_file"),
            args(0, r#"{"path":"#),
            tool_start(1, "call_b", "read_file"),
            args(1, r#"{"path":"#),
            args(0, r#""a.rs"}"#),
            args(1, r#""b.rs"}"#),
            StreamEvent::ToolCallEnd { index: 0 },
            StreamEvent::ToolCallEnd { index: 1 },
            StreamEvent::Finish(FinishReason::ToolCalls),
            usage(90, 40),
        ]
    );
}

#[test]
fn decodes_xai_reasoning_a_whole_tool_call_and_usage() {
    let events = decode_stream(&fixture("stream_xai_tool.sse"), &NameMap::default());
    assert_eq!(
        events,
        [
            start("3c9e1f0a-xai", "grok-3-mini"),
            StreamEvent::ReasoningDelta {
                text: "The user wants ".to_owned()
            },
            StreamEvent::ReasoningDelta {
                text: "the weather.".to_owned()
            },
            tool_start(0, "call_80215672", "get_weather"),
            args(0, r#"{"city":"Paris"}"#),
            StreamEvent::ToolCallEnd { index: 0 },
            StreamEvent::Finish(FinishReason::ToolCalls),
            // prompt 120 with 100 cached; completion 25 excludes reasoning 100 (total 245).
            StreamEvent::Usage(Usage {
                input: 20,
                cache_read: 100,
                cache_write: 0,
                output: 125,
                reasoning: 100,
            }),
        ]
    );
}

#[test]
fn an_error_event_mid_stream() {
    let events = decode_stream(&fixture("stream_error.sse"), &NameMap::default());
    assert_eq!(
        events,
        [
            start("chatcmpl-9f7", "gpt-4.1"),
            text("Partial"),
            StreamEvent::Error(WireError::new(
                ErrorKind::Api,
                "The server had an error while processing your request. Sorry about that!"
                    .to_owned()
            )),
        ]
    );
}

#[test]
fn an_xai_error_event_mid_stream() {
    // xAI's codes are gRPC status descriptions.
    let body = b"data: {\"code\":\"Some resource has been exhausted\",\"error\":\"Rate limit reached\"}\n\n";
    assert_eq!(
        decode_stream(body, &NameMap::default()),
        [StreamEvent::Error(
            WireError::new(ErrorKind::RateLimited, "Rate limit reached")
                .with_code("Some resource has been exhausted")
        )]
    );
}

#[test]
fn a_stream_without_done_ends_in_an_error() {
    let events = decode_stream(&fixture("stream_truncated.sse"), &NameMap::default());
    assert_eq!(
        events,
        [
            start("chatcmpl-9f8", "gpt-4.1"),
            text("Half an ans"),
            StreamEvent::Error(WireError::new(
                ErrorKind::Api,
                "the upstream stream ended before `data: [DONE]`"
            )),
        ]
    );
    // Cut in the middle of a chunk: the half line is malformed, reported once.
    let mut events = Vec::new();
    let mut decoder = crate::openai_chat::StreamDecoder::new(NameMap::default());
    decoder.feed(b"data: {\"choices\":[{\"del", &mut events);
    decoder.finish(&mut events);
    assert_eq!(events.len(), 1);
    assert!(
        matches!(&events[0], StreamEvent::Error(error) if error.message.starts_with("the upstream sent a malformed stream chunk")),
        "{events:?}"
    );
}

#[test]
fn a_last_done_without_a_line_break_completes_the_stream() {
    let mut body = sse(&[chunk(json!({"content": "ok"}), Some("stop"))]);
    body.truncate(body.len() - 2);
    assert_eq!(
        decode_stream(&body, &NameMap::default()),
        [
            start("c1", "m"),
            text("ok"),
            StreamEvent::Finish(FinishReason::EndTurn),
        ]
    );
}

#[test]
fn done_without_a_finish_reason_still_finishes() {
    let body = sse(&[chunk(
        json!({"tool_calls": [{"index": 0, "id": "call_1", "function": {"name": "ls", "arguments": "{}"}}]}),
        None,
    )]);
    assert_eq!(
        decode_stream(&body, &NameMap::default()),
        [
            start("c1", "m"),
            tool_start(0, "call_1", "ls"),
            args(0, "{}"),
            StreamEvent::ToolCallEnd { index: 0 },
            StreamEvent::Finish(FinishReason::ToolCalls),
        ]
    );
}

#[test]
fn each_finish_reason_is_mapped() {
    for (wire, reason) in [
        ("stop", FinishReason::EndTurn),
        ("length", FinishReason::MaxTokens),
        ("content_filter", FinishReason::ContentFilter),
        ("tool_calls", FinishReason::ToolCalls),
    ] {
        let body = sse(&[chunk(json!({"content": "x"}), Some(wire))]);
        assert_eq!(
            decode_stream(&body, &NameMap::default()).last(),
            Some(&StreamEvent::Finish(reason)),
            "{wire}"
        );
    }
}

#[test]
fn reasoning_and_refusal_deltas() {
    let body = sse(&[
        chunk(
            json!({"role": "assistant", "reasoning": "OpenRouter thinks."}),
            None,
        ),
        chunk(
            json!({"reasoning_content": "vLLM thinks.", "reasoning": "vLLM thinks."}),
            None,
        ),
        chunk(json!({"refusal": "I can't help with that."}), None),
        chunk(json!({}), Some("stop")),
    ]);
    assert_eq!(
        decode_stream(&body, &NameMap::default()),
        [
            start("c1", "m"),
            StreamEvent::ReasoningDelta {
                text: "OpenRouter thinks.".to_owned()
            },
            // Both fields with the same text: read once.
            StreamEvent::ReasoningDelta {
                text: "vLLM thinks.".to_owned()
            },
            text("I can't help with that."),
            StreamEvent::Finish(FinishReason::ContentFilter),
        ]
    );
}

#[test]
fn a_malformed_chunk_is_an_error_and_ends_decoding() {
    let body = b"data: {\"choices\":[]}\n\ndata: {not json}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"late\"}}]}\n\ndata: [DONE]\n\n";
    let events = decode_stream(body, &NameMap::default());
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[0], start("", ""));
    assert!(matches!(
        &events[1],
        StreamEvent::Error(WireError {
            kind: ErrorKind::Api,
            ..
        })
    ));
}

#[test]
fn nothing_after_done_or_after_the_finish_counts() {
    let mut body = sse(&[
        chunk(json!({"content": "a"}), Some("stop")),
        chunk(json!({"content": "after finish"}), None),
    ]);
    body.extend_from_slice(
        b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"after done\"}}]}\n\n",
    );
    assert_eq!(
        decode_stream(&body, &NameMap::default()),
        [
            start("c1", "m"),
            text("a"),
            StreamEvent::Finish(FinishReason::EndTurn),
        ]
    );
}

#[test]
fn only_the_first_choice_is_read_and_comments_are_ignored() {
    let body = format!(
        ": keep-alive\n\nevent: chunk\ndata: {}\n\ndata: [DONE]\n\n",
        json!({"id": "c1", "model": "m", "choices": [
            {"index": 1, "delta": {"content": "second"}, "finish_reason": null},
            {"index": 0, "delta": {"content": "first"}, "finish_reason": "stop"},
        ]})
    );
    assert_eq!(
        decode_stream(body.as_bytes(), &NameMap::default()),
        [
            start("c1", "m"),
            text("first"),
            StreamEvent::Finish(FinishReason::EndTurn),
        ]
    );
}

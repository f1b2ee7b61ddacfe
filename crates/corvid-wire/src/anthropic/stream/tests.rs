use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::anthropic::tests::{decode_stream, fixture};
use crate::model::Tool;

fn start(id: &str) -> StreamEvent {
    StreamEvent::Start {
        id: id.into(),
        model: "claude-sonnet-4-5-20250929".into(),
    }
}

/// SSE frames for data objects, with `event:` lines as Anthropic writes them.
fn sse(events: &[serde_json::Value]) -> Vec<u8> {
    events
        .iter()
        .map(|data| {
            format!(
                "event: {}\ndata: {data}\n\n",
                data["type"].as_str().unwrap()
            )
        })
        .collect::<String>()
        .into_bytes()
}

fn message_start() -> serde_json::Value {
    json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
        "role": "assistant", "model": "claude-sonnet-4-5-20250929", "content": [],
        "usage": {"input_tokens": 10, "output_tokens": 1}}})
}

#[test]
fn text_stream_with_cached_usage() {
    let events = decode_stream(&fixture("stream_text.sse"), &NameMap::default());
    assert_eq!(
        events,
        [
            start("msg_01Hm"),
            StreamEvent::TextDelta { text: "Hi ".into() },
            StreamEvent::TextDelta {
                text: "there.".into()
            },
            StreamEvent::Usage(Usage {
                input: 18,
                cache_read: 100,
                cache_write: 20,
                output: 7,
                reasoning: 0,
            }),
            StreamEvent::Finish(FinishReason::EndTurn),
        ]
    );
}

#[test]
fn thinking_redacted_and_a_tool_call_in_many_deltas() {
    let events = decode_stream(&fixture("stream_thinking_tool.sse"), &NameMap::default());
    let args = |delta: &str| StreamEvent::ToolCallArgs {
        index: 0,
        delta: delta.into(),
    };
    assert_eq!(
        events,
        [
            start("msg_01Hn"),
            StreamEvent::ReasoningDelta {
                text: "Need the ".into()
            },
            StreamEvent::ReasoningDelta {
                text: "file.".into()
            },
            StreamEvent::ReasoningSignature {
                signature: "EpcBCkgIBhABGAIiQL5x".into()
            },
            StreamEvent::ReasoningEncrypted {
                data: "EmwKAhgBEgy3vaJ".into(),
                id: None
            },
            StreamEvent::ToolCallStart {
                index: 0,
                id: "toolu_01Rf".into(),
                name: "Read".into(),
                signature: None
            },
            args("{\"file_"),
            args("path\":"),
            args(" \"src/"),
            args("lib.rs\""),
            args("}"),
            StreamEvent::ToolCallEnd { index: 0 },
            StreamEvent::Usage(Usage {
                input: 402,
                output: 64,
                ..Usage::default()
            }),
            StreamEvent::Finish(FinishReason::ToolCalls),
        ]
    );
}

#[test]
fn parallel_tool_calls_build_a_reply() {
    let events = decode_stream(&fixture("stream_parallel_tools.sse"), &NameMap::default());
    let mut builder = crate::model::ResponseBuilder::new();
    events.iter().for_each(|event| builder.push(event));
    let response = builder.finish().unwrap();
    let calls: Vec<(String, String)> = response
        .parts
        .iter()
        .filter_map(|part| match part {
            crate::model::Part::ToolCall(call) => Some((call.name.clone(), call.arguments.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        calls,
        [
            ("Read".to_owned(), r#"{"file_path":"a.rs"}"#.to_owned()),
            ("Grep".to_owned(), r#"{"pattern":"fn"}"#.to_owned())
        ]
    );
    assert_eq!(response.finish, FinishReason::ToolCalls);
}

#[test]
fn error_event_mid_stream() {
    let events = decode_stream(&fixture("stream_error.sse"), &NameMap::default());
    assert_eq!(
        events,
        [
            start("msg_01Er"),
            StreamEvent::TextDelta {
                text: "Partial".into()
            },
            StreamEvent::Error(
                WireError::new(ErrorKind::Overloaded, "Overloaded").with_code("overloaded_error")
            ),
        ],
        "no second error at the end of the body"
    );
}

#[test]
fn a_stream_cut_before_message_stop_ends_in_error() {
    let body = sse(&[
        message_start(),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hel"}}),
    ]);
    let events = decode_stream(&body, &NameMap::default());
    assert_eq!(
        events,
        [
            start("msg_1"),
            StreamEvent::TextDelta { text: "Hel".into() },
            StreamEvent::Error(WireError::new(
                ErrorKind::Api,
                "the upstream stream ended before message_stop"
            )),
        ]
    );
}

#[test]
fn the_last_event_needs_no_line_end() {
    let mut body = sse(&[message_start()]);
    body.extend_from_slice(b"event: message_stop\ndata: {\"type\":\"message_stop\"}");
    let events = decode_stream(&body, &NameMap::default());
    assert_eq!(
        events,
        [
            start("msg_1"),
            StreamEvent::Usage(Usage {
                input: 10,
                output: 1,
                ..Usage::default()
            }),
            StreamEvent::Finish(FinishReason::EndTurn),
        ]
    );
}

#[test]
fn odd_shapes() {
    // A whole call in content_block_start, a call whose start input is replaced by deltas,
    // missing indices, a block before message_start, unknown events and deltas, a whole
    // signed thinking block in its start, and newer servers repeating the input and cache
    // counts on message_delta.
    let body = sse(&[
        json!({"type": "content_block_start", "content_block": {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "a"}}}),
        json!({"type": "content_block_stop"}),
        json!({"type": "ping"}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_2", "name": "Read", "input": {"stale": true}}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{}"}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "content_block_start", "index": 2, "content_block": {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"query\":1}"}}),
        json!({"type": "content_block_stop", "index": 2}),
        json!({"type": "content_block_start", "index": 3, "content_block": {"type": "text", "text": "Pre"}}),
        json!({"type": "content_block_delta", "index": 3, "delta": {"type": "citations_delta", "citation": {}}}),
        json!({"type": "brand_new_event", "index": 3}),
        json!({"type": "content_block_stop", "index": 3}),
        json!({"type": "content_block_start", "index": 4, "content_block": {"type": "thinking", "thinking": "whole", "signature": "sig-in-start"}}),
        json!({"type": "content_block_stop", "index": 4}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"input_tokens": 5, "cache_read_input_tokens": 7, "output_tokens": 9}}),
        json!({"type": "message_stop"}),
    ]);
    let events = decode_stream(&body, &NameMap::default());
    assert_eq!(
        events,
        [
            StreamEvent::Start {
                id: String::new(),
                model: String::new()
            },
            StreamEvent::ToolCallStart {
                index: 0,
                id: "toolu_1".into(),
                name: "Read".into(),
                signature: None
            },
            StreamEvent::ToolCallArgs {
                index: 0,
                delta: r#"{"file_path":"a"}"#.into()
            },
            StreamEvent::ToolCallEnd { index: 0 },
            StreamEvent::ToolCallStart {
                index: 1,
                id: "toolu_2".into(),
                name: "Read".into(),
                signature: None
            },
            StreamEvent::ToolCallArgs {
                index: 1,
                delta: "{}".into()
            },
            StreamEvent::ToolCallEnd { index: 1 },
            StreamEvent::TextDelta { text: "Pre".into() },
            StreamEvent::ReasoningDelta {
                text: "whole".into()
            },
            StreamEvent::ReasoningSignature {
                signature: "sig-in-start".into()
            },
            StreamEvent::Usage(Usage {
                input: 5,
                cache_read: 7,
                output: 9,
                ..Usage::default()
            }),
            StreamEvent::Finish(FinishReason::ToolCalls),
        ]
    );
}

#[test]
fn every_stop_reason_decodes_in_a_stream() {
    let rows = [
        ("end_turn", FinishReason::EndTurn),
        ("stop_sequence", FinishReason::StopSequence),
        ("max_tokens", FinishReason::MaxTokens),
        ("tool_use", FinishReason::ToolCalls),
        ("refusal", FinishReason::ContentFilter),
        ("pause_turn", FinishReason::PauseTurn),
        (
            "model_context_window_exceeded",
            FinishReason::ContextOverflow,
        ),
    ];
    for (stop_reason, finish) in rows {
        let body = sse(&[
            message_start(),
            json!({"type": "message_delta", "delta": {"stop_reason": stop_reason}, "usage": {"output_tokens": 3}}),
            json!({"type": "message_stop"}),
        ]);
        let events = decode_stream(&body, &NameMap::default());
        assert_eq!(
            events.last(),
            Some(&StreamEvent::Finish(finish)),
            "{stop_reason}"
        );
    }
}

#[test]
fn shortened_tool_names_are_restored() {
    let long_name = format!("mcp__{}__tool", "b".repeat(80));
    let names = NameMap::new(&[Tool {
        name: long_name.clone(),
        description: None,
        parameters: json!({}).into(),
        strict: None,
    }]);
    let body = sse(&[
        message_start(),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_1", "name": names.wire(&long_name), "input": {}}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 3}}),
        json!({"type": "message_stop"}),
    ]);
    let events = decode_stream(&body, &names);
    assert_eq!(
        events[1],
        StreamEvent::ToolCallStart {
            index: 0,
            id: "toolu_1".into(),
            name: long_name,
            signature: None
        }
    );
}

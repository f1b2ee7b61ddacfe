use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::anthropic::tests::{check_framing, check_framing_prefix, encode_stream, options};
use crate::model::ErrorKind;

fn start() -> StreamEvent {
    StreamEvent::Start {
        id: "chatcmpl-9f3".into(),
        model: "gpt-4.1".into(),
    }
}

fn error() -> StreamEvent {
    StreamEvent::Error(WireError::new(ErrorKind::Api, "the reply was cut short"))
}

fn text(text: &str) -> StreamEvent {
    StreamEvent::TextDelta { text: text.into() }
}

fn tool_start(index: u32, id: &str, name: &str) -> StreamEvent {
    StreamEvent::ToolCallStart {
        index,
        id: id.into(),
        name: name.into(),
        signature: None,
    }
}

fn args(index: u32, delta: &str) -> StreamEvent {
    StreamEvent::ToolCallArgs {
        index,
        delta: delta.into(),
    }
}

fn usage(input: u64, cache_read: u64, output: u64) -> StreamEvent {
    StreamEvent::Usage(Usage {
        input,
        cache_read,
        output,
        ..Usage::default()
    })
}

#[test]
fn text_only() {
    let written = encode_stream(
        options(),
        &[
            start(),
            text("Hi "),
            text("there."),
            StreamEvent::Finish(FinishReason::EndTurn),
            usage(14, 0, 4),
        ],
    );
    insta::assert_json_snapshot!(written);
}

#[test]
fn reasoning_text_and_tools_with_cached_usage() {
    let written = encode_stream(
        options(),
        &[
            start(),
            StreamEvent::ReasoningDelta {
                text: "Need the file.".into(),
            },
            StreamEvent::ReasoningSignature {
                signature: "EpcB".into(),
            },
            StreamEvent::ReasoningEncrypted {
                data: "EmwK".into(),
                id: None,
            },
            text("Reading."),
            tool_start(0, "toolu_01", "Read"),
            args(0, "{\"file_path\":"),
            args(0, "\"src/lib.rs\"}"),
            StreamEvent::ToolCallEnd { index: 0 },
            usage(300, 1000, 64),
            StreamEvent::Finish(FinishReason::ToolCalls),
        ],
    );
    insta::assert_json_snapshot!(written);
}

#[test]
fn interleaved_parallel_tool_calls() {
    // Tool 1 starts while tool 0 streams, and their deltas interleave: tool 1 waits, its
    // arguments buffered, until tool 0's block closes.
    let written = encode_stream(
        options(),
        &[
            start(),
            tool_start(0, "call_a", "Read"),
            args(0, "{\"file_path\":"),
            tool_start(1, "call_b", "Grep"),
            args(1, "{\"pattern\":"),
            args(0, "\"a.rs\"}"),
            tool_start(2, "call_c", "Glob"),
            args(2, "{}"),
            StreamEvent::ToolCallEnd { index: 2 },
            args(1, "\"fn\"}"),
            StreamEvent::ToolCallEnd { index: 0 },
            StreamEvent::ToolCallEnd { index: 1 },
            StreamEvent::Finish(FinishReason::ToolCalls),
            usage(10, 0, 20),
        ],
    );
    let summary: Vec<String> = written
        .iter()
        .filter_map(|event| match event["type"].as_str().unwrap() {
            "content_block_start" => Some(format!(
                "start {} {}",
                event["index"], event["content_block"]["id"]
            )),
            "content_block_delta" => Some(format!(
                "delta {} {}",
                event["index"], event["delta"]["partial_json"]
            )),
            "content_block_stop" => Some(format!("stop {}", event["index"])),
            _ => None,
        })
        .collect();
    assert_eq!(
        summary,
        [
            r#"start 0 "call_a""#,
            r#"delta 0 "{\"file_path\":""#,
            r#"delta 0 "\"a.rs\"}""#,
            "stop 0",
            r#"start 1 "call_b""#,
            r#"delta 1 "{\"pattern\":\"fn\"}""#,
            "stop 1",
            r#"start 2 "call_c""#,
            r#"delta 2 "{}""#,
            "stop 2",
        ]
    );
}

#[test]
fn usage_before_finish_ends_at_the_finish() {
    let mut encoder = StreamEncoder::new(options());
    let mut out = Vec::new();
    for event in [
        start(),
        text("x"),
        usage(5, 0, 1),
        StreamEvent::Finish(FinishReason::MaxTokens),
    ] {
        encoder.encode(&event, &mut out);
    }
    // message_delta as soon as reason and usage are known …
    let written = check_framing_prefix(&out);
    assert_eq!(written.last().unwrap()["type"], "message_delta");
    assert_eq!(
        written.last().unwrap()["delta"]["stop_reason"],
        "max_tokens"
    );
    // … nothing more but message_stop, which waits for the caller's finish.
    let before = out.len();
    encoder.encode(&text("late"), &mut out);
    encoder.encode(&usage(9, 9, 9), &mut out);
    assert_eq!(out.len(), before);
    encoder.finish(&mut out);
    let written = check_framing(&out);
    assert_eq!(written.last().unwrap()["type"], "message_stop");
    let before = out.len();
    encoder.finish(&mut out);
    encoder.encode(&error(), &mut out);
    assert_eq!(out.len(), before);
}

/// Issue 10, item 19: a failure that arrives after the provider's finish and usage (a Zed
/// reply cut before `stream_ended`, a body that breaks after `message_delta`) is still an
/// `error` event, and no `message_stop` claims the reply was whole.
#[test]
fn a_late_error_after_finish_and_usage_is_still_written() {
    let mut encoder = StreamEncoder::new(options());
    let mut out = Vec::new();
    for event in [
        start(),
        text("x"),
        StreamEvent::Finish(FinishReason::EndTurn),
        usage(5, 0, 1),
        error(),
    ] {
        encoder.encode(&event, &mut out);
    }
    encoder.finish(&mut out);
    let kinds: Vec<String> = check_framing(&out)
        .iter()
        .map(|event| event["type"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(kinds.last().map(String::as_str), Some("error"), "{kinds:?}");
    assert!(
        !kinds.iter().any(|kind| kind == "message_stop"),
        "{kinds:?}"
    );
}

#[test]
fn finish_without_usage_or_finish_event() {
    let written = encode_stream(options(), &[start(), text("cut")]);
    assert_eq!(
        written[written.len() - 2],
        json!({"type": "message_delta",
               "delta": {"stop_reason": "end_turn", "stop_sequence": null},
               "usage": {"input_tokens": 1234, "cache_creation_input_tokens": 0,
                         "cache_read_input_tokens": 0, "output_tokens": 0}})
    );
    // Tool calls and no stated reason: tool_use.
    let written = encode_stream(options(), &[tool_start(0, "call_1", "Read")]);
    assert_eq!(
        written[written.len() - 2]["delta"]["stop_reason"],
        "tool_use"
    );
}

#[test]
fn no_start_event_still_opens_with_message_start() {
    let written = encode_stream(
        StreamOptions {
            model: "claude-opus-4-1".into(),
            id: String::new(),
            input_tokens: None,
        },
        &[text("hi")],
    );
    assert_eq!(
        written[0],
        json!({"type": "message_start", "message": {
            "id": "msg_corvid", "type": "message", "role": "assistant",
            "model": "claude-opus-4-1", "content": [], "stop_reason": null,
            "stop_sequence": null,
            "usage": {"input_tokens": 0, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 0, "output_tokens": 0}}})
    );
}

#[test]
fn every_finish_reason_in_message_delta() {
    let rows = [
        (FinishReason::EndTurn, "end_turn"),
        (FinishReason::StopSequence, "stop_sequence"),
        (FinishReason::MaxTokens, "max_tokens"),
        (FinishReason::ToolCalls, "tool_use"),
        (FinishReason::ContentFilter, "refusal"),
        (FinishReason::PauseTurn, "pause_turn"),
        (
            FinishReason::ContextOverflow,
            "model_context_window_exceeded",
        ),
        (FinishReason::MalformedToolCall, "end_turn"),
    ];
    for (finish, stop_reason) in rows {
        let written = encode_stream(
            options(),
            &[
                start(),
                text("x"),
                StreamEvent::Finish(finish),
                usage(1, 0, 1),
            ],
        );
        assert_eq!(
            written[written.len() - 2]["delta"]["stop_reason"],
            stop_reason,
            "{finish:?}"
        );
    }
}

#[test]
fn error_mid_stream() {
    let mut encoder = StreamEncoder::new(options());
    let mut out = Vec::new();
    for event in [
        start(),
        text("Partial"),
        StreamEvent::Error(WireError::new(
            ErrorKind::Overloaded,
            "upstream 503: try later",
        )),
        text("ignored"),
    ] {
        encoder.encode(&event, &mut out);
    }
    encoder.finish(&mut out);
    let written = check_framing(&out);
    assert_eq!(
        written.last().unwrap(),
        &json!({"type": "error", "error": {"type": "overloaded_error", "message": "upstream 503: try later"}})
    );
    assert_eq!(written.len(), 4, "message_start, block start, delta, error");
}

#[test]
fn reasoning_edge_cases() {
    // Responses' encrypted reasoning (with an item id) and empty pieces open nothing; an
    // empty signature just closes the thinking block.
    let written = encode_stream(
        options(),
        &[
            start(),
            StreamEvent::ReasoningDelta {
                text: String::new(),
            },
            StreamEvent::ReasoningEncrypted {
                data: "gAAAA".into(),
                id: Some("rs_1".into()),
            },
            StreamEvent::ReasoningSignature {
                signature: String::new(),
            },
            StreamEvent::ReasoningDelta {
                text: "summary".into(),
            },
            StreamEvent::ReasoningSignature {
                signature: String::new(),
            },
            StreamEvent::ReasoningSignature {
                signature: "only-a-signature".into(),
            },
            text(""),
            StreamEvent::Finish(FinishReason::EndTurn),
        ],
    );
    let kinds: Vec<String> = written
        .iter()
        .map(|event| {
            let delta = event["delta"]["type"].as_str().unwrap_or_default();
            format!("{} {delta}", event["type"].as_str().unwrap())
                .trim()
                .to_owned()
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "message_start",
            "content_block_start",
            "content_block_delta thinking_delta",
            "content_block_stop",
            "content_block_start",
            "content_block_delta signature_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ]
    );
}

/// Text, thinking and argument deltas are written by hand: each is the text of the value
/// `{"type":"content_block_delta","index":…,"delta":{"type":…, field: text}}`.
#[test]
fn deltas_are_written_as_their_value_would_be() {
    let pieces = ["Hi", " \"quoted\" \\ ", "line\nnext\t\u{1}", "é 😀"];
    let mut encoder = StreamEncoder::new(options());
    let mut out = Vec::new();
    encoder.encode(&start(), &mut out);
    for event in crate::reply_strategies::deltas_of_each_kind(&pieces) {
        encoder.encode(&event, &mut out);
    }
    let text = String::from_utf8(out).unwrap();
    let mut seen = Vec::new();
    for event in text.split("\n\n") {
        let Some(data) = event.strip_prefix("event: content_block_delta\ndata: ") else {
            continue;
        };
        let parsed: serde_json::Value = serde_json::from_str(data).unwrap();
        let (kind, field) = match parsed["delta"]["type"].as_str().unwrap() {
            "thinking_delta" => ("thinking_delta", "thinking"),
            "text_delta" => ("text_delta", "text"),
            "input_json_delta" => ("input_json_delta", "partial_json"),
            other => panic!("unexpected delta {other}"),
        };
        let expected = json!({
            "type": "content_block_delta",
            "index": parsed["index"],
            "delta": {"type": kind, field: parsed["delta"][field]},
        });
        assert_eq!(data, expected.to_string());
        seen.push(kind);
    }
    assert_eq!(
        seen.iter()
            .filter(|kind| **kind == "thinking_delta")
            .count(),
        4
    );
    assert_eq!(seen.iter().filter(|kind| **kind == "text_delta").count(), 4);
    assert!(seen.contains(&"input_json_delta"));
}

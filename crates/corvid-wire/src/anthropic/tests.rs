//! Shared test helpers, and one test per wire-formats.md §8 pitfall that applies to Anthropic.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::*;
use crate::model::{
    ErrorKind, FinishReason, Image, ImageSource, Message, NameMap, Params, Reasoning,
    ReasoningConfig, Role, StreamEvent, Tool, ToolCall, ToolChoice, ToolResult, Usage, WireError,
};

/// A fixture from `tests/fixtures/anthropic/`.
pub(super) fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/anthropic/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|error| panic!("{path}: {error}"))
}

/// Decodes a whole stream, and checks that feeding it split at every byte boundary, and one
/// byte at a time, gives exactly the same events.
pub(super) fn decode_stream(body: &[u8], names: &NameMap) -> Vec<StreamEvent> {
    let run = |chunks: &[&[u8]]| {
        let mut decoder = StreamDecoder::new(names.clone());
        let mut events = Vec::new();
        for chunk in chunks {
            decoder.feed(chunk, &mut events);
        }
        decoder.finish(&mut events);
        events
    };
    let whole = run(&[body]);
    for split in 0..=body.len() {
        let (a, b) = body.split_at(split);
        assert_eq!(run(&[a, b]), whole, "split at byte {split}");
    }
    let bytes: Vec<&[u8]> = body.chunks(1).collect();
    assert_eq!(run(&bytes), whole, "one byte at a time");
    whole
}

/// Encodes events (then `finish`) and checks the framing Claude Code relies on; returns the
/// events' data objects, in order.
pub(super) fn encode_stream(options: StreamOptions, events: &[StreamEvent]) -> Vec<Value> {
    let mut encoder = StreamEncoder::new(options);
    let mut out = Vec::new();
    for event in events {
        encoder.encode(event, &mut out);
    }
    encoder.finish(&mut out);
    check_framing(&out)
}

/// Options as the gateway would pass them for Claude Code.
pub(super) fn options() -> StreamOptions {
    StreamOptions {
        model: "claude-sonnet-4-5".to_owned(),
        id: "msg_corvid_1".to_owned(),
        input_tokens: Some(1234),
    }
}

/// Parses Anthropic SSE output and asserts every framing rule (pitfalls 1 and 6): an `event:`
/// line equal to `data.type` then one `data:` line per event; one `message_start`, first;
/// one block open at a time with dense indices; no empty text or thinking block; deltas that
/// fit their block; every block closed before `message_delta`; `message_stop` last (or an
/// `error` event last).
pub(super) fn check_framing(bytes: &[u8]) -> Vec<Value> {
    let text = std::str::from_utf8(bytes).unwrap();
    assert!(
        text.is_empty() || text.ends_with("\n\n"),
        "ends with a blank line"
    );
    let mut events = Vec::new();
    for frame in text.split_terminator("\n\n") {
        let mut lines = frame.split('\n');
        let name = lines
            .next()
            .and_then(|l| l.strip_prefix("event: "))
            .unwrap();
        let data = lines.next().and_then(|l| l.strip_prefix("data: ")).unwrap();
        assert_eq!(lines.next(), None, "one data line per event: {frame}");
        let data: Value = serde_json::from_str(data).unwrap();
        assert_eq!(data["type"], name, "event line equals data.type");
        events.push(data);
    }
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    let starts = kinds.iter().filter(|k| **k == "message_start").count();
    if kinds.last() == Some(&"error") {
        assert!(starts <= 1, "at most one message_start: {kinds:?}");
    } else {
        assert_eq!(starts, 1, "exactly one message_start: {kinds:?}");
        assert!(
            kinds.ends_with(&["message_delta", "message_stop"]),
            "{kinds:?}"
        );
    }
    if starts == 1 {
        assert_eq!(kinds[0], "message_start", "message_start first");
    }
    let mut open: Option<(u64, String, bool)> = None;
    let mut next = 0;
    for event in &events {
        match event["type"].as_str().unwrap() {
            "content_block_start" => {
                assert_eq!(open, None, "one block open at a time");
                assert_eq!(event["index"], next, "dense indices");
                let kind = event["content_block"]["type"].as_str().unwrap().to_owned();
                if kind == "thinking" {
                    assert_eq!(event["content_block"]["signature"], "", "signature present");
                }
                open = Some((next, kind, false));
                next += 1;
            }
            "content_block_delta" => {
                let (index, kind, used) = open.as_mut().expect("delta inside a block");
                assert_eq!(event["index"], *index);
                let fits = match event["delta"]["type"].as_str().unwrap() {
                    "text_delta" => kind == "text" && event["delta"]["text"] != "",
                    "thinking_delta" => kind == "thinking" && event["delta"]["thinking"] != "",
                    "signature_delta" => kind == "thinking",
                    "input_json_delta" => kind == "tool_use",
                    _ => false,
                };
                assert!(fits, "delta fits its block: {event} in {kind}");
                *used = true;
            }
            "content_block_stop" => {
                let (index, kind, used) = open.take().expect("stop of an open block");
                assert_eq!(event["index"], index);
                if kind == "text" || kind == "thinking" {
                    assert!(used, "no empty {kind} block");
                }
            }
            "message_delta" => assert_eq!(open, None, "blocks closed before message_delta"),
            _ => {}
        }
    }
    events
}

fn text_request(messages: Vec<Message>) -> ChatRequest {
    ChatRequest {
        model: "claude-sonnet-4-5".to_owned(),
        messages,
        ..ChatRequest::default()
    }
}

fn call(id: &str, name: &str, arguments: &str) -> Part {
    Part::ToolCall(ToolCall {
        id: id.to_owned(),
        name: name.to_owned(),
        arguments: arguments.to_owned(),
        signature: None,
    })
}

fn result(call_id: &str, text: &str, is_error: bool) -> Part {
    Part::ToolResult(ToolResult {
        call_id: call_id.to_owned(),
        name: None,
        content: vec![ToolResultContent::Text {
            text: text.to_owned(),
        }],
        is_error,
    })
}

#[test]
fn pitfall_01_sse_framing_event_line_equals_data_type() {
    let mut encoder = StreamEncoder::new(options());
    let mut out = Vec::new();
    let events = [
        StreamEvent::Start {
            id: "x".into(),
            model: "gpt-4.1".into(),
        },
        StreamEvent::TextDelta { text: "Hi".into() },
        StreamEvent::Finish(FinishReason::EndTurn),
        StreamEvent::Usage(Usage::default()),
    ];
    for event in &events {
        encoder.encode(event, &mut out);
    }
    encoder.finish(&mut out);
    let text = String::from_utf8(out.clone()).unwrap();
    // Every frame is exactly `event: <type>\ndata: <one-line json>\n\n`.
    for frame in text.split_terminator("\n\n") {
        let (event_line, data_line) = frame.split_once('\n').unwrap();
        let data: Value = serde_json::from_str(data_line.strip_prefix("data: ").unwrap()).unwrap();
        assert_eq!(
            event_line,
            format!("event: {}", data["type"].as_str().unwrap())
        );
    }
    let kinds: Vec<Value> = check_framing(&out)
        .iter()
        .map(|e| e["type"].clone())
        .collect();
    assert_eq!(
        kinds,
        [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ]
    );
}

#[test]
fn pitfall_04_tool_index_mapping_is_dense() {
    // Block 0 is text, blocks 1 and 2 are tool_use: canonical tool indices 0 and 1.
    let events = decode_stream(&fixture("stream_parallel_tools.sse"), &NameMap::default());
    let tool_events: Vec<&StreamEvent> = events
        .iter()
        .filter(|e| {
            matches!(
                e,
                StreamEvent::ToolCallStart { .. }
                    | StreamEvent::ToolCallArgs { .. }
                    | StreamEvent::ToolCallEnd { .. }
            )
        })
        .collect();
    assert_eq!(
        tool_events,
        [
            &StreamEvent::ToolCallStart {
                index: 0,
                id: "toolu_A".into(),
                name: "Read".into(),
                signature: None
            },
            &StreamEvent::ToolCallArgs {
                index: 0,
                delta: "{\"file_path\":".into()
            },
            &StreamEvent::ToolCallArgs {
                index: 0,
                delta: "\"a.rs\"}".into()
            },
            &StreamEvent::ToolCallEnd { index: 0 },
            &StreamEvent::ToolCallStart {
                index: 1,
                id: "toolu_B".into(),
                name: "Grep".into(),
                signature: None
            },
            &StreamEvent::ToolCallArgs {
                index: 1,
                delta: "{\"pattern\":\"fn\"}".into()
            },
            &StreamEvent::ToolCallEnd { index: 1 },
        ]
    );
    // And the other way: canonical tool indices 0 and 1 after a text block become blocks 1, 2.
    let written = encode_stream(options(), &events);
    let tool_blocks: Vec<(Value, Value)> = written
        .iter()
        .filter(|e| e["type"] == "content_block_start")
        .map(|e| (e["index"].clone(), e["content_block"]["type"].clone()))
        .collect();
    assert_eq!(
        tool_blocks,
        [
            (json!(0), json!("text")),
            (json!(1), json!("tool_use")),
            (json!(2), json!("tool_use"))
        ]
    );
}

#[test]
fn pitfall_06_block_transitions() {
    // thinking → text → tool_use → tool_use, as an OpenAI-style upstream would stream it:
    // reasoning without a signature, the first text token right at the switch, a tool call
    // whose id and name come first, and an empty text delta before the tools.
    let events = [
        StreamEvent::Start {
            id: "chatcmpl-1".into(),
            model: "deepseek-reasoner".into(),
        },
        StreamEvent::ReasoningDelta {
            text: "Let me".into(),
        },
        StreamEvent::ReasoningDelta {
            text: " think.".into(),
        },
        StreamEvent::TextDelta { text: "F".into() },
        StreamEvent::TextDelta {
            text: "irst token kept.".into(),
        },
        StreamEvent::TextDelta { text: "".into() },
        StreamEvent::ToolCallStart {
            index: 0,
            id: "call_1".into(),
            name: "Read".into(),
            signature: None,
        },
        StreamEvent::ToolCallArgs {
            index: 0,
            delta: "{\"file_path\":\"a\"}".into(),
        },
        StreamEvent::ToolCallStart {
            index: 1,
            id: "call_2".into(),
            name: "Read".into(),
            signature: None,
        },
        StreamEvent::ToolCallStart {
            index: 1,
            id: "call_2".into(),
            name: "Read".into(),
            signature: None,
        },
        StreamEvent::ToolCallArgs {
            index: 1,
            delta: "{\"file_path\":\"b\"}".into(),
        },
        StreamEvent::Finish(FinishReason::ToolCalls),
        StreamEvent::Usage(Usage {
            input: 50,
            output: 30,
            ..Usage::default()
        }),
    ];
    // check_framing asserts: one message_start, one open block at a time, dense indices, no
    // empty block, every block closed before message_delta.
    let written = encode_stream(options(), &events);
    assert_eq!(
        written
            .iter()
            .filter(|e| e["type"] == "content_block_start")
            .map(|e| e["content_block"].clone())
            .collect::<Vec<_>>(),
        [
            json!({"type": "thinking", "thinking": "", "signature": ""}),
            json!({"type": "text", "text": ""}),
            json!({"type": "tool_use", "id": "call_1", "name": "Read", "input": {}}),
            json!({"type": "tool_use", "id": "call_2", "name": "Read", "input": {}}),
        ],
        "one start per tool call, no empty text block before tool_use"
    );
    let texts: Vec<&Value> = written
        .iter()
        .filter(|e| e["delta"]["type"] == "text_delta")
        .map(|e| &e["delta"]["text"])
        .collect();
    assert_eq!(texts, ["F", "irst token kept."], "no lost first token");
    let thinking: Vec<(&Value, &Value)> = written
        .iter()
        .filter(|e| e["delta"]["type"] == "thinking_delta")
        .map(|e| (&e["index"], &e["delta"]["thinking"]))
        .collect();
    assert_eq!(
        thinking,
        [
            (&json!(0), &json!("Let me")),
            (&json!(0), &json!(" think."))
        ],
        "thinking stays in its own block"
    );
}

#[test]
fn pitfall_07_usage_placement() {
    // OpenAI upstream: the finish comes before the usage chunk.
    let mut encoder = StreamEncoder::new(options());
    let mut out = Vec::new();
    for event in [
        StreamEvent::Start {
            id: "chatcmpl-1".into(),
            model: "gpt-4.1".into(),
        },
        StreamEvent::TextDelta { text: "Hi".into() },
        StreamEvent::Finish(FinishReason::EndTurn),
    ] {
        encoder.encode(&event, &mut out);
    }
    let before_usage = check_framing_prefix(&out);
    assert_eq!(
        before_usage[0]["message"]["usage"],
        json!({"input_tokens": 1234, "cache_creation_input_tokens": 0,
               "cache_read_input_tokens": 0, "output_tokens": 0}),
        "message_start carries the estimate and both cache fields"
    );
    assert!(
        before_usage.iter().all(|e| e["type"] != "message_delta"),
        "message_delta waits for the usage chunk"
    );
    let usage = Usage::from_openai(1300, 1000, 0, 42, 10);
    encoder.encode(&StreamEvent::Usage(usage), &mut out);
    encoder.finish(&mut out);
    let events = check_framing(&out);
    let delta = &events[events.len() - 2];
    assert_eq!(
        delta["usage"],
        json!({"input_tokens": 300, "cache_creation_input_tokens": 0,
               "cache_read_input_tokens": 1000, "output_tokens": 42,
               "output_tokens_details": {"thinking_tokens": 10}}),
        "message_delta: cumulative output, the real input and cache numbers, thinking share"
    );
    // An Anthropic upstream: message_start's counts are kept; output_tokens is cumulative.
    let decoded = decode_stream(&fixture("stream_text.sse"), &NameMap::default());
    assert!(decoded.contains(&StreamEvent::Usage(Usage {
        input: 18,
        cache_read: 100,
        cache_write: 20,
        output: 7,
        reasoning: 0,
    })));
}

/// Like [`check_framing`] for a stream still in progress: frames and event lines only.
pub(super) fn check_framing_prefix(bytes: &[u8]) -> Vec<Value> {
    let text = std::str::from_utf8(bytes).unwrap();
    text.split_terminator("\n\n")
        .map(|frame| {
            let (event, data) = frame.split_once('\n').unwrap();
            let data: Value = serde_json::from_str(data.strip_prefix("data: ").unwrap()).unwrap();
            assert_eq!(event, format!("event: {}", data["type"].as_str().unwrap()));
            data
        })
        .collect()
}

#[test]
fn pitfall_10_ids_are_made_valid_and_stay_paired() {
    let odd_ids = ["call_1.2:3", "", "fc_9__thought__Cq0C/+=", "toolu_ok-1"];
    let mut messages = vec![Message::text(Role::User, "go")];
    for id in odd_ids {
        messages.push(Message {
            role: Role::Assistant,
            parts: vec![call(id, "Read", "{}")],
        });
        messages.push(Message {
            role: Role::User,
            parts: vec![result(id, "ok", false)],
        });
    }
    let first = encode_request(&text_request(messages.clone()));
    assert_eq!(first, encode_request(&text_request(messages)), "stable");
    let pattern = |id: &str| {
        !id.is_empty()
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    let encoded = first["messages"].as_array().unwrap();
    for (turn, _) in odd_ids.iter().enumerate() {
        let use_id = encoded[turn * 2 + 1]["content"][0]["id"].as_str().unwrap();
        let result_id = encoded[turn * 2 + 2]["content"][0]["tool_use_id"]
            .as_str()
            .unwrap();
        assert!(pattern(use_id), "{use_id} matches ^[a-zA-Z0-9_-]+$");
        assert_eq!(use_id, result_id, "the result answers its call");
        assert_eq!(
            encoded[turn * 2 + 2]["content"].as_array().unwrap().len(),
            1,
            "no synthetic result: the real one was paired"
        );
    }
    // Streamed to Claude Code, a foreign id is made valid the same way as in the next request.
    let written = encode_stream(
        options(),
        &[
            StreamEvent::ToolCallStart {
                index: 0,
                id: "call_1.2:3".into(),
                name: "Read".into(),
                signature: None,
            },
            StreamEvent::Finish(FinishReason::ToolCalls),
        ],
    );
    assert_eq!(written[1]["content_block"]["id"], "call_1_2_3");
}

#[test]
fn pitfall_11_tool_result_grouping() {
    // An OpenAI history: one `tool` message per call, then a dangling call at the end of a
    // turn the user answered with text only, then a result that answers no call.
    let request = text_request(vec![
        Message::text(Role::User, "read both"),
        Message {
            role: Role::Assistant,
            parts: vec![call("call_a", "Read", "{}"), call("call_b", "Read", "{}")],
        },
        Message {
            role: Role::User,
            parts: vec![result("call_a", "A", false)],
        },
        Message {
            role: Role::User,
            parts: vec![
                Part::Text {
                    text: "and also".into(),
                },
                result("call_b", "B", true),
            ],
        },
        Message {
            role: Role::Assistant,
            parts: vec![call("call_c", "Read", "{}")],
        },
        Message::text(Role::User, "never mind"),
        Message {
            role: Role::Assistant,
            parts: vec![Part::Text { text: "ok".into() }],
        },
        Message {
            role: Role::User,
            parts: vec![result("call_zombie", "late", false)],
        },
    ]);
    insta::assert_json_snapshot!(encode_request(&request)["messages"]);
}

#[test]
fn pitfall_14_reasoning_round_trips() {
    // Signed thinking from Claude Code goes back unchanged; its synthetic thinking
    // (`"signature": ""`, which corvid wrote for a non-Anthropic reply) is read as unsigned…
    let body = json!({
        "model": "m", "max_tokens": 100,
        "messages": [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "signed", "signature": "EpcB"},
                {"type": "thinking", "thinking": "synthetic", "signature": ""},
                {"type": "redacted_thinking", "data": "EmwK"},
                {"type": "text", "text": "a"}
            ]},
            {"role": "user", "content": "next"}
        ]
    });
    let mut request = decode_request(body.to_string().as_bytes()).unwrap();
    assert_eq!(
        request.messages[1].parts[1],
        Part::Reasoning(Reasoning {
            text: "synthetic".into(),
            ..Reasoning::default()
        })
    );
    // …and reasoning from other providers joins it: Responses encrypted content (with an
    // item id) and DeepSeek reasoning text.
    request.messages[1].parts.push(Part::Reasoning(Reasoning {
        text: "summary".into(),
        encrypted: Some("gAAAA".into()),
        id: Some("rs_1".into()),
        ..Reasoning::default()
    }));
    request.messages[1].parts.push(Part::Reasoning(Reasoning {
        text: "deepseek thoughts".into(),
        ..Reasoning::default()
    }));
    let encoded = encode_request(&request);
    assert_eq!(
        encoded["messages"][1]["content"],
        json!([
            {"type": "thinking", "thinking": "signed", "signature": "EpcB"},
            {"type": "redacted_thinking", "data": "EmwK"},
            {"type": "text", "text": "a"}
        ]),
        "only Anthropic's own thinking is forwarded"
    );
    // Toward Claude Code, unsigned reasoning is a thinking block with `"signature": ""`, and a
    // real signature arrives as signature_delta.
    let written = encode_stream(
        options(),
        &[
            StreamEvent::ReasoningDelta {
                text: "synthetic".into(),
            },
            StreamEvent::TextDelta { text: "x".into() },
            StreamEvent::ReasoningDelta {
                text: "signed".into(),
            },
            StreamEvent::ReasoningSignature {
                signature: "EpcB".into(),
            },
            StreamEvent::Finish(FinishReason::EndTurn),
        ],
    );
    let signatures: Vec<&Value> = written
        .iter()
        .filter(|e| e["delta"]["type"] == "signature_delta")
        .map(|e| &e["delta"]["signature"])
        .collect();
    assert_eq!(signatures, ["EpcB"]);
}

#[test]
fn pitfall_16_reasoning_model_parameters() {
    let mut request = text_request(vec![Message::text(Role::User, "q")]);
    request.tools = vec![Tool {
        name: "Read".into(),
        description: None,
        parameters: json!({"type": "object"}).into(),
        strict: None,
    }];
    request.tool_choice = Some(ToolChoice::Named("Read".into()));
    request.params = Params {
        temperature: Some(1.7),
        ..Params::default()
    };
    let plain = encode_request(&request);
    assert_eq!(plain["temperature"], 1.0, "clamped to ≤ 1");
    assert_eq!(
        plain["tool_choice"],
        json!({"type": "tool", "name": "Read"})
    );

    request.params.reasoning = Some(ReasoningConfig::Effort(crate::model::Effort::High));
    request.params.top_p = Some(0.9);
    let thinking = encode_request(&request);
    assert_eq!(thinking.get("temperature"), None, "unset with thinking on");
    assert_eq!(
        thinking.get("top_p"),
        None,
        "below 0.95 is refused with thinking on"
    );
    assert_eq!(
        thinking["tool_choice"],
        json!({"type": "auto"}),
        "forced choice relaxed"
    );
    assert_eq!(
        thinking["thinking"],
        json!({"type": "enabled", "budget_tokens": 4096})
    );
}

#[test]
fn pitfall_17_limits() {
    let mut request = text_request(vec![Message::text(Role::User, "q")]);
    assert_eq!(encode_request(&request)["max_tokens"], DEFAULT_MAX_TOKENS);
    request.params.max_output_tokens = Some(1000);
    request.params.reasoning = Some(ReasoningConfig::Effort(crate::model::Effort::High));
    let encoded = encode_request(&request);
    assert_eq!(encoded["thinking"]["budget_tokens"], 4096);
    assert_eq!(
        encoded["max_tokens"], 5096,
        "budget < max_tokens, with the client's room for the answer kept"
    );
    request.params.reasoning = Some(ReasoningConfig::Budget(100));
    let encoded = encode_request(&request);
    assert_eq!(encoded["thinking"]["budget_tokens"], MIN_THINKING_BUDGET);
    assert_eq!(encoded["max_tokens"], 2024);
    request.params.max_output_tokens = Some(64000);
    request.params.reasoning = Some(ReasoningConfig::Budget(31999));
    let encoded = encode_request(&request);
    assert_eq!(
        (
            &encoded["max_tokens"],
            &encoded["thinking"]["budget_tokens"]
        ),
        (&json!(64000), &json!(31999)),
        "a budget already below max_tokens is kept"
    );
}

#[test]
fn pitfall_18_images() {
    let image = |url: &str| {
        Part::Image(Image {
            source: ImageSource::from_url(url),
            detail: Some("high".into()),
        })
    };
    let request = text_request(vec![Message {
        role: Role::User,
        parts: vec![
            image("data:image/png;base64,iVBORw0KGgo="),
            image("data:image/jpg;base64,/9j/4AAQ"),
            image("data:image/bmp;base64,Qk0="),
            image("https://example.com/cat.webp"),
            image("gs://bucket/cat.png"),
        ],
    }]);
    insta::assert_json_snapshot!(encode_request(&request)["messages"][0]["content"]);
}

#[test]
fn pitfall_19_errors() {
    // Every §6.8 status answers an Anthropic client in Anthropic's shape and status.
    let table = [
        (400, 400, "invalid_request_error"),
        (401, 401, "authentication_error"),
        (403, 403, "permission_error"),
        (404, 404, "not_found_error"),
        (413, 413, "request_too_large"),
        (429, 429, "rate_limit_error"),
        (500, 500, "api_error"),
        (502, 529, "overloaded_error"),
        (503, 529, "overloaded_error"),
        (504, 504, "timeout_error"),
        (529, 529, "overloaded_error"),
    ];
    for (upstream, status, kind) in table {
        let openai_body =
            json!({"error": {"message": format!("upstream {upstream}"), "type": "x"}});
        let error = decode_error(upstream, openai_body.to_string().as_bytes());
        assert_eq!(
            encode_error(&error),
            (
                status,
                json!({"type": "error", "error": {"type": kind, "message": format!("upstream {upstream}")}})
            ),
            "HTTP {upstream}"
        );
    }
    // A failure mid-stream is an error event, never a silent truncation.
    let mut decoder = StreamDecoder::new(NameMap::default());
    let mut events = Vec::new();
    let body = fixture("stream_text.sse");
    decoder.feed(&body[..body.len() / 2], &mut events);
    decoder.finish(&mut events);
    let Some(StreamEvent::Error(error)) = events.last() else {
        panic!("truncation must end in Error: {events:?}");
    };
    let written = encode_stream(options(), &events);
    assert_eq!(
        written.last().unwrap(),
        &json!({"type": "error", "error": {"type": "api_error", "message": error.message}})
    );
}

#[test]
fn pitfall_20_claude_code_surface() {
    // context_management, output_config, cache_control, server tools and unknown block types
    // decode fine; nothing of them reaches the canonical messages or tools.
    let request = decode_request(&fixture("claude_code_request.json")).unwrap();
    let kinds: Vec<&str> = request
        .messages
        .iter()
        .flat_map(|m| &m.parts)
        .map(|part| match part {
            Part::Text { .. } => "text",
            Part::Image(_) => "image",
            Part::ToolCall(_) => "tool_call",
            Part::ToolResult(_) => "tool_result",
            Part::Reasoning(_) => "reasoning",
            Part::System { .. } => "system",
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "text",
            "text",
            "image",
            "image",
            "reasoning",
            "reasoning",
            "text",
            "tool_call",
            "tool_call",
            "tool_result",
            "tool_result",
            "text",
            "text"
        ]
    );
    assert_eq!(
        request.messages.len(),
        4,
        "a message of unknown blocks only is dropped"
    );
    assert_eq!(
        request
            .tools
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>(),
        ["Read", "mcp__github__get_issue"]
    );
    let mut extra: Vec<&String> = request.extra.keys().collect();
    extra.sort();
    assert_eq!(
        extra,
        ["context_management", "metadata", "tools", "top_k"],
        "kept aside, never in the canonical fields"
    );
}

#[test]
fn count_tokens_estimate_is_four_chars_a_token_plus_images() {
    let mut request = text_request(vec![Message {
        role: Role::User,
        parts: vec![
            Part::Text {
                text: "abcdefgh".into(),
            },
            Part::Image(Image {
                source: ImageSource::from_url("https://example.com/a.png"),
                detail: None,
            }),
        ],
    }]);
    request.system = vec!["abcd".into()];
    assert_eq!(count_tokens_estimate(&request), 3 + IMAGE_TOKEN_ESTIMATE);
    request.tools = vec![Tool {
        name: "ab".into(),
        description: Some("cd".into()),
        parameters: json!({}).into(),
        strict: None,
    }];
    // + "ab" + "cd" + "{}" = 6 chars: 18 chars in all, 5 tokens.
    assert_eq!(count_tokens_estimate(&request), 5 + IMAGE_TOKEN_ESTIMATE);
    let claude_code = decode_request(&fixture("claude_code_request.json")).unwrap();
    assert_eq!(
        count_tokens_estimate(&claude_code),
        count_tokens_estimate(&claude_code),
        "deterministic"
    );
}

#[test]
fn stream_round_trip_through_canonical_keeps_the_reply() {
    // Anthropic upstream → canonical → Anthropic client: the same content, blocks and reason.
    for name in [
        "stream_text.sse",
        "stream_thinking_tool.sse",
        "stream_parallel_tools.sse",
    ] {
        let events = decode_stream(&fixture(name), &NameMap::default());
        let mut out = Vec::new();
        let mut encoder = StreamEncoder::new(StreamOptions::default());
        events.iter().for_each(|e| encoder.encode(e, &mut out));
        encoder.finish(&mut out);
        check_framing(&out);
        assert_eq!(decode_stream(&out, &NameMap::default()), events, "{name}");
    }
}

#[test]
fn request_round_trip_through_canonical_keeps_what_anthropic_carries() {
    let mut request = decode_request(&fixture("claude_code_request.json")).unwrap();
    let again = decode_request(encode_request(&request).to_string().as_bytes()).unwrap();
    assert_eq!(again.messages, request.messages);
    assert_eq!(again.tools, request.tools);
    assert_eq!(again.system, request.system);
    // Thinking is on: the temperature is not sent (pitfall 16).
    request.params.temperature = None;
    assert_eq!(again.params, request.params);
    assert_eq!(again.tool_choice, request.tool_choice);
}

#[test]
fn error_kinds_survive_a_stream() {
    let error = WireError::new(ErrorKind::RateLimited, "slow down");
    let mut out = Vec::new();
    let mut encoder = StreamEncoder::new(options());
    encoder.encode(&StreamEvent::Error(error), &mut out);
    let events = decode_stream(&out, &NameMap::default());
    assert_eq!(
        events,
        [StreamEvent::Error(
            WireError::new(ErrorKind::RateLimited, "slow down").with_code("rate_limit_error")
        )]
    );
}

/// Issue 10.7: the thinking share Anthropic reports in `message_delta` is read, not dropped.
#[test]
fn streamed_thinking_tokens_are_read() {
    let frames = [
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
            "role": "assistant", "model": "claude-opus-4-7", "content": [],
            "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": "Hi"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 40, "output_tokens_details": {"thinking_tokens": 25}}}),
        json!({"type": "message_stop"}),
    ];
    let body: String = frames
        .iter()
        .map(|data| {
            format!(
                "event: {}\ndata: {data}\n\n",
                data["type"].as_str().unwrap()
            )
        })
        .collect();
    let events = decode_stream(body.as_bytes(), &NameMap::default());
    let usage = events
        .iter()
        .rev()
        .find_map(|event| match event {
            StreamEvent::Usage(usage) => Some(*usage),
            _ => None,
        })
        .unwrap();
    assert_eq!((usage.output, usage.reasoning), (40, 25));
}

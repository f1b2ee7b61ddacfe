//! One test per translator pitfall of `wire-formats.md` §8 that concerns Chat Completions.

use pretty_assertions::assert_eq;
use serde_json::json;

use super::build::{call, png, reasoning, result, result_text, text, tool};
use super::stream_decode::{chunk, sse};
use super::{assert_strict, decode_stream, encode_stream, fixture, options, payloads};
use crate::model::{
    ChatRequest, ErrorKind, FinishReason, Message, NameMap, Part, Reasoning, Role, StreamEvent,
    ToolChoice, ToolResultContent, Usage,
};
use crate::openai_chat::{
    StreamDecoder, StreamEncoder, StreamOptions, decode_request, decode_response, encode_request,
    encode_response, finish_from_wire, finish_to_wire,
};

/// Pitfall 1: one-line `data:` JSON, `[DONE]` at the end, the role in the first chunk, `id`,
/// `object`, `created`, `model` and `choices` on every chunk. Byte for byte the reference's
/// example stream (§1), plus the usage details.
#[test]
fn pitfall_01_sse_framing() {
    let options = StreamOptions {
        model: "gpt-4.1".to_owned(),
        id: "chatcmpl-9f3".to_owned(),
        created: 1_767_000_000,
        include_usage: true,
    };
    let events = [
        StreamEvent::Start {
            id: "upstream".to_owned(),
            model: "upstream-model".to_owned(),
        },
        StreamEvent::TextDelta {
            text: "Hi there.\nBye.".to_owned(),
        },
        StreamEvent::Finish(FinishReason::EndTurn),
        StreamEvent::Usage(Usage {
            input: 14,
            output: 4,
            ..Usage::default()
        }),
    ];
    let expected = concat!(
        r#"data: {"id":"chatcmpl-9f3","object":"chat.completion.chunk","created":1767000000,"model":"gpt-4.1","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}"#,
        "\n\n",
        r#"data: {"id":"chatcmpl-9f3","object":"chat.completion.chunk","created":1767000000,"model":"gpt-4.1","choices":[{"index":0,"delta":{"content":"Hi there.\nBye."},"finish_reason":null}],"usage":null}"#,
        "\n\n",
        r#"data: {"id":"chatcmpl-9f3","object":"chat.completion.chunk","created":1767000000,"model":"gpt-4.1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}"#,
        "\n\n",
        r#"data: {"id":"chatcmpl-9f3","object":"chat.completion.chunk","created":1767000000,"model":"gpt-4.1","choices":[],"usage":{"prompt_tokens":14,"completion_tokens":4,"total_tokens":18,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}"#,
        "\n\n",
        "data: [DONE]\n\n",
    );
    let stream = encode_stream(options, &events);
    assert_eq!(String::from_utf8(stream.clone()).unwrap(), expected);
    assert_strict(&stream, true);
}

/// Pitfall 2: with `include_usage`, `"usage": null` on every chunk and a last `choices: []`
/// chunk with integer counts; without it, neither.
#[test]
fn pitfall_02_usage_chunk() {
    let events = decode_stream(&fixture("stream_xai_tool.sse"), &NameMap::default());
    let with = encode_stream(options(true), &events);
    assert_strict(&with, true);
    let chunks = payloads(&with);
    assert_eq!(
        chunks[chunks.len() - 2]["usage"],
        json!({"prompt_tokens": 120, "completion_tokens": 125, "total_tokens": 245,
               "prompt_tokens_details": {"cached_tokens": 100},
               "completion_tokens_details": {"reasoning_tokens": 100}})
    );
    let without = encode_stream(options(false), &events);
    assert_strict(&without, false);
    assert!(!String::from_utf8(without).unwrap().contains("usage"));
}

/// Pitfall 3: tool calls with `finish_reason: "stop"` (a forced `tool_choice`, sglang, OVMS)
/// come out as tool calls, both ways.
#[test]
fn pitfall_03_tool_finish_override() {
    let body = sse(&[
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                   "function": {"name": "ls", "arguments": "{}"}}]}),
            None,
        ),
        chunk(json!({}), Some("stop")),
    ]);
    let events = decode_stream(&body, &NameMap::default());
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Finish(FinishReason::ToolCalls))
    );

    let whole = json!({"id": "c", "model": "m", "choices": [{"index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]}}]});
    let response = decode_response(whole.to_string().as_bytes(), &NameMap::default()).unwrap();
    assert_eq!(response.finish, FinishReason::ToolCalls);

    // An end of turn with calls reaches Zed as `tool_calls`, the only value it runs them on.
    let mut response = response;
    response.finish = FinishReason::EndTurn;
    assert_eq!(
        encode_response(&response, "m")["choices"][0]["finish_reason"],
        "tool_calls"
    );
    let stream = encode_stream(
        options(true),
        &[
            StreamEvent::ToolCallStart {
                index: 0,
                id: "call_1".to_owned(),
                name: "ls".to_owned(),
                signature: None,
            },
            StreamEvent::Finish(FinishReason::EndTurn),
        ],
    );
    assert_strict(&stream, true);
    assert_eq!(
        payloads(&stream)[2]["choices"][0]["finish_reason"],
        "tool_calls"
    );
}

/// Pitfall 4: tool indices. Missing upstream indices are synthesised (by id, else the last
/// call); upstreams that number every call 0 still give distinct calls; the encoder writes
/// dense indices with `id`/`type`/`name` in the first delta only.
#[test]
fn pitfall_04_tool_index_mapping() {
    let body = sse(&[
        chunk(
            json!({"tool_calls": [{"id": "call_a", "function": {"name": "read", "arguments": "{\"p\":"}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"function": {"arguments": "1}"}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"id": "call_b", "function": {"name": "grep", "arguments": "{}"}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_c", "function": {"name": "ls", "arguments": "{}"}},
                                  {"index": 0, "id": "call_d", "function": {"name": "pwd", "arguments": "{}"}}]}),
            Some("tool_calls"),
        ),
    ]);
    let events = decode_stream(&body, &NameMap::default());
    let start = |index, id: &str, name: &str| StreamEvent::ToolCallStart {
        index,
        id: id.to_owned(),
        name: name.to_owned(),
        signature: None,
    };
    let args = |index, delta: &str| StreamEvent::ToolCallArgs {
        index,
        delta: delta.to_owned(),
    };
    assert_eq!(
        events,
        [
            StreamEvent::Start {
                id: "c1".to_owned(),
                model: "m".to_owned()
            },
            start(0, "call_a", "read"),
            args(0, "{\"p\":"),
            args(0, "1}"),
            start(1, "call_b", "grep"),
            args(1, "{}"),
            start(2, "call_c", "ls"),
            args(2, "{}"),
            start(3, "call_d", "pwd"),
            args(3, "{}"),
            StreamEvent::ToolCallEnd { index: 0 },
            StreamEvent::ToolCallEnd { index: 1 },
            StreamEvent::ToolCallEnd { index: 2 },
            StreamEvent::ToolCallEnd { index: 3 },
            StreamEvent::Finish(FinishReason::ToolCalls),
        ]
    );

    // Encoder: Anthropic block 1 and 2 arrive as canonical calls 0 and 1 → wire 0 and 1.
    let stream = encode_stream(
        options(false),
        &[
            StreamEvent::TextDelta {
                text: "Two reads.".to_owned(),
            },
            start(0, "toolu_1", "read"),
            args(0, "{\"p\":"),
            start(1, "toolu_2", "read"),
            args(1, "{\"p\":2}"),
            args(0, "1}"),
            StreamEvent::ToolCallEnd { index: 0 },
            StreamEvent::ToolCallEnd { index: 1 },
            StreamEvent::Finish(FinishReason::ToolCalls),
        ],
    );
    assert_strict(&stream, false);
    let calls: Vec<_> = payloads(&stream)
        .iter()
        .filter_map(|chunk| chunk["choices"][0]["delta"].get("tool_calls").cloned())
        .collect();
    assert_eq!(
        calls,
        [
            json!([{"index": 0, "id": "toolu_1", "type": "function", "function": {"name": "read", "arguments": ""}}]),
            json!([{"index": 0, "function": {"arguments": "{\"p\":"}}]),
            json!([{"index": 1, "id": "toolu_2", "type": "function", "function": {"name": "read", "arguments": ""}}]),
            json!([{"index": 1, "function": {"arguments": "{\"p\":2}"}}]),
            json!([{"index": 0, "function": {"arguments": "1}"}}]),
        ]
    );
}

/// Pitfall 5: a whole call in one delta (xAI), content and `finish_reason` in one chunk, and
/// `tool_calls: []` next to content each give complete calls and text kept as text.
#[test]
fn pitfall_05_odd_delta_shapes() {
    let whole = decode_stream(&fixture("stream_xai_tool.sse"), &NameMap::default());
    assert!(whole.contains(&StreamEvent::ToolCallArgs {
        index: 0,
        delta: r#"{"city":"Paris"}"#.to_owned()
    }));
    let odd = decode_stream(&fixture("stream_odd_shapes.sse"), &NameMap::default());
    assert_eq!(
        odd,
        [
            StreamEvent::Start {
                id: "gen-1".to_owned(),
                model: "local".to_owned()
            },
            StreamEvent::TextDelta {
                text: "Done".to_owned()
            },
            StreamEvent::TextDelta {
                text: " now.".to_owned()
            },
            StreamEvent::Finish(FinishReason::EndTurn),
            StreamEvent::Usage(Usage {
                input: 5,
                output: 2,
                ..Usage::default()
            }),
        ]
    );
    // Arguments sent as an object rather than text (some local servers).
    let object_args = sse(&[chunk(
        json!({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "f", "arguments": {"a": 1}}}]}),
        Some("tool_calls"),
    )]);
    assert!(decode_stream(&object_args, &NameMap::default()).contains(
        &StreamEvent::ToolCallArgs {
            index: 0,
            delta: r#"{"a":1}"#.to_owned()
        }
    ));
}

/// Pitfall 8: a streamed request to an OpenAI-compatible upstream always asks for the usage
/// chunk, even when the client did not (or said no).
#[test]
fn pitfall_08_always_request_usage() {
    for client in [json!(null), json!({"include_usage": false})] {
        let mut body =
            json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "hi"}]});
        if !client.is_null() {
            body["stream_options"] = client.clone();
        }
        let request = decode_request(body.to_string().as_bytes()).unwrap();
        assert_eq!(
            encode_request(&request)["stream_options"],
            json!({"include_usage": true}),
            "{client}"
        );
    }
}

/// Pitfall 9, §6.2: one row per finish reason, both directions.
#[test]
fn pitfall_09_golden_finish_reasons() {
    for (wire, reason) in [
        ("stop", FinishReason::EndTurn),
        ("length", FinishReason::MaxTokens),
        ("tool_calls", FinishReason::ToolCalls),
        ("function_call", FinishReason::ToolCalls),
        ("content_filter", FinishReason::ContentFilter),
        ("something_new", FinishReason::EndTurn),
    ] {
        assert_eq!(finish_from_wire(wire), reason, "{wire}");
    }
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
        assert_eq!(finish_to_wire(reason, false), wire, "{reason:?}");
    }
}

/// Pitfall 10: Chat carries any id, so foreign ids (Anthropic `toolu_…`, Gemini synthetic
/// ones) go out unchanged on the call and its result; a call without an id gets a stable one.
#[test]
fn pitfall_10_ids() {
    let request = ChatRequest {
        model: "m".to_owned(),
        messages: vec![
            Message {
                role: Role::Assistant,
                parts: vec![call("toolu_01A.b:c", "ls", "{}")],
            },
            Message {
                role: Role::User,
                parts: vec![result("toolu_01A.b:c", vec![result_text("a b")], false)],
            },
        ],
        ..ChatRequest::default()
    };
    let body = encode_request(&request);
    assert_eq!(body["messages"][0]["tool_calls"][0]["id"], "toolu_01A.b:c");
    assert_eq!(body["messages"][1]["tool_call_id"], "toolu_01A.b:c");

    let body = sse(&[chunk(
        json!({"tool_calls": [{"index": 0, "function": {"name": "ls", "arguments": "{}"}}]}),
        Some("tool_calls"),
    )]);
    let first = decode_stream(&body, &NameMap::default());
    let StreamEvent::ToolCallStart { id, .. } = &first[1] else {
        panic!("{first:?}")
    };
    assert!(id.starts_with("call_"), "{id}");
    assert_eq!(decode_stream(&body, &NameMap::default()), first, "stable");
}

/// Pitfall 11: consecutive `tool` messages become one user message (results first, then the
/// user's text); on the way out, one `tool` message per call right after the assistant turn,
/// in call order, and a placeholder for a call left unanswered.
#[test]
fn pitfall_11_tool_result_grouping() {
    let body = json!({"model": "m", "messages": [
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "a", "arguments": "{}"}},
            {"id": "c2", "type": "function", "function": {"name": "b", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "one"},
        {"role": "tool", "tool_call_id": "c2", "content": "two"},
        {"role": "user", "content": "next"},
        {"role": "user", "content": "separate"},
    ]});
    let request = decode_request(body.to_string().as_bytes()).unwrap();
    assert_eq!(
        request.messages[1..],
        [
            Message {
                role: Role::User,
                parts: vec![
                    result("c1", vec![result_text("one")], false),
                    result("c2", vec![result_text("two")], false),
                    text("next"),
                ],
            },
            Message::text(Role::User, "separate"),
        ]
    );

    let request = ChatRequest {
        model: "m".to_owned(),
        messages: vec![
            Message {
                role: Role::Assistant,
                parts: vec![
                    call("c1", "a", "{}"),
                    call("c2", "b", "{}"),
                    call("c3", "c", "{}"),
                ],
            },
            Message {
                role: Role::User,
                parts: vec![
                    text("Here you go."),
                    result("c3", vec![result_text("three")], false),
                    result("c1", vec![result_text("one")], true),
                ],
            },
            Message {
                role: Role::Assistant,
                parts: vec![call("c4", "d", "{}")],
            },
        ],
        ..ChatRequest::default()
    };
    snapshot!(
        "pitfall_11_tool_result_grouping",
        encode_request(&request)["messages"]
    );
}

/// Pitfall 14: DeepSeek-style `reasoning_content` is echoed on the assistant turn of a tool
/// loop; Anthropic signatures and encrypted reasoning, which Chat cannot carry, are dropped
/// (and reasoning without text is not sent at all).
#[test]
fn pitfall_14_reasoning_round_trips() {
    let body = json!({"model": "deepseek-reasoner", "messages": [
        {"role": "user", "content": "What time is it in Paris?"},
        {"role": "assistant", "content": "", "reasoning_content": "Call the clock tool.",
         "tool_calls": [{"id": "call_0", "type": "function", "function": {"name": "clock", "arguments": "{\"tz\":\"Europe/Paris\"}"}}]},
        {"role": "tool", "tool_call_id": "call_0", "content": "14:05"},
    ]});
    let request = decode_request(body.to_string().as_bytes()).unwrap();
    assert_eq!(
        request.messages[1].parts[0],
        reasoning("Call the clock tool.")
    );
    let encoded = encode_request(&request);
    assert_eq!(
        encoded["messages"][1],
        json!({"role": "assistant", "content": null, "reasoning_content": "Call the clock tool.",
               "tool_calls": [{"id": "call_0", "type": "function",
                               "function": {"name": "clock", "arguments": "{\"tz\":\"Europe/Paris\"}"}}]})
    );

    let signed = ChatRequest {
        model: "m".to_owned(),
        messages: vec![Message {
            role: Role::Assistant,
            parts: vec![
                Part::Reasoning(Reasoning {
                    text: "Visible thinking.".to_owned(),
                    signature: Some("sig".to_owned()),
                    ..Reasoning::default()
                }),
                Part::Reasoning(Reasoning {
                    encrypted: Some("opaque".to_owned()),
                    id: Some("rs_1".to_owned()),
                    ..Reasoning::default()
                }),
                text("Answer."),
            ],
        }],
        ..ChatRequest::default()
    };
    assert_eq!(
        encode_request(&signed)["messages"][0],
        json!({"role": "assistant", "content": "Answer.", "reasoning_content": "Visible thinking."})
    );
}

/// Pitfall 15: a 90-character MCP tool name is shortened for OpenAI (tools, `tool_choice`,
/// history) and restored exactly in the reply, streamed or not.
#[test]
fn pitfall_15_long_tool_names() {
    let long = format!("mcp__{}__search", "a".repeat(77));
    assert_eq!(long.len(), 90);
    let request = ChatRequest {
        model: "m".to_owned(),
        messages: vec![Message {
            role: Role::Assistant,
            parts: vec![call("call_1", &long, "{}")],
        }],
        tools: vec![tool(&long, None, json!({"type": "object"}))],
        tool_choice: Some(ToolChoice::Named(long.clone())),
        ..ChatRequest::default()
    };
    let names = NameMap::new(&request.tools);
    let wire = names.wire(&long);
    assert_eq!(wire.len(), 64);
    let body = encode_request(&request);
    assert_eq!(body["tools"][0]["function"]["name"], wire.as_str());
    assert_eq!(body["tool_choice"]["function"]["name"], wire.as_str());
    assert_eq!(
        body["messages"][0]["tool_calls"][0]["function"]["name"],
        wire.as_str()
    );

    let whole = json!({"id": "c", "model": "m", "choices": [{"index": 0, "finish_reason": "tool_calls",
        "message": {"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_2", "type": "function", "function": {"name": wire, "arguments": "{}"}}]}}]});
    let response = decode_response(whole.to_string().as_bytes(), &names).unwrap();
    assert_eq!(response.parts, [call("call_2", &long, "{}")]);

    let stream = sse(&[chunk(
        json!({"tool_calls": [{"index": 0, "id": "call_2", "function": {"name": wire, "arguments": "{}"}}]}),
        Some("tool_calls"),
    )]);
    assert_eq!(
        decode_stream(&stream, &names)[1],
        StreamEvent::ToolCallStart {
            index: 0,
            id: "call_2".to_owned(),
            name: long,
            signature: None
        }
    );
}

/// Pitfall 18: Chat `tool` messages are text-only, so images in tool results move to the
/// user message that follows (Zed sends them inside `tool` messages).
#[test]
fn pitfall_18_tool_result_images_move_to_a_user_message() {
    let request = decode_request(&fixture("request_zed_tool_loop.json")).unwrap();
    let messages = &encode_request(&request)["messages"];
    assert_eq!(
        messages[4],
        json!({"role": "tool", "tool_call_id": "call_27182", "content": "Screenshot of the editor:"})
    );
    assert_eq!(
        messages[5],
        json!({"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
            {"type": "text", "text": "Now explain the difference."}]})
    );
    // A result that is only an image still answers its call.
    let only_image = ChatRequest {
        model: "m".to_owned(),
        messages: vec![
            Message {
                role: Role::Assistant,
                parts: vec![call("c1", "shot", "{}")],
            },
            Message {
                role: Role::User,
                parts: vec![result(
                    "c1",
                    vec![ToolResultContent::Image(png("AAAA"))],
                    false,
                )],
            },
        ],
        ..ChatRequest::default()
    };
    snapshot!(
        "pitfall_18_image_only_result",
        encode_request(&only_image)["messages"]
    );
}

/// Pitfall 19: a failure after the stream began is an error event, never a silent cut, in
/// both directions; error bodies keep the upstream's wording (more in `errors`).
#[test]
fn pitfall_19_mid_stream_failure_is_an_error_event() {
    let events = decode_stream(&fixture("stream_truncated.sse"), &NameMap::default());
    assert!(matches!(events.last(), Some(StreamEvent::Error(_))));
    let events = decode_stream(&fixture("stream_error.sse"), &NameMap::default());
    let Some(StreamEvent::Error(error)) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(error.kind, ErrorKind::Api);

    let mut encoder = StreamEncoder::new(options(true));
    let mut out = Vec::new();
    for event in &events {
        encoder.encode(event, &mut out);
    }
    encoder.finish(&mut out);
    let chunks = payloads(&out);
    assert_eq!(
        chunks.last(),
        Some(&json!({"error": {
            "message": "The server had an error while processing your request. Sorry about that!",
            "type": "server_error", "param": null, "code": null}}))
    );
    assert!(!chunks.contains(&json!("[DONE]")));
}

/// Pitfall 21: each event leaves as soon as its chunk is complete, in both directions.
#[test]
fn pitfall_21_events_are_not_held_back() {
    let body = fixture("stream_text.sse");
    let text = std::str::from_utf8(&body).unwrap();
    let second_chunk_end = text.match_indices("\n\n").nth(1).unwrap().0 + 2;
    let mut decoder = StreamDecoder::new(NameMap::default());
    let mut events = Vec::new();
    decoder.feed(&body[..second_chunk_end], &mut events);
    assert_eq!(
        events,
        [
            StreamEvent::Start {
                id: "chatcmpl-9f3".to_owned(),
                model: "gpt-4.1".to_owned()
            },
            StreamEvent::TextDelta {
                text: "Hi ".to_owned()
            },
        ]
    );

    let mut encoder = StreamEncoder::new(options(true));
    let mut out = Vec::new();
    for event in events {
        encoder.encode(&event, &mut out);
    }
    assert_eq!(payloads(&out).len(), 2, "role chunk and text chunk");
}

/// Pitfall 23: `search_parameters` (xAI Live Search, now 410 Gone) is never forwarded.
#[test]
fn pitfall_23_search_parameters_never_forwarded() {
    let body = json!({"model": "grok-4", "messages": [], "search_parameters": {"mode": "auto"},
                      "seed": 1});
    let request = decode_request(body.to_string().as_bytes()).unwrap();
    let encoded = encode_request(&request);
    assert_eq!(encoded.get("search_parameters"), None);
    assert_eq!(encoded["seed"], 1);
}

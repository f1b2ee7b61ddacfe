//! One test per pitfall of `wire-formats.md` §8 that applies to Responses, named after it.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::stream_encoder::checked;
use super::{build, decode_chunks, decode_fixture, decode_stream, encode_stream, fixture, options};
use crate::model::{
    ChatRequest, ChatResponse, FinishReason, ImageSource, MAX_TOOL_NAME, Message, NameMap, Part,
    Reasoning, ResponseBuilder, Role, StreamEvent, Tool, ToolCall, ToolChoice, ToolResult,
    ToolResultContent, Usage,
};
use crate::openai_responses::{
    StreamEncoder, decode_request, decode_response, encode_request, encode_response,
};

fn call(id: &str, name: &str, arguments: &str) -> Part {
    Part::ToolCall(ToolCall {
        id: id.to_owned(),
        name: name.to_owned(),
        arguments: arguments.to_owned(),
        signature: None,
    })
}

fn result(call_id: &str, text: &str) -> Part {
    Part::ToolResult(ToolResult {
        call_id: call_id.to_owned(),
        name: None,
        content: vec![ToolResultContent::Text {
            text: text.to_owned(),
        }],
        is_error: false,
    })
}

fn sse(events: &[Value]) -> Vec<u8> {
    events
        .iter()
        .map(|event| {
            format!(
                "event: {}\ndata: {event}\n\n",
                event["type"].as_str().unwrap()
            )
        })
        .collect::<String>()
        .into_bytes()
}

fn events_of(parsed: &[Value]) -> Vec<&str> {
    parsed
        .iter()
        .map(|event| event["event"].as_str().unwrap())
        .collect()
}

#[test]
fn pitfall_1_every_event_line_matches_its_type_and_data_is_one_line() {
    let events = [
        StreamEvent::ReasoningDelta {
            text: "line one\nline two".to_owned(),
        },
        StreamEvent::TextDelta {
            text: "a\r\nb\n\nc".to_owned(),
        },
        StreamEvent::ToolCallStart {
            index: 0,
            id: "call_1".to_owned(),
            name: "f".to_owned(),
            signature: None,
        },
        StreamEvent::ToolCallArgs {
            index: 0,
            delta: "{\"text\":\"x\\ny\"}".to_owned(),
        },
        StreamEvent::ToolCallEnd { index: 0 },
        StreamEvent::Finish(FinishReason::ToolCalls),
    ];
    // `parse_sse` asserts the `event:` line equals `data.type` and each data is one line.
    let parsed = checked(&encode_stream(&events, options()));
    assert_eq!(parsed.len(), 19);
}

#[test]
fn pitfall_3_tool_calls_override_the_stated_finish() {
    // Upstream says `completed` (or even `incomplete`) next to a function call.
    let body = json!({
        "id": "resp_1", "model": "gpt-5", "status": "incomplete",
        "incomplete_details": { "reason": "max_output_tokens" },
        "output": [{ "type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f", "arguments": "{}" }],
    });
    let response = decode_response(body.to_string().as_bytes(), &NameMap::default()).unwrap();
    assert_eq!(response.finish, FinishReason::ToolCalls);
    let events = decode_fixture("stream_xai_complete_arguments.sse");
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Finish(FinishReason::ToolCalls))
    );
    // A client stream whose upstream said "end turn" after a call still completes normally.
    let events = [
        StreamEvent::ToolCallStart {
            index: 0,
            id: "call_1".to_owned(),
            name: "f".to_owned(),
            signature: None,
        },
        StreamEvent::ToolCallEnd { index: 0 },
        StreamEvent::Finish(FinishReason::MaxTokens),
    ];
    let parsed = checked(&encode_stream(&events, options()));
    assert_eq!(parsed.last().unwrap()["event"], "response.completed");
}

#[test]
fn pitfall_4_tool_indices_count_calls_not_output_items() {
    // Output items 0 (reasoning) and 1 (message) come first; the calls at 2 and 3 are tool
    // calls 0 and 1.
    let starts: Vec<(u32, String)> = decode_fixture("stream_reasoning_tool_calls.sse")
        .into_iter()
        .filter_map(|event| match event {
            StreamEvent::ToolCallStart { index, id, .. } => Some((index, id)),
            _ => None,
        })
        .collect();
    assert_eq!(
        starts,
        [(0, "call_A1".to_owned()), (1, "call_B2".to_owned())]
    );
}

#[test]
fn pitfall_5_arguments_and_text_only_in_done_events() {
    let events = decode_fixture("stream_arguments_at_done.sse");
    assert_eq!(
        events,
        vec![
            StreamEvent::Start {
                id: "resp_d1".to_owned(),
                model: "gpt-5".to_owned(),
            },
            StreamEvent::TextDelta {
                text: "Reading it.".to_owned(),
            },
            StreamEvent::ToolCallStart {
                index: 0,
                id: "call_d1".to_owned(),
                name: "read_file".to_owned(),
                signature: None,
            },
            StreamEvent::ToolCallArgs {
                index: 0,
                delta: "{\"path\":\"x.rs\"}".to_owned(),
            },
            StreamEvent::ToolCallEnd { index: 0 },
            StreamEvent::ToolCallStart {
                index: 1,
                id: "call_d2".to_owned(),
                name: "list_dir".to_owned(),
                signature: None,
            },
            StreamEvent::ToolCallArgs {
                index: 1,
                delta: "{\"dir\":\".\"}".to_owned(),
            },
            StreamEvent::ToolCallEnd { index: 1 },
            StreamEvent::Usage(Usage {
                input: 50,
                output: 30,
                ..Usage::default()
            }),
            StreamEvent::Finish(FinishReason::ToolCalls),
        ]
    );
}

#[test]
fn pitfall_5_a_whole_call_in_one_delta_and_a_partial_one_completed_at_done() {
    let events = decode_stream(
        &sse(&[
            json!({ "type": "response.output_item.added", "output_index": 0,
                    "item": { "type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f", "arguments": "" } }),
            json!({ "type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 0,
                    "delta": "{\"a\":1}" }),
            json!({ "type": "response.output_item.added", "output_index": 1,
                    "item": { "type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "g", "arguments": "" } }),
            json!({ "type": "response.function_call_arguments.delta", "item_id": "fc_2", "output_index": 1,
                    "delta": "{\"b\":" }),
            json!({ "type": "response.function_call_arguments.done", "item_id": "fc_2", "output_index": 1,
                    "arguments": "{\"b\":2}" }),
            json!({ "type": "response.completed", "response": { "id": "r", "model": "m", "status": "completed" } }),
        ]),
        &NameMap::default(),
    );
    let reply = build(&events);
    assert_eq!(
        reply.parts,
        vec![
            call("call_1", "f", "{\"a\":1}"),
            call("call_2", "g", "{\"b\":2}")
        ]
    );
}

#[test]
fn pitfall_6_block_transitions_thinking_text_tool_use_tool_use() {
    let reply = ChatResponse {
        id: "x".to_owned(),
        model: "m".to_owned(),
        created: 0,
        parts: vec![
            Part::Reasoning(Reasoning {
                text: "Think.".to_owned(),
                ..Reasoning::default()
            }),
            Part::Text {
                text: "Text.".to_owned(),
            },
            call("call_1", "a", "{}"),
            call("call_2", "b", "{\"x\":1}"),
        ],
        finish: FinishReason::ToolCalls,
        usage: Usage::default(),
    };
    let parsed = checked(&encode_stream(&ResponseBuilder::events(&reply), options()));
    let kinds = events_of(&parsed);
    assert_eq!(
        kinds
            .iter()
            .filter(|kind| **kind == "response.created")
            .count(),
        1
    );
    let added: Vec<(u64, &str)> = parsed
        .iter()
        .filter(|event| event["event"] == "response.output_item.added")
        .map(|event| {
            let data = &event["data"];
            (
                data["output_index"].as_u64().unwrap(),
                data["item"]["type"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        added,
        [
            (0, "reasoning"),
            (1, "message"),
            (2, "function_call"),
            (3, "function_call")
        ],
        "one item per block, dense indices, one start per tool call, no empty text item"
    );
    // No thinking inside the text item: the reasoning item is done before the message opens.
    let reasoning_done = kinds
        .iter()
        .position(|kind| *kind == "response.reasoning_summary_part.done");
    let message_added = parsed.iter().position(|event| {
        event["event"] == "response.output_item.added" && event["data"]["item"]["type"] == "message"
    });
    assert!(reasoning_done < message_added);
}

/// Checks one §6.2 row from the upstream side: a whole response and a stream ending in it
/// both decode to `expected`.
fn finish_row(status: &str, reason: Option<&str>, output: Value, expected: FinishReason) {
    let response = json!({
        "id": "resp_1", "model": "m", "status": status, "output": output,
        "incomplete_details": reason.map(|reason| json!({ "reason": reason })),
    });
    let whole = decode_response(response.to_string().as_bytes(), &NameMap::default())
        .unwrap()
        .finish;
    let kind = if status == "incomplete" {
        "response.incomplete"
    } else {
        "response.completed"
    };
    let streamed = decode_stream(
        &sse(&[json!({ "type": kind, "response": response })]),
        &NameMap::default(),
    );
    assert_eq!(
        (whole, streamed.last()),
        (expected, Some(&StreamEvent::Finish(expected))),
        "{status} {reason:?}"
    );
}

/// What a canonical finish reason looks like to a Responses client, whole and streamed.
fn encoded_finish(finish: FinishReason) -> (Value, Value, Value) {
    let reply = ChatResponse {
        id: "resp_1".to_owned(),
        model: "m".to_owned(),
        created: 0,
        parts: vec![Part::Text {
            text: "x".to_owned(),
        }],
        finish,
        usage: Usage::default(),
    };
    let whole = encode_response(&reply, "m");
    let parsed = checked(&encode_stream(&ResponseBuilder::events(&reply), options()));
    let last = parsed.last().unwrap();
    assert_eq!(last["data"]["response"]["status"], whole["status"]);
    assert_eq!(
        last["data"]["response"]["incomplete_details"],
        whole["incomplete_details"]
    );
    (
        whole["status"].clone(),
        whole["incomplete_details"].clone(),
        last["event"].clone(),
    )
}

fn text_output() -> Value {
    json!([{ "type": "message", "id": "m", "role": "assistant",
             "content": [{ "type": "output_text", "text": "x" }] }])
}

#[test]
fn pitfall_9_finish_natural_end_and_stop_sequence() {
    finish_row("completed", None, text_output(), FinishReason::EndTurn);
    for finish in [FinishReason::EndTurn, FinishReason::StopSequence] {
        assert_eq!(
            encoded_finish(finish),
            (json!("completed"), Value::Null, json!("response.completed"))
        );
    }
}

#[test]
fn pitfall_9_finish_output_limit() {
    finish_row(
        "incomplete",
        Some("max_output_tokens"),
        text_output(),
        FinishReason::MaxTokens,
    );
    assert_eq!(
        encoded_finish(FinishReason::MaxTokens),
        (
            json!("incomplete"),
            json!({ "reason": "max_output_tokens" }),
            json!("response.incomplete")
        )
    );
}

#[test]
fn pitfall_9_finish_tool_calls() {
    let output = json!([{ "type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f", "arguments": "{}" }]);
    finish_row("completed", None, output, FinishReason::ToolCalls);
    assert_eq!(
        encoded_finish(FinishReason::ToolCalls),
        (json!("completed"), Value::Null, json!("response.completed"))
    );
}

#[test]
fn pitfall_9_finish_filtered_or_refused() {
    finish_row(
        "incomplete",
        Some("content_filter"),
        text_output(),
        FinishReason::ContentFilter,
    );
    let refusal = json!([{ "type": "message", "id": "m", "role": "assistant",
                           "content": [{ "type": "refusal", "refusal": "No." }] }]);
    finish_row("completed", None, refusal, FinishReason::ContentFilter);
    assert_eq!(
        encoded_finish(FinishReason::ContentFilter),
        (
            json!("incomplete"),
            json!({ "reason": "content_filter" }),
            json!("response.incomplete")
        )
    );
}

#[test]
fn pitfall_9_finish_context_overflow() {
    finish_row(
        "incomplete",
        None,
        text_output(),
        FinishReason::ContextOverflow,
    );
    assert_eq!(
        encoded_finish(FinishReason::ContextOverflow),
        (
            json!("incomplete"),
            Value::Null,
            json!("response.incomplete")
        )
    );
}

#[test]
fn pitfall_9_finish_server_tool_pause_and_malformed_call_have_no_responses_form() {
    for finish in [FinishReason::PauseTurn, FinishReason::MalformedToolCall] {
        assert_eq!(
            encoded_finish(finish),
            (json!("completed"), Value::Null, json!("response.completed"))
        );
    }
}

#[test]
fn pitfall_9_usage_responses_to_canonical_and_back() {
    let wire = json!({
        "input_tokens": 1200,
        "input_tokens_details": { "cached_tokens": 1000, "cache_write_tokens": 50 },
        "output_tokens": 300,
        "output_tokens_details": { "reasoning_tokens": 256 },
        "total_tokens": 1500,
    });
    let usage = crate::openai_responses::usage_from_wire(&wire);
    assert_eq!(
        usage,
        Usage {
            input: 150,
            cache_read: 1000,
            cache_write: 50,
            output: 300,
            reasoning: 256,
        }
    );
    assert_eq!(crate::openai_responses::usage_to_wire(&usage), wire);
}

#[test]
fn pitfall_9_usage_anthropic_counts_become_responses_totals() {
    // Anthropic: input 18 excludes cache read 100 and cache write 20; output 64 includes
    // thinking. Responses: input_tokens counts all 138.
    let usage = Usage {
        input: 18,
        cache_read: 100,
        cache_write: 20,
        output: 64,
        reasoning: 0,
    };
    assert_eq!(
        crate::openai_responses::usage_to_wire(&usage),
        json!({
            "input_tokens": 138,
            "input_tokens_details": { "cached_tokens": 100, "cache_write_tokens": 20 },
            "output_tokens": 64,
            "output_tokens_details": { "reasoning_tokens": 0 },
            "total_tokens": 202,
        })
    );
}

#[test]
fn pitfall_9_usage_that_leaves_reasoning_out_of_output_is_corrected() {
    // xAI-style counting: total = input + output + reasoning.
    let wire = json!({
        "input_tokens": 100, "output_tokens": 20,
        "output_tokens_details": { "reasoning_tokens": 80 }, "total_tokens": 200,
    });
    let usage = crate::openai_responses::usage_from_wire(&wire);
    assert_eq!(
        (usage.output, usage.reasoning, usage.total()),
        (100, 80, 200)
    );
}

#[test]
fn pitfall_10_deltas_keyed_by_item_id_reach_the_right_call_id() {
    let reply = build(&decode_fixture("stream_parallel_interleaved.sse"));
    assert_eq!(
        reply.parts,
        vec![
            call("call_one", "read_file", "{\"path\":\"a.rs\"}"),
            call("call_two", "grep", "{\"pattern\":\"fn main\"}"),
        ]
    );
}

#[test]
fn pitfall_11_interleaved_outputs_group_after_the_assistant_turn() {
    let request = decode_request(&fixture("request_interleaved_outputs.json")).unwrap();
    let reasoning = |id: &str, data: &str| {
        Part::Reasoning(Reasoning {
            encrypted: Some(data.to_owned()),
            id: Some(id.to_owned()),
            ..Reasoning::default()
        })
    };
    assert_eq!(
        request.messages,
        vec![
            Message::text(Role::User, "Weather in Paris and Oslo?"),
            Message {
                role: Role::Assistant,
                parts: vec![
                    reasoning("rs_w1", "enc-w1"),
                    call("call_paris", "get_weather", "{\"city\":\"Paris\"}"),
                    call("call_oslo", "get_weather", "{\"city\":\"Oslo\"}"),
                ],
            },
            Message {
                role: Role::User,
                parts: vec![result("call_paris", "18C"), result("call_oslo", "7C")],
            },
            Message::text(Role::Assistant, "Paris 18C, Oslo 7C."),
            Message::text(Role::User, "And Rome?"),
            // A new reasoning item starts a new turn: these calls are sequential.
            Message {
                role: Role::Assistant,
                parts: vec![
                    reasoning("rs_w2", "enc-w2"),
                    call("call_rome", "get_weather", "{\"city\":\"Rome\"}"),
                ],
            },
            Message {
                role: Role::User,
                parts: vec![result("call_rome", "25C")],
            },
            Message {
                role: Role::Assistant,
                parts: vec![
                    reasoning("rs_w3", "enc-w3"),
                    call("call_rome_2", "get_forecast", "{\"city\":\"Rome\"}"),
                ],
            },
            Message {
                role: Role::User,
                parts: vec![result("call_rome_2", "sunny")],
            },
        ]
    );
}

/// Reasoning items of an encoded request: their encrypted content.
fn replayed_reasoning(body: &Value) -> Vec<Value> {
    body["input"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|item| item["type"] == "reasoning")
        .cloned()
        .collect()
}

#[test]
fn pitfall_14_encrypted_reasoning_survives_a_store_false_tool_loop() {
    let tools = vec![Tool {
        name: "read_file".to_owned(),
        description: None,
        parameters: json!({ "type": "object" }).into(),
        strict: None,
    }];
    // Turn 1 asks for reasoning: the upstream is asked for encrypted content.
    let mut request = ChatRequest {
        model: "gpt-5".to_owned(),
        messages: vec![Message::text(Role::User, "Fix src/lib.rs")],
        tools,
        params: crate::model::Params {
            reasoning: Some(crate::model::ReasoningConfig::Effort(
                crate::model::Effort::Medium,
            )),
            ..Default::default()
        },
        ..ChatRequest::default()
    };
    let turn1 = encode_request(&request);
    assert_eq!(
        (&turn1["store"], &turn1["include"]),
        (&json!(false), &json!(["reasoning.encrypted_content"]))
    );

    // Any client (say Anthropic's): the reply's parts go into the history as they are.
    let reply = build(&decode_fixture("stream_reasoning_tool_calls.sse"));
    request.messages.push(Message {
        role: Role::Assistant,
        parts: reply.parts.clone(),
    });
    request.messages.push(Message {
        role: Role::User,
        parts: vec![
            result("call_A1", "pub fn add() {}"),
            result("call_B2", "lib.rs"),
        ],
    });
    request.params.reasoning = None;
    let turn2 = encode_request(&request);
    assert_eq!(turn2["store"], false);
    assert_eq!(turn2["include"], json!(["reasoning.encrypted_content"]));
    let expected_item = json!({
        "type": "reasoning",
        "summary": [{ "type": "summary_text",
                      "text": "**Planning**\n\nNeed the file.\n\nAlso list the directory." }],
        "encrypted_content": "gAAAAABo-encrypted-r1",
    });
    assert_eq!(replayed_reasoning(&turn2), vec![expected_item.clone()]);
    let kinds: Vec<&str> = turn2["input"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "message",
            "reasoning",
            "message",
            "function_call",
            "function_call",
            "function_call_output",
            "function_call_output"
        ]
    );
    assert!(
        !turn2.to_string().contains("\"id\""),
        "no item ids without stored state"
    );

    // A Responses client: it replays the output items corvid streamed to it.
    let mut encoder = StreamEncoder::new(options());
    let mut bytes = Vec::new();
    for event in ResponseBuilder::events(&reply) {
        encoder.encode(&event, &mut bytes);
    }
    encoder.finish(&mut bytes);
    let parsed = checked(&String::from_utf8(bytes).unwrap());
    let mut input = parsed.last().unwrap()["data"]["response"]["output"]
        .as_array()
        .unwrap()
        .clone();
    input.insert(0, json!({ "role": "user", "content": "Fix src/lib.rs" }));
    input.push(json!({ "type": "function_call_output", "call_id": "call_A1", "output": "pub fn add() {}" }));
    input.push(json!({ "type": "function_call_output", "call_id": "call_B2", "output": "lib.rs" }));
    let client_body = json!({ "model": "gpt-5", "input": input, "store": false });
    let decoded = decode_request(client_body.to_string().as_bytes()).unwrap();
    assert_eq!(
        replayed_reasoning(&encode_request(&decoded)),
        vec![expected_item]
    );
}

#[test]
fn pitfall_14_signed_anthropic_thinking_survives_a_responses_client_tool_loop() {
    let thinking = Reasoning {
        text: "Need the file.".to_owned(),
        signature: Some("EpcBCkgIBh".to_owned()),
        ..Reasoning::default()
    };
    let reply = ChatResponse {
        id: "msg_01".to_owned(),
        model: "claude-sonnet-4-5".to_owned(),
        created: 0,
        parts: vec![
            Part::Reasoning(thinking.clone()),
            call("toolu_01", "read_file", "{}"),
        ],
        finish: FinishReason::ToolCalls,
        usage: Usage::default(),
    };
    let replay = |output: &Value| {
        let mut input = output.as_array().unwrap().clone();
        input.push(json!({ "type": "function_call_output", "call_id": "toolu_01", "output": "x" }));
        decode_request(
            json!({ "model": "m", "input": input })
                .to_string()
                .as_bytes(),
        )
        .unwrap()
    };
    // Streamed to the client, and whole.
    let parsed = checked(&encode_stream(&ResponseBuilder::events(&reply), options()));
    let streamed = replay(&parsed.last().unwrap()["data"]["response"]["output"]);
    let whole = replay(&encode_response(&reply, "m")["output"]);
    for (request, id) in [(streamed, "rs_client1_0"), (whole, "rs_msg_01_0")] {
        assert_eq!(
            request.messages[0].parts,
            vec![
                Part::Reasoning(Reasoning {
                    id: Some(id.to_owned()),
                    ..thinking.clone()
                }),
                call("toolu_01", "read_file", "{}"),
            ]
        );
        // An OpenAI upstream never sees it.
        let body = encode_request(&request).to_string();
        assert!(
            !body.contains("EpcBCkgIBh") && !body.contains("\"reasoning\""),
            "{body}"
        );
    }
}

#[test]
fn pitfall_14_anthropic_redacted_thinking_survives_a_responses_client_and_never_reaches_openai() {
    let redacted = Reasoning {
        encrypted: Some("EmwKAhgBEgy3va3pzix".to_owned()),
        ..Reasoning::default()
    };
    let reply = ChatResponse {
        id: "msg_02".to_owned(),
        model: "claude-sonnet-4-5".to_owned(),
        created: 0,
        parts: vec![
            Part::Reasoning(redacted.clone()),
            call("toolu_02", "ls", "{}"),
        ],
        finish: FinishReason::ToolCalls,
        usage: Usage::default(),
    };
    let parsed = checked(&encode_stream(&ResponseBuilder::events(&reply), options()));
    let mut input = parsed.last().unwrap()["data"]["response"]["output"]
        .as_array()
        .unwrap()
        .clone();
    input.push(json!({ "type": "function_call_output", "call_id": "toolu_02", "output": "a b" }));
    let request = decode_request(
        json!({ "model": "m", "input": input })
            .to_string()
            .as_bytes(),
    )
    .unwrap();
    assert_eq!(
        request.messages[0].parts,
        vec![Part::Reasoning(redacted), call("toolu_02", "ls", "{}")]
    );
    assert!(replayed_reasoning(&encode_request(&request)).is_empty());
}

#[test]
fn pitfall_14_reasoning_items_replayed_without_ids_still_go_back() {
    // Codex does not send item ids; its encrypted reasoning is still Responses'.
    let body = json!({
        "model": "gpt-5",
        "input": [
            { "role": "user", "content": "Fix it" },
            { "type": "reasoning", "summary": [], "encrypted_content": "gAAAAAB-codex" },
            { "type": "function_call", "call_id": "call_1", "name": "f", "arguments": "{}" },
            { "type": "function_call_output", "call_id": "call_1", "output": "ok" },
        ],
    });
    let request = decode_request(body.to_string().as_bytes()).unwrap();
    assert_eq!(
        request.messages[1].parts[0],
        Part::Reasoning(Reasoning {
            encrypted: Some("gAAAAAB-codex".to_owned()),
            id: Some("rs_input1".to_owned()),
            ..Reasoning::default()
        })
    );
    assert_eq!(
        replayed_reasoning(&encode_request(&request)),
        vec![json!({ "type": "reasoning", "summary": [], "encrypted_content": "gAAAAAB-codex" })]
    );
}

#[test]
fn pitfall_15_strict_false_for_non_strict_schemas() {
    let strict_schema = json!({
        "type": "object",
        "properties": {
            "path": { "type": "string" },
            "opts": { "type": "object", "properties": { "a": { "type": "integer" } },
                      "required": ["a"], "additionalProperties": false },
        },
        "required": ["path", "opts"],
        "additionalProperties": false,
    });
    let mut nested_loose = strict_schema.clone();
    nested_loose["properties"]["opts"]["additionalProperties"] = json!(true);
    let mut optional_property = strict_schema.clone();
    optional_property["required"] = json!(["path"]);
    let rows = [
        (Some(true), strict_schema.clone(), true),
        (None, strict_schema.clone(), false),
        (Some(false), strict_schema, false),
        (Some(true), nested_loose, false),
        (Some(true), optional_property, false),
        (
            Some(true),
            json!({ "type": "object", "properties": { "p": { "type": "string" } } }),
            false,
        ),
    ];
    for (strict, parameters, expected) in rows {
        let request = ChatRequest {
            tools: vec![Tool {
                name: "t".to_owned(),
                description: None,
                parameters: parameters.clone().into(),
                strict,
            }],
            ..ChatRequest::default()
        };
        let body = encode_request(&request);
        assert_eq!(
            body["tools"][0]["strict"], expected,
            "{strict:?} {parameters}"
        );
    }
}

#[test]
fn pitfall_15_a_long_mcp_tool_name_is_shortened_and_restored() {
    let long = format!("mcp__{}__search", "server".repeat(14));
    assert!(long.len() > 90);
    let tools = vec![Tool {
        name: long.clone(),
        description: None,
        parameters: json!({ "type": "object" }).into(),
        strict: None,
    }];
    let names = NameMap::new(&tools);
    let wire = names.wire(&long);
    assert_eq!(wire.len(), MAX_TOOL_NAME);
    let request = ChatRequest {
        model: "gpt-5".to_owned(),
        messages: vec![Message {
            role: Role::Assistant,
            parts: vec![call("call_1", &long, "{}")],
        }],
        tools: tools.clone(),
        tool_choice: Some(ToolChoice::Named(long.clone())),
        ..ChatRequest::default()
    };
    let body = encode_request(&request);
    assert_eq!(body["tools"][0]["name"], wire.as_str());
    assert_eq!(
        body["tool_choice"],
        json!({ "type": "function", "name": wire })
    );
    assert_eq!(body["input"][0]["name"], wire.as_str());

    let item = json!({ "type": "function_call", "id": "fc_1", "call_id": "call_9", "name": wire, "arguments": "{}" });
    let whole = json!({ "id": "r", "model": "m", "status": "completed", "output": [item] });
    let reply = decode_response(whole.to_string().as_bytes(), &names).unwrap();
    assert_eq!(reply.parts, vec![call("call_9", &long, "{}")]);
    let streamed = decode_chunks(
        [sse(&[
            json!({ "type": "response.output_item.added", "output_index": 0, "item": item }),
            json!({ "type": "response.completed", "response": whole }),
        ])
        .as_slice()],
        &names,
    );
    assert_eq!(build(&streamed).parts, vec![call("call_9", &long, "{}")]);
}

#[test]
fn pitfall_18_data_url_images_keep_their_media_type() {
    let body = json!({
        "model": "gpt-5",
        "input": [{ "role": "user", "content": [
            { "type": "input_image", "image_url": "data:image/webp;base64,UklGRg==" },
        ] }],
    });
    let request = decode_request(body.to_string().as_bytes()).unwrap();
    let Part::Image(image) = &request.messages[0].parts[0] else {
        panic!("{:?}", request.messages);
    };
    assert_eq!(
        image.source,
        ImageSource::Base64 {
            media_type: "image/webp".to_owned(),
            data: "UklGRg==".to_owned(),
        }
    );
    assert_eq!(
        encode_request(&request)["input"][0]["content"][0],
        json!({ "type": "input_image", "image_url": "data:image/webp;base64,UklGRg==", "detail": "auto" })
    );
}

#[test]
fn pitfall_21_each_event_is_written_at_once() {
    // Encoder: a delta is on the wire as soon as it is encoded.
    let mut encoder = StreamEncoder::new(options());
    let mut out = Vec::new();
    encoder.encode(
        &StreamEvent::TextDelta {
            text: "first".to_owned(),
        },
        &mut out,
    );
    let written = String::from_utf8(out.clone()).unwrap();
    assert!(written.ends_with("\n\n") && written.contains("\"delta\":\"first\""));
    // Decoder: a delta comes out as soon as its line is complete, before the rest arrives.
    let bytes = fixture("stream_text.sse");
    let text = String::from_utf8(bytes.clone()).unwrap();
    let cut = text.find("\" there.\"").unwrap();
    let mut decoder = crate::openai_responses::StreamDecoder::new(NameMap::default());
    let mut events = Vec::new();
    decoder.feed(&bytes[..cut], &mut events);
    assert_eq!(
        events.last(),
        Some(&StreamEvent::TextDelta {
            text: "Hi".to_owned()
        })
    );
}

#[test]
fn pitfall_23_xai_arguments_complete_in_added_are_not_duplicated() {
    let reply = build(&decode_fixture("stream_xai_complete_arguments.sse"));
    assert_eq!(
        reply.parts,
        vec![call("call_12345", "read_file", "{\"path\":\"README.md\"}")]
    );
    // Even when deltas repeat them.
    let item = json!({ "type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f",
                       "arguments": "{\"a\":1}", "status": "completed" });
    let events = decode_stream(
        &sse(&[
            json!({ "type": "response.output_item.added", "output_index": 0, "item": item }),
            json!({ "type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 0, "delta": "{\"a\":1}" }),
            json!({ "type": "response.function_call_arguments.done", "item_id": "fc_1", "output_index": 0, "arguments": "{\"a\":1}" }),
            json!({ "type": "response.output_item.done", "output_index": 0, "item": item }),
            json!({ "type": "response.done", "response": { "status": "completed", "output": [item] } }),
        ]),
        &NameMap::default(),
    );
    assert_eq!(build(&events).parts, vec![call("call_1", "f", "{\"a\":1}")]);
}

#[test]
fn pitfall_23_response_done_is_tolerated() {
    // As the only terminal event…
    let events = decode_fixture("stream_xai_response_done.sse");
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Finish(FinishReason::EndTurn))
    );
    assert_eq!(
        build(&events).parts,
        vec![
            Part::Reasoning(Reasoning {
                encrypted: Some("xai-encrypted-blob".to_owned()),
                id: Some("rs_x2".to_owned()),
                ..Reasoning::default()
            }),
            Part::Text {
                text: "Done.".to_owned()
            },
        ]
    );
    // …and after `response.completed`, where it changes nothing.
    let events = decode_fixture("stream_xai_complete_arguments.sse");
    let finishes = events
        .iter()
        .filter(|event| matches!(event, StreamEvent::Finish(_)))
        .count();
    assert_eq!(finishes, 1);
}

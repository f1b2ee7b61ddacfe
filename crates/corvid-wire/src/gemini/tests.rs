//! Error mapping, the models list, the §6 tables and the §8 pitfalls that apply to Gemini.

use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::gemini::stream::tests::{decode_every_split, sse_chunks};
use crate::model::{
    ChatRequest, ErrorKind, Image, ImageSource, Message, NameMap, Part, ResponseBuilder, Role,
    StreamEvent, Tool, ToolCall, ToolResult, ToolResultContent, WireError,
};

/// A file of `tests/fixtures/gemini/`.
pub(crate) fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/gemini/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|error| panic!("{path}: {error}"))
}

fn decode_stream(bytes: &[u8], names: NameMap) -> Vec<StreamEvent> {
    let mut decoder = StreamDecoder::new(names);
    let mut events = Vec::new();
    decoder.feed(bytes, &mut events);
    decoder.finish(&mut events);
    events
}

fn encode_stream(events: &[StreamEvent]) -> Vec<u8> {
    let mut encoder = StreamEncoder::new(StreamOptions {
        model: "gemini-2.5-flash".into(),
    });
    let mut out = Vec::new();
    for event in events {
        encoder.encode(event, &mut out);
    }
    encoder.finish(&mut out);
    out
}

fn tool(name: &str, parameters: Value) -> Tool {
    Tool {
        name: name.into(),
        description: None,
        parameters: parameters.into(),
        strict: None,
    }
}

fn call(id: &str, name: &str, arguments: &str, signature: Option<&str>) -> Part {
    Part::ToolCall(ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
        signature: signature.map(str::to_owned),
    })
}

fn result(call_id: &str, text: &str, is_error: bool) -> Part {
    Part::ToolResult(ToolResult {
        call_id: call_id.into(),
        name: None,
        content: vec![ToolResultContent::Text { text: text.into() }],
        is_error,
    })
}

#[test]
fn models_list() {
    insta::assert_json_snapshot!(encode_models_list(&[
        ("gemini-2.5-pro", "Gemini 2.5 Pro"),
        ("claude-sonnet-4-5", "Claude Sonnet 4.5 (via corvid)"),
    ]));
}

#[test]
fn decode_error_keeps_the_message_and_maps_every_status() {
    let cases = [
        (400, "INVALID_ARGUMENT", ErrorKind::InvalidRequest),
        (400, "FAILED_PRECONDITION", ErrorKind::InvalidRequest),
        (401, "UNAUTHENTICATED", ErrorKind::Authentication),
        (403, "PERMISSION_DENIED", ErrorKind::Permission),
        (404, "NOT_FOUND", ErrorKind::NotFound),
        (429, "RESOURCE_EXHAUSTED", ErrorKind::RateLimited),
        (500, "INTERNAL", ErrorKind::Api),
        (503, "UNAVAILABLE", ErrorKind::Overloaded),
        (504, "DEADLINE_EXCEEDED", ErrorKind::Timeout),
        // A status that says nothing specific: the Google status decides.
        (500, "UNAVAILABLE", ErrorKind::Overloaded),
        (200, "RESOURCE_EXHAUSTED", ErrorKind::RateLimited),
    ];
    for (status, google, kind) in cases {
        let body = json!({"error": {"code": status, "message": format!("upstream says {google}"),
            "status": google, "details": []}});
        assert_eq!(
            decode_error(status, body.to_string().as_bytes()),
            WireError::new(kind, format!("upstream says {google}")).with_code(google),
            "{status} {google}"
        );
    }
}

#[test]
fn decode_error_reads_bodies_that_are_not_google_errors() {
    assert_eq!(
        decode_error(502, b"<html>Bad Gateway</html>\n"),
        WireError::new(ErrorKind::Overloaded, "<html>Bad Gateway</html>")
    );
    assert_eq!(
        decode_error(429, b""),
        WireError::new(ErrorKind::RateLimited, "Gemini answered HTTP 429")
    );
    assert_eq!(
        decode_error(400, br#"{"error":{"code":400}}"#),
        WireError::new(ErrorKind::InvalidRequest, "Gemini answered HTTP 400")
    );
}

#[test]
fn encode_error_gives_every_kind_a_google_status() {
    let kinds = [
        ErrorKind::InvalidRequest,
        ErrorKind::Authentication,
        ErrorKind::Permission,
        ErrorKind::NotFound,
        ErrorKind::RequestTooLarge,
        ErrorKind::RateLimited,
        ErrorKind::Overloaded,
        ErrorKind::Timeout,
        ErrorKind::Api,
    ];
    let encoded: Vec<(u16, Value)> = kinds
        .into_iter()
        .map(|kind| {
            encode_error(
                &WireError::new(kind, format!("{kind:?} happened"))
                    .with_code("some_other_dialects_code"),
            )
        })
        .collect();
    insta::assert_json_snapshot!(encoded);
}

#[test]
fn encode_error_keeps_an_upstream_google_status_of_the_same_kind() {
    let error = decode_error(
        400,
        br#"{"error":{"code":400,"message":"User location is not supported","status":"FAILED_PRECONDITION"}}"#,
    );
    assert_eq!(
        encode_error(&error),
        (
            400,
            json!({"error": {"code": 400, "message": "User location is not supported",
                "status": "FAILED_PRECONDITION"}})
        )
    );
    let mismatched = WireError::new(ErrorKind::RateLimited, "m").with_code("NOT_FOUND");
    assert_eq!(
        encode_error(&mismatched).1["error"]["status"],
        "RESOURCE_EXHAUSTED"
    );
}

#[test]
fn pitfall_01_every_chunk_is_one_data_line_with_a_candidate() {
    let bytes = encode_stream(&[
        StreamEvent::Start {
            id: "m".into(),
            model: "x".into(),
        },
        StreamEvent::TextDelta {
            text: "line one\nline two".into(),
        },
        StreamEvent::Finish(FinishReason::EndTurn),
    ]);
    let chunks = sse_chunks(&bytes);
    assert_eq!(chunks.len(), 2);
    for chunk in &chunks {
        assert_eq!(chunk["candidates"][0]["content"]["role"], "model");
        assert!(chunk["candidates"][0]["content"]["parts"].is_array());
        assert_eq!(chunk["candidates"][0]["index"], 0);
        assert_eq!(chunk["modelVersion"], "gemini-2.5-flash");
        assert_eq!(chunk["responseId"], "m");
    }
    assert_eq!(
        chunks[0]["candidates"][0]["content"]["parts"][0]["text"],
        "line one\nline two"
    );
}

#[test]
fn pitfall_03_stop_with_a_function_call_is_tool_calls() {
    let body = json!({"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": "read_file", "args": {"path": "src/lib.rs"}}, "thoughtSignature": "Cq0CAb"}
    ]}, "finishReason": "STOP", "index": 0}]});
    let response = decode_response(body.to_string().as_bytes(), &NameMap::default()).unwrap();
    assert_eq!(response.finish, FinishReason::ToolCalls);

    let events = decode_every_split(format!("data: {body}\r\n\r\n").as_bytes());
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Finish(FinishReason::ToolCalls))
    );
    // And the other way: a Gemini client sees STOP, as from Gemini itself.
    let bytes = encode_stream(&events);
    let chunks = sse_chunks(&bytes);
    assert_eq!(
        chunks.last().unwrap()["candidates"][0]["finishReason"],
        "STOP"
    );
}

#[test]
fn pitfall_05_a_whole_call_with_content_and_finish_in_one_chunk() {
    let body = concat!(
        "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[",
        "{\"text\":\"Let me look.\"},",
        "{\"functionCall\":{\"id\":\"fc_1\",\"name\":\"ls\",\"args\":{\"dir\":\".\"}}}",
        "]},\"finishReason\":\"STOP\",\"index\":0}],",
        "\"usageMetadata\":{\"promptTokenCount\":3,\"candidatesTokenCount\":2,\"totalTokenCount\":5}}\r\n\r\n",
    );
    let events = decode_every_split(body.as_bytes());
    let mut builder = ResponseBuilder::new();
    events.iter().for_each(|event| builder.push(event));
    let response = builder.finish().unwrap();
    assert_eq!(
        response.parts,
        vec![
            Part::Text {
                text: "Let me look.".into()
            },
            call("fc_1", "ls", r#"{"dir":"."}"#, None),
        ]
    );
    assert_eq!(response.finish, FinishReason::ToolCalls);
}

#[test]
fn pitfall_06_thinking_text_and_two_calls_stream_in_order() {
    let events = decode_every_split(&fixture("stream_thinking_tools.sse"));
    let chunks = sse_chunks(&encode_stream(&events));
    let parts: Vec<Value> = chunks
        .iter()
        .flat_map(|chunk| {
            chunk["candidates"][0]["content"]["parts"]
                .as_array()
                .unwrap()
                .clone()
        })
        .collect();
    let kinds: Vec<&str> = parts
        .iter()
        .map(|part| match part {
            _ if part.get("thought") == Some(&json!(true)) => "thought",
            _ if part.get("text").is_some() => "text",
            _ if part.get("functionCall").is_some() => "call",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["thought", "thought", "text", "call", "call"]);
    assert_eq!(
        parts[0]["text"], "**Planning** I need ",
        "no lost first token"
    );
    assert!(
        parts
            .iter()
            .all(|part| part.get("text") != Some(&json!("")))
    );
}

#[test]
fn pitfall_09_finish_reasons_follow_the_table() {
    let decoded = [
        ("STOP", FinishReason::EndTurn),
        ("MAX_TOKENS", FinishReason::MaxTokens),
        ("SAFETY", FinishReason::ContentFilter),
        ("RECITATION", FinishReason::ContentFilter),
        ("BLOCKLIST", FinishReason::ContentFilter),
        ("PROHIBITED_CONTENT", FinishReason::ContentFilter),
        ("SPII", FinishReason::ContentFilter),
        ("LANGUAGE", FinishReason::ContentFilter),
        ("IMAGE_SAFETY", FinishReason::ContentFilter),
        ("IMAGE_PROHIBITED_CONTENT", FinishReason::ContentFilter),
        ("IMAGE_RECITATION", FinishReason::ContentFilter),
        ("IMAGE_OTHER", FinishReason::ContentFilter),
        ("MALFORMED_FUNCTION_CALL", FinishReason::MalformedToolCall),
        ("UNEXPECTED_TOOL_CALL", FinishReason::MalformedToolCall),
        ("TOO_MANY_TOOL_CALLS", FinishReason::MalformedToolCall),
        ("OTHER", FinishReason::EndTurn),
        ("NO_IMAGE", FinishReason::EndTurn),
        ("FINISH_REASON_UNSPECIFIED", FinishReason::EndTurn),
    ];
    for (gemini, canonical) in decoded {
        let body = json!({"candidates": [{"content": {"parts": [{"text": "x"}]},
            "finishReason": gemini, "index": 0}]});
        let response = decode_response(body.to_string().as_bytes(), &NameMap::default()).unwrap();
        assert_eq!(response.finish, canonical, "{gemini}");
        let events = decode_stream(format!("data: {body}\n\n").as_bytes(), NameMap::default());
        assert_eq!(
            events.last(),
            Some(&StreamEvent::Finish(canonical)),
            "{gemini} streamed"
        );
    }
    let encoded = [
        (FinishReason::EndTurn, "STOP"),
        (FinishReason::StopSequence, "STOP"),
        (FinishReason::ToolCalls, "STOP"),
        (FinishReason::PauseTurn, "STOP"),
        (FinishReason::MaxTokens, "MAX_TOKENS"),
        (FinishReason::ContextOverflow, "MAX_TOKENS"),
        (FinishReason::ContentFilter, "SAFETY"),
        (FinishReason::MalformedToolCall, "MALFORMED_FUNCTION_CALL"),
    ];
    for (canonical, gemini) in encoded {
        let chunks = sse_chunks(&encode_stream(&[StreamEvent::Finish(canonical)]));
        assert_eq!(
            chunks[0]["candidates"][0]["finishReason"], gemini,
            "{canonical:?}"
        );
    }
}

#[test]
fn pitfall_09_usage_arithmetic_both_ways() {
    // Gemini → canonical: prompt includes cached, candidates exclude thoughts.
    let metadata = json!({"promptTokenCount": 1200, "cachedContentTokenCount": 1000,
        "candidatesTokenCount": 12, "thoughtsTokenCount": 88, "totalTokenCount": 1300});
    let usage = usage_from_gemini(&metadata);
    assert_eq!(
        usage,
        Usage {
            input: 200,
            cache_read: 1000,
            cache_write: 0,
            output: 100,
            reasoning: 88
        }
    );
    // The OpenAI view: completion = candidates + thoughts, prompt = promptTokenCount.
    assert_eq!(usage.total_input(), 1200);
    assert_eq!(usage.output, 12 + 88);
    assert_eq!(usage.total(), 1300);
    // Canonical → Gemini gives the same numbers back.
    assert_eq!(usage_to_gemini(&usage), metadata);
    // Anthropic-style usage (cache write excluded from input) → Gemini counts every input
    // token in promptTokenCount.
    let anthropic = Usage {
        input: 10,
        cache_read: 300,
        cache_write: 50,
        output: 40,
        reasoning: 0,
    };
    assert_eq!(
        usage_to_gemini(&anthropic),
        json!({"promptTokenCount": 360, "cachedContentTokenCount": 300,
            "candidatesTokenCount": 40, "totalTokenCount": 400})
    );
    // Tool-use prompt tokens count as input, so totalTokenCount is kept.
    let with_tools = usage_from_gemini(
        &json!({"promptTokenCount": 10, "toolUsePromptTokenCount": 5,
        "candidatesTokenCount": 2, "totalTokenCount": 17}),
    );
    assert_eq!(with_tools.total(), 17);
}

#[test]
fn pitfall_10_missing_ids_are_synthesised_stably() {
    let body = fixture("response_tool_calls.json");
    let whole = decode_response(&body, &NameMap::default()).unwrap();
    assert_eq!(
        whole,
        decode_response(&body, &NameMap::default()).unwrap(),
        "same reply, same ids"
    );
    let ids: Vec<String> = whole
        .parts
        .iter()
        .filter_map(|part| match part {
            Part::ToolCall(call) => Some(call.id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(ids.len(), 2);
    assert_ne!(ids[0], ids[1]);
    let anthropic_safe = |id: &str| {
        id.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    assert!(ids.iter().all(|id| anthropic_safe(id)), "{ids:?}");
    // Streamed, the same reply gets the same ids.
    let value: Value = serde_json::from_slice(&body).unwrap();
    let events = decode_stream(
        format!("data: {value}\r\n\r\n").as_bytes(),
        NameMap::default(),
    );
    let streamed: Vec<String> = events
        .iter()
        .filter_map(|event| match event {
            StreamEvent::ToolCallStart { id, .. } => Some(id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(streamed, ids);
    // Another reply making the same call gets another id.
    let mut other = value.clone();
    other["responseId"] = "g99".into();
    let other = decode_response(other.to_string().as_bytes(), &NameMap::default()).unwrap();
    assert!(matches!(&other.parts[1], Part::ToolCall(call) if call.id != ids[0]));

    // In requests, the ids of a history do not change when the history grows.
    let turn = json!({"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {}}}]});
    let answer = json!({"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {"result": "a"}}}]});
    let first = decode_request(
        json!({"contents": [turn, answer]}).to_string().as_bytes(),
        "m",
    )
    .unwrap();
    let second = decode_request(
        json!({"contents": [turn, answer, turn, answer]})
            .to_string()
            .as_bytes(),
        "m",
    )
    .unwrap();
    assert_eq!(first.messages[..], second.messages[..2]);
    assert_ne!(
        second.messages[0], second.messages[2],
        "a repeated call gets a new id"
    );
}

#[test]
fn pitfall_11_and_12_results_are_one_user_turn_named_and_wrapped() {
    let request = ChatRequest {
        tools: vec![tool("read", json!({})), tool("grep", json!({}))],
        messages: vec![
            Message::text(Role::User, "go"),
            Message {
                role: Role::Assistant,
                parts: vec![
                    call("call_1", "read", r#"{"p":"a"}"#, Some("sig")),
                    call("call_2", "grep", r#"{"q":"b"}"#, None),
                ],
            },
            // Results arrive as separate messages (OpenAI `tool` messages decoded one by one).
            Message {
                role: Role::User,
                parts: vec![result("call_2", "no match", true)],
            },
            Message {
                role: Role::User,
                parts: vec![result("call_1", "contents of a", false)],
            },
        ],
        ..ChatRequest::default()
    };
    let body = encode_request(&request);
    assert_eq!(body["contents"].as_array().unwrap().len(), 3);
    assert_eq!(
        body["contents"][2],
        json!({"role": "user", "parts": [
            {"functionResponse": {"name": "grep", "response": {"error": "no match"}}},
            {"functionResponse": {"name": "read", "response": {"result": "contents of a"}}}
        ]})
    );
}

#[test]
fn pitfall_13_signatures_return_unchanged_and_the_sentinel_fills_lost_ones() {
    // Turn N: Gemini streams two parallel calls; only the first carries a signature.
    let events = decode_every_split(&fixture("stream_thinking_tools.sse"));
    let mut builder = ResponseBuilder::new();
    events.iter().for_each(|event| builder.push(event));
    let reply = builder.finish().unwrap();
    let calls: Vec<ToolCall> = reply
        .parts
        .iter()
        .filter_map(|part| match part {
            Part::ToolCall(call) => Some(call.clone()),
            _ => None,
        })
        .collect();
    // Turn N+1, from any client: history with the reply and the results.
    let request = ChatRequest {
        messages: vec![
            Message::text(Role::User, "read both"),
            Message {
                role: Role::Assistant,
                parts: reply.parts.clone(),
            },
            Message {
                role: Role::User,
                parts: calls
                    .iter()
                    .map(|call| result(&call.id, "ok", false))
                    .collect(),
            },
            // An earlier-style turn from another provider: no signatures at all.
            Message {
                role: Role::Assistant,
                parts: vec![
                    call("toolu_x", "read_file", "{}", None),
                    call("toolu_y", "read_file", "{}", None),
                ],
            },
        ],
        ..ChatRequest::default()
    };
    let body = encode_request(&request);
    let model_turn = &body["contents"][1]["parts"];
    assert_eq!(model_turn[1]["thoughtSignature"], "CiQBSig==");
    assert!(
        model_turn[2].get("thoughtSignature").is_none(),
        "only the first parallel call carries one"
    );
    assert!(
        model_turn[0].get("thoughtSignature").is_none(),
        "text keeps none"
    );
    let foreign = &body["contents"][3]["parts"];
    assert_eq!(foreign[0]["thoughtSignature"], SKIP_SIGNATURE);
    assert!(foreign[1].get("thoughtSignature").is_none());
    // A Gemini client gets the signature on its functionCall part too.
    let chunks = sse_chunks(&encode_stream(&events));
    let signed: Vec<&Value> = chunks
        .iter()
        .flat_map(|chunk| {
            chunk["candidates"][0]["content"]["parts"]
                .as_array()
                .unwrap()
        })
        .filter(|part| part.get("thoughtSignature").is_some())
        .collect();
    assert_eq!(signed.len(), 1);
    assert_eq!(signed[0]["thoughtSignature"], "CiQBSig==");
}

/// Every key of every object in `value`, recursively, skipping property names.
fn schema_keywords(value: &Value, out: &mut Vec<String>) {
    if let Value::Object(map) = value {
        for (key, child) in map {
            out.push(key.clone());
            if key == "properties" {
                if let Value::Object(properties) = child {
                    properties
                        .values()
                        .for_each(|property| schema_keywords(property, out));
                }
            } else {
                schema_keywords(child, out);
            }
        }
    } else if let Value::Array(items) = value {
        items.iter().for_each(|item| schema_keywords(item, out));
    }
}

#[test]
fn pitfall_15_a_json_schema_becomes_what_gemini_accepts() {
    let parameters = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "count": {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 100},
            "name": {"type": ["string", "null"], "minLength": 1},
            "level": {"type": "integer", "enum": [1, 2, 3]},
            "mode": {"enum": ["fast", "slow"]},
            "nested": {"type": "object", "additionalProperties": false,
                "properties": {"flag": {"type": "boolean", "const": true}}}
        },
        "required": ["count"]
    });
    let request = ChatRequest {
        tools: vec![tool("tune", parameters)],
        ..ChatRequest::default()
    };
    let declaration = encode_request(&request)["tools"][0]["functionDeclarations"][0].clone();
    let mut keywords = Vec::new();
    schema_keywords(&declaration["parameters"], &mut keywords);
    for refused in [
        "$schema",
        "additionalProperties",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "const",
    ] {
        assert!(!keywords.iter().any(|k| k == refused), "{refused} left in");
    }
    insta::assert_json_snapshot!(declaration);
}

#[test]
fn pitfall_15_a_long_mcp_name_is_shortened_and_restored() {
    let long = format!("mcp__{}__search", "very_long_server_name_".repeat(4));
    assert!(long.len() > 64);
    let request = ChatRequest {
        tools: vec![tool(
            &long,
            json!({"type": "object", "properties": {"q": {"type": "string"}}}),
        )],
        tool_choice: Some(crate::model::ToolChoice::Named(long.clone())),
        messages: vec![Message {
            role: Role::Assistant,
            parts: vec![call("c1", &long, "{}", None)],
        }],
        ..ChatRequest::default()
    };
    let names = NameMap::new(&request.tools);
    let wire = names.wire(&long);
    assert!(wire.len() <= 64);
    let body = encode_request(&request);
    assert_eq!(body["tools"][0]["functionDeclarations"][0]["name"], wire);
    assert_eq!(
        body["toolConfig"]["functionCallingConfig"]["allowedFunctionNames"][0],
        wire
    );
    assert_eq!(
        body["contents"][0]["parts"][0]["functionCall"]["name"],
        wire
    );

    let reply = json!({"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": wire, "args": {"q": "x"}}}]}, "finishReason": "STOP", "index": 0}]});
    let whole = decode_response(reply.to_string().as_bytes(), &names).unwrap();
    assert!(matches!(&whole.parts[0], Part::ToolCall(call) if call.name == long));
    let events = decode_stream(format!("data: {reply}\n\n").as_bytes(), names);
    assert!(
        events
            .iter()
            .any(|event| matches!(event, StreamEvent::ToolCallStart { name, .. } if *name == long))
    );
}

#[test]
fn pitfall_17_stop_sequences_are_cut_to_five() {
    let request = ChatRequest {
        params: crate::model::Params {
            stop: (1..=7).map(|n| format!("STOP{n}")).collect(),
            ..crate::model::Params::default()
        },
        ..ChatRequest::default()
    };
    assert_eq!(
        encode_request(&request)["generationConfig"]["stopSequences"],
        json!(["STOP1", "STOP2", "STOP3", "STOP4", "STOP5"])
    );
}

#[test]
fn pitfall_18_images_are_inline_or_named() {
    let image = |source: ImageSource| {
        Part::Image(Image {
            source,
            detail: Some("high".into()),
        })
    };
    let request = ChatRequest {
        messages: vec![Message {
            role: Role::User,
            parts: vec![
                image(ImageSource::Base64 {
                    media_type: "image/png".into(),
                    data: "iVBORw0K".into(),
                }),
                image(ImageSource::Url {
                    url: "data:image/jpeg;base64,/9j/4AAQ".into(),
                }),
                image(ImageSource::Url {
                    url: "gs://bucket/a.webp".into(),
                }),
                image(ImageSource::Url {
                    url: "https://generativelanguage.googleapis.com/v1beta/files/abc".into(),
                }),
                image(ImageSource::Url {
                    url: "https://example.com/cat.png".into(),
                }),
            ],
        }],
        ..ChatRequest::default()
    };
    assert_eq!(
        encode_request(&request)["contents"][0]["parts"],
        json!([
            {"inlineData": {"mimeType": "image/png", "data": "iVBORw0K"}},
            {"inlineData": {"mimeType": "image/jpeg", "data": "/9j/4AAQ"}},
            {"fileData": {"mimeType": "image/webp", "fileUri": "gs://bucket/a.webp"}},
            {"fileData": {"fileUri": "https://generativelanguage.googleapis.com/v1beta/files/abc"}},
            {"text": "[image not included: https://example.com/cat.png]"}
        ])
    );
}

#[test]
fn pitfall_19_a_blocked_prompt_is_a_content_filter() {
    let whole = decode_response(&fixture("response_blocked.json"), &NameMap::default()).unwrap();
    assert_eq!(whole.finish, FinishReason::ContentFilter);
    assert_eq!(
        decode_every_split(&fixture("stream_blocked.sse")),
        vec![
            StreamEvent::Start {
                id: "b1".into(),
                model: "gemini-2.5-flash".into()
            },
            StreamEvent::Usage(Usage {
                input: 7,
                ..Usage::default()
            }),
            StreamEvent::Finish(FinishReason::ContentFilter),
        ]
    );
}

#[test]
fn pitfall_19_a_mid_stream_failure_is_an_error_event() {
    let events = decode_every_split(&fixture("stream_error.sse"));
    assert!(matches!(
        events.last(),
        Some(StreamEvent::Error(WireError {
            kind: ErrorKind::Overloaded,
            ..
        }))
    ));
    let events = decode_every_split(&fixture("stream_cut.sse"));
    assert!(matches!(events.last(), Some(StreamEvent::Error(_))));
}

#[test]
fn pitfall_20_other_dialects_leftovers_do_not_reach_gemini() {
    let mut extra = serde_json::Map::new();
    extra.insert("context_management".into(), json!({"edits": []}));
    extra.insert("output_config".into(), json!({"effort": "high"}));
    extra.insert("metadata".into(), json!({"user_id": "u"}));
    extra.insert(
        "tools".into(),
        json!([{"type": "web_search_20250305", "name": "web_search"}]),
    );
    let request = ChatRequest {
        messages: vec![Message::text(Role::User, "hi")],
        extra,
        ..ChatRequest::default()
    };
    assert_eq!(
        encode_request(&request),
        json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})
    );
}

#[test]
fn case_helpers() {
    assert_eq!(snake_case("systemInstruction"), "system_instruction");
    assert_eq!(camel_case("system_instruction"), "systemInstruction");
    assert_eq!(camel_case("cachedContent"), "cachedContent");
    assert_eq!(camel_case("_private"), "_private");
}

#[test]
fn pitfall_19_retry_delay_is_whole_seconds() {
    let body = |delay: &str| {
        json!({"error": {"code": 429, "message": "Quota exceeded", "status": "RESOURCE_EXHAUSTED",
        "details": [
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []},
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}
        ]}})
        .to_string()
    };
    assert_eq!(retry_after_seconds(body("27s").as_bytes()), Some(27));
    assert_eq!(retry_after_seconds(body("27.5s").as_bytes()), Some(28));
    assert_eq!(retry_after_seconds(body("0.000s").as_bytes()), Some(0));
    assert_eq!(retry_after_seconds(body("soon").as_bytes()), None);
    assert_eq!(
        retry_after_seconds(br#"{"error":{"code":429,"message":"m"}}"#),
        None
    );
}

use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::gemini::reply_call_id;
use crate::gemini::tests::fixture;
use crate::model::Tool;

fn decode(name: &str) -> ChatResponse {
    decode_response(&fixture(name), &NameMap::default()).unwrap()
}

#[test]
fn decodes_a_text_reply() {
    assert_eq!(
        decode("response_text.json"),
        ChatResponse {
            id: "g1".into(),
            model: "gemini-2.5-flash".into(),
            created: 0,
            parts: vec![Part::Text {
                text: "Hi there.".into()
            }],
            finish: FinishReason::EndTurn,
            usage: Usage {
                input: 9,
                output: 4,
                ..Usage::default()
            },
        }
    );
}

#[test]
fn decodes_parallel_tool_calls() {
    let first_args = r#"{"path":"a.rs"}"#;
    let second_args = r#"{"path":"b.rs"}"#;
    assert_eq!(
        decode("response_tool_calls.json"),
        ChatResponse {
            id: "g3".into(),
            model: "gemini-2.5-pro".into(),
            created: 0,
            parts: vec![
                Part::Text {
                    text: "Reading both.".into()
                },
                Part::ToolCall(ToolCall {
                    id: reply_call_id("g3", "read_file", first_args, 0),
                    name: "read_file".into(),
                    arguments: first_args.into(),
                    signature: Some("Cq0CAbSig==".into()),
                }),
                Part::ToolCall(ToolCall {
                    id: reply_call_id("g3", "read_file", second_args, 1),
                    name: "read_file".into(),
                    arguments: second_args.into(),
                    signature: None,
                }),
            ],
            finish: FinishReason::ToolCalls,
            usage: Usage {
                input: 52,
                cache_read: 0,
                cache_write: 0,
                output: 59,
                reasoning: 41,
            },
        }
    );
}

#[test]
fn decodes_thoughts_and_cached_usage() {
    assert_eq!(
        decode("response_thinking.json"),
        ChatResponse {
            id: "g4".into(),
            model: "gemini-2.5-flash".into(),
            created: 0,
            parts: vec![
                Part::Reasoning(Reasoning {
                    text: "**Weighing options** the user wants a haiku.".into(),
                    ..Reasoning::default()
                }),
                Part::Text {
                    text: "Autumn moonlight—a worm digs silently".into()
                },
            ],
            finish: FinishReason::MaxTokens,
            usage: Usage {
                input: 200,
                cache_read: 1000,
                cache_write: 0,
                output: 100,
                reasoning: 88,
            },
        }
    );
}

#[test]
fn decodes_a_blocked_prompt() {
    assert_eq!(
        decode("response_blocked.json"),
        ChatResponse {
            id: "g5".into(),
            model: "gemini-2.5-flash".into(),
            created: 0,
            parts: vec![],
            finish: FinishReason::ContentFilter,
            usage: Usage {
                input: 7,
                ..Usage::default()
            },
        }
    );
}

#[test]
fn shortened_names_are_restored_and_ids_kept() {
    let long = format!("mcp__{}__tool", "x".repeat(80));
    let names = NameMap::new(&[Tool {
        name: long.clone(),
        description: None,
        parameters: json!({}).into(),
        strict: None,
    }]);
    let body = json!({"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"id": "fc_9", "name": names.wire(&long), "args": {"a": 1}}}
    ]}, "finishReason": "STOP", "index": 0}]});
    let response = decode_response(body.to_string().as_bytes(), &names).unwrap();
    assert_eq!(
        response.parts,
        vec![Part::ToolCall(ToolCall {
            id: "fc_9".into(),
            name: long,
            arguments: r#"{"a":1}"#.into(),
            signature: None,
        })]
    );
}

#[test]
fn only_the_first_candidate_is_read() {
    let body = json!({"candidates": [
        {"content": {"parts": [{"text": "second"}]}, "finishReason": "STOP", "index": 1},
        {"content": {"parts": [{"text": "first"}]}, "finishReason": "STOP", "index": 0}
    ]});
    let response = decode_response(body.to_string().as_bytes(), &NameMap::default()).unwrap();
    assert_eq!(
        response.parts,
        vec![Part::Text {
            text: "first".into()
        }]
    );
}

#[test]
fn an_error_body_is_a_decode_error() {
    let body = br#"{"error":{"code":400,"message":"bad","status":"INVALID_ARGUMENT"}}"#;
    assert_eq!(
        decode_response(body, &NameMap::default()).unwrap_err(),
        DecodeError::field("error", "reports bad")
    );
    assert!(matches!(
        decode_response(b"not json", &NameMap::default()),
        Err(DecodeError::Json(_))
    ));
}

fn sample_response() -> ChatResponse {
    ChatResponse {
        id: "msg_01".into(),
        model: "claude-sonnet-4-5".into(),
        created: 1_700_000_000,
        parts: vec![
            Part::Reasoning(Reasoning {
                text: "Think.".into(),
                signature: Some("anthropic-only".into()),
                ..Reasoning::default()
            }),
            Part::Reasoning(Reasoning {
                encrypted: Some("opaque".into()),
                ..Reasoning::default()
            }),
            Part::Text {
                text: "Here.".into(),
            },
            Part::Text {
                text: String::new(),
            },
            Part::Image(Image {
                source: ImageSource::Base64 {
                    media_type: "image/png".into(),
                    data: "iVBORw0K".into(),
                },
                detail: None,
            }),
            Part::ToolCall(ToolCall {
                id: "toolu_1".into(),
                name: "read".into(),
                arguments: r#"{"p":"a"}"#.into(),
                signature: Some("gemini-sig".into()),
            }),
            Part::ToolCall(ToolCall {
                id: "toolu_2".into(),
                name: "ls".into(),
                arguments: String::new(),
                signature: None,
            }),
        ],
        finish: FinishReason::ToolCalls,
        usage: Usage {
            input: 20,
            cache_read: 100,
            cache_write: 5,
            output: 70,
            reasoning: 30,
        },
    }
}

#[test]
fn encodes_a_reply_for_a_gemini_client() {
    insta::assert_json_snapshot!(encode_response(&sample_response(), "gemini-2.5-pro"));
}

#[test]
fn an_encoded_reply_decodes_to_the_same_reply() {
    let mut response = sample_response();
    let body = encode_response(&response, "gemini-2.5-pro").to_string();
    let decoded = decode_response(body.as_bytes(), &NameMap::default()).unwrap();
    // What Gemini cannot carry: signatures of other providers, encrypted reasoning, empty
    // text, cache writes (counted as fresh input), the clock.
    response.parts = vec![
        Part::Reasoning(Reasoning {
            text: "Think.".into(),
            ..Reasoning::default()
        }),
        response.parts[2].clone(),
        response.parts[4].clone(),
        response.parts[5].clone(),
        Part::ToolCall(ToolCall {
            arguments: "{}".into(),
            ..match &response.parts[6] {
                Part::ToolCall(call) => call.clone(),
                other => panic!("{other:?}"),
            }
        }),
    ];
    response.model = "gemini-2.5-pro".into();
    response.created = 0;
    response.usage.input += response.usage.cache_write;
    response.usage.cache_write = 0;
    assert_eq!(decoded, response);
}

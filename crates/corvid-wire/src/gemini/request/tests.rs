use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::gemini::tests::fixture;
use crate::model::{Effort, Message, ToolResult};

fn decode(body: serde_json::Value) -> ChatRequest {
    decode_request(body.to_string().as_bytes(), "gemini-2.5-flash").unwrap()
}

fn text(role: Role, text: &str) -> Message {
    Message::text(role, text)
}

#[test]
fn decodes_a_full_request() {
    let request = decode_request(&fixture("request_full.json"), "models/gemini-2.5-pro").unwrap();
    let first = synthetic_call_id("read_file", r#"{"path":"src/lib.rs"}"#, 0);
    let second = synthetic_call_id("read_file", r#"{"path":"src/main.rs"}"#, 1);
    let expected = ChatRequest {
        model: "gemini-2.5-pro".into(),
        system: vec![
            "You are a coding assistant.".into(),
            "Answer tersely.".into(),
        ],
        messages: vec![
            Message {
                role: Role::User,
                parts: vec![
                    Part::Text {
                        text: "What is in this picture, and what does src/lib.rs say?".into(),
                    },
                    Part::Image(Image {
                        source: ImageSource::Base64 {
                            media_type: "image/png".into(),
                            data: "iVBORw0KGgo=".into(),
                        },
                        detail: None,
                    }),
                    Part::Image(Image {
                        source: ImageSource::Url {
                            url: "gs://corvid-test/cat.jpg".into(),
                        },
                        detail: None,
                    }),
                ],
            },
            Message {
                role: Role::Assistant,
                parts: vec![
                    Part::Reasoning(Reasoning {
                        text: "The user wants two files.".into(),
                        ..Reasoning::default()
                    }),
                    Part::Text {
                        text: "Reading both files.".into(),
                    },
                    Part::ToolCall(ToolCall {
                        id: first.clone(),
                        name: "read_file".into(),
                        arguments: r#"{"path":"src/lib.rs"}"#.into(),
                        signature: Some("CqwBAb3dSig1".into()),
                    }),
                    Part::ToolCall(ToolCall {
                        id: second.clone(),
                        name: "read_file".into(),
                        arguments: r#"{"path":"src/main.rs"}"#.into(),
                        signature: None,
                    }),
                ],
            },
            Message {
                role: Role::User,
                parts: vec![
                    Part::ToolResult(ToolResult {
                        call_id: first,
                        name: Some("read_file".into()),
                        content: vec![ToolResultContent::Text {
                            text: "pub fn add() {}".into(),
                        }],
                        is_error: false,
                    }),
                    Part::ToolResult(ToolResult {
                        call_id: second,
                        name: Some("read_file".into()),
                        content: vec![ToolResultContent::Text {
                            text: "No such file".into(),
                        }],
                        is_error: true,
                    }),
                ],
            },
            text(Role::Assistant, "lib.rs defines add; main.rs is missing."),
            text(Role::User, "Now list src."),
        ],
        tools: vec![
            Tool {
                name: "read_file".into(),
                description: Some("Read a file".into()),
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "description": "Path"},
                        "limit": {"type": ["integer", "null"]}
                    },
                    "required": ["path"]
                })
                .into(),
                strict: None,
            },
            Tool {
                name: "list_dir".into(),
                description: None,
                parameters: json!({
                    "type": "object",
                    "properties": {"dir": {"type": "string"}},
                    "additionalProperties": false
                })
                .into(),
                strict: None,
            },
        ],
        tool_choice: Some(ToolChoice::Named("list_dir".into())),
        params: Params {
            max_output_tokens: Some(1024),
            temperature: Some(0.2),
            top_p: Some(0.9),
            stop: vec!["END".into()],
            reasoning: Some(ReasoningConfig::Budget(2048)),
            parallel_tool_calls: None,
            response_format: Some(ResponseFormat::JsonSchema {
                name: "response".into(),
                schema: json!({"type": "object", "properties": {"answer": {"type": "string"}}}),
                strict: None,
            }),
        },
        stream: false,
        extra: json!({
            "tools": [{"googleSearch": {}}],
            "generationConfig": {"topK": 40},
            "safetySettings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}],
            "cachedContent": "cachedContents/abc123",
            "labels": {"team": "corvid"}
        })
        .as_object()
        .unwrap()
        .clone(),
    };
    assert_eq!(request, expected);
}

#[test]
fn snake_case_fields_are_read() {
    let request = decode_request(&fixture("request_snake_case.json"), "gemini-2.5-flash").unwrap();
    let expected = ChatRequest {
        model: "gemini-2.5-flash".into(),
        system: vec!["Be brief.".into()],
        messages: vec![Message {
            role: Role::User,
            parts: vec![
                Part::Text {
                    text: "Describe this.".into(),
                },
                Part::Image(Image {
                    source: ImageSource::Base64 {
                        media_type: "image/jpeg".into(),
                        data: "/9j/4AAQ".into(),
                    },
                    detail: None,
                }),
            ],
        }],
        params: Params {
            max_output_tokens: Some(64),
            stop: vec!["\n\n".into()],
            reasoning: Some(ReasoningConfig::Effort(Effort::Low)),
            ..Params::default()
        },
        extra: json!({
            "safetySettings": [{"category": "HARM_CATEGORY_HATE_SPEECH", "threshold": "BLOCK_ONLY_HIGH"}]
        })
        .as_object()
        .unwrap()
        .clone(),
        ..ChatRequest::default()
    };
    assert_eq!(request, expected);
}

#[test]
fn explicit_ids_are_kept_and_pair_calls_with_results() {
    let request = decode(json!({"contents": [
        {"role": "model", "parts": [
            {"functionCall": {"id": "fc-1", "name": "ls", "args": {}}},
            {"functionCall": {"id": "fc-2", "name": "ls", "args": {"all": true}}}
        ]},
        {"role": "user", "parts": [
            {"functionResponse": {"id": "fc-2", "name": "ls", "response": {"result": "b"}}},
            {"functionResponse": {"name": "ls", "response": {"result": "a"}}}
        ]}
    ]}));
    let ids: Vec<(&str, &str)> = request.messages[1]
        .parts
        .iter()
        .map(|part| match part {
            Part::ToolResult(result) => match &result.content[0] {
                ToolResultContent::Text { text } => (result.call_id.as_str(), text.as_str()),
                ToolResultContent::Image(_) => panic!("text expected"),
            },
            other => panic!("tool result expected, got {other:?}"),
        })
        .collect();
    // `fc-2` is answered by id, so the id-less answer goes to the unanswered `fc-1`.
    assert_eq!(ids, [("fc-2", "b"), ("fc-1", "a")]);
}

#[test]
fn responses_are_paired_with_the_oldest_unanswered_call_of_their_name() {
    let request = decode(json!({"contents": [
        {"role": "model", "parts": [
            {"functionCall": {"name": "read", "args": {"p": 1}}},
            {"functionCall": {"name": "grep", "args": {"q": "x"}}},
            {"functionCall": {"name": "read", "args": {"p": 2}}}
        ]},
        {"role": "user", "parts": [
            {"functionResponse": {"name": "read", "response": {"result": "one"}}},
            {"functionResponse": {"name": "read", "response": {"result": "two"}}},
            {"functionResponse": {"name": "grep", "response": {"result": "hit"}}}
        ]},
        {"role": "model", "parts": [{"functionCall": {"name": "read", "args": {"p": 1}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "read", "response": {"result": "again"}}}]}
    ]}));
    let call_ids: Vec<String> = request
        .messages
        .iter()
        .flat_map(|message| &message.parts)
        .filter_map(|part| match part {
            Part::ToolCall(call) => Some(call.id.clone()),
            _ => None,
        })
        .collect();
    let result_ids: Vec<String> = request
        .messages
        .iter()
        .flat_map(|message| &message.parts)
        .filter_map(|part| match part {
            Part::ToolResult(result) => Some(result.call_id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        call_ids,
        [
            synthetic_call_id("read", r#"{"p":1}"#, 0),
            synthetic_call_id("grep", r#"{"q":"x"}"#, 1),
            synthetic_call_id("read", r#"{"p":2}"#, 2),
            synthetic_call_id("read", r#"{"p":1}"#, 3),
        ]
    );
    assert_ne!(
        call_ids[0], call_ids[3],
        "the same call in a later turn gets its own id"
    );
    let expected = [&call_ids[0], &call_ids[2], &call_ids[1], &call_ids[3]];
    assert_eq!(result_ids.iter().collect::<Vec<_>>(), expected);
}

#[test]
fn response_objects_become_text_and_errors() {
    let request = decode(json!({"contents": [{"role": "user", "parts": [
        {"functionResponse": {"name": "a", "response": {"content": "pub fn add() {}"}}},
        {"functionResponse": {"name": "b", "response": {"error": {"code": 2}}}},
        {"functionResponse": {"name": "c", "response": {"result": "ok", "extra": 1}}},
        {"functionResponse": {"name": "d", "response": {"result": "shot"},
            "parts": [{"inlineData": {"mimeType": "image/png", "data": "AAAA"}}]}}
    ]}]}));
    let results: Vec<(Vec<ToolResultContent>, bool)> = request.messages[0]
        .parts
        .iter()
        .map(|part| match part {
            Part::ToolResult(result) => (result.content.clone(), result.is_error),
            other => panic!("tool result expected, got {other:?}"),
        })
        .collect();
    let text = |text: &str| ToolResultContent::Text { text: text.into() };
    assert_eq!(
        results,
        vec![
            (vec![text(r#"{"content":"pub fn add() {}"}"#)], false),
            (vec![text(r#"{"code":2}"#)], true),
            (vec![text(r#"{"result":"ok","extra":1}"#)], false),
            (
                vec![
                    text("shot"),
                    ToolResultContent::Image(Image {
                        source: ImageSource::Base64 {
                            media_type: "image/png".into(),
                            data: "AAAA".into()
                        },
                        detail: None
                    })
                ],
                false
            ),
        ]
    );
}

#[test]
fn thinking_config_variants() {
    let reasoning = |config: serde_json::Value| {
        decode(json!({"contents": [], "generationConfig": {"thinkingConfig": config}}))
    };
    assert_eq!(
        reasoning(json!({"thinkingBudget": 0})).params.reasoning,
        Some(ReasoningConfig::Disabled)
    );
    assert_eq!(
        reasoning(json!({"thinkingBudget": 512})).params.reasoning,
        Some(ReasoningConfig::Budget(512))
    );
    assert_eq!(
        reasoning(json!({"thinkingLevel": "HIGH"})).params.reasoning,
        Some(ReasoningConfig::Effort(Effort::High))
    );
    let dynamic = reasoning(json!({"thinkingBudget": -1, "includeThoughts": true}));
    assert_eq!(dynamic.params.reasoning, None);
    assert_eq!(
        dynamic.extra["generationConfig"],
        json!({"thinkingConfig": {"thinkingBudget": -1, "includeThoughts": true}}),
        "the dynamic budget is kept for a Gemini upstream"
    );
}

#[test]
fn tool_choice_modes() {
    let choice = |config: serde_json::Value| {
        decode(json!({"contents": [], "toolConfig": {"functionCallingConfig": config}})).tool_choice
    };
    assert_eq!(choice(json!({"mode": "AUTO"})), Some(ToolChoice::Auto));
    assert_eq!(choice(json!({"mode": "VALIDATED"})), Some(ToolChoice::Auto));
    assert_eq!(choice(json!({"mode": "NONE"})), Some(ToolChoice::None));
    assert_eq!(choice(json!({"mode": "ANY"})), Some(ToolChoice::Required));
    assert_eq!(
        choice(json!({"mode": "ANY", "allowedFunctionNames": ["a", "b"]})),
        Some(ToolChoice::Required)
    );
    assert_eq!(
        choice(json!({"mode": "ANY", "allowedFunctionNames": ["a"]})),
        Some(ToolChoice::Named("a".into()))
    );
    assert_eq!(choice(json!({})), None);
}

#[test]
fn response_formats() {
    let format = |config: serde_json::Value| {
        let request = decode(json!({"contents": [], "generationConfig": config}));
        (request.params.response_format, request.extra)
    };
    assert_eq!(
        format(json!({"responseMimeType": "application/json"})).0,
        Some(ResponseFormat::JsonObject)
    );
    assert_eq!(
        format(json!({"responseMimeType": "application/json",
            "responseJsonSchema": {"type": "object", "additionalProperties": false}}))
        .0,
        Some(ResponseFormat::JsonSchema {
            name: "response".into(),
            schema: json!({"type": "object", "additionalProperties": false}),
            strict: None
        })
    );
    assert_eq!(
        format(json!({"responseMimeType": "text/plain"})).0,
        Some(ResponseFormat::Text)
    );
    let (enum_format, extra) = format(json!({"responseMimeType": "text/x.enum",
        "responseSchema": {"type": "STRING", "enum": ["a", "b"]}}));
    assert_eq!(enum_format, None);
    assert_eq!(
        extra["generationConfig"],
        json!({"responseMimeType": "text/x.enum", "responseSchema": {"type": "STRING", "enum": ["a", "b"]}})
    );
}

#[test]
fn invalid_bodies_name_the_field() {
    let error = |body: &str| decode_request(body.as_bytes(), "m").unwrap_err();
    assert!(matches!(error("{"), DecodeError::Json(_)));
    assert_eq!(
        error("[]"),
        DecodeError::field("body", "must be a JSON object")
    );
    assert_eq!(
        error(r#"{"contents": {}}"#),
        DecodeError::field("contents", "must be an array")
    );
    assert_eq!(
        error(r#"{"contents": [{"role": "system", "parts": []}]}"#),
        DecodeError::field("contents[0].role", "must be `user` or `model`")
    );
    assert_eq!(
        error(r#"{"contents": [{"role": "model", "parts": [{"functionCall": {"args": {}}}]}]}"#),
        DecodeError::field("contents[0].parts[0].functionCall.name", "must be a string")
    );
    assert_eq!(
        error(r#"{"generationConfig": {"maxOutputTokens": -1}}"#),
        DecodeError::field(
            "generationConfig.maxOutputTokens",
            "must be a positive integer"
        )
    );
}

#[test]
fn roles_default_to_user_and_empty_parts_are_dropped() {
    let request = decode(json!({"contents": [
        {"parts": [{"text": "hi"}]},
        {"role": "function", "parts": [{"text": ""}]},
        {"role": "model", "parts": [{"text": "", "thought": true}, {"text": "yo"}]}
    ]}));
    assert_eq!(
        request.messages,
        vec![text(Role::User, "hi"), text(Role::Assistant, "yo"),]
    );
}

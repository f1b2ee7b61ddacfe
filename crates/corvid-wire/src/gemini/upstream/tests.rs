use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::gemini::decode_request;
use crate::gemini::tests::fixture;
use crate::model::{Effort, Message, Reasoning, Tool, ToolCall};

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

fn image(source: ImageSource) -> Image {
    Image {
        source,
        detail: None,
    }
}

/// What an Anthropic client (Claude Code) sends, decoded: foreign ids, no Gemini signatures,
/// signed thinking, JSON Schema tools, stop lists and a high effort.
fn claude_code_request() -> ChatRequest {
    ChatRequest {
        model: "gemini-2.5-pro".into(),
        system: vec![
            "You are Claude Code.".into(),
            String::new(),
            "Be careful.".into(),
        ],
        messages: vec![
            Message {
                role: Role::User,
                parts: vec![
                    Part::Text {
                        text: "Look at these and read the file.".into(),
                    },
                    Part::Image(image(ImageSource::Base64 {
                        media_type: "image/webp".into(),
                        data: "UklGRg==".into(),
                    })),
                    Part::Image(image(ImageSource::Url {
                        url: "https://example.com/diagram.png".into(),
                    })),
                    Part::Image(image(ImageSource::Url {
                        url: "gs://bucket/photo.JPG".into(),
                    })),
                ],
            },
            Message {
                role: Role::Assistant,
                parts: vec![
                    Part::Reasoning(Reasoning {
                        text: "I should read it.".into(),
                        signature: Some("EqQBAnthropicSig".into()),
                        ..Reasoning::default()
                    }),
                    Part::Text {
                        text: "Reading.".into(),
                    },
                    call("toolu_01A", "Read", r#"{"file_path":"/src/lib.rs"}"#, None),
                    call("toolu_01B", "mcp__github__search", r#"{"q":"add"}"#, None),
                    call("toolu_01C", "Bash", "", None),
                ],
            },
            Message {
                role: Role::User,
                parts: vec![
                    result("toolu_01A", "pub fn add() {}", false),
                    result("toolu_01B", r#"{"items":[1,2]}"#, false),
                    Part::ToolResult(ToolResult {
                        call_id: "toolu_01C".into(),
                        name: None,
                        content: vec![
                            ToolResultContent::Text {
                                text: "screenshot taken".into(),
                            },
                            ToolResultContent::Image(image(ImageSource::Base64 {
                                media_type: "image/png".into(),
                                data: "iVBORw0K".into(),
                            })),
                        ],
                        is_error: false,
                    }),
                ],
            },
            // A second user message in a row: one turn for Gemini.
            Message::text(Role::User, "Then fix it."),
        ],
        tools: vec![
            Tool {
                name: "Read".into(),
                description: Some("Reads a file".into()),
                parameters: json!({
                    "$schema": "http://json-schema.org/draft-07/schema#",
                    "type": "object",
                    "properties": {
                        "file_path": {"type": "string", "description": "Absolute path"},
                        "limit": {"type": ["number", "null"], "exclusiveMinimum": 0}
                    },
                    "required": ["file_path"],
                    "additionalProperties": false
                })
                .into(),
                strict: None,
            },
            Tool {
                name: "mcp__github__search".into(),
                description: None,
                parameters: json!({"type": "object", "properties": {"q": {"type": "string"}}})
                    .into(),
                strict: Some(true),
            },
            Tool {
                name: "Bash".into(),
                description: Some(String::new()),
                parameters: json!({"type": "object", "properties": {}}).into(),
                strict: None,
            },
        ],
        tool_choice: Some(ToolChoice::Named("Read".into())),
        params: Params {
            max_output_tokens: Some(32000),
            temperature: Some(1.0),
            top_p: None,
            stop: ["a", "b", "", "c", "d", "e", "f"]
                .map(str::to_owned)
                .to_vec(),
            reasoning: Some(ReasoningConfig::Effort(Effort::High)),
            parallel_tool_calls: Some(false),
            response_format: None,
        },
        stream: true,
        // Another dialect's leftovers never reach Gemini.
        extra: json!({
            "metadata": {"user_id": "u1"},
            "context_management": {"edits": []},
            "tools": [{"type": "web_search_20250305", "name": "web_search"}]
        })
        .as_object()
        .unwrap()
        .clone(),
    }
}

#[test]
fn encodes_a_claude_code_request() {
    insta::assert_json_snapshot!(encode_request(&claude_code_request()));
}

#[test]
fn a_gemini_request_round_trips() {
    let request = decode_request(&fixture("request_full.json"), "gemini-2.5-pro").unwrap();
    insta::assert_json_snapshot!(encode_request(&request));
}

#[test]
fn reasoning_becomes_a_thinking_budget() {
    let thinking = |reasoning: ReasoningConfig| {
        let request = ChatRequest {
            params: Params {
                reasoning: Some(reasoning),
                ..Params::default()
            },
            ..ChatRequest::default()
        };
        encode_request(&request)["generationConfig"]["thinkingConfig"].clone()
    };
    let on = |budget: u32| json!({"thinkingBudget": budget, "includeThoughts": true});
    assert_eq!(thinking(ReasoningConfig::Effort(Effort::Minimal)), on(1024));
    assert_eq!(thinking(ReasoningConfig::Effort(Effort::Low)), on(1024));
    assert_eq!(thinking(ReasoningConfig::Effort(Effort::Medium)), on(2048));
    assert_eq!(thinking(ReasoningConfig::Effort(Effort::High)), on(4096));
    assert_eq!(thinking(ReasoningConfig::Effort(Effort::XHigh)), on(4096));
    assert_eq!(
        thinking(ReasoningConfig::Effort(Effort::None)),
        json!({"thinkingBudget": 0})
    );
    assert_eq!(thinking(ReasoningConfig::Budget(10000)), on(10000));
    assert_eq!(
        thinking(ReasoningConfig::Budget(0)),
        json!({"thinkingBudget": 0})
    );
    assert_eq!(
        thinking(ReasoningConfig::Disabled),
        json!({"thinkingBudget": 0})
    );
}

#[test]
fn tool_choice_becomes_a_calling_mode() {
    let mode = |choice: ToolChoice| {
        let request = ChatRequest {
            tools: vec![Tool {
                name: "x".into(),
                description: None,
                parameters: json!({}).into(),
                strict: None,
            }],
            tool_choice: Some(choice),
            ..ChatRequest::default()
        };
        encode_request(&request)["toolConfig"].clone()
    };
    assert_eq!(
        mode(ToolChoice::Auto),
        json!({"functionCallingConfig": {"mode": "AUTO"}})
    );
    assert_eq!(
        mode(ToolChoice::Required),
        json!({"functionCallingConfig": {"mode": "ANY"}})
    );
    assert_eq!(
        mode(ToolChoice::None),
        json!({"functionCallingConfig": {"mode": "NONE"}})
    );
    assert_eq!(
        mode(ToolChoice::Named("x".into())),
        json!({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["x"]}})
    );
}

#[test]
fn a_result_whose_call_is_not_in_the_history_uses_its_own_name() {
    let request = ChatRequest {
        messages: vec![Message {
            role: Role::User,
            parts: vec![
                Part::ToolResult(ToolResult {
                    call_id: "gone".into(),
                    name: Some("my.tool".into()),
                    content: vec![],
                    is_error: false,
                }),
                result("lost", "x", false),
            ],
        }],
        ..ChatRequest::default()
    };
    assert_eq!(
        encode_request(&request)["contents"][0]["parts"],
        json!([
            {"functionResponse": {"name": crate::model::wire_name("my.tool"), "response": {"result": ""}}},
            {"functionResponse": {"name": "unknown", "response": {"result": "x"}}}
        ])
    );
}

#[test]
fn empty_turns_are_left_out_and_arguments_are_objects() {
    let request = ChatRequest {
        messages: vec![
            Message::text(Role::User, "hi"),
            Message {
                role: Role::Assistant,
                parts: vec![Part::Reasoning(Reasoning {
                    text: "only thoughts".into(),
                    ..Reasoning::default()
                })],
            },
            Message::text(Role::User, ""),
            Message {
                role: Role::Assistant,
                parts: vec![call("c1", "f", "[1]", Some("sig"))],
            },
        ],
        ..ChatRequest::default()
    };
    assert_eq!(
        encode_request(&request),
        json!({"contents": [
            {"role": "user", "parts": [{"text": "hi"}]},
            {"role": "model", "parts": [
                {"functionCall": {"name": "f", "args": {}}, "thoughtSignature": "sig"}
            ]}
        ]})
    );
}

use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::anthropic::tests::fixture;

fn decode(body: serde_json::Value) -> Result<ChatRequest, DecodeError> {
    decode_request(body.to_string().as_bytes())
}

fn text(text: &str) -> Part {
    Part::Text {
        text: text.to_owned(),
    }
}

#[test]
fn claude_code_request_decodes_whole() {
    let request = decode_request(&fixture("claude_code_request.json")).unwrap();
    let mut extra = Map::new();
    extra.insert(
        "tools".into(),
        json!([{"type": "web_search_20250305", "name": "web_search", "max_uses": 5}]),
    );
    extra.insert(
        "metadata".into(),
        json!({"user_id": "user_abc_account_def_session_ghi"}),
    );
    extra.insert(
        "context_management".into(),
        json!({"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]}),
    );
    extra.insert("top_k".into(), json!(40));
    let expected = ChatRequest {
        model: "claude-sonnet-4-5-20250929".into(),
        system: vec![
            "x-anthropic-billing-header: cc_version=2.1.0".into(),
            "You are Claude Code, Anthropic's official CLI for Claude.".into(),
            "Use the tools to help the user.".into(),
        ],
        messages: vec![
            Message {
                role: Role::User,
                parts: vec![
                    text("<system-reminder>Project is a Rust workspace.</system-reminder>"),
                    text("What is in src/lib.rs and this screenshot?"),
                    Part::Image(Image {
                        source: ImageSource::Base64 {
                            media_type: "image/png".into(),
                            data: "iVBORw0KGgo=".into(),
                        },
                        detail: None,
                    }),
                    Part::Image(Image {
                        source: ImageSource::Url {
                            url: "https://example.com/diagram.webp".into(),
                        },
                        detail: None,
                    }),
                ],
            },
            Message {
                role: Role::Assistant,
                parts: vec![
                    Part::Reasoning(Reasoning {
                        text: "I should read the file.".into(),
                        signature: Some("EpcBCkgIBhABGAIiQL5x".into()),
                        encrypted: None,
                        id: None,
                    }),
                    Part::Reasoning(Reasoning {
                        encrypted: Some("EmwKAhgBEgy3vaJ".into()),
                        ..Reasoning::default()
                    }),
                    text("Reading both."),
                    Part::ToolCall(ToolCall {
                        id: "toolu_01Rf".into(),
                        name: "Read".into(),
                        arguments: r#"{"file_path":"src/lib.rs"}"#.into(),
                        signature: None,
                    }),
                    Part::ToolCall(ToolCall {
                        id: "toolu_02Xy".into(),
                        name: "mcp__github__get_issue".into(),
                        arguments: r#"{"number":7}"#.into(),
                        signature: None,
                    }),
                ],
            },
            Message {
                role: Role::User,
                parts: vec![
                    Part::ToolResult(ToolResult {
                        call_id: "toolu_01Rf".into(),
                        name: None,
                        content: vec![ToolResultContent::Text {
                            text: "pub fn add() {}".into(),
                        }],
                        is_error: false,
                    }),
                    Part::ToolResult(ToolResult {
                        call_id: "toolu_02Xy".into(),
                        name: None,
                        content: vec![
                            ToolResultContent::Text {
                                text: "issue 7 not found".into(),
                            },
                            ToolResultContent::Image(Image {
                                source: ImageSource::Base64 {
                                    media_type: "image/jpeg".into(),
                                    data: "/9j/4AAQ".into(),
                                },
                                detail: None,
                            }),
                        ],
                        is_error: true,
                    }),
                    text("Go on."),
                ],
            },
            Message::text(Role::Assistant, "Done."),
        ],
        tools: vec![
            Tool {
                name: "Read".into(),
                description: Some("Reads a file".into()),
                parameters: json!({"type": "object", "properties": {"file_path": {"type": "string"}}, "required": ["file_path"]}).into(),
                strict: None,
            },
            Tool {
                name: "mcp__github__get_issue".into(),
                description: None,
                parameters: json!({"type": "object", "properties": {"number": {"type": "integer"}}}).into(),
                strict: None,
            },
        ],
        tool_choice: Some(ToolChoice::Auto),
        params: Params {
            max_output_tokens: Some(32000),
            temperature: Some(1.0),
            top_p: None,
            stop: vec!["</answer>".into()],
            // An explicit budget wins over `output_config.effort`.
            reasoning: Some(ReasoningConfig::Budget(31999)),
            parallel_tool_calls: Some(false),
            response_format: None,
        },
        stream: true,
        extra,
    };
    assert_eq!(request, expected);
}

#[test]
fn plain_strings_for_system_and_content() {
    let request = decode(json!({
        "model": "claude-haiku-4-5", "max_tokens": 100, "system": "Answer tersely.",
        "messages": [{"role": "user", "content": "Say hi"}]
    }))
    .unwrap();
    assert_eq!(
        request,
        ChatRequest {
            model: "claude-haiku-4-5".into(),
            system: vec!["Answer tersely.".into()],
            messages: vec![Message::text(Role::User, "Say hi")],
            params: Params {
                max_output_tokens: Some(100),
                ..Params::default()
            },
            ..ChatRequest::default()
        }
    );
}

#[test]
fn thinking_and_effort_variants() {
    let reasoning = |thinking: serde_json::Value, output_config: serde_json::Value| {
        let mut body = json!({"model": "m", "messages": []});
        if !thinking.is_null() {
            body["thinking"] = thinking;
        }
        if !output_config.is_null() {
            body["output_config"] = output_config;
        }
        let request = decode(body).unwrap();
        (
            request.params.reasoning,
            request.extra.get("output_config").cloned(),
        )
    };
    let null = serde_json::Value::Null;
    assert_eq!(
        reasoning(
            json!({"type": "enabled", "budget_tokens": 2048}),
            null.clone()
        ),
        (Some(ReasoningConfig::Budget(2048)), None)
    );
    assert_eq!(
        reasoning(json!({"type": "adaptive"}), null.clone()),
        (Some(ReasoningConfig::Effort(Effort::High)), None),
        "adaptive runs at the default effort"
    );
    assert_eq!(
        reasoning(json!({"type": "adaptive"}), json!({"effort": "low"})),
        (Some(ReasoningConfig::Effort(Effort::Low)), None)
    );
    assert_eq!(
        reasoning(null.clone(), json!({"effort": "max", "task_budget": 5})),
        (
            Some(ReasoningConfig::Effort(Effort::XHigh)),
            Some(json!({"task_budget": 5}))
        ),
        "the rest of output_config is kept in extra"
    );
    assert_eq!(
        reasoning(json!({"type": "disabled"}), json!({"effort": "high"})),
        (Some(ReasoningConfig::Disabled), None)
    );
    assert_eq!(reasoning(null.clone(), null), (None, None));
}

#[test]
fn tool_choice_variants() {
    let choice = |choice: serde_json::Value| {
        let request = decode(json!({"model": "m", "messages": [], "tool_choice": choice})).unwrap();
        (request.tool_choice, request.params.parallel_tool_calls)
    };
    assert_eq!(
        choice(json!({"type": "auto"})),
        (Some(ToolChoice::Auto), None)
    );
    assert_eq!(
        choice(json!({"type": "any", "disable_parallel_tool_use": true})),
        (Some(ToolChoice::Required), Some(false))
    );
    assert_eq!(
        choice(json!({"type": "tool", "name": "Read"})),
        (Some(ToolChoice::Named("Read".into())), None)
    );
    assert_eq!(
        choice(json!({"type": "none"})),
        (Some(ToolChoice::None), None)
    );
}

#[test]
fn structured_output_format_becomes_a_json_schema() {
    let schema = json!({"type": "object", "properties": {"a": {"type": "string"}}});
    let request = decode(json!({
        "model": "m", "messages": [],
        "output_config": {"format": {"type": "json_schema", "schema": schema}}
    }))
    .unwrap();
    assert_eq!(
        request.params.response_format,
        Some(ResponseFormat::JsonSchema {
            name: SCHEMA_NAME.into(),
            schema,
            strict: None
        })
    );
    assert!(request.extra.is_empty());
}

#[test]
fn url_and_file_images_in_tool_results() {
    let request = decode(
        json!({"model": "m", "messages": [{"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": [
                {"type": "image", "source": {"type": "url", "url": "https://x.test/a.png"}},
                {"type": "image", "source": {"type": "file", "file_id": "file_1"}},
                {"type": "search_result", "title": "t"}
            ]},
            {"type": "tool_result", "tool_use_id": "toolu_2"}
        ]}]}),
    )
    .unwrap();
    assert_eq!(
        request.messages[0].parts,
        vec![
            Part::ToolResult(ToolResult {
                call_id: "toolu_1".into(),
                name: None,
                content: vec![ToolResultContent::Image(Image {
                    source: ImageSource::Url {
                        url: "https://x.test/a.png".into()
                    },
                    detail: None
                })],
                is_error: false,
            }),
            Part::ToolResult(ToolResult {
                call_id: "toolu_2".into(),
                name: None,
                content: vec![],
                is_error: false,
            }),
        ]
    );
}

#[test]
fn malformed_fields_are_named() {
    let error = |body: serde_json::Value| decode(body).unwrap_err();
    assert_eq!(
        error(json!({"model": "m"})),
        DecodeError::field("messages", "is required")
    );
    assert_eq!(
        error(json!({"messages": []})),
        DecodeError::field("model", "is required")
    );
    assert_eq!(
        error(json!({"model": "m", "messages": [{"role": "tool", "content": "x"}]})),
        DecodeError::field(
            "messages[0].role",
            "Unexpected role \"tool\". Allowed roles are \"user\" or \"assistant\""
        )
    );
    assert_eq!(
        error(json!({"model": "m", "messages": [{"role": "system", "content": 3}]})),
        DecodeError::field(
            "messages[0].content",
            "must be a string or an array of text blocks"
        )
    );
    assert_eq!(
        error(json!({"model": "m", "messages": [{"role": "user", "content": 3}]})),
        DecodeError::field(
            "messages[0].content",
            "must be a string or an array of content blocks"
        )
    );
    assert_eq!(
        error(
            json!({"model": "m", "messages": [{"role": "assistant", "content": [
            {"type": "tool_use", "name": "Read", "input": {}}]}]})
        ),
        DecodeError::field("messages[0].content[0].id", "is required")
    );
    assert_eq!(
        error(json!({"model": "m", "messages": [], "max_tokens": "many"})),
        DecodeError::field("max_tokens", "must be a non-negative integer")
    );
    assert_eq!(
        error(json!({"model": "m", "messages": [], "stop_sequences": [1]})),
        DecodeError::field("stop_sequences", "must be an array of strings")
    );
    assert_eq!(
        error(json!({"model": "m", "messages": [], "thinking": {"type": "enabled"}})),
        DecodeError::field("thinking.budget_tokens", "must be a non-negative integer")
    );
    assert_eq!(
        error(json!([])),
        DecodeError::field("body", "must be a JSON object")
    );
    assert!(matches!(
        decode_request(b"{\"model\":"),
        Err(DecodeError::Json(_))
    ));
}

#[test]
fn count_tokens_body_without_max_tokens() {
    let request = decode(json!({
        "model": "claude-sonnet-4-5",
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"name": "Read", "input_schema": {"type": "object"}}]
    }))
    .unwrap();
    assert_eq!(request.params.max_output_tokens, None);
    assert_eq!(request.tools.len(), 1);
}

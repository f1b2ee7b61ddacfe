use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::anthropic::decode_request;
use crate::anthropic::tests::fixture;
use crate::model::{Effort, Params, Tool};

fn request(messages: Vec<Message>) -> ChatRequest {
    ChatRequest {
        model: "claude-sonnet-4-5".into(),
        messages,
        ..ChatRequest::default()
    }
}

fn call(id: &str, name: &str, arguments: &str) -> Part {
    Part::ToolCall(ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
        signature: None,
    })
}

#[test]
fn claude_code_request_encodes_for_anthropic() {
    // Decoded and encoded again (what a non-passthrough hop would send): temperature and top_k
    // go because thinking is on, context_management because it needs a beta header.
    let request = decode_request(&fixture("claude_code_request.json")).unwrap();
    insta::assert_json_snapshot!(encode_request(&request));
}

#[test]
fn openai_style_request_encodes_for_anthropic() {
    let long_name = format!("mcp__{}__search", "docs".repeat(16));
    let request = ChatRequest {
        model: "claude-sonnet-4-5".into(),
        system: vec!["You are terse.".into(), String::new(), "Use tools.".into()],
        messages: vec![
            Message::text(Role::User, "find it"),
            Message {
                role: Role::Assistant,
                parts: vec![
                    Part::Text {
                        text: String::new(),
                    },
                    call("call_9.1", &long_name, r#"{"q":"x"}"#),
                    call("call_9.2", "Read", "not json"),
                ],
            },
            Message {
                role: Role::User,
                parts: vec![Part::ToolResult(ToolResult {
                    call_id: "call_9.1".into(),
                    name: Some(long_name.clone()),
                    content: vec![
                        ToolResultContent::Text {
                            text: "found".into(),
                        },
                        ToolResultContent::Image(Image {
                            source: ImageSource::from_url("data:image/gif;base64,R0lG"),
                            detail: None,
                        }),
                    ],
                    is_error: false,
                })],
            },
            Message {
                role: Role::User,
                parts: vec![Part::ToolResult(ToolResult {
                    call_id: "call_9.2".into(),
                    name: None,
                    content: vec![],
                    is_error: true,
                })],
            },
        ],
        tools: vec![
            Tool {
                name: long_name.clone(),
                description: Some("Search docs".into()),
                parameters: json!({"type": "object", "properties": {"q": {"type": "string"}}})
                    .into(),
                strict: Some(true),
            },
            Tool {
                name: "Read".into(),
                description: Some(String::new()),
                parameters: serde_json::Value::Null.into(),
                strict: None,
            },
        ],
        tool_choice: Some(ToolChoice::Required),
        params: Params {
            max_output_tokens: Some(2000),
            temperature: Some(0.2),
            top_p: Some(0.9),
            stop: vec!["END".into(), " \n".into()],
            reasoning: None,
            parallel_tool_calls: Some(false),
            response_format: Some(ResponseFormat::JsonSchema {
                name: "answer".into(),
                schema: json!({"type": "object"}),
                strict: Some(true),
            }),
        },
        stream: true,
        extra: serde_json::Map::from_iter([
            ("metadata".to_owned(), json!({"tenant": "a"})),
            ("service_tier".to_owned(), json!("flex")),
            (
                "tools".to_owned(),
                json!([{"type": "web_search_preview_2025_03_11"}]),
            ),
            ("top_k".to_owned(), json!(20)),
        ]),
    };
    insta::assert_json_snapshot!(encode_request(&request));
}

#[test]
fn system_is_a_string_for_one_entry() {
    let mut plain = request(vec![Message::text(Role::User, "hi")]);
    plain.system = vec!["Be brief.".into()];
    let encoded = encode_request(&plain);
    assert_eq!(encoded["system"], "Be brief.");
    assert_eq!(
        encoded,
        json!({
            "model": "claude-sonnet-4-5",
            "system": "Be brief.",
            "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
            "max_tokens": DEFAULT_MAX_TOKENS,
            "stream": false,
        })
    );
}

#[test]
fn tool_choice_rows() {
    let with_choice = |choice: Option<ToolChoice>, parallel: Option<bool>| {
        let mut encoded = request(vec![Message::text(Role::User, "hi")]);
        encoded.tools = vec![Tool {
            name: "Read".into(),
            description: None,
            parameters: json!({"type": "object"}).into(),
            strict: None,
        }];
        encoded.tool_choice = choice;
        encoded.params.parallel_tool_calls = parallel;
        encode_request(&encoded).get("tool_choice").cloned()
    };
    assert_eq!(
        with_choice(Some(ToolChoice::Auto), None),
        Some(json!({"type": "auto"}))
    );
    assert_eq!(
        with_choice(Some(ToolChoice::Required), None),
        Some(json!({"type": "any"}))
    );
    assert_eq!(
        with_choice(Some(ToolChoice::Named("Read".into())), Some(false)),
        Some(json!({"type": "tool", "name": "Read", "disable_parallel_tool_use": true}))
    );
    assert_eq!(
        with_choice(Some(ToolChoice::None), Some(false)),
        Some(json!({"type": "none"}))
    );
    assert_eq!(
        with_choice(None, Some(false)),
        Some(json!({"type": "auto", "disable_parallel_tool_use": true}))
    );
    assert_eq!(with_choice(None, None), None);
    // No tools, no tool_choice.
    let mut bare = request(vec![Message::text(Role::User, "hi")]);
    bare.tool_choice = Some(ToolChoice::Required);
    assert_eq!(encode_request(&bare).get("tool_choice"), None);
}

#[test]
fn anthropic_extras_go_back_checked() {
    let mut encoded = request(vec![Message::text(Role::User, "hi")]);
    encoded.extra = serde_json::Map::from_iter([
        ("metadata".to_owned(), json!({"user_id": "u1", "other": 1})),
        ("service_tier".to_owned(), json!("standard_only")),
        ("top_k".to_owned(), json!(5)),
        (
            "tools".to_owned(),
            json!([{"type": "web_search_20250305", "name": "web_search"}]),
        ),
        ("context_management".to_owned(), json!({"edits": []})),
        ("mcp_servers".to_owned(), json!([])),
    ]);
    let encoded = encode_request(&encoded);
    assert_eq!(encoded["metadata"], json!({"user_id": "u1"}));
    assert_eq!(encoded["service_tier"], "standard_only");
    assert_eq!(encoded["top_k"], 5);
    assert_eq!(
        encoded["tools"],
        json!([{"type": "web_search_20250305", "name": "web_search"}])
    );
    assert_eq!(encoded.get("context_management"), None);
    assert_eq!(encoded.get("mcp_servers"), None);
}

#[test]
fn thinking_off_for_a_tool_loop_begun_without_thinking() {
    // History from another provider: the assistant turn of the ongoing tool loop has no
    // thinking block, which Anthropic refuses with thinking on.
    let mut loop_request = request(vec![
        Message::text(Role::User, "read it"),
        Message {
            role: Role::Assistant,
            parts: vec![call("call_1", "Read", "{}")],
        },
        Message {
            role: Role::User,
            parts: vec![Part::ToolResult(ToolResult {
                call_id: "call_1".into(),
                name: None,
                content: vec![ToolResultContent::Text { text: "x".into() }],
                is_error: false,
            })],
        },
    ]);
    loop_request.params.reasoning = Some(ReasoningConfig::Effort(Effort::Medium));
    assert_eq!(encode_request(&loop_request).get("thinking"), None);
    // With signed thinking first, thinking stays on.
    loop_request.messages[1].parts.insert(
        0,
        Part::Reasoning(Reasoning {
            text: "t".into(),
            signature: Some("sig".into()),
            ..Reasoning::default()
        }),
    );
    assert_eq!(
        encode_request(&loop_request)["thinking"],
        json!({"type": "enabled", "budget_tokens": 2048})
    );
    // A new user turn ends the loop: thinking is fine again.
    let mut new_turn = loop_request.clone();
    new_turn.messages[1].parts.remove(0);
    new_turn
        .messages
        .push(Message::text(Role::Assistant, "done"));
    new_turn.messages.push(Message::text(Role::User, "thanks"));
    assert_eq!(
        encode_request(&new_turn)["thinking"],
        json!({"type": "enabled", "budget_tokens": 2048})
    );
}

#[test]
fn reasoning_knob_rows() {
    let thinking = |reasoning: Option<ReasoningConfig>| {
        let mut encoded = request(vec![Message::text(Role::User, "hi")]);
        encoded.params.reasoning = reasoning;
        encode_request(&encoded).get("thinking").cloned()
    };
    assert_eq!(thinking(None), None);
    assert_eq!(thinking(Some(ReasoningConfig::Disabled)), None);
    assert_eq!(thinking(Some(ReasoningConfig::Budget(0))), None);
    assert_eq!(thinking(Some(ReasoningConfig::Effort(Effort::None))), None);
    for (effort, budget) in [
        (Effort::Minimal, 1024),
        (Effort::Low, 1024),
        (Effort::Medium, 2048),
        (Effort::High, 4096),
        (Effort::XHigh, 4096),
    ] {
        assert_eq!(
            thinking(Some(ReasoningConfig::Effort(effort))),
            Some(json!({"type": "enabled", "budget_tokens": budget})),
            "{effort:?}"
        );
    }
}

#[test]
fn sampling_rules() {
    let sampling = |temperature: Option<f64>, top_p: Option<f64>, thinking: bool| {
        let mut encoded = request(vec![Message::text(Role::User, "hi")]);
        encoded.params.temperature = temperature;
        encoded.params.top_p = top_p;
        if thinking {
            encoded.params.reasoning = Some(ReasoningConfig::Budget(2000));
        }
        let encoded = encode_request(&encoded);
        (
            encoded.get("temperature").cloned(),
            encoded.get("top_p").cloned(),
        )
    };
    assert_eq!(sampling(Some(-1.0), None, false), (Some(json!(0.0)), None));
    assert_eq!(
        sampling(Some(0.5), Some(0.9), false),
        (Some(json!(0.5)), None),
        "recent models refuse both"
    );
    assert_eq!(sampling(None, Some(0.9), false), (None, Some(json!(0.9))));
    assert_eq!(
        sampling(Some(0.5), Some(0.97), true),
        (None, Some(json!(0.97)))
    );
}

use pretty_assertions::assert_eq;
use serde_json::{Map, Value, json};

use super::{fixture, fixture_json};
use crate::model::{
    ChatRequest, DecodeError, Effort, Image, ImageSource, Message, Params, Part, Reasoning,
    ReasoningConfig, ResponseFormat, Role, Tool, ToolCall, ToolChoice, ToolResult,
    ToolResultContent,
};
use crate::openai_responses::{decode_request, encode_request};

fn text(text: &str) -> Part {
    Part::Text {
        text: text.to_owned(),
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

fn result(call_id: &str, content: Vec<ToolResultContent>, is_error: bool) -> Part {
    Part::ToolResult(ToolResult {
        call_id: call_id.to_owned(),
        name: None,
        content,
        is_error,
    })
}

fn result_text(text: &str) -> ToolResultContent {
    ToolResultContent::Text {
        text: text.to_owned(),
    }
}

fn decode(body: Value) -> ChatRequest {
    decode_request(body.to_string().as_bytes()).unwrap()
}

#[test]
fn decodes_a_full_request() {
    let original = fixture_json("request_full.json");
    let request = decode_request(&fixture("request_full.json")).unwrap();
    let mut extra = Map::new();
    for key in [
        "store",
        "include",
        "previous_response_id",
        "metadata",
        "prompt_cache_key",
        "truncation",
        "user",
        "service_tier",
        "tools",
        "reasoning",
        "text",
    ] {
        extra.insert(key.to_owned(), original[key].clone());
    }
    let expected = ChatRequest {
        model: "gpt-5-codex".to_owned(),
        system: vec![
            "You are a coding agent.".to_owned(),
            "Prefer small diffs.".to_owned(),
        ],
        messages: vec![
            Message {
                role: Role::User,
                parts: vec![
                    text("What is in these pictures, and fix src/lib.rs"),
                    Part::Image(Image {
                        source: ImageSource::Base64 {
                            media_type: "image/png".to_owned(),
                            data: "iVBORw0KGgo=".to_owned(),
                        },
                        detail: Some("high".to_owned()),
                    }),
                    Part::Image(Image {
                        source: ImageSource::Url {
                            url: "https://example.com/diagram.jpg".to_owned(),
                        },
                        detail: None,
                    }),
                ],
            },
            Message {
                role: Role::Assistant,
                parts: vec![
                    Part::Reasoning(Reasoning {
                        text: "**Reading**\n\nNeed the file.".to_owned(),
                        signature: None,
                        encrypted: Some("gAAAAABo-enc-01".to_owned()),
                        id: Some("rs_01".to_owned()),
                    }),
                    text("Let me read it."),
                    call("call_01", "read_file", r#"{"path":"src/lib.rs"}"#),
                    call("call_02", "screenshot", "{}"),
                ],
            },
            Message {
                role: Role::User,
                parts: vec![
                    result("call_01", vec![result_text("pub fn add() {}")], false),
                    result(
                        "call_02",
                        vec![
                            result_text("The screen:"),
                            ToolResultContent::Image(Image {
                                source: ImageSource::Base64 {
                                    media_type: "image/jpeg".to_owned(),
                                    data: "/9j/4AAQ".to_owned(),
                                },
                                detail: None,
                            }),
                        ],
                        false,
                    ),
                ],
            },
            Message::text(Role::User, "Now run the tests."),
        ],
        tools: vec![
            Tool {
                name: "read_file".to_owned(),
                description: Some("Read a file".to_owned()),
                parameters: original["tools"][0]["parameters"].clone().into(),
                strict: Some(true),
            },
            Tool {
                name: "screenshot".to_owned(),
                description: None,
                parameters: json!({ "type": "object", "properties": {} }).into(),
                strict: None,
            },
        ],
        tool_choice: Some(ToolChoice::Auto),
        params: Params {
            max_output_tokens: Some(4096),
            temperature: Some(1.0),
            top_p: Some(0.9),
            stop: Vec::new(),
            reasoning: Some(ReasoningConfig::Effort(Effort::High)),
            parallel_tool_calls: Some(true),
            response_format: Some(ResponseFormat::JsonSchema {
                name: "answer".to_owned(),
                schema: original["text"]["format"]["schema"].clone(),
                strict: Some(true),
            }),
        },
        stream: true,
        extra,
    };
    assert_eq!(request, expected);
}

#[test]
fn encodes_a_decoded_request_for_an_upstream() {
    let request = decode_request(&fixture("request_full.json")).unwrap();
    insta::assert_json_snapshot!(encode_request(&request));
}

#[test]
fn input_as_a_string_is_one_user_message() {
    let request =
        decode(json!({ "model": "gpt-5", "input": "Say hi", "instructions": "Be terse." }));
    assert_eq!(request.system, vec!["Be terse.".to_owned()]);
    assert_eq!(request.messages, vec![Message::text(Role::User, "Say hi")]);
    assert_eq!(request.extra, Map::new());
    assert!(!request.stream);
}

#[test]
fn system_and_developer_messages_keep_their_place() {
    let request = decode(json!({
        "model": "gpt-5",
        "input": [
            { "role": "system", "content": "One." },
            { "role": "user", "content": "Hi" },
            { "type": "message", "role": "developer",
              "content": [{ "type": "input_text", "text": "Two" }, { "type": "input_text", "text": "lines." }] },
        ],
    }));
    assert_eq!(request.system, vec!["One.".to_owned()]);
    assert_eq!(
        request.messages,
        vec![
            Message::text(Role::User, "Hi"),
            Message {
                role: Role::User,
                parts: vec![Part::System {
                    text: "Two\nlines.".to_owned()
                }],
            },
        ]
    );
    // And back out, in place, as a system message item.
    let input = &encode_request(&request)["input"];
    assert_eq!(input[1]["role"], "system");
    assert_eq!(input[1]["content"][0]["text"], "Two\nlines.");
}

#[test]
fn tool_results_keep_images_and_the_legacy_error_flag() {
    let request = decode(json!({
        "model": "gpt-5",
        "input": [
            { "type": "function_call", "call_id": "call_1", "name": "run", "arguments": "{}" },
            { "type": "function_call_output", "call_id": "call_1",
              "output": { "content": "exit status 1", "success": false } },
            { "type": "function_call", "call_id": "call_2", "name": "look", "arguments": "{}" },
            { "type": "function_call_output", "call_id": "call_2",
              "output": [{ "type": "input_image", "image_url": "https://example.com/a.png", "detail": "low" }] },
        ],
    }));
    assert_eq!(
        request.messages,
        vec![
            Message {
                role: Role::Assistant,
                parts: vec![call("call_1", "run", "{}"), call("call_2", "look", "{}")],
            },
            Message {
                role: Role::User,
                parts: vec![
                    result("call_1", vec![result_text("exit status 1")], true),
                    result(
                        "call_2",
                        vec![ToolResultContent::Image(Image {
                            source: ImageSource::Url {
                                url: "https://example.com/a.png".to_owned()
                            },
                            detail: Some("low".to_owned()),
                        })],
                        false
                    ),
                ],
            },
        ]
    );
}

#[test]
fn builtin_tools_and_choices_stay_in_extra_and_go_back_to_a_responses_upstream() {
    let request = decode(json!({
        "model": "gpt-5",
        "input": "Search",
        "tools": [{ "type": "web_search", "search_context_size": "low" }],
        "tool_choice": { "type": "allowed_tools", "mode": "required",
                         "tools": [{ "type": "web_search" }] },
        "reasoning": { "summary": "detailed" },
    }));
    assert_eq!(request.tools, Vec::new());
    assert_eq!(request.tool_choice, Some(ToolChoice::Required));
    assert_eq!(request.params.reasoning, None);
    let body = encode_request(&request);
    assert_eq!(
        body["tools"],
        json!([{ "type": "web_search", "search_context_size": "low" }])
    );
    assert_eq!(body["tool_choice"], request.extra["tool_choice"]);
    assert_eq!(body["reasoning"], json!({ "summary": "detailed" }));
}

#[test]
fn other_dialects_tools_in_extra_are_not_sent() {
    let mut request = decode(json!({ "model": "gpt-5", "input": "Hi" }));
    request.extra.insert(
        "tools".to_owned(),
        json!([{ "type": "web_search_20250305", "name": "web_search" }, { "type": "custom", "name": "x" }]),
    );
    request.extra.insert("seed".to_owned(), json!(7));
    let body = encode_request(&request);
    assert_eq!(body.get("tools"), None);
    assert_eq!(body.get("seed"), None);
}

#[test]
fn decode_errors_name_the_field() {
    let error = |body: Value| decode_request(body.to_string().as_bytes()).unwrap_err();
    assert_eq!(
        error(json!({ "input": "x" })),
        DecodeError::field("model", "is required")
    );
    assert_eq!(
        error(json!({ "model": "m", "input": 3 })),
        DecodeError::field("input", "must be a string or an array")
    );
    assert_eq!(
        error(json!({ "model": "m", "input": [{ "role": "tool", "content": "x" }] })),
        DecodeError::field(
            "input[0].role",
            "must be user, assistant, system or developer"
        )
    );
    assert_eq!(
        error(
            json!({ "model": "m", "input": [{ "type": "function_call_output", "output": "x" }] })
        ),
        DecodeError::field("input[0].call_id", "must be a string")
    );
    assert_eq!(
        error(json!({ "model": "m", "reasoning": { "effort": "extreme" } })),
        DecodeError::field("reasoning.effort", "is not a known effort")
    );
    assert_eq!(
        error(json!({ "model": "m", "max_output_tokens": -1 })),
        DecodeError::field("max_output_tokens", "must be a non-negative integer")
    );
    assert!(matches!(
        decode_request(b"{not json").unwrap_err(),
        DecodeError::Json(_)
    ));
    assert_eq!(
        decode_request(b"[]").unwrap_err(),
        DecodeError::field("(body)", "must be a JSON object")
    );
}

/// A conversation from another dialect: Anthropic thinking (signed), tool results with an
/// error and an image, a forced tool, a thinking budget and stop sequences.
fn foreign_request() -> ChatRequest {
    ChatRequest {
        model: "gpt-5".to_owned(),
        system: vec!["Be careful.".to_owned(), "Use tools.".to_owned()],
        messages: vec![
            Message {
                role: Role::User,
                parts: vec![
                    text("Look at this"),
                    Part::Image(Image {
                        source: ImageSource::Base64 {
                            media_type: "image/webp".to_owned(),
                            data: "UklGRg==".to_owned(),
                        },
                        detail: None,
                    }),
                ],
            },
            Message {
                role: Role::Assistant,
                parts: vec![
                    Part::Reasoning(Reasoning {
                        text: "Anthropic thinking".to_owned(),
                        signature: Some("EpcBsig".to_owned()),
                        ..Reasoning::default()
                    }),
                    Part::Reasoning(Reasoning {
                        text: String::new(),
                        encrypted: Some("redacted-thinking-data".to_owned()),
                        ..Reasoning::default()
                    }),
                    text("Checking."),
                    call("toolu_01", "Bash", r#"{"command":"ls"}"#),
                    call("toolu_02", "Screenshot", ""),
                ],
            },
            Message {
                role: Role::User,
                parts: vec![
                    result("toolu_01", vec![result_text("ls: denied")], true),
                    result(
                        "toolu_02",
                        vec![
                            result_text("Here:"),
                            ToolResultContent::Image(Image {
                                source: ImageSource::Url {
                                    url: "https://example.com/s.png".to_owned(),
                                },
                                detail: Some("low".to_owned()),
                            }),
                        ],
                        false,
                    ),
                    text("Go on."),
                ],
            },
        ],
        tools: vec![
            Tool {
                name: "Bash".to_owned(),
                description: Some("Run a command".to_owned()),
                parameters: json!({
                    "type": "object",
                    "properties": { "command": { "type": "string" } },
                    "required": ["command"],
                })
                .into(),
                strict: None,
            },
            Tool {
                name: "Screenshot".to_owned(),
                description: None,
                parameters: json!({ "type": "object", "properties": {} }).into(),
                strict: None,
            },
        ],
        tool_choice: Some(ToolChoice::Named("Bash".to_owned())),
        params: Params {
            max_output_tokens: Some(32000),
            temperature: Some(0.5),
            top_p: None,
            stop: vec!["STOP".to_owned()],
            reasoning: Some(ReasoningConfig::Budget(4000)),
            parallel_tool_calls: Some(false),
            response_format: None,
        },
        stream: true,
        extra: Map::new(),
    }
}

#[test]
fn encodes_a_foreign_conversation() {
    insta::assert_json_snapshot!(encode_request(&foreign_request()));
}

#[test]
fn reasoning_settings_map_to_an_effort() {
    let mut request = foreign_request();
    let effort = |request: &ChatRequest| encode_request(request)["reasoning"].clone();
    // Reasoning on asks for a summary too: without one no reasoning is shown (issue 10.8).
    request.params.reasoning = Some(ReasoningConfig::Budget(1024));
    assert_eq!(
        effort(&request),
        json!({ "effort": "low", "summary": "auto" })
    );
    request.params.reasoning = Some(ReasoningConfig::Budget(20000));
    assert_eq!(
        effort(&request),
        json!({ "effort": "high", "summary": "auto" })
    );
    request.params.reasoning = Some(ReasoningConfig::Effort(Effort::XHigh));
    assert_eq!(
        effort(&request),
        json!({ "effort": "xhigh", "summary": "auto" })
    );
    // A Responses client's own summary choice stands.
    request
        .extra
        .insert("reasoning".to_owned(), json!({ "summary": "detailed" }));
    assert_eq!(
        effort(&request),
        json!({ "effort": "xhigh", "summary": "detailed" })
    );
    request.extra.remove("reasoning");
    request.params.reasoning = Some(ReasoningConfig::Disabled);
    assert_eq!(effort(&request), json!({ "effort": "none" }));
    assert_eq!(
        encode_request(&request).get("include"),
        None,
        "no reasoning, no replay"
    );
    request.params.reasoning = None;
    assert_eq!(effort(&request), Value::Null);
}

#[test]
fn response_formats_go_in_text_format() {
    let mut request = foreign_request();
    let format = |request: &ChatRequest| encode_request(request)["text"].clone();
    request.params.response_format = Some(ResponseFormat::JsonObject);
    assert_eq!(
        format(&request),
        json!({ "format": { "type": "json_object" } })
    );
    request.params.response_format = Some(ResponseFormat::Text);
    assert_eq!(format(&request), json!({ "format": { "type": "text" } }));
    request.params.response_format = Some(ResponseFormat::JsonSchema {
        name: "x".to_owned(),
        schema: json!({ "type": "object" }),
        strict: None,
    });
    assert_eq!(
        format(&request),
        json!({ "format": { "type": "json_schema", "name": "x", "schema": { "type": "object" } } })
    );
}

#[test]
fn no_tools_means_no_tool_choice() {
    let mut request = foreign_request();
    request.tools.clear();
    let body = encode_request(&request);
    assert_eq!(body.get("tools"), None);
    assert_eq!(body.get("tool_choice"), None);
    assert_eq!(body.get("parallel_tool_calls"), None);
}

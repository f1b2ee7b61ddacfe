//! Requests: client body → canonical, canonical → upstream body.

use pretty_assertions::assert_eq;
use serde_json::{Map, json};

use super::build::{call, png, reasoning, result, result_text, text, tool};
use super::fixture;
use crate::model::{
    ChatRequest, DecodeError, Effort, Image, ImageSource, Message, Params, Part, Reasoning,
    ReasoningConfig, ResponseFormat, Role, ToolChoice, ToolResultContent,
};
use crate::openai_chat::{decode_request, encode_request};

fn object(value: serde_json::Value) -> Map<String, serde_json::Value> {
    match value {
        serde_json::Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

#[test]
fn decodes_a_text_request() {
    let request = decode_request(&fixture("request_text.json")).unwrap();
    assert_eq!(
        request,
        ChatRequest {
            model: "gpt-4.1".to_owned(),
            system: vec!["Answer tersely.".to_owned()],
            messages: vec![Message::text(Role::User, "Say hi")],
            params: Params {
                max_output_tokens: Some(200),
                ..Params::default()
            },
            ..ChatRequest::default()
        }
    );
}

#[test]
fn decodes_a_zed_tool_loop() {
    let request = decode_request(&fixture("request_zed_tool_loop.json")).unwrap();
    assert_eq!(
        request,
        ChatRequest {
            model: "supergrok".to_owned(),
            system: vec!["You are a coding assistant in Zed.".to_owned()],
            messages: vec![
                Message {
                    role: Role::User,
                    parts: vec![text("Compare src/lib.rs with the screenshot.")],
                },
                Message {
                    role: Role::Assistant,
                    parts: vec![
                        reasoning("I need the file and the image."),
                        text("Let me look at both."),
                        call("call_31415", "read_file", r#"{"path":"src/lib.rs"}"#),
                        call("call_27182", "screenshot", "{}"),
                    ],
                },
                // Both tool messages and the user's next message form one user message,
                // results first.
                Message {
                    role: Role::User,
                    parts: vec![
                        result(
                            "call_31415",
                            vec![result_text("pub fn add(a: i32, b: i32) -> i32 { a + b }")],
                            false,
                        ),
                        result(
                            "call_27182",
                            vec![
                                result_text("Screenshot of the editor:"),
                                ToolResultContent::Image(png("iVBORw0KGgo=")),
                            ],
                            false,
                        ),
                        text("Now explain the difference."),
                    ],
                },
            ],
            tools: vec![
                tool(
                    "read_file",
                    Some("Read a file"),
                    json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
                ),
                tool(
                    "screenshot",
                    Some("Capture the editor"),
                    json!({"type": "object", "properties": {}}),
                ),
            ],
            tool_choice: Some(ToolChoice::Auto),
            params: Params {
                max_output_tokens: Some(8192),
                temperature: Some(1.0),
                reasoning: Some(ReasoningConfig::Effort(Effort::High)),
                ..Params::default()
            },
            stream: true,
            extra: object(json!({
                "stream_options": {"include_usage": true},
                "prompt_cache_key": "thread-7",
            })),
        }
    );
}

#[test]
fn decodes_parameters_images_and_system_messages_in_place() {
    let request = decode_request(&fixture("request_params.json")).unwrap();
    let mut lookup = tool(
        "lookup",
        None,
        json!({"type": "object", "properties": {"q": {"type": "string"}}}),
    );
    lookup.strict = Some(true);
    assert_eq!(
        request,
        ChatRequest {
            model: "gpt-5".to_owned(),
            // The leading `developer` message is system text; the later `system` message keeps
            // its place, one part per text part.
            system: vec!["Follow the style guide.".to_owned()],
            messages: vec![
                Message {
                    role: Role::User,
                    parts: vec![
                        text("What is in these images?"),
                        Part::Image(Image {
                            source: ImageSource::Base64 {
                                media_type: "image/jpeg".to_owned(),
                                data: "/9j/4AAQSkZJRg==".to_owned(),
                            },
                            detail: Some("low".to_owned()),
                        }),
                        Part::Image(Image {
                            source: ImageSource::Url {
                                url: "https://example.com/cat.png".to_owned(),
                            },
                            detail: Some("high".to_owned()),
                        }),
                    ],
                },
                Message {
                    role: Role::User,
                    parts: vec![
                        Part::System {
                            text: "Answer in JSON.".to_owned(),
                        },
                        Part::System {
                            text: "Be brief.".to_owned(),
                        },
                    ],
                }
            ],
            tools: vec![lookup],
            tool_choice: Some(ToolChoice::Named("lookup".to_owned())),
            params: Params {
                // The deprecated `max_tokens`, as no `max_completion_tokens` is given.
                max_output_tokens: Some(512),
                temperature: Some(0.2),
                top_p: Some(0.9),
                stop: vec!["END".to_owned()],
                reasoning: Some(ReasoningConfig::Effort(Effort::Minimal)),
                parallel_tool_calls: Some(false),
                response_format: Some(ResponseFormat::JsonSchema {
                    name: "answer".to_owned(),
                    schema: json!({"type": "object", "properties": {"items": {"type": "array"}}}),
                    strict: Some(true),
                }),
            },
            stream: false,
            extra: object(json!({
                "user": "u-42",
                "seed": 7,
                "n": 1,
                "metadata": {"team": "editor"},
                "store": false,
                "service_tier": "auto",
            })),
        }
    );
}

#[test]
fn max_completion_tokens_wins_over_max_tokens() {
    let body = json!({"model": "m", "messages": [], "max_tokens": 10, "max_completion_tokens": 20});
    let request = decode_request(body.to_string().as_bytes()).unwrap();
    assert_eq!(request.params.max_output_tokens, Some(20));
    assert!(request.extra.is_empty(), "{:?}", request.extra);
}

#[test]
fn values_the_model_cannot_hold_stay_in_extra() {
    let body = json!({
        "model": "m",
        "messages": [],
        "stop": ["a", "b"],
        "tool_choice": {"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": []}},
        "reasoning_effort": "extreme",
        "response_format": {"type": "grammar", "grammar": "root ::= x"},
    });
    let request = decode_request(body.to_string().as_bytes()).unwrap();
    assert_eq!(request.tool_choice, None);
    assert_eq!(request.params.reasoning, None);
    assert_eq!(request.params.response_format, None);
    assert_eq!(request.params.stop, ["a", "b"]);
    assert_eq!(
        request.extra,
        object(json!({
            "tool_choice": {"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": []}},
            "reasoning_effort": "extreme",
            "response_format": {"type": "grammar", "grammar": "root ::= x"},
        }))
    );
}

#[test]
fn decodes_tool_choices_and_nulls() {
    for (choice, expected) in [
        (json!("auto"), Some(ToolChoice::Auto)),
        (json!("required"), Some(ToolChoice::Required)),
        (json!("none"), Some(ToolChoice::None)),
        (
            json!({"type": "function", "function": {"name": "grep"}}),
            Some(ToolChoice::Named("grep".to_owned())),
        ),
        (json!(null), None),
    ] {
        let body = json!({"model": "m", "messages": [], "tool_choice": choice, "stop": null,
                          "tools": null, "temperature": null});
        let request = decode_request(body.to_string().as_bytes()).unwrap();
        assert_eq!(request.tool_choice, expected, "{choice}");
        assert!(request.extra.is_empty());
    }
}

#[test]
fn assistant_refusals_and_reasoning_fields_become_parts() {
    let body = json!({"model": "m", "messages": [
        {"role": "assistant", "content": [{"type": "text", "text": "Partly. "},
                                          {"type": "refusal", "refusal": "I can't help with that."}],
         "reasoning": "OpenRouter-style reasoning."},
        {"role": "assistant", "content": null, "refusal": "No.",
         "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {"a": 1}}}]},
    ]});
    let request = decode_request(body.to_string().as_bytes()).unwrap();
    assert_eq!(
        request.messages,
        [
            Message {
                role: Role::Assistant,
                parts: vec![
                    reasoning("OpenRouter-style reasoning."),
                    text("Partly. "),
                    text("I can't help with that."),
                ],
            },
            Message {
                role: Role::Assistant,
                parts: vec![
                    text("No."),
                    // No id: a deterministic one; object arguments become JSON text.
                    call(
                        &crate::model::synthetic_call_id("f", r#"{"a":1}"#, 0),
                        "f",
                        r#"{"a":1}"#
                    ),
                ],
            },
        ]
    );
}

#[test]
fn malformed_requests_name_the_field() {
    let cases = [
        ("{", None),
        (
            "[]",
            Some(DecodeError::field("request", "must be a JSON object")),
        ),
        (
            r#"{"messages":[]}"#,
            Some(DecodeError::field("model", "is required")),
        ),
        (
            r#"{"model":"m"}"#,
            Some(DecodeError::field("messages", "is required")),
        ),
        (
            r#"{"model":"m","messages":[{"role":"function","content":"x"}]}"#,
            Some(DecodeError::field(
                "messages[0].role",
                "must be system, developer, user, assistant or tool (got `function`)",
            )),
        ),
        (
            r#"{"model":"m","messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{}}]}]}"#,
            Some(DecodeError::field(
                "messages[0].content[0].type",
                "`input_audio` is not supported here",
            )),
        ),
        (
            r#"{"model":"m","messages":[{"role":"system","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}"#,
            Some(DecodeError::field(
                "messages[0].content[0].type",
                "`image_url` is not supported here",
            )),
        ),
        (
            r#"{"model":"m","messages":[{"role":"tool","content":"x"}]}"#,
            Some(DecodeError::field(
                "messages[0].tool_call_id",
                "is required",
            )),
        ),
        (
            r#"{"model":"m","messages":[{"role":"user","content":7}]}"#,
            Some(DecodeError::field(
                "messages[0].content",
                "must be a string or an array of parts",
            )),
        ),
        (
            r#"{"model":"m","messages":[],"temperature":"hot"}"#,
            Some(DecodeError::field("temperature", "must be a number")),
        ),
        (
            r#"{"model":"m","messages":[],"max_completion_tokens":-1}"#,
            Some(DecodeError::field(
                "max_completion_tokens",
                "must be a non-negative integer",
            )),
        ),
        (
            r#"{"model":"m","messages":[],"stop":[1]}"#,
            Some(DecodeError::field("stop[0]", "must be a string")),
        ),
        (
            r#"{"model":"m","messages":[],"tools":[{"type":"custom","custom":{"name":"x"}}]}"#,
            Some(DecodeError::field(
                "tools[0].type",
                "`custom` is not supported (only `function` tools)",
            )),
        ),
    ];
    for (body, expected) in cases {
        let error = decode_request(body.as_bytes()).unwrap_err();
        match expected {
            Some(expected) => assert_eq!(error, expected, "{body}"),
            None => assert!(matches!(error, DecodeError::Json(_)), "{body}: {error:?}"),
        }
    }
}

#[test]
fn encodes_a_text_request() {
    let request = decode_request(&fixture("request_text.json")).unwrap();
    snapshot!("encode_text_request", encode_request(&request));
}

#[test]
fn encodes_a_zed_tool_loop() {
    let request = decode_request(&fixture("request_zed_tool_loop.json")).unwrap();
    snapshot!("encode_zed_tool_loop", encode_request(&request));
}

#[test]
fn encodes_parameters() {
    let request = decode_request(&fixture("request_params.json")).unwrap();
    snapshot!("encode_params", encode_request(&request));
}

/// Chat → canonical → Chat → canonical gives the same request, except for what the encoder
/// changes on purpose: the system entries become one (joined), and images in tool results
/// move to the user message (`request_zed_tool_loop.json` has one, so it is not in the list).
#[test]
fn a_chat_hop_keeps_the_canonical_request() {
    for name in ["request_text.json", "request_params.json"] {
        let request = decode_request(&fixture(name)).unwrap();
        let encoded = encode_request(&request).to_string();
        let mut again = decode_request(encoded.as_bytes()).unwrap();
        assert_eq!(again.system, [request.system.join("\n\n")], "{name}");
        again.system.clone_from(&request.system);
        assert_eq!(again, request, "{name}");
    }
}

#[test]
fn encodes_a_request_from_another_dialect() {
    // What an Anthropic client sends: results out of call order, an error result, signed
    // thinking, a thinking budget, no temperature.
    let request = ChatRequest {
        model: "grok-4".to_owned(),
        system: vec!["You are Claude Code.".to_owned(), "Be concise.".to_owned()],
        messages: vec![
            Message::text(Role::User, "Run the tests"),
            Message {
                role: Role::Assistant,
                parts: vec![
                    Part::Reasoning(Reasoning {
                        text: "Two commands.".to_owned(),
                        signature: Some("EpcBCkgIBh".to_owned()),
                        ..Reasoning::default()
                    }),
                    Part::Reasoning(Reasoning {
                        encrypted: Some("redacted-data".to_owned()),
                        ..Reasoning::default()
                    }),
                    call("toolu_01", "Bash", r#"{"command":"cargo test"}"#),
                    call("toolu_02", "Bash", ""),
                ],
            },
            Message {
                role: Role::User,
                parts: vec![
                    result("toolu_02", vec![result_text("ok")], false),
                    result(
                        "toolu_01",
                        vec![result_text("error: 2 tests failed")],
                        /*is_error*/ true,
                    ),
                ],
            },
        ],
        tools: vec![tool(
            "Bash",
            Some("Run a command"),
            json!({"type": "object"}),
        )],
        tool_choice: Some(ToolChoice::Required),
        params: Params {
            max_output_tokens: Some(32000),
            reasoning: Some(ReasoningConfig::Budget(2048)),
            ..Params::default()
        },
        stream: true,
        extra: Map::new(),
    };
    snapshot!("encode_from_anthropic", encode_request(&request));
}

#[test]
fn encodes_reasoning_configurations_as_effort() {
    for (reasoning, effort) in [
        (ReasoningConfig::Effort(Effort::XHigh), "xhigh"),
        (ReasoningConfig::Budget(1024), "low"),
        (ReasoningConfig::Budget(8192), "medium"),
        (ReasoningConfig::Budget(32000), "high"),
        (ReasoningConfig::Budget(0), "none"),
        (ReasoningConfig::Disabled, "none"),
    ] {
        let request = ChatRequest {
            params: Params {
                reasoning: Some(reasoning),
                ..Params::default()
            },
            ..ChatRequest::default()
        };
        assert_eq!(
            encode_request(&request)["reasoning_effort"],
            effort,
            "{reasoning:?}"
        );
    }
}

#[test]
fn tool_options_are_left_out_without_tools() {
    let request = ChatRequest {
        model: "m".to_owned(),
        tool_choice: Some(ToolChoice::Auto),
        params: Params {
            parallel_tool_calls: Some(false),
            ..Params::default()
        },
        ..ChatRequest::default()
    };
    assert_eq!(
        encode_request(&request),
        json!({"model": "m", "messages": [], "stream": false})
    );
}

#[test]
fn stream_options_from_extra_are_kept_only_when_streaming() {
    let mut request = ChatRequest {
        model: "m".to_owned(),
        extra: object(json!({
            "stream_options": {"include_usage": false, "include_obfuscation": false},
            "user": "u",
        })),
        ..ChatRequest::default()
    };
    assert_eq!(
        encode_request(&request),
        json!({"model": "m", "messages": [], "stream": false, "user": "u"})
    );
    request.stream = true;
    assert_eq!(
        encode_request(&request),
        json!({"model": "m", "messages": [], "stream": true, "user": "u",
               "stream_options": {"include_usage": true, "include_obfuscation": false}})
    );
}

#[test]
fn image_urls_may_be_bare_strings_and_empty_text_is_skipped() {
    let body = json!({"model": "m", "messages": [{"role": "user", "content": [
        {"type": "text", "text": ""},
        {"type": "image_url", "image_url": "https://example.com/a.webp"},
    ]}, {"role": "user", "content": ""}]});
    let request = decode_request(body.to_string().as_bytes()).unwrap();
    assert_eq!(
        request.messages,
        [
            Message {
                role: Role::User,
                parts: vec![Part::Image(Image {
                    source: ImageSource::Url {
                        url: "https://example.com/a.webp".to_owned()
                    },
                    detail: None,
                })],
            },
            Message {
                role: Role::User,
                parts: vec![],
            },
        ]
    );
    // An empty user message is not sent.
    assert_eq!(
        encode_request(&request)["messages"],
        json!([{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": "https://example.com/a.webp"}}]}])
    );
}

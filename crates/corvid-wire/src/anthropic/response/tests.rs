use pretty_assertions::assert_eq;

use super::*;
use crate::anthropic::tests::fixture;
use crate::model::{Tool, Usage};

#[test]
fn tool_reply_decodes_whole() {
    let response = decode_response(&fixture("response_tool.json"), &NameMap::default()).unwrap();
    assert_eq!(
        response,
        ChatResponse {
            id: "msg_01Hn".into(),
            model: "claude-sonnet-4-5-20250929".into(),
            created: 0,
            parts: vec![
                Part::Reasoning(Reasoning {
                    text: "Need the file.".into(),
                    signature: Some("EpcBCkgIBhABGAIiQL5x".into()),
                    ..Reasoning::default()
                }),
                Part::Reasoning(Reasoning {
                    encrypted: Some("EmwKAhgBEgy3vaJ".into()),
                    ..Reasoning::default()
                }),
                Part::Text {
                    text: "Reading it.".into()
                },
                Part::ToolCall(ToolCall {
                    id: "toolu_01Rf".into(),
                    name: "Read".into(),
                    arguments: r#"{"file_path":"src/lib.rs"}"#.into(),
                    signature: None,
                }),
            ],
            finish: FinishReason::ToolCalls,
            usage: Usage {
                input: 402,
                cache_read: 5000,
                cache_write: 1000,
                output: 64,
                reasoning: 0,
            },
        }
    );
}

#[test]
fn usage_arithmetic_both_ways() {
    // Anthropic → canonical → OpenAI: prompt_tokens = input + cache read + cache write.
    let response = decode_response(&fixture("response_tool.json"), &NameMap::default()).unwrap();
    assert_eq!(response.usage.total_input(), 402 + 5000 + 1000);
    assert_eq!(response.usage.total(), 6402 + 64);
    // OpenAI → canonical → Anthropic: input_tokens = prompt_tokens − cached_tokens.
    let openai = ChatResponse {
        usage: Usage::from_openai(1300, 1000, 0, 42, 10),
        ..response
    };
    let encoded = encode_response(&openai, "claude-sonnet-4-5");
    assert_eq!(
        encoded["usage"],
        serde_json::json!({"input_tokens": 300, "cache_read_input_tokens": 1000,
                           "cache_creation_input_tokens": 0, "output_tokens": 42,
                           "output_tokens_details": {"thinking_tokens": 10}})
    );
}

#[test]
fn thinking_tokens_are_read_and_written() {
    let body = serde_json::json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-opus-4-7",
        "content": [{"type": "text", "text": "Hi"}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 10, "output_tokens": 50,
                  "output_tokens_details": {"thinking_tokens": 30}},
    });
    let response = decode_response(body.to_string().as_bytes(), &NameMap::default()).unwrap();
    assert_eq!((response.usage.output, response.usage.reasoning), (50, 30));
    let encoded = encode_response(&response, "claude-opus-4-7");
    assert_eq!(
        encoded["usage"]["output_tokens_details"]["thinking_tokens"],
        30
    );
}

#[test]
fn every_stop_reason_decodes() {
    let rows = [
        ("end_turn", FinishReason::EndTurn),
        ("stop_sequence", FinishReason::StopSequence),
        ("max_tokens", FinishReason::MaxTokens),
        ("tool_use", FinishReason::ToolCalls),
        ("refusal", FinishReason::ContentFilter),
        ("pause_turn", FinishReason::PauseTurn),
        (
            "model_context_window_exceeded",
            FinishReason::ContextOverflow,
        ),
        ("something_new", FinishReason::EndTurn),
    ];
    for (stop_reason, finish) in rows {
        let body = serde_json::json!({"id": "m", "type": "message", "model": "c",
            "content": [{"type": "text", "text": "x"}], "stop_reason": stop_reason,
            "usage": {"input_tokens": 1, "output_tokens": 1}});
        let response = decode_response(body.to_string().as_bytes(), &NameMap::default()).unwrap();
        assert_eq!(response.finish, finish, "{stop_reason}");
    }
}

#[test]
fn every_finish_reason_encodes() {
    let rows = [
        (FinishReason::EndTurn, "end_turn"),
        (FinishReason::StopSequence, "stop_sequence"),
        (FinishReason::MaxTokens, "max_tokens"),
        (FinishReason::ToolCalls, "tool_use"),
        (FinishReason::ContentFilter, "refusal"),
        (FinishReason::PauseTurn, "pause_turn"),
        (
            FinishReason::ContextOverflow,
            "model_context_window_exceeded",
        ),
        (FinishReason::MalformedToolCall, "end_turn"),
    ];
    for (finish, stop_reason) in rows {
        let response = ChatResponse {
            id: "m".into(),
            model: "x".into(),
            created: 0,
            parts: vec![],
            finish,
            usage: Usage::default(),
        };
        assert_eq!(
            encode_response(&response, "c")["stop_reason"],
            stop_reason,
            "{finish:?}"
        );
    }
}

#[test]
fn tool_use_wins_over_the_stated_reason_and_names_are_restored() {
    let long_name = format!("mcp__{}__tool", "a".repeat(85));
    let names = NameMap::new(&[Tool {
        name: long_name.clone(),
        description: None,
        parameters: serde_json::json!({}).into(),
        strict: None,
    }]);
    let body = serde_json::json!({"id": "m", "type": "message", "model": "c",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": names.wire(&long_name), "input": {}}],
        "stop_reason": "end_turn"});
    let response = decode_response(body.to_string().as_bytes(), &names).unwrap();
    assert_eq!(response.finish, FinishReason::ToolCalls);
    assert_eq!(
        response.parts,
        vec![Part::ToolCall(ToolCall {
            id: "toolu_1".into(),
            name: long_name,
            arguments: "{}".into(),
            signature: None,
        })]
    );
}

#[test]
fn error_bodies_are_not_replies() {
    let body = br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    assert_eq!(
        decode_response(body, &NameMap::default()),
        Err(DecodeError::field(
            "type",
            "is `error`, not a message: Overloaded"
        ))
    );
}

#[test]
fn reply_for_claude_code() {
    let response = ChatResponse {
        id: "chatcmpl-9f4".into(),
        model: "gpt-4.1".into(),
        created: 1_767_000_001,
        parts: vec![
            Part::Reasoning(Reasoning {
                text: "From DeepSeek.".into(),
                ..Reasoning::default()
            }),
            Part::Reasoning(Reasoning {
                text: "Signed.".into(),
                signature: Some("EpcB".into()),
                ..Reasoning::default()
            }),
            Part::Reasoning(Reasoning {
                encrypted: Some("EmwK".into()),
                ..Reasoning::default()
            }),
            Part::Reasoning(Reasoning {
                encrypted: Some("gAAAA".into()),
                id: Some("rs_1".into()),
                ..Reasoning::default()
            }),
            Part::Text {
                text: String::new(),
            },
            Part::Text {
                text: "Reading.".into(),
            },
            Part::ToolCall(ToolCall {
                id: "call_r1.x".into(),
                name: "Read".into(),
                arguments: r#"{"file_path":"src/lib.rs"}"#.into(),
                signature: Some("gemini-sig".into()),
            }),
            Part::ToolCall(ToolCall {
                id: "call_r2".into(),
                name: "Bash".into(),
                arguments: r#"{"command": "ls"#.into(),
                signature: None,
            }),
        ],
        finish: FinishReason::ToolCalls,
        usage: Usage {
            input: 300,
            cache_read: 1000,
            cache_write: 20,
            output: 42,
            reasoning: 10,
        },
    };
    insta::assert_json_snapshot!(encode_response(&response, "claude-sonnet-4-5"));
}

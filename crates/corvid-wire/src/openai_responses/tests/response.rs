use pretty_assertions::assert_eq;
use serde_json::json;

use super::fixture;
use crate::model::{
    ChatResponse, DecodeError, FinishReason, Image, ImageSource, NameMap, Part, Reasoning,
    ToolCall, Usage,
};
use crate::openai_responses::{decode_response, encode_response};

fn call(id: &str, name: &str, arguments: &str) -> Part {
    Part::ToolCall(ToolCall {
        id: id.to_owned(),
        name: name.to_owned(),
        arguments: arguments.to_owned(),
        signature: None,
    })
}

fn text(text: &str) -> Part {
    Part::Text {
        text: text.to_owned(),
    }
}

/// The reply of `response_reasoning_tool_calls.json` (and of the stream it closes).
pub(super) fn reasoning_tool_calls_reply() -> ChatResponse {
    ChatResponse {
        id: "resp_r1".to_owned(),
        model: "gpt-5".to_owned(),
        created: 1_767_000_000,
        parts: vec![
            Part::Reasoning(Reasoning {
                text: "**Planning**\n\nNeed the file.\n\nAlso list the directory.".to_owned(),
                signature: None,
                encrypted: Some("gAAAAABo-encrypted-r1".to_owned()),
                id: Some("rs_r1".to_owned()),
            }),
            text("Let me look."),
            call("call_A1", "read_file", r#"{"path":"src/lib.rs"}"#),
            call("call_B2", "list_dir", r#"{"dir":"src"}"#),
        ],
        finish: FinishReason::ToolCalls,
        usage: Usage {
            input: 176,
            cache_read: 1024,
            cache_write: 0,
            output: 300,
            reasoning: 256,
        },
    }
}

#[test]
fn decodes_a_text_response() {
    let response = decode_response(&fixture("response_text.json"), &NameMap::default()).unwrap();
    assert_eq!(
        response,
        ChatResponse {
            id: "resp_t1".to_owned(),
            model: "gpt-5".to_owned(),
            created: 1_767_000_000,
            parts: vec![text("Hi there.")],
            finish: FinishReason::EndTurn,
            usage: Usage {
                input: 14,
                output: 4,
                ..Usage::default()
            },
        }
    );
}

#[test]
fn decodes_reasoning_text_and_parallel_tool_calls() {
    let response = decode_response(
        &fixture("response_reasoning_tool_calls.json"),
        &NameMap::default(),
    )
    .unwrap();
    assert_eq!(response, reasoning_tool_calls_reply());
}

#[test]
fn decodes_a_refusal_as_filtered_text() {
    let response = decode_response(&fixture("response_refusal.json"), &NameMap::default()).unwrap();
    assert_eq!(response.parts, vec![text("I can't help with that.")]);
    assert_eq!(response.finish, FinishReason::ContentFilter);
}

#[test]
fn a_failed_response_is_a_decode_error() {
    assert_eq!(
        decode_response(&fixture("response_failed.json"), &NameMap::default()).unwrap_err(),
        DecodeError::field(
            "status",
            "is failed: The server had an error while processing your request."
        )
    );
}

#[test]
fn empty_reasoning_items_and_builtin_tool_items_are_skipped() {
    let body = json!({
        "id": "resp_s", "object": "response", "created_at": 1767000000.5, "status": "completed",
        "model": "gpt-5",
        "output": [
            { "type": "reasoning", "id": "rs_s", "summary": [] },
            { "type": "web_search_call", "id": "ws_s", "status": "completed" },
            { "type": "message", "id": "m1", "role": "assistant",
              "content": [{ "type": "output_text", "text": "A" }] },
            { "type": "message", "id": "m2", "role": "assistant",
              "content": [{ "type": "output_text", "text": "B" }] },
        ],
    });
    let response = decode_response(body.to_string().as_bytes(), &NameMap::default()).unwrap();
    assert_eq!(response.parts, vec![text("AB")]);
    assert_eq!(response.created, 1_767_000_000);
    assert_eq!(response.usage, Usage::default());
}

#[test]
fn encodes_a_text_response() {
    let response = decode_response(&fixture("response_text.json"), &NameMap::default()).unwrap();
    insta::assert_json_snapshot!(encode_response(&response, "my-alias"));
}

#[test]
fn encodes_reasoning_text_and_tool_calls() {
    insta::assert_json_snapshot!(encode_response(&reasoning_tool_calls_reply(), "gpt-5"));
}

#[test]
fn encodes_a_foreign_reply() {
    // Anthropic thinking: the text becomes a summary and the signature, marked, the
    // `encrypted_content` (a part with only a signature too); images have no place in
    // Responses output.
    let response = ChatResponse {
        id: "msg_01Hn".to_owned(),
        model: "claude-sonnet-4-5".to_owned(),
        created: 1_767_000_001,
        parts: vec![
            Part::Reasoning(Reasoning {
                text: "Need the file.".to_owned(),
                signature: Some("EpcBCkgIBh".to_owned()),
                ..Reasoning::default()
            }),
            Part::Reasoning(Reasoning {
                signature: Some("only-a-signature".to_owned()),
                ..Reasoning::default()
            }),
            text("One. "),
            text("Two."),
            Part::Image(Image {
                source: ImageSource::Url {
                    url: "https://example.com/x.png".to_owned(),
                },
                detail: None,
            }),
            call("toolu_01Rf", "read_file", r#"{"path":"src/lib.rs"}"#),
        ],
        finish: FinishReason::ToolCalls,
        usage: Usage {
            input: 402,
            cache_read: 100,
            cache_write: 50,
            output: 64,
            reasoning: 0,
        },
    };
    insta::assert_json_snapshot!(encode_response(&response, "claude-sonnet-4-5"));
}

#[test]
fn encodes_the_output_limit_as_incomplete() {
    let response =
        decode_response(&fixture("response_incomplete.json"), &NameMap::default()).unwrap();
    assert_eq!(response.finish, FinishReason::MaxTokens);
    insta::assert_json_snapshot!(encode_response(&response, "gpt-5"));
}

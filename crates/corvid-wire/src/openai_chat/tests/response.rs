//! Whole replies, usage arithmetic (§6.5) and finish reasons (§6.2).

use pretty_assertions::assert_eq;
use serde_json::json;

use super::build::{call, reasoning, text};
use super::fixture;
use crate::model::{ChatResponse, DecodeError, FinishReason, NameMap, Part, Usage};
use crate::openai_chat::response::{decode_usage, encode_usage};
use crate::openai_chat::{decode_response, encode_response};

#[test]
fn decodes_a_text_reply() {
    let response = decode_response(&fixture("response_text.json"), &NameMap::default()).unwrap();
    assert_eq!(
        response,
        ChatResponse {
            id: "chatcmpl-9f2".to_owned(),
            model: "gpt-4.1".to_owned(),
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
fn decodes_parallel_tool_calls_with_cached_tokens() {
    let response =
        decode_response(&fixture("response_tool_calls.json"), &NameMap::default()).unwrap();
    assert_eq!(
        response,
        ChatResponse {
            id: "chatcmpl-9f4".to_owned(),
            model: "gpt-4.1".to_owned(),
            created: 1_767_000_001,
            parts: vec![
                call("call_r1", "read_file", r#"{"path":"src/lib.rs"}"#),
                call("call_r2", "read_file", r#"{"path":"src/main.rs"}"#),
            ],
            finish: FinishReason::ToolCalls,
            // prompt 1061 includes the 1024 cached; completion 117 includes 64 reasoning.
            usage: Usage {
                input: 37,
                cache_read: 1024,
                cache_write: 0,
                output: 117,
                reasoning: 64,
            },
        }
    );
}

#[test]
fn decodes_xai_reasoning_and_its_usage() {
    let response =
        decode_response(&fixture("response_xai_reasoning.json"), &NameMap::default()).unwrap();
    assert_eq!(
        response,
        ChatResponse {
            id: "6f1c7a2e-xai".to_owned(),
            model: "grok-3-mini".to_owned(),
            created: 1_767_000_002,
            parts: vec![
                reasoning("Check divisors up to 10: none divide 101."),
                text("101 is prime."),
            ],
            finish: FinishReason::EndTurn,
            // xAI: completion 6 excludes the 300 reasoning tokens (total 326 = 20 + 6 + 300).
            usage: Usage {
                input: 12,
                cache_read: 8,
                cache_write: 0,
                output: 306,
                reasoning: 300,
            },
        }
    );
}

#[test]
fn decodes_a_refusal_as_text_and_content_filter() {
    let body = json!({"id": "c", "model": "m", "choices": [{"index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": null, "refusal": "I can't help with that."}}]});
    let response = decode_response(body.to_string().as_bytes(), &NameMap::default()).unwrap();
    assert_eq!(response.parts, [text("I can't help with that.")]);
    assert_eq!(response.finish, FinishReason::ContentFilter);
}

#[test]
fn decodes_the_legacy_function_call() {
    let body = json!({"id": "c", "model": "m", "choices": [{"index": 0, "finish_reason": "function_call",
        "message": {"role": "assistant", "content": null,
                    "function_call": {"name": "grep", "arguments": "{\"q\":\"x\"}"}}}]});
    let response = decode_response(body.to_string().as_bytes(), &NameMap::default()).unwrap();
    let id = crate::model::synthetic_call_id("grep", r#"{"q":"x"}"#, 0);
    assert_eq!(response.parts, [call(&id, "grep", r#"{"q":"x"}"#)]);
    assert_eq!(response.finish, FinishReason::ToolCalls);
}

#[test]
fn malformed_replies_are_errors() {
    let names = NameMap::default();
    assert!(matches!(
        decode_response(b"<html>", &names),
        Err(DecodeError::Json(_))
    ));
    assert_eq!(
        decode_response(br#"{"choices":[]}"#, &names),
        Err(DecodeError::field("choices", "is empty"))
    );
    assert_eq!(
        decode_response(br#"{"error":{"message":"boom"}}"#, &names),
        Err(DecodeError::field(
            "choices",
            r#"is missing; the reply is an error: {"message":"boom"}"#
        ))
    );
}

#[test]
fn encodes_a_text_reply() {
    let response = decode_response(&fixture("response_text.json"), &NameMap::default()).unwrap();
    snapshot!("encode_text_reply", encode_response(&response, "my-model"));
}

#[test]
fn encodes_tool_calls_with_null_content() {
    let response =
        decode_response(&fixture("response_tool_calls.json"), &NameMap::default()).unwrap();
    snapshot!(
        "encode_tool_calls_reply",
        encode_response(&response, "gpt-4.1")
    );
}

#[test]
fn encodes_reasoning_as_reasoning_content() {
    let response =
        decode_response(&fixture("response_xai_reasoning.json"), &NameMap::default()).unwrap();
    snapshot!(
        "encode_reasoning_reply",
        encode_response(&response, "supergrok")
    );
}

#[test]
fn a_reply_survives_a_chat_hop() {
    for name in [
        "response_text.json",
        "response_tool_calls.json",
        "response_xai_reasoning.json",
    ] {
        let names = NameMap::default();
        let response = decode_response(&fixture(name), &names).unwrap();
        let encoded = encode_response(&response, &response.model).to_string();
        assert_eq!(
            decode_response(encoded.as_bytes(), &names).unwrap(),
            response,
            "{name}"
        );
    }
}

/// §6.5, OpenAI ↔ canonical: `prompt_tokens` includes cache reads and writes,
/// `completion_tokens` includes reasoning; both directions give the same numbers back.
#[test]
fn usage_openai_cached_tokens_both_ways() {
    let wire = json!({
        "prompt_tokens": 2006, "completion_tokens": 300, "total_tokens": 2306,
        "prompt_tokens_details": {"cached_tokens": 1920, "cache_write_tokens": 64},
        "completion_tokens_details": {"reasoning_tokens": 128},
    });
    let usage = decode_usage(&wire);
    assert_eq!(
        usage,
        Usage {
            input: 22,
            cache_read: 1920,
            cache_write: 64,
            output: 300,
            reasoning: 128,
        }
    );
    assert_eq!(encode_usage(&usage), wire);
}

/// §6.5, Anthropic → OpenAI: `prompt_tokens = input + cache_read + cache_creation` (using
/// `input_tokens` alone would undercount).
#[test]
fn usage_anthropic_counts_to_openai() {
    // Anthropic: input_tokens 18, cache_read 1000, cache_creation 200, output_tokens 50.
    let usage = Usage {
        input: 18,
        cache_read: 1000,
        cache_write: 200,
        output: 50,
        reasoning: 0,
    };
    assert_eq!(
        encode_usage(&usage),
        json!({
            "prompt_tokens": 1218, "completion_tokens": 50, "total_tokens": 1268,
            "prompt_tokens_details": {"cached_tokens": 1000, "cache_write_tokens": 200},
            "completion_tokens_details": {"reasoning_tokens": 0},
        })
    );
}

/// §6.5, xAI → OpenAI: xAI's `completion_tokens` excludes reasoning and its total includes
/// it; OpenAI clients get reasoning added to `completion_tokens`.
#[test]
fn usage_xai_reasoning_is_added_to_the_output() {
    let xai = json!({
        "prompt_tokens": 37, "completion_tokens": 530, "total_tokens": 1363,
        "prompt_tokens_details": {"text_tokens": 37, "cached_tokens": 6},
        "completion_tokens_details": {"reasoning_tokens": 796},
        "num_sources_used": 0,
    });
    let usage = decode_usage(&xai);
    assert_eq!(
        usage,
        Usage {
            input: 31,
            cache_read: 6,
            cache_write: 0,
            output: 1326,
            reasoning: 796,
        }
    );
    assert_eq!(usage.visible_output(), 530, "xAI's own completion_tokens");
    assert_eq!(encode_usage(&usage)["completion_tokens"], 1326);
    assert_eq!(encode_usage(&usage)["total_tokens"], 1363);
    // Without a total, reasoning larger than the completion can only be excluded from it.
    let no_total = json!({"prompt_tokens": 10, "completion_tokens": 5,
                          "completion_tokens_details": {"reasoning_tokens": 40}});
    assert_eq!(decode_usage(&no_total).output, 45);
    // OpenAI's own reasoning stays inside completion_tokens.
    let openai = json!({"prompt_tokens": 10, "completion_tokens": 50, "total_tokens": 60,
                        "completion_tokens_details": {"reasoning_tokens": 40}});
    assert_eq!(decode_usage(&openai).output, 50);
}

#[test]
fn usage_deepseek_cache_hits_and_missing_fields() {
    let deepseek = json!({"prompt_tokens": 100, "completion_tokens": 7, "total_tokens": 107,
                          "prompt_cache_hit_tokens": 64, "prompt_cache_miss_tokens": 36});
    assert_eq!(
        decode_usage(&deepseek),
        Usage {
            input: 36,
            cache_read: 64,
            output: 7,
            ..Usage::default()
        }
    );
    assert_eq!(decode_usage(&json!({})), Usage::default());
}

#[test]
fn each_finish_reason_reaches_the_client() {
    for (finish, wire) in [
        (FinishReason::EndTurn, "stop"),
        (FinishReason::StopSequence, "stop"),
        (FinishReason::MaxTokens, "length"),
        (FinishReason::ContentFilter, "content_filter"),
        (FinishReason::ContextOverflow, "length"),
        (FinishReason::PauseTurn, "stop"),
        (FinishReason::MalformedToolCall, "stop"),
    ] {
        let response = ChatResponse {
            id: "r".to_owned(),
            model: "m".to_owned(),
            created: 0,
            parts: vec![Part::Text {
                text: "x".to_owned(),
            }],
            finish,
            usage: Usage::default(),
        };
        let body = encode_response(&response, "m");
        assert_eq!(body["choices"][0]["finish_reason"], wire, "{finish:?}");
        let decoded = decode_response(body.to_string().as_bytes(), &NameMap::default()).unwrap();
        let expected = match wire {
            "stop" => FinishReason::EndTurn,
            "length" => FinishReason::MaxTokens,
            _ => FinishReason::ContentFilter,
        };
        assert_eq!(decoded.finish, expected, "{finish:?} back");
    }
}

//! Each dialect's `usage.rs`, read from bytes (events and whole bodies) and from values: the
//! same counts either way.

use pretty_assertions::assert_eq;
use serde_json::json;

use crate::model::Usage;
use crate::{anthropic, gemini, openai_chat, openai_responses};

fn usage(input: u64, cache_read: u64, cache_write: u64, output: u64, reasoning: u64) -> Usage {
    Usage {
        input,
        cache_read,
        cache_write,
        output,
        reasoning,
    }
}

#[test]
fn each_dialects_counts_become_the_canonical_split() {
    assert_eq!(
        openai_chat::usage::from_event(
            br#"{"choices":[],"usage":{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120,
                 "prompt_tokens_details": {"cached_tokens": 40},
                 "completion_tokens_details": {"reasoning_tokens": 5}}}"#
        ),
        Some(usage(60, 40, 0, 20, 5))
    );
    assert_eq!(
        openai_chat::usage::from_event(
            br#"{"usage":{"prompt_tokens": 10, "completion_tokens": 4, "total_tokens": 24,
                 "completion_tokens_details": {"reasoning_tokens": 10}}}"#
        ),
        Some(usage(10, 0, 0, 14, 10)),
        "xAI: reasoning outside completion_tokens"
    );
    assert_eq!(
        openai_responses::usage::from_event(
            br#"{"type":"response.completed","response":{"id":"r","output":[{"type":"message"}],
                 "usage":{"input_tokens":30,"input_tokens_details":{"cached_tokens":10},
                          "output_tokens":7,"output_tokens_details":{"reasoning_tokens":3}}}}"#
        ),
        Some(usage(20, 10, 0, 7, 3))
    );
    assert_eq!(
        anthropic::usage::from_event(
            br#"{"type":"message_start","message":{"id":"m","usage":{"input_tokens": 5,
                 "cache_read_input_tokens": 100, "cache_creation_input_tokens": 20, "output_tokens": 1}}}"#,
            None
        ),
        Some(usage(5, 100, 20, 1, 0))
    );
    assert_eq!(
        gemini::usage::from_event(
            br#"{"candidates":[{"content":{"parts":[{"text":"hi"}]}}],
                 "usageMetadata":{"promptTokenCount": 50, "cachedContentTokenCount": 10,
                                  "candidatesTokenCount": 8, "thoughtsTokenCount": 2,
                                  "toolUsePromptTokenCount": 5}}"#
        ),
        Some(usage(45, 10, 0, 10, 2))
    );
}

#[test]
fn a_deepseek_reply_reads_its_top_level_cache_counts_and_reasoning() {
    let wire = json!({
        "prompt_tokens": 100, "completion_tokens": 30, "total_tokens": 130,
        "prompt_cache_hit_tokens": 60, "prompt_cache_miss_tokens": 40,
        "cache_write_tokens": 10,
        "completion_tokens_details": {"reasoning_tokens": 12}
    });
    let expected = usage(30, 60, 10, 30, 12);
    let body = json!({"choices": [], "usage": wire}).to_string();
    assert_eq!(openai_chat::usage::from_value(&wire), expected);
    assert_eq!(
        openai_chat::usage::from_event(body.as_bytes()),
        Some(expected)
    );
    assert_eq!(
        openai_chat::usage::from_body(body.as_bytes()),
        Some(expected)
    );
}

#[test]
fn reasoning_larger_than_the_completion_was_left_out_of_it() {
    let wire = br#"{"usage":{"prompt_tokens":5,"completion_tokens":4,"completion_tokens_details":{"reasoning_tokens":9}}}"#;
    assert_eq!(
        openai_chat::usage::from_event(wire),
        Some(usage(5, 0, 0, 13, 9))
    );
    assert_eq!(
        openai_responses::usage::from_event(
            br#"{"response":{"usage":{"input_tokens":5,"output_tokens":4,"total_tokens":18,"output_tokens_details":{"reasoning_tokens":9}}}}"#
        ),
        Some(usage(5, 0, 0, 13, 9)),
        "a Responses total that adds up only with the reasoning on top"
    );
}

#[test]
fn an_anthropic_delta_keeps_the_start_counts_unless_it_repeats_them() {
    let start = Some(usage(5, 100, 20, 1, 0));
    assert_eq!(
        anthropic::usage::from_event(
            br#"{"type":"message_delta","usage":{"output_tokens":9,"output_tokens_details":{"thinking_tokens":4}}}"#,
            start
        ),
        Some(usage(5, 100, 20, 9, 4))
    );
    assert_eq!(
        anthropic::usage::from_event(
            br#"{"type":"message_delta","usage":{"input_tokens":7,"output_tokens":9}}"#,
            start
        ),
        Some(usage(7, 100, 20, 9, 0)),
        "a delta that repeats a count wins for that count"
    );
    assert_eq!(
        anthropic::usage::from_event(br#"{"type":"message_delta","delta":{}}"#, start),
        None
    );
    assert_eq!(
        anthropic::usage::from_body(
            br#"{"content":[],"usage":{"input_tokens":2,"output_tokens":3,"output_tokens_details":{"thinking_tokens":1}}}"#
        ),
        Some(usage(2, 0, 0, 3, 1)),
        "thinking tokens are the reasoning share"
    );
}

#[test]
fn odd_counts_read_as_zero_and_keep_the_rest() {
    assert_eq!(
        openai_chat::usage::from_event(
            br#"{"usage":{"prompt_tokens":"12","completion_tokens":-3,"total_tokens":1.5,
                 "prompt_tokens_details":null,"completion_tokens_details":{"reasoning_tokens":[1]},
                 "extra":{"nested":[1,{"a":2}]}}}"#
        ),
        Some(usage(0, 0, 0, 0, 0))
    );
    assert_eq!(
        openai_chat::usage::from_event(
            br#"{"usage":{"prompt_tokens":{"a":1},"completion_tokens":4}}"#
        ),
        Some(usage(0, 0, 0, 4, 0))
    );
    assert_eq!(
        openai_chat::usage::from_event(br#"{"usage":null}"#),
        None,
        "no usage yet"
    );
    assert_eq!(
        openai_chat::usage::from_event(br#"{"usage":5}"#),
        None,
        "not an object"
    );
    assert_eq!(openai_chat::usage::from_event(b"not json"), None);
    assert_eq!(openai_chat::usage::from_value(&json!(5)), Usage::default());
}

#[test]
fn a_whole_body_is_read_from_its_last_usage_key() {
    assert_eq!(
        openai_responses::usage::from_body(br#"{"usage":{"input_tokens":3,"output_tokens":2}}"#),
        Some(usage(3, 0, 0, 2, 0))
    );
    // A `"usage"` inside a string is escaped, so the real key is the last one.
    assert_eq!(
        openai_chat::usage::from_body(
            br#"{"choices":[{"message":{"content":"the \"usage\": {} key"}}],
                 "usage" : {"prompt_tokens":4,"completion_tokens":1,"total_tokens":5}, "x": 1}"#
        ),
        Some(usage(4, 0, 0, 1, 0))
    );
    assert_eq!(
        gemini::usage::from_body(
            br#"{"candidates":[],"usageMetadata":{"promptTokenCount":2,"candidatesTokenCount":3}}"#
        ),
        Some(usage(2, 0, 0, 3, 0))
    );
    assert_eq!(
        anthropic::usage::from_body(
            br#"{"content":[],"usage":{"input_tokens":2,"output_tokens":3}}"#
        ),
        Some(usage(2, 0, 0, 3, 0))
    );
    assert_eq!(openai_chat::usage::from_body(b"{}"), None);
    assert_eq!(openai_chat::usage::from_body(br#"{"usage":null}"#), None);
    assert_eq!(
        openai_chat::usage::from_body(br#"{"usage":{"prompt_tokens":4"#),
        None,
        "cut off"
    );
    assert_eq!(
        openai_chat::usage::from_body(b"{\"usage\":{\"prompt_tokens\":4},\"x\":\"\xff\"}"),
        Some(usage(4, 0, 0, 0, 0)),
        "bytes that are not UTF-8 after the usage object do not lose it"
    );
    assert_eq!(
        openai_chat::usage::from_body(b"{\"usage\":{\"prompt_tokens\":4,\"k\":\"\xff\"}}"),
        None,
        "inside it they do"
    );
}

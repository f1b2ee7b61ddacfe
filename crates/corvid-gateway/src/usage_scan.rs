//! Reading token usage off a relayed reply without touching the bytes that go to the client:
//! from one SSE event (streams) or from a whole JSON body (non-streamed replies).

use corvid_wire::model::Usage;
use serde_json::Value;

use corvid_wire::Dialect;

/// The count at `path` (`/`-separated keys). Walked with `get` rather than `Value::pointer`,
/// which allocates per segment to unescape it; these paths have nothing to unescape.
fn count(value: &Value, path: &str) -> u64 {
    path.split('/')
        .filter(|key| !key.is_empty())
        .try_fold(value, |value, key| value.get(key))
        .and_then(Value::as_u64)
        .unwrap_or(0)
}

/// Usage from an OpenAI chat `usage` object (xAI's reasoning-excluded output included).
pub(crate) fn from_chat(usage: &Value) -> Usage {
    let prompt = count(usage, "/prompt_tokens");
    let completion = count(usage, "/completion_tokens");
    let reasoning = count(usage, "/completion_tokens_details/reasoning_tokens");
    let total = count(usage, "/total_tokens");
    // xAI counts reasoning outside completion_tokens; its total gives that away.
    let output = if reasoning > 0 && total == prompt + completion + reasoning {
        completion + reasoning
    } else {
        completion
    };
    Usage::from_openai(
        prompt,
        count(usage, "/prompt_tokens_details/cached_tokens"),
        count(usage, "/prompt_tokens_details/cache_write_tokens"),
        output,
        reasoning,
    )
}

/// Usage from a Responses `usage` object.
pub(crate) fn from_responses(usage: &Value) -> Usage {
    Usage::from_openai(
        count(usage, "/input_tokens"),
        count(usage, "/input_tokens_details/cached_tokens"),
        count(usage, "/input_tokens_details/cache_write_tokens"),
        count(usage, "/output_tokens"),
        count(usage, "/output_tokens_details/reasoning_tokens"),
    )
}

/// Usage from an Anthropic `usage` object (input excludes cache reads and writes).
pub(crate) fn from_anthropic(usage: &Value) -> Usage {
    Usage {
        input: count(usage, "/input_tokens"),
        cache_read: count(usage, "/cache_read_input_tokens"),
        cache_write: count(usage, "/cache_creation_input_tokens"),
        output: count(usage, "/output_tokens"),
        reasoning: 0,
    }
}

/// Usage from Gemini `usageMetadata` (candidates exclude thoughts).
pub(crate) fn from_gemini(usage: &Value) -> Usage {
    let thoughts = count(usage, "/thoughtsTokenCount");
    Usage::from_openai(
        count(usage, "/promptTokenCount"),
        count(usage, "/cachedContentTokenCount"),
        0,
        count(usage, "/candidatesTokenCount") + thoughts,
        thoughts,
    )
}

/// Usage in a whole non-streamed reply of `dialect`. Only the usage object is parsed: it is
/// found by its key (a quoted key can only be a key — quotes inside JSON strings are escaped).
pub(crate) fn from_body(dialect: Dialect, body: &[u8]) -> Option<Usage> {
    let key: &[u8] = match dialect {
        Dialect::Gemini => b"\"usageMetadata\"",
        _ => b"\"usage\"",
    };
    let usage = object_after_last(body, key)?;
    Some(match dialect {
        Dialect::OpenAiChat => from_chat(&usage),
        Dialect::OpenAiResponses => from_responses(&usage),
        Dialect::Anthropic => from_anthropic(&usage),
        Dialect::Gemini => from_gemini(&usage),
    })
}

/// The JSON object that follows the last occurrence of `key` and its colon.
fn object_after_last(body: &[u8], key: &[u8]) -> Option<Value> {
    let position = body.windows(key.len()).rposition(|window| window == key)?;
    let rest = body[position + key.len()..].trim_ascii_start();
    let rest = rest.strip_prefix(b":")?.trim_ascii_start();
    let value = serde_json::Deserializer::from_slice(rest)
        .into_iter::<Value>()
        .next()?
        .ok()?;
    value.is_object().then_some(value)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn each_dialects_counts_become_the_canonical_split() {
        assert_eq!(
            from_chat(
                &json!({"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120,
                              "prompt_tokens_details": {"cached_tokens": 40},
                              "completion_tokens_details": {"reasoning_tokens": 5}})
            ),
            Usage {
                input: 60,
                cache_read: 40,
                cache_write: 0,
                output: 20,
                reasoning: 5
            }
        );
        assert_eq!(
            from_chat(
                &json!({"prompt_tokens": 10, "completion_tokens": 4, "total_tokens": 24,
                              "completion_tokens_details": {"reasoning_tokens": 10}})
            ),
            Usage {
                input: 10,
                cache_read: 0,
                cache_write: 0,
                output: 14,
                reasoning: 10
            },
            "xAI: reasoning outside completion_tokens"
        );
        assert_eq!(
            from_anthropic(&json!({"input_tokens": 5, "cache_read_input_tokens": 100,
                                   "cache_creation_input_tokens": 20, "output_tokens": 7})),
            Usage {
                input: 5,
                cache_read: 100,
                cache_write: 20,
                output: 7,
                reasoning: 0
            }
        );
        assert_eq!(
            from_gemini(
                &json!({"promptTokenCount": 50, "cachedContentTokenCount": 10,
                                "candidatesTokenCount": 8, "thoughtsTokenCount": 2})
            ),
            Usage {
                input: 40,
                cache_read: 10,
                cache_write: 0,
                output: 10,
                reasoning: 2
            }
        );
        assert_eq!(
            from_body(
                Dialect::OpenAiResponses,
                br#"{"usage":{"input_tokens":3,"output_tokens":2}}"#
            ),
            Some(Usage {
                input: 3,
                output: 2,
                ..Usage::default()
            })
        );
        assert_eq!(from_body(Dialect::OpenAiChat, b"{}"), None);
    }
}

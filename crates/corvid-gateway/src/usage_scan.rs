//! Reading token usage off a relayed reply without touching the bytes that go to the client:
//! from one SSE event (streams) or from a whole JSON body (non-streamed replies). Only the
//! usage object becomes a value, deserialised into typed counts; everything around it is
//! skipped by the parser without being built.

use std::fmt;

use corvid_wire::Dialect;
use corvid_wire::model::Usage;
use corvid_wire::sse::Marker;
use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// A token count as the upstream wrote it. Anything but a non-negative integer reads as 0,
/// as a missing count does: an odd field must not cost the request its ledger row.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Count(u64);

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(CountVisitor)
    }
}

struct CountVisitor;

impl<'de> Visitor<'de> for CountVisitor {
    type Value = Count;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a token count")
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Count, E> {
        Ok(Count(value))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Count, E> {
        Ok(Count(u64::try_from(value).unwrap_or(0)))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Count, E> {
        Ok(Count(0))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Count, E> {
        Ok(Count(0))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Count, E> {
        Ok(Count(0))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Count, E> {
        Ok(Count(0))
    }

    fn visit_none<E: de::Error>(self) -> Result<Count, E> {
        Ok(Count(0))
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Count, D::Error> {
        Count::deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Count, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Count(0))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Count, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Count(0))
    }
}

/// An OpenAI chat `usage` object.
#[derive(Default, Deserialize)]
#[serde(default)]
struct ChatUsage {
    prompt_tokens: Count,
    completion_tokens: Count,
    total_tokens: Count,
    prompt_tokens_details: Option<InputDetails>,
    completion_tokens_details: Option<OutputDetails>,
}

/// A Responses `usage` object.
#[derive(Default, Deserialize)]
#[serde(default)]
struct ResponsesUsage {
    input_tokens: Count,
    output_tokens: Count,
    input_tokens_details: Option<InputDetails>,
    output_tokens_details: Option<OutputDetails>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct InputDetails {
    cached_tokens: Count,
    cache_write_tokens: Count,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct OutputDetails {
    reasoning_tokens: Count,
}

/// An Anthropic `usage` object. `input_tokens` stays optional: a `message_delta` that leaves
/// it out keeps the counts of `message_start`.
#[derive(Default, Deserialize)]
#[serde(default)]
struct AnthropicUsage {
    input_tokens: Option<Count>,
    cache_read_input_tokens: Count,
    cache_creation_input_tokens: Count,
    output_tokens: Count,
}

/// Gemini `usageMetadata`.
#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct GeminiUsage {
    prompt_token_count: Count,
    cached_content_token_count: Count,
    candidates_token_count: Count,
    thoughts_token_count: Count,
}

impl ChatUsage {
    fn usage(&self) -> Usage {
        let prompt = self.prompt_tokens.0;
        let completion = self.completion_tokens.0;
        let reasoning = self
            .completion_tokens_details
            .as_ref()
            .map_or(0, |details| details.reasoning_tokens.0);
        // xAI counts reasoning outside completion_tokens; its total gives that away.
        let output = if reasoning > 0 && self.total_tokens.0 == prompt + completion + reasoning {
            completion + reasoning
        } else {
            completion
        };
        let (cached, cache_write) = input_details(self.prompt_tokens_details.as_ref());
        Usage::from_openai(prompt, cached, cache_write, output, reasoning)
    }
}

impl ResponsesUsage {
    fn usage(&self) -> Usage {
        let (cached, cache_write) = input_details(self.input_tokens_details.as_ref());
        let reasoning = self
            .output_tokens_details
            .as_ref()
            .map_or(0, |details| details.reasoning_tokens.0);
        Usage::from_openai(
            self.input_tokens.0,
            cached,
            cache_write,
            self.output_tokens.0,
            reasoning,
        )
    }
}

fn input_details(details: Option<&InputDetails>) -> (u64, u64) {
    details.map_or((0, 0), |details| {
        (details.cached_tokens.0, details.cache_write_tokens.0)
    })
}

impl AnthropicUsage {
    /// Anthropic's input excludes cache reads and writes already.
    fn usage(&self) -> Usage {
        Usage {
            input: self.input_tokens.unwrap_or_default().0,
            cache_read: self.cache_read_input_tokens.0,
            cache_write: self.cache_creation_input_tokens.0,
            output: self.output_tokens.0,
            reasoning: 0,
        }
    }
}

impl GeminiUsage {
    /// Gemini's candidates exclude thoughts.
    fn usage(&self) -> Usage {
        let thoughts = self.thoughts_token_count.0;
        Usage::from_openai(
            self.prompt_token_count.0,
            self.cached_content_token_count.0,
            0,
            self.candidates_token_count.0 + thoughts,
            thoughts,
        )
    }
}

/// `{"usage": …}`: a chat chunk, or an Anthropic `message_delta`.
#[derive(Deserialize)]
struct WithUsage<T> {
    usage: Option<T>,
}

/// A Responses terminal event: `{"response": {"usage": …}}`.
#[derive(Deserialize)]
struct ResponseEvent {
    response: Option<WithUsage<ResponsesUsage>>,
}

/// An Anthropic `message_start`: `{"message": {"usage": …}}`.
#[derive(Deserialize)]
struct MessageStart {
    message: Option<WithUsage<AnthropicUsage>>,
}

#[derive(Deserialize)]
struct GeminiChunk {
    #[serde(rename = "usageMetadata")]
    usage_metadata: Option<GeminiUsage>,
}

/// Usage in one OpenAI chat chunk.
pub(crate) fn chat_event(payload: &[u8]) -> Option<Usage> {
    let event: WithUsage<ChatUsage> = serde_json::from_slice(payload).ok()?;
    event.usage.map(|usage| usage.usage())
}

/// Usage in a Responses terminal event.
pub(crate) fn responses_event(payload: &[u8]) -> Option<Usage> {
    let event: ResponseEvent = serde_json::from_slice(payload).ok()?;
    event.response?.usage.map(|usage| usage.usage())
}

/// Usage in an Anthropic `message_start`.
pub(crate) fn anthropic_start(payload: &[u8]) -> Option<Usage> {
    let event: MessageStart = serde_json::from_slice(payload).ok()?;
    event.message?.usage.map(|usage| usage.usage())
}

/// An Anthropic `message_delta`'s cumulative output folded into `so_far`: input and cache
/// counts stay from `message_start` unless the delta repeats them.
pub(crate) fn anthropic_delta(payload: &[u8], so_far: Option<Usage>) -> Option<Usage> {
    let event: WithUsage<AnthropicUsage> = serde_json::from_slice(payload).ok()?;
    let delta = event.usage?;
    let mut merged = so_far.unwrap_or_default();
    merged.output = delta.output_tokens.0;
    if delta.input_tokens.is_some() {
        let counted = delta.usage();
        merged.input = counted.input;
        merged.cache_read = counted.cache_read;
        merged.cache_write = counted.cache_write;
    }
    Some(merged)
}

/// Usage in one Gemini chunk.
pub(crate) fn gemini_event(payload: &[u8]) -> Option<Usage> {
    let event: GeminiChunk = serde_json::from_slice(payload).ok()?;
    event.usage_metadata.map(|usage| usage.usage())
}

/// Usage in a whole non-streamed reply of `dialect`. Only the usage object is parsed: it is
/// found by its key, searching from the end where providers put it (a quoted key can only be
/// a key — quotes inside JSON strings are escaped).
pub(crate) fn from_body(dialect: Dialect, body: &[u8]) -> Option<Usage> {
    static USAGE: Marker = Marker::new(b"\"usage\"");
    static USAGE_METADATA: Marker = Marker::new(b"\"usageMetadata\"");
    let key = match dialect {
        Dialect::Gemini => &USAGE_METADATA,
        _ => &USAGE,
    };
    let rest = body[key.end_of_last(body)?..].trim_ascii_start();
    let object = rest.strip_prefix(b":")?.trim_ascii_start();
    if !object.starts_with(b"{") {
        return None;
    }
    Some(match dialect {
        Dialect::OpenAiChat => first_value::<ChatUsage>(object)?.usage(),
        Dialect::OpenAiResponses => first_value::<ResponsesUsage>(object)?.usage(),
        Dialect::Anthropic => first_value::<AnthropicUsage>(object)?.usage(),
        Dialect::Gemini => first_value::<GeminiUsage>(object)?.usage(),
    })
}

/// The first JSON value in `bytes`, ignoring whatever follows it. Read from a `&str`, checked
/// for UTF-8 once, so the parser does not check each key again.
fn first_value<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Option<T> {
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        // Whatever follows the value may be cut or broken; the value itself must not be.
        Err(error) => std::str::from_utf8(&bytes[..error.valid_up_to()]).ok()?,
    };
    serde_json::Deserializer::from_str(text)
        .into_iter::<T>()
        .next()?
        .ok()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

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
            chat_event(
                br#"{"choices":[],"usage":{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120,
                     "prompt_tokens_details": {"cached_tokens": 40},
                     "completion_tokens_details": {"reasoning_tokens": 5}}}"#
            ),
            Some(usage(60, 40, 0, 20, 5))
        );
        assert_eq!(
            chat_event(
                br#"{"usage":{"prompt_tokens": 10, "completion_tokens": 4, "total_tokens": 24,
                     "completion_tokens_details": {"reasoning_tokens": 10}}}"#
            ),
            Some(usage(10, 0, 0, 14, 10)),
            "xAI: reasoning outside completion_tokens"
        );
        assert_eq!(
            responses_event(
                br#"{"type":"response.completed","response":{"id":"r","output":[{"type":"message"}],
                     "usage":{"input_tokens":30,"input_tokens_details":{"cached_tokens":10},
                              "output_tokens":7,"output_tokens_details":{"reasoning_tokens":3}}}}"#
            ),
            Some(usage(20, 10, 0, 7, 3))
        );
        assert_eq!(
            anthropic_start(
                br#"{"type":"message_start","message":{"id":"m","usage":{"input_tokens": 5,
                     "cache_read_input_tokens": 100, "cache_creation_input_tokens": 20, "output_tokens": 1}}}"#
            ),
            Some(usage(5, 100, 20, 1, 0))
        );
        assert_eq!(
            gemini_event(
                br#"{"candidates":[{"content":{"parts":[{"text":"hi"}]}}],
                     "usageMetadata":{"promptTokenCount": 50, "cachedContentTokenCount": 10,
                                      "candidatesTokenCount": 8, "thoughtsTokenCount": 2}}"#
            ),
            Some(usage(40, 10, 0, 10, 2))
        );
    }

    #[test]
    fn an_anthropic_delta_keeps_the_start_counts_unless_it_repeats_them() {
        let start = Some(usage(5, 100, 20, 1, 0));
        assert_eq!(
            anthropic_delta(
                br#"{"type":"message_delta","usage":{"output_tokens":9}}"#,
                start
            ),
            Some(usage(5, 100, 20, 9, 0))
        );
        assert_eq!(
            anthropic_delta(
                br#"{"type":"message_delta","usage":{"input_tokens":7,"output_tokens":9}}"#,
                start
            ),
            Some(usage(7, 0, 0, 9, 0)),
            "a delta that repeats the input counts wins"
        );
        assert_eq!(
            anthropic_delta(br#"{"type":"message_delta","delta":{}}"#, start),
            None
        );
    }

    #[test]
    fn odd_counts_read_as_zero_and_keep_the_rest() {
        assert_eq!(
            chat_event(
                br#"{"usage":{"prompt_tokens":"12","completion_tokens":-3,"total_tokens":1.5,
                     "prompt_tokens_details":null,"completion_tokens_details":{"reasoning_tokens":[1]},
                     "extra":{"nested":[1,{"a":2}]}}}"#
            ),
            Some(usage(0, 0, 0, 0, 0))
        );
        assert_eq!(
            chat_event(br#"{"usage":{"prompt_tokens":{"a":1},"completion_tokens":4}}"#),
            Some(usage(0, 0, 0, 4, 0))
        );
        assert_eq!(chat_event(br#"{"usage":null}"#), None, "no usage yet");
        assert_eq!(chat_event(br#"{"usage":5}"#), None, "not an object");
        assert_eq!(chat_event(b"not json"), None);
    }

    #[test]
    fn a_whole_body_is_read_from_its_last_usage_key() {
        assert_eq!(
            from_body(
                Dialect::OpenAiResponses,
                br#"{"usage":{"input_tokens":3,"output_tokens":2}}"#
            ),
            Some(usage(3, 0, 0, 2, 0))
        );
        // A `"usage"` inside a string is escaped, so the real key is the last one.
        assert_eq!(
            from_body(
                Dialect::OpenAiChat,
                br#"{"choices":[{"message":{"content":"the \"usage\": {} key"}}],
                     "usage" : {"prompt_tokens":4,"completion_tokens":1,"total_tokens":5}, "x": 1}"#
            ),
            Some(usage(4, 0, 0, 1, 0))
        );
        assert_eq!(
            from_body(
                Dialect::Gemini,
                br#"{"candidates":[],"usageMetadata":{"promptTokenCount":2,"candidatesTokenCount":3}}"#
            ),
            Some(usage(2, 0, 0, 3, 0))
        );
        assert_eq!(
            from_body(
                Dialect::Anthropic,
                br#"{"content":[],"usage":{"input_tokens":2,"output_tokens":3}}"#
            ),
            Some(usage(2, 0, 0, 3, 0))
        );
        assert_eq!(from_body(Dialect::OpenAiChat, b"{}"), None);
        assert_eq!(from_body(Dialect::OpenAiChat, br#"{"usage":null}"#), None);
        assert_eq!(
            from_body(Dialect::OpenAiChat, br#"{"usage":{"prompt_tokens":4"#),
            None,
            "cut off"
        );
        assert_eq!(
            from_body(
                Dialect::OpenAiChat,
                b"{\"usage\":{\"prompt_tokens\":4},\"x\":\"\xff\"}"
            ),
            Some(usage(4, 0, 0, 0, 0)),
            "bytes that are not UTF-8 after the usage object do not lose it"
        );
        assert_eq!(
            from_body(
                Dialect::OpenAiChat,
                b"{\"usage\":{\"prompt_tokens\":4,\"k\":\"\xff\"}}"
            ),
            None,
            "inside it they do"
        );
    }
}

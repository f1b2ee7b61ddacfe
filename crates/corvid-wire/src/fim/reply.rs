//! The upstream side of a FIM completion: its reply read ([`parse_responses_reply`],
//! [`parse_chat_reply`]), the text cleaned for the cursor ([`finish_completion`]) and the
//! legacy answer written ([`text_completion_json`]).

use serde_json::{Value, json};

use super::{CURSOR_MARKER, END_OF_TEXT_MARKERS, FimError, FimFormat};

/// Why the completion ended, in OpenAI terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinishReason {
    /// The model finished, or a stop sequence or FIM marker cut the text.
    Stop,
    /// The output token budget ran out.
    Length,
}

impl FinishReason {
    /// `"stop"` or `"length"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stop => "stop",
            Self::Length => "length",
        }
    }
}

/// Token counts reported by the upstream; zero when it reported none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TokenUsage {
    /// Tokens read.
    pub prompt_tokens: u64,
    /// Tokens written.
    pub completion_tokens: u64,
}

impl TokenUsage {
    /// Prompt plus completion tokens.
    pub fn total_tokens(self) -> u64 {
        self.prompt_tokens.saturating_add(self.completion_tokens)
    }
}

/// The text an upstream produced, before [`finish_completion`] cleans it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamCompletion {
    /// The raw text.
    pub text: String,
    /// Why the upstream stopped.
    pub finish: FinishReason,
    /// The upstream's token counts.
    pub usage: TokenUsage,
}

/// Reads a `/responses` reply: the `output_text` parts of its `message` items (other items,
/// such as `reasoning`, are skipped), or the top-level `output_text` when `output` is absent.
pub fn parse_responses_reply(body: &[u8]) -> Result<UpstreamCompletion, FimError> {
    let reply = read_reply(body)?;
    let text = match (&reply["output"], &reply["output_text"]) {
        (Value::Array(items), _) => items
            .iter()
            .filter(|item| item["type"] == "message")
            .filter_map(|item| item["content"].as_array())
            .flatten()
            .filter(|part| part["type"] == "output_text")
            .filter_map(|part| part["text"].as_str())
            .collect(),
        (Value::Null, Value::String(text)) => text.clone(),
        (Value::Null, _) => return invalid_reply("neither `output` nor `output_text` is present"),
        (_, _) => return invalid_reply("`output` is not an array"),
    };
    let out_of_tokens = reply["status"] == "incomplete"
        && reply["incomplete_details"]["reason"] == "max_output_tokens";
    Ok(UpstreamCompletion {
        text,
        finish: if out_of_tokens {
            FinishReason::Length
        } else {
            FinishReason::Stop
        },
        usage: read_usage(&reply["usage"], "input_tokens", "output_tokens"),
    })
}

/// Reads a `/chat/completions` reply: `choices[0].message.content` (null is empty text).
pub fn parse_chat_reply(body: &[u8]) -> Result<UpstreamCompletion, FimError> {
    let reply = read_reply(body)?;
    let Some(choice) = reply["choices"].get(0) else {
        return invalid_reply("`choices` is missing or empty");
    };
    let text = match &choice["message"]["content"] {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        _ => return invalid_reply("`choices[0].message.content` is not a string"),
    };
    Ok(UpstreamCompletion {
        text,
        finish: if choice["finish_reason"] == "length" {
            FinishReason::Length
        } else {
            FinishReason::Stop
        },
        usage: read_usage(&reply["usage"], "prompt_tokens", "completion_tokens"),
    })
}

fn read_reply(body: &[u8]) -> Result<Value, FimError> {
    serde_json::from_slice(body).map_err(|error| FimError::InvalidReply {
        detail: error.to_string(),
    })
}

fn invalid_reply<T>(detail: &str) -> Result<T, FimError> {
    Err(FimError::InvalidReply {
        detail: detail.to_owned(),
    })
}

/// Token counts from a usage object; absent counts are zero.
fn read_usage(usage: &Value, prompt_field: &str, completion_field: &str) -> TokenUsage {
    TokenUsage {
        prompt_tokens: usage[prompt_field].as_u64().unwrap_or(0),
        completion_tokens: usage[completion_field].as_u64().unwrap_or(0),
    }
}

/// The cleaned completion text that goes back to the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompletionChoice {
    /// Text to insert at the cursor.
    pub text: String,
    /// Why it ended.
    pub finish_reason: FinishReason,
}

/// Cleans upstream text for insertion at the cursor:
///
/// 1. strips a markdown code fence that opens the text, dropping prose after its closing line.
///    Code that merely contains backticks is kept: the fence must open the text, its language
///    tag holds no backtick, and the closing line only backticks. An unclosed fence is stripped
///    only when the upstream ran out of tokens; after a natural finish it is text (say, an
///    example opening in a doc comment);
/// 2. removes any echoed [`CURSOR_MARKER`];
/// 3. cuts at the earliest stop sequence (empty ones are ignored) or FIM marker of any format,
///    and then reports [`FinishReason::Stop`].
pub fn finish_completion(upstream: UpstreamCompletion, stops: &[String]) -> CompletionChoice {
    let mut text = strip_code_fence(&upstream.text, upstream.finish).replace(CURSOR_MARKER, "");
    let stop_at = stops
        .iter()
        .filter(|stop| !stop.is_empty())
        .filter_map(|stop| text.find(stop.as_str()))
        .min();
    let marker_at = FimFormat::ALL
        .into_iter()
        .flat_map(FimFormat::bare_markers)
        .chain(END_OF_TEXT_MARKERS)
        .filter_map(|marker| text.find(marker))
        .min();
    let mut finish_reason = upstream.finish;
    if let Some(cut) = stop_at.into_iter().chain(marker_at).min() {
        text.truncate(cut);
        finish_reason = FinishReason::Stop;
    }
    CompletionChoice {
        text,
        finish_reason,
    }
}

/// Strips a code fence that opens the text; see [`finish_completion`] for the rules.
fn strip_code_fence(text: &str, finish: FinishReason) -> &str {
    let start = text.trim_start();
    let after_ticks = start.trim_start_matches('`');
    let ticks = start.len() - after_ticks.len();
    if ticks < 3 {
        return text;
    }
    let Some((info, body)) = after_ticks.split_once('\n') else {
        return text;
    };
    if info.contains('`') {
        return text;
    }
    let mut line_start = 0;
    for line in body.split_inclusive('\n') {
        let fence = line.trim();
        if fence.len() >= ticks && fence.bytes().all(|byte| byte == b'`') {
            let content = &body[..line_start];
            let content = content.strip_suffix('\n').unwrap_or(content);
            return content.strip_suffix('\r').unwrap_or(content);
        }
        line_start += line.len();
    }
    match finish {
        FinishReason::Length => body,
        FinishReason::Stop => text,
    }
}

/// The legacy completions reply Zed requires (reference §5.3): every field present, `usage`
/// with all three counts.
pub fn text_completion_json(
    id: &str,
    created: u64,
    model: &str,
    choice: &CompletionChoice,
    usage: TokenUsage,
) -> Value {
    json!({
        "id": id,
        "object": "text_completion",
        "created": created,
        "model": model,
        "choices": [{
            "index": 0,
            "text": choice.text,
            "finish_reason": choice.finish_reason.as_str(),
            "logprobs": null,
        }],
        "usage": {
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.total_tokens(),
        },
    })
}

//! Fixed request and response bodies. They are built once per process and
//! shared as `Bytes`, so cloning one per request is a reference-count bump.

use bytes::Bytes;
use serde_json::{Value, json};

mod claude_code;

const SYSTEM_PROMPT: &str = "You are a careful coding assistant working inside an editor. \
Answer concisely, prefer small focused diffs, explain trade-offs when they matter, and never \
invent APIs: when you are unsure whether a function exists, say so and suggest how to check. \
Use the language and style of the surrounding code.";

const FIRST_QUESTION: &str = "I have a Rust function that reads a config file, parses it as \
TOML and returns a struct. It currently uses unwrap everywhere. How should I restructure the \
error handling so that callers get a useful message naming the file and the field that failed?";

const FIRST_ANSWER: &str = "Give the function a dedicated error type with one variant per \
failure: reading the file (keep the path and the io::Error as source), and parsing (keep the \
path and the toml error, which already names the line and the key). Return Result<Config, \
ConfigError> and let the binary print it with {:#} so the whole chain is shown.";

const SECOND_QUESTION: &str = "Thanks. Could you show the enum with thiserror, and the body of \
load_config using the question-mark operator and map_err where the path has to be attached? \
Keep it short, I only need the shape of it, not a full module with tests.";

/// Words of the streamed answer, one per `chat.completion.chunk`.
const STREAM_WORDS: [&str; 20] = [
    "Here",
    " is",
    " the",
    " shape:",
    " an",
    " enum",
    " ConfigError",
    " with",
    " Read",
    " and",
    " Parse",
    " variants,",
    " each",
    " holding",
    " the",
    " path",
    " and",
    " its",
    " source",
    ".",
];

const ID: &str = "chatcmpl-bench-7f3a9c2e";
const CREATED: u64 = 1_760_000_000;
const UPSTREAM_MODEL: &str = "grok-4-fast-non-reasoning";

/// Whether a request body asks for a streamed answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stream {
    Disabled,
    Enabled,
}

/// Which conversation a request carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// A ~1.5 KB text-only conversation (the floor's comparison since the start).
    Short,
    /// A Claude Code-sized turn: ~4.7 KB as Anthropic Messages, three tools, a tool loop.
    ClaudeCode,
    /// The same turn some way into a session: sixteen rounds of the tool loop and 48 tools,
    /// ~56 KB as Anthropic Messages. Beside `ClaudeCode` it gives what each further request
    /// byte costs.
    ClaudeCodeLong,
}

/// The API a client speaks to a target. The mock upstream answers OpenAI chat only, so an
/// Anthropic Messages or Responses request exercises corvid's translation both ways.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// `POST /v1/chat/completions`, streams ending with `data: [DONE]`.
    OpenAiChat,
    /// `POST /v1/messages`, streams ending with a `message_stop` event.
    AnthropicMessages,
    /// `POST /v1/responses`, streams ending with a `response.completed` event.
    OpenAiResponses,
}

impl Dialect {
    pub(crate) fn path(self) -> &'static str {
        match self {
            Self::OpenAiChat => "/v1/chat/completions",
            Self::AnthropicMessages => "/v1/messages",
            Self::OpenAiResponses => "/v1/responses",
        }
    }

    /// The request body of this dialect: the same conversation in each, for one shape. The
    /// short conversation has no Responses form.
    pub(crate) fn request(self, shape: Shape, stream: Stream) -> Bytes {
        match (shape, self) {
            (Shape::Short, Self::OpenAiChat) => chat_request(stream),
            (Shape::Short, Self::AnthropicMessages) => messages_request(stream),
            (Shape::ClaudeCode, Self::OpenAiChat) => claude_code::chat(stream, 1),
            (Shape::ClaudeCode, Self::AnthropicMessages) => claude_code::messages(stream, 1),
            (Shape::Short | Shape::ClaudeCode, Self::OpenAiResponses) => {
                claude_code::responses(stream, 1)
            }
            (Shape::ClaudeCodeLong, Self::OpenAiChat) => {
                claude_code::chat(stream, claude_code::LONG_ROUNDS)
            }
            (Shape::ClaudeCodeLong, Self::AnthropicMessages) => {
                claude_code::messages(stream, claude_code::LONG_ROUNDS)
            }
            (Shape::ClaudeCodeLong, Self::OpenAiResponses) => {
                claude_code::responses(stream, claude_code::LONG_ROUNDS)
            }
        }
    }

    /// Whether the end of a stream (its last bytes, at least the whole last event) closes
    /// it as this dialect must: `data: [DONE]`, or an event of type `message_stop`.
    pub(crate) fn stream_complete(self, tail: &[u8]) -> bool {
        let tail = tail.trim_ascii_end();
        match self {
            Self::OpenAiChat => tail.ends_with(b"data: [DONE]"),
            Self::AnthropicMessages => last_event_has(tail, MESSAGE_STOP),
            Self::OpenAiResponses => last_event_has(tail, RESPONSE_COMPLETED),
        }
    }

    /// Whether a non-streamed answer is this dialect's, so a target that answered 200 in the
    /// wrong shape (say, the upstream's chat completion relayed untranslated) is caught.
    pub(crate) fn answers_in_kind(self, body: &[u8]) -> bool {
        let Ok(answer) = serde_json::from_slice::<Value>(body) else {
            return false;
        };
        match self {
            Self::OpenAiChat => {
                answer["object"] == "chat.completion" && answer["choices"][0]["message"].is_object()
            }
            Self::AnthropicMessages => {
                answer["type"] == "message"
                    && answer["role"] == "assistant"
                    && answer["content"][0]["type"] == "text"
            }
            Self::OpenAiResponses => {
                answer["object"] == "response"
                    && answer["status"] == "completed"
                    && answer["output"][0]["type"] == "message"
            }
        }
    }
}

const MESSAGE_STOP: &[u8] = b"\"message_stop\"";
const RESPONSE_COMPLETED: &[u8] = b"\"response.completed\"";

/// Whether the last whole SSE event of `tail` contains `needle`.
fn last_event_has(tail: &[u8], needle: &[u8]) -> bool {
    let last_event = tail
        .windows(2)
        .rposition(|window| window == b"\n\n")
        .map_or(tail, |at| &tail[at + 2..]);
    last_event
        .windows(needle.len())
        .any(|window| window == needle)
}

/// A ~1.5 KB OpenAI-style chat request for the alias `grok`.
pub(crate) fn chat_request(stream: Stream) -> Bytes {
    let mut body = json!({
        "model": "grok",
        "messages": [
            { "role": "system", "content": SYSTEM_PROMPT },
            { "role": "user", "content": FIRST_QUESTION },
            { "role": "assistant", "content": FIRST_ANSWER },
            { "role": "user", "content": SECOND_QUESTION },
        ],
        "temperature": 0.2,
        "max_tokens": 512,
        "user": "bench",
        "stream": stream == Stream::Enabled,
    });
    if stream == Stream::Enabled {
        body["stream_options"] = json!({ "include_usage": true });
    }
    Bytes::from(body.to_string())
}

/// The same conversation as `chat_request`, as an Anthropic Messages request for the alias
/// `grok` (not a Claude model, so corvid translates it to OpenAI chat).
pub(crate) fn messages_request(stream: Stream) -> Bytes {
    let body = json!({
        "model": "grok",
        "system": SYSTEM_PROMPT,
        "messages": [
            { "role": "user", "content": FIRST_QUESTION },
            { "role": "assistant", "content": FIRST_ANSWER },
            { "role": "user", "content": SECOND_QUESTION },
        ],
        "temperature": 0.2,
        "max_tokens": 512,
        "metadata": { "user_id": "bench" },
        "stream": stream == Stream::Enabled,
    });
    Bytes::from(body.to_string())
}

fn usage() -> Value {
    json!({
        "prompt_tokens": 318,
        "completion_tokens": 64,
        "total_tokens": 382,
        "prompt_tokens_details": { "cached_tokens": 256 },
        "completion_tokens_details": { "reasoning_tokens": 0 },
    })
}

/// A ~600-byte non-streamed `chat.completion`.
pub(crate) fn chat_completion() -> Bytes {
    let content = "Use an enum ConfigError with two variants, Read { path: PathBuf, source: \
io::Error } and Parse { path: PathBuf, source: toml::de::Error }, derive thiserror::Error, and \
attach the path with map_err in load_config before applying the question mark.";
    let body = json!({
        "id": ID,
        "object": "chat.completion",
        "created": CREATED,
        "model": UPSTREAM_MODEL,
        "choices": [{
            "index": 0,
            "message": { "role": "assistant", "content": content, "refusal": null },
            "logprobs": null,
            "finish_reason": "stop",
        }],
        "usage": usage(),
        "system_fingerprint": "fp_bench",
    });
    Bytes::from(body.to_string())
}

fn sse(data: &str) -> Bytes {
    Bytes::from(format!("data: {data}\n\n"))
}

/// The streamed answer: one SSE event per word, a usage chunk with empty
/// `choices`, then `data: [DONE]`. Each item becomes one body frame.
pub(crate) fn chat_stream_events() -> Vec<Bytes> {
    let last = STREAM_WORDS.len() - 1;
    let mut events: Vec<Bytes> = STREAM_WORDS
        .iter()
        .enumerate()
        .map(|(index, word)| {
            let delta = if index == 0 {
                json!({ "role": "assistant", "content": word })
            } else {
                json!({ "content": word })
            };
            let finish_reason = if index == last {
                json!("stop")
            } else {
                Value::Null
            };
            let chunk = json!({
                "id": ID,
                "object": "chat.completion.chunk",
                "created": CREATED,
                "model": UPSTREAM_MODEL,
                "choices": [{ "index": 0, "delta": delta, "finish_reason": finish_reason }],
            });
            sse(&chunk.to_string())
        })
        .collect();
    let usage_chunk = json!({
        "id": ID,
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": UPSTREAM_MODEL,
        "choices": [],
        "usage": usage(),
    });
    events.push(sse(&usage_chunk.to_string()));
    events.push(sse("[DONE]"));
    events
}

/// What a request carries (in its question's text, which every dialect passes on to the
/// upstream) to ask the mock to send a stream's first event and then hold the stream open.
pub(crate) const HOLD_MARKER: &[u8] = b"[bench-hold]";

/// `body` (a Claude Code-sized request of any dialect) asking the mock to hold its stream.
pub(crate) fn held(body: &[u8]) -> Bytes {
    let question = claude_code::QUESTION_START.as_bytes();
    let mut held = Vec::with_capacity(body.len() + HOLD_MARKER.len() + 1);
    match body
        .windows(question.len())
        .position(|window| window == question)
    {
        Some(at) => {
            held.extend_from_slice(&body[..at]);
            held.extend_from_slice(HOLD_MARKER);
            held.push(b' ');
            held.extend_from_slice(&body[at..]);
        }
        None => held.extend_from_slice(body),
    }
    Bytes::from(held)
}

/// Whether a request body carries [`HOLD_MARKER`], without parsing it.
pub(crate) fn wants_hold(body: &[u8]) -> bool {
    body.windows(HOLD_MARKER.len())
        .any(|window| window == HOLD_MARKER)
}

/// True when the JSON body has `"stream": true` (any whitespace around the
/// colon), without parsing the body: the mock must stay cheap.
pub(crate) fn wants_stream(body: &[u8]) -> bool {
    const KEY: &[u8] = b"\"stream\"";
    let mut rest = body;
    while let Some(at) = rest.windows(KEY.len()).position(|window| window == KEY) {
        rest = &rest[at + KEY.len()..];
        let after_colon = match rest.iter().position(|byte| !byte.is_ascii_whitespace()) {
            Some(colon) if rest[colon] == b':' => &rest[colon + 1..],
            _ => continue,
        };
        let value = after_colon.trim_ascii_start();
        return value.starts_with(b"true");
    }
    false
}

#[cfg(test)]
mod tests;

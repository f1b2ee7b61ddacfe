//! Fill-in-the-middle (FIM) handling for `POST /v1/completions`.
//!
//! Zed's edit prediction sends a prompt embedding the text around the cursor between
//! model-specific markers. xAI has no FIM endpoint, so the gateway reads the request
//! ([`CompletionRequest::from_json`]), recovers prefix and suffix ([`split_prompt`]), asks a chat
//! model to fill the gap ([`responses_request`] or [`chat_request`]), reads its reply
//! ([`parse_responses_reply`] or [`parse_chat_reply`]), cleans the text
//! ([`finish_completion`]) and answers in the legacy shape ([`text_completion_json`]).
//! Everything here is pure: no IO, no clock, no id generation. This file reads the request and
//! the prompt and builds the upstream request; `reply.rs` reads the upstream's reply, cleans
//! the text and writes the answer.

use serde_json::{Map, Value, json};

mod reply;
#[cfg(test)]
mod tests;

pub use reply::{
    CompletionChoice, FinishReason, TokenUsage, UpstreamCompletion, finish_completion,
    parse_chat_reply, parse_responses_reply, text_completion_json,
};

/// Output token budget used when the request names none (Zed's own default).
pub const DEFAULT_MAX_TOKENS: u32 = 256;

/// Marks the cursor in the text sent upstream. [`FIM_INSTRUCTIONS`] names it, and
/// [`finish_completion`] removes it if the model echoes it.
pub const CURSOR_MARKER: &str = "<CURSOR>";

/// System instructions sent with every FIM request, on both backends.
pub const FIM_INSTRUCTIONS: &str = "You are a code completion engine. The input is a source \
file in which the cursor position is marked by <CURSOR>. Output only the code that belongs at \
<CURSOR>: no prose, no explanations, no markdown code fences, and do not repeat the code before \
or after the cursor. If nothing belongs there, output nothing.";

/// Tokens that end a completion without being a prompt marker; Zed cuts at these too.
const END_OF_TEXT_MARKERS: [&str; 3] = ["<|endoftext|>", "<|file_separator|>", "<|fim_pad|>"];

/// Why a completions request or an upstream FIM reply could not be read.
///
/// The request variants carry messages meant for the client (an OpenAI 400
/// `invalid_request_error`); [`FimError::InvalidReply`] is an upstream failure.
#[derive(Debug, thiserror::Error)]
pub enum FimError {
    /// The request body is not JSON.
    #[error("request body is not valid JSON: {0}")]
    InvalidJson(serde_json::Error),
    /// The request body is JSON but not an object.
    #[error("request body must be a JSON object")]
    NotAnObject,
    /// A required field is absent or null.
    #[error("missing required field `{field}`")]
    MissingField {
        /// The JSON field name.
        field: &'static str,
    },
    /// A field has the wrong type or an unusable value.
    #[error("field `{field}` must be {expected}")]
    InvalidField {
        /// The JSON field name.
        field: &'static str,
        /// What the field must hold, as a phrase ("a string").
        expected: &'static str,
    },
    /// The upstream reply is not the JSON shape the backend documents.
    #[error("upstream completion reply is malformed: {detail}")]
    InvalidReply {
        /// What was wrong with it.
        detail: String,
    },
}

impl FimError {
    /// The request field at fault, for the OpenAI error body's `param`.
    pub fn field(&self) -> Option<&'static str> {
        match self {
            Self::MissingField { field } | Self::InvalidField { field, .. } => Some(field),
            Self::InvalidJson(_) | Self::NotAnObject | Self::InvalidReply { .. } => None,
        }
    }
}

/// A parsed OpenAI legacy completions request. Unknown fields are ignored.
#[derive(Debug, Clone, PartialEq)]
pub struct CompletionRequest {
    /// The model the client asked for (an alias such as `supergrok`, or an upstream name).
    pub model: String,
    /// The prompt; an array prompt contributes its first element.
    pub prompt: String,
    /// An explicit suffix, sent by clients other than Zed.
    pub suffix: Option<String>,
    /// The output token budget, if the client set one.
    pub max_tokens: Option<u32>,
    /// Stop sequences, any number (older Zed builds send 14). Empty strings are kept but ignored.
    pub stop: Vec<String>,
    /// Whether the client asked for a stream. Zed never does; the gateway rejects it.
    pub stream: bool,
    /// Sampling temperature, forwarded upstream when present.
    pub temperature: Option<f64>,
    /// Nucleus sampling mass, forwarded upstream when present.
    pub top_p: Option<f64>,
}

impl CompletionRequest {
    /// Parses a request body. Errors name the field at fault and what it must hold.
    pub fn from_json(body: &[u8]) -> Result<Self, FimError> {
        let value: Value = serde_json::from_slice(body).map_err(FimError::InvalidJson)?;
        let Value::Object(fields) = value else {
            return Err(FimError::NotAnObject);
        };
        let missing = |field| FimError::MissingField { field };
        Ok(Self {
            model: optional(&fields, "model", "a non-empty string", read_name)?
                .ok_or(missing("model"))?,
            prompt: optional(&fields, "prompt", PROMPT_EXPECTED, read_prompt)?
                .ok_or(missing("prompt"))?,
            suffix: optional(&fields, "suffix", "a string", read_string)?,
            max_tokens: optional(&fields, "max_tokens", MAX_TOKENS_EXPECTED, read_u32)?,
            stop: optional(&fields, "stop", STOP_EXPECTED, read_stop)?.unwrap_or_default(),
            stream: optional(&fields, "stream", "a boolean", Value::as_bool)?.unwrap_or(false),
            temperature: optional(&fields, "temperature", "a number", Value::as_f64)?,
            top_p: optional(&fields, "top_p", "a number", Value::as_f64)?,
        })
    }

    /// Prefix and suffix around the cursor, from the prompt and the explicit suffix.
    pub fn fim_prompt(&self) -> FimPrompt {
        split_prompt(&self.prompt, self.suffix.as_deref())
    }

    /// The output token budget: `max_tokens`, or [`DEFAULT_MAX_TOKENS`].
    pub fn max_output_tokens(&self) -> u32 {
        self.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS)
    }

    /// The sampling parameters to forward upstream.
    pub fn sampling(&self) -> Sampling {
        Sampling {
            temperature: self.temperature,
            top_p: self.top_p,
        }
    }
}

const PROMPT_EXPECTED: &str =
    "a string or a non-empty array of strings (arrays of token ids are not supported)";
const MAX_TOKENS_EXPECTED: &str = "a non-negative 32-bit integer";
const STOP_EXPECTED: &str = "a string or an array of strings";

/// Reads an optional field: absent and `null` are `None`; a value `read` rejects is an error.
fn optional<T>(
    fields: &Map<String, Value>,
    field: &'static str,
    expected: &'static str,
    read: impl FnOnce(&Value) -> Option<T>,
) -> Result<Option<T>, FimError> {
    match fields.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => read(value)
            .map(Some)
            .ok_or(FimError::InvalidField { field, expected }),
    }
}

fn read_string(value: &Value) -> Option<String> {
    value.as_str().map(str::to_owned)
}

fn read_name(value: &Value) -> Option<String> {
    read_string(value).filter(|name| !name.is_empty())
}

fn read_u32(value: &Value) -> Option<u32> {
    value.as_u64().and_then(|number| u32::try_from(number).ok())
}

/// A string prompt, or the first element of an array of strings.
fn read_prompt(value: &Value) -> Option<String> {
    match value {
        Value::String(prompt) => Some(prompt.clone()),
        Value::Array(prompts) => read_strings(prompts)?.into_iter().next(),
        _ => None,
    }
}

fn read_stop(value: &Value) -> Option<Vec<String>> {
    match value {
        Value::String(stop) => Some(vec![stop.clone()]),
        Value::Array(stops) => read_strings(stops),
        _ => None,
    }
}

/// All elements as strings, or `None` if any is not a string.
fn read_strings(values: &[Value]) -> Option<Vec<String>> {
    values.iter().map(read_string).collect()
}

/// Sampling parameters forwarded to either backend when the client set them.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Sampling {
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Nucleus sampling mass.
    pub top_p: Option<f64>,
}

impl Sampling {
    fn insert_into(self, body: &mut Value) {
        let Some(fields) = body.as_object_mut() else {
            return;
        };
        if let Some(temperature) = self.temperature {
            fields.insert("temperature".to_owned(), temperature.into());
        }
        if let Some(top_p) = self.top_p {
            fields.insert("top_p".to_owned(), top_p.into());
        }
    }
}

/// The prompt layouts Zed writes (reference §5.2), named after its `prompt_format` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FimFormat {
    /// `<|fim_prefix|>P<|fim_suffix|>S<|fim_middle|>`: `qwen`, and also `code_gemma`, which
    /// writes the same markers (the two cannot be told apart).
    Qwen,
    /// `<fim_prefix>P<fim_suffix>S<fim_middle>`: `star_coder`, Zed's fallback.
    StarCoder,
    /// `<PRE> P <SUF>S <MID>`: `code_llama`; the spaces belong to the format.
    CodeLlama,
    /// `<｜fim▁begin｜>P<｜fim▁hole｜>S<｜fim▁end｜>` (U+FF5C, U+2581): `deepseek_coder`.
    DeepseekCoder,
    /// `[SUFFIX]S[PREFIX]P`: `codestral`; the suffix comes first.
    Codestral,
    /// `<|code_prefix|>P<|code_suffix|>S<|code_middle|>`: `glm`.
    Glm,
}

impl FimFormat {
    /// Detection order, as given in reference §5.4.
    const ALL: [Self; 6] = [
        Self::Qwen,
        Self::StarCoder,
        Self::CodeLlama,
        Self::DeepseekCoder,
        Self::Codestral,
        Self::Glm,
    ];

    /// The prefix, suffix and middle markers. Each lists its spellings, preferred first: Code
    /// Llama's markers carry a format space, and the bare marker is the fallback. Codestral has
    /// no middle marker.
    fn markers(self) -> [&'static [&'static str]; 3] {
        match self {
            Self::Qwen => [
                &["<|fim_prefix|>"],
                &["<|fim_suffix|>"],
                &["<|fim_middle|>"],
            ],
            Self::StarCoder => [&["<fim_prefix>"], &["<fim_suffix>"], &["<fim_middle>"]],
            Self::CodeLlama => [
                &["<PRE> ", "<PRE>"],
                &[" <SUF>", "<SUF>"],
                &[" <MID>", "<MID>"],
            ],
            Self::DeepseekCoder => [
                &["<｜fim▁begin｜>"],
                &["<｜fim▁hole｜>"],
                &["<｜fim▁end｜>"],
            ],
            Self::Codestral => [&["[PREFIX]"], &["[SUFFIX]"], &[]],
            Self::Glm => [
                &["<|code_prefix|>"],
                &["<|code_suffix|>"],
                &["<|code_middle|>"],
            ],
        }
    }

    /// The marker Zed puts first in the prompt.
    fn leading_marker(self) -> &'static str {
        match self {
            Self::Codestral => "[SUFFIX]",
            Self::Qwen | Self::StarCoder | Self::CodeLlama | Self::DeepseekCoder | Self::Glm => {
                self.markers()[0][0]
            }
        }
    }

    /// The bare spelling of every marker of this format.
    fn bare_markers(self) -> impl Iterator<Item = &'static str> {
        self.markers()
            .into_iter()
            .filter_map(|spellings| spellings.last().copied())
    }

    /// The format whose first marker starts the prompt (as Zed writes it); failing that, the
    /// first format in detection order with any marker anywhere in the prompt. Preferring the
    /// leading marker keeps code that merely mentions another format's marker from winning.
    fn detect(prompt: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|format| prompt.starts_with(format.leading_marker()))
            .or_else(|| {
                Self::ALL
                    .into_iter()
                    .find(|format| format.bare_markers().any(|marker| prompt.contains(marker)))
            })
    }

    /// Splits a prompt of this format into `(prefix, suffix)`.
    ///
    /// Only markers are removed: every other character lands in the prefix or the suffix, also
    /// when markers are missing. Text after the middle marker is a prefilled start of the middle,
    /// so it extends the prefix.
    fn split(self, prompt: &str) -> (String, String) {
        let [prefix_marker, suffix_marker, middle_marker] = self.markers();
        if self == Self::Codestral {
            return match split_first(prompt, prefix_marker) {
                Some((head, prefix)) => (prefix.to_owned(), remove_first(head, suffix_marker)),
                None => match split_first(prompt, suffix_marker) {
                    Some((prefix, suffix)) => (prefix.to_owned(), suffix.to_owned()),
                    None => (prompt.to_owned(), String::new()),
                },
            };
        }
        let (head, suffix, middle) = match split_first(prompt, suffix_marker) {
            Some((head, tail)) => {
                let (suffix, middle) = split_last(tail, middle_marker).unwrap_or((tail, ""));
                (head, suffix, middle)
            }
            None => {
                let (head, middle) = split_last(prompt, middle_marker).unwrap_or((prompt, ""));
                (head, "", middle)
            }
        };
        let mut prefix = remove_first(head, prefix_marker);
        prefix.push_str(middle);
        (prefix, suffix.to_owned())
    }
}

/// Splits around the first occurrence of the first spelling present.
fn split_first<'a>(text: &'a str, spellings: &[&str]) -> Option<(&'a str, &'a str)> {
    spellings.iter().find_map(|marker| text.split_once(marker))
}

/// Splits around the last occurrence of the first spelling present.
fn split_last<'a>(text: &'a str, spellings: &[&str]) -> Option<(&'a str, &'a str)> {
    spellings.iter().find_map(|marker| text.rsplit_once(marker))
}

/// The text without the first occurrence of the first spelling present.
fn remove_first(text: &str, spellings: &[&str]) -> String {
    match split_first(text, spellings) {
        Some((before, after)) => [before, after].concat(),
        None => text.to_owned(),
    }
}

/// The text before and after the cursor, recovered from a completions prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FimPrompt {
    /// Text before the cursor.
    pub prefix: String,
    /// Text after the cursor.
    pub suffix: String,
    /// The marker layout found in the prompt, if any.
    pub format: Option<FimFormat>,
}

impl FimPrompt {
    /// `prefix`, [`CURSOR_MARKER`], `suffix`.
    pub fn with_cursor(&self) -> String {
        [self.prefix.as_str(), CURSOR_MARKER, self.suffix.as_str()].concat()
    }
}

/// Recovers prefix and suffix from any prompt layout Zed writes (see [`FimFormat`]).
///
/// - No markers: the whole prompt is the prefix and the suffix is empty.
/// - A non-empty `explicit_suffix` wins: the prompt, with its markers removed, is all prefix,
///   its text kept in document order (prefix part, then suffix part). An empty one is ignored.
/// - Missing markers never panic and never drop text: only markers are removed, and text after
///   a middle marker (a prefilled start of the middle) extends the prefix. A repeated marker
///   splits at its first occurrence (the middle marker: its last).
pub fn split_prompt(prompt: &str, explicit_suffix: Option<&str>) -> FimPrompt {
    let format = FimFormat::detect(prompt);
    let (prefix, suffix) = match format {
        Some(format) => format.split(prompt),
        None => (prompt.to_owned(), String::new()),
    };
    match explicit_suffix.filter(|suffix| !suffix.is_empty()) {
        Some(explicit) => FimPrompt {
            prefix: prefix + &suffix,
            suffix: explicit.to_owned(),
            format,
        },
        None => FimPrompt {
            prefix,
            suffix,
            format,
        },
    }
}

/// The body for `POST {upstream}/responses`. Never carries `tools`, `search_parameters` or
/// `reasoning`; `store` is always false.
pub fn responses_request(
    upstream_model: &str,
    prompt: &FimPrompt,
    max_output_tokens: u32,
    sampling: Sampling,
) -> Value {
    let mut body = json!({
        "model": upstream_model,
        "instructions": FIM_INSTRUCTIONS,
        "input": prompt.with_cursor(),
        "max_output_tokens": max_output_tokens,
        "store": false,
        "stream": false,
    });
    sampling.insert_into(&mut body);
    body
}

/// The user message that frames prefix, cursor and suffix for a chat model.
pub fn user_message(prompt: &FimPrompt) -> String {
    format!(
        "Fill in the code at {CURSOR_MARKER} in this file:\n\n{}",
        prompt.with_cursor()
    )
}

/// The body for `POST {upstream}/chat/completions`: a system message with the FIM instructions
/// and a user message framing prefix, cursor and suffix.
pub fn chat_request(
    upstream_model: &str,
    prompt: &FimPrompt,
    max_tokens: u32,
    sampling: Sampling,
) -> Value {
    let user = user_message(prompt);
    let mut body = json!({
        "model": upstream_model,
        "messages": [
            {"role": "system", "content": FIM_INSTRUCTIONS},
            {"role": "user", "content": user},
        ],
        "max_completion_tokens": max_tokens,
        "stream": false,
    });
    sampling.insert_into(&mut body);
    body
}

//! The canonical model every dialect is decoded into and encoded out of: N codecs, not N²
//! translators.
//!
//! A request is a model name, system text, a list of user/assistant messages made of parts,
//! tools, sampling parameters and `extra` (fields a codec does not model, kept so a
//! same-dialect hop loses nothing). A streamed reply is a sequence of [`StreamEvent`]s; a whole
//! reply is a [`ChatResponse`], and [`ResponseBuilder`] turns the first into the second.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

mod builder;
mod error;
mod names;
mod raw_json;
mod usage;

pub use builder::ResponseBuilder;
pub use error::{ErrorKind, FailureClass, WireError};
pub use names::{MAX_TOOL_NAME, NameMap, anthropic_safe_id, synthetic_call_id, wire_name};
pub use raw_json::RawJson;
pub use usage::Usage;

/// One request for a model turn, whatever dialect it came in.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ChatRequest {
    /// The model as the client named it (routing resolves it later).
    pub model: String,
    /// System / developer instructions, in order. Dialects with one system string join them
    /// with `\n\n`.
    pub system: Vec<String>,
    /// The conversation, oldest first. Only `user` and `assistant` roles: tool results are
    /// parts of user messages, as in Anthropic's model, and a system turn in mid-conversation
    /// is a [`Part::System`] of a user message, at its position.
    pub messages: Vec<Message>,
    /// Function tools the model may call.
    pub tools: Vec<Tool>,
    pub tool_choice: Option<ToolChoice>,
    pub params: Params,
    /// Whether the client asked for a streamed reply.
    pub stream: bool,
    /// Top-level fields the decoding codec did not model, by name, untouched. Only the same
    /// dialect's encoder may put them back.
    pub extra: Map<String, Value>,
}

/// Adds system parts at the end of the conversation: to the last message when it holds only
/// system parts (consecutive system turns), else as a user message of their own.
pub(crate) fn push_system_turn(messages: &mut Vec<Message>, parts: Vec<Part>) {
    match messages.last_mut() {
        Some(last)
            if last.role == Role::User
                && last
                    .parts
                    .iter()
                    .all(|part| matches!(part, Part::System { .. })) =>
        {
            last.parts.extend(parts);
        }
        _ => messages.push(Message {
            role: Role::User,
            parts,
        }),
    }
}

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

/// One message: a role and its parts, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub parts: Vec<Part>,
}

impl Message {
    /// A message with one text part.
    pub fn text(role: Role, text: impl Into<String>) -> Self {
        Self {
            role,
            parts: vec![Part::Text { text: text.into() }],
        }
    }

    /// The ids of the calls that tool results anywhere in `messages` answer.
    pub(crate) fn answered_call_ids(messages: &[Message]) -> HashSet<&str> {
        messages
            .iter()
            .flat_map(|message| &message.parts)
            .filter_map(|part| match part {
                Part::ToolResult(result) => Some(result.call_id.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The ids of the tool calls among its parts, in order (the results the next user message
    /// should answer).
    pub fn call_ids(&self) -> Vec<String> {
        self.parts
            .iter()
            .filter_map(|part| match part {
                Part::ToolCall(call) => Some(call.id.clone()),
                _ => None,
            })
            .collect()
    }
}

/// A piece of a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Part {
    Text {
        text: String,
    },
    Image(Image),
    /// The model asked for a tool (assistant messages only).
    ToolCall(ToolCall),
    /// The answer to a tool call (user messages only).
    ToolResult(ToolResult),
    /// The model's reasoning, with whatever the provider needs to accept it back.
    Reasoning(Reasoning),
    /// A system (or developer) instruction given in mid-conversation, at its position (user
    /// messages only; Claude Code sends these for models it does not know). Instructions that
    /// come before the conversation live in [`ChatRequest::system`] instead.
    System {
        text: String,
    },
}

/// An image, inline or by URL.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Image {
    pub source: ImageSource,
    /// OpenAI's `detail` (`auto`, `low`, `high`), when given.
    pub detail: Option<String>,
}

/// Where an image's bytes are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ImageSource {
    /// Base64 data with its media type (`image/png`).
    Base64 { media_type: String, data: String },
    /// An `https://` (or other) URL.
    Url { url: String },
}

impl ImageSource {
    /// Reads a `data:<media type>;base64,<data>` URL into `Base64`, anything else into `Url`.
    pub fn from_url(url: &str) -> Self {
        if let Some(rest) = url.strip_prefix("data:")
            && let Some((header, data)) = rest.split_once(',')
            && let Some(media_type) = header.strip_suffix(";base64")
        {
            return Self::Base64 {
                media_type: media_type.to_owned(),
                data: data.to_owned(),
            };
        }
        Self::Url {
            url: url.to_owned(),
        }
    }

    /// The image as a URL: `data:` for inline data.
    pub fn to_url(&self) -> String {
        match self {
            Self::Base64 { media_type, data } => format!("data:{media_type};base64,{data}"),
            Self::Url { url } => url.clone(),
        }
    }
}

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call id as the producing dialect wrote it (codecs map ids they cannot carry).
    pub id: String,
    pub name: String,
    /// The arguments as JSON text (an object), exactly as produced.
    pub arguments: String,
    /// Gemini's `thoughtSignature` for this call, to send back unchanged.
    pub signature: Option<String>,
}

/// The result of one tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The id of the call this answers.
    pub call_id: String,
    /// The tool's name when the dialect carries it (Gemini needs it; codecs recover it from the
    /// call otherwise).
    pub name: Option<String>,
    pub content: Vec<ToolResultContent>,
    pub is_error: bool,
}

impl ToolResult {
    /// Its text contents joined by line breaks, images left out (empty when it has no text).
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|content| match content {
                ToolResultContent::Text { text } => Some(text.as_str()),
                ToolResultContent::Image(_) => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// What a tool returned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToolResultContent {
    Text { text: String },
    Image(Image),
}

/// Reasoning (thinking) the model produced.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Reasoning {
    /// The visible reasoning or summary text (may be empty).
    pub text: String,
    /// Anthropic's thinking `signature`.
    pub signature: Option<String>,
    /// OpenAI Responses `encrypted_content`, or Anthropic `redacted_thinking` data.
    pub encrypted: Option<String>,
    /// The provider's item id (Responses `rs_…`), when it has one.
    pub id: Option<String>,
}

/// A function tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    pub description: Option<String>,
    /// JSON Schema of the arguments object, as the client wrote it: passed through as text.
    pub parameters: RawJson,
    pub strict: Option<bool>,
}

/// Whether and which tool the model must call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolChoice {
    Auto,
    /// Some tool must be called.
    Required,
    None,
    /// This tool must be called.
    Named(String),
}

/// Generation parameters.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Params {
    pub max_output_tokens: Option<u32>,
    pub temperature: Option<f64>,
    pub top_p: Option<f64>,
    pub stop: Vec<String>,
    pub reasoning: Option<ReasoningConfig>,
    pub parallel_tool_calls: Option<bool>,
    pub response_format: Option<ResponseFormat>,
}

/// How much the model should think.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasoningConfig {
    /// An effort level (OpenAI, xAI, Anthropic `output_config.effort`).
    Effort(Effort),
    /// A token budget (Anthropic `thinking.budget_tokens`, Gemini `thinkingBudget`).
    Budget(u32),
    /// Thinking explicitly off.
    Disabled,
}

/// Reasoning effort levels, lowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effort {
    None,
    Minimal,
    Low,
    Medium,
    High,
    #[serde(rename = "xhigh")]
    XHigh,
}

impl Effort {
    /// Parses OpenAI's effort names (`max` counts as `xhigh`).
    pub fn parse(value: &str) -> Option<Self> {
        Some(match value {
            "none" => Self::None,
            "minimal" => Self::Minimal,
            "low" => Self::Low,
            "medium" => Self::Medium,
            "high" => Self::High,
            "xhigh" | "max" => Self::XHigh,
            _ => return None,
        })
    }

    /// The OpenAI name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Minimal => "minimal",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
            Self::XHigh => "xhigh",
        }
    }

    /// Effort → thinking budget (`minimal|low→1024`, `medium→2048`, `high|xhigh→4096`);
    /// `None` for `none`, which means thinking off.
    pub fn to_budget(self) -> Option<u32> {
        match self {
            Self::None => None,
            Self::Minimal | Self::Low => Some(1024),
            Self::Medium => Some(2048),
            Self::High | Self::XHigh => Some(4096),
        }
    }

    /// Budget → effort (`≤0 none`, `≤1024 low`, `≤8192 medium`, else `high`).
    pub fn from_budget(budget: i64) -> Self {
        match budget {
            i64::MIN..=0 => Self::None,
            1..=1024 => Self::Low,
            1025..=8192 => Self::Medium,
            _ => Self::High,
        }
    }
}

/// The shape the reply must take.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResponseFormat {
    Text,
    JsonObject,
    JsonSchema {
        name: String,
        schema: Value,
        strict: Option<bool>,
    },
}

/// Why a reply ended, in the canonical vocabulary (reference table `wire-formats.md` §6.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// A natural end of turn.
    EndTurn,
    /// A stop sequence matched.
    StopSequence,
    /// The output token limit.
    MaxTokens,
    /// The model called tools; the client should run them.
    ToolCalls,
    /// Filtered or refused.
    ContentFilter,
    /// The context window overflowed.
    ContextOverflow,
    /// A server-side tool paused the turn (Anthropic `pause_turn`).
    PauseTurn,
    /// The model produced a malformed tool call.
    MalformedToolCall,
}

/// A whole (non-streamed) reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    pub id: String,
    pub model: String,
    /// Unix seconds.
    pub created: i64,
    /// The assistant message's parts, in order: reasoning, text, tool calls.
    pub parts: Vec<Part>,
    pub finish: FinishReason,
    pub usage: Usage,
}

/// One event of a streamed reply. Encoders turn a well-formed sequence — `Start`, deltas,
/// `Finish`, `Usage` (usage may also come before `Finish`) — into their dialect's stream;
/// decoders produce one from theirs, chunk by chunk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum StreamEvent {
    /// The reply began. `id` is the provider's message id when known.
    Start {
        id: String,
        model: String,
    },
    TextDelta {
        text: String,
    },
    ReasoningDelta {
        text: String,
    },
    /// The signature of the reasoning just streamed (Anthropic `signature_delta`).
    ReasoningSignature {
        signature: String,
    },
    /// Opaque reasoning (Responses `encrypted_content`, Anthropic `redacted_thinking`).
    ReasoningEncrypted {
        data: String,
        id: Option<String>,
    },
    /// A tool call began. `index` counts tool calls from 0 within this reply.
    ToolCallStart {
        index: u32,
        id: String,
        name: String,
        signature: Option<String>,
    },
    /// More argument JSON text for tool call `index`.
    ToolCallArgs {
        index: u32,
        delta: String,
    },
    /// Tool call `index` is complete.
    ToolCallEnd {
        index: u32,
    },
    /// Token counts so far (the latest replaces earlier ones).
    Usage(Usage),
    /// The reply ended for this reason. Decoders report `ToolCalls` whenever a tool call was
    /// made, whatever the upstream said.
    Finish(FinishReason),
    /// The stream failed after it began.
    Error(WireError),
}

/// Why a body could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("invalid JSON: {0}")]
    Json(String),
    #[error("`{field}` {problem}")]
    Field {
        /// The JSON path of the field (`messages[2].content`).
        field: String,
        /// What is wrong, as a phrase (`must be a string`).
        problem: String,
    },
}

impl DecodeError {
    /// A field error.
    pub fn field(field: impl Into<String>, problem: impl Into<String>) -> Self {
        Self::Field {
            field: field.into(),
            problem: problem.into(),
        }
    }
}

impl From<serde_json::Error> for DecodeError {
    fn from(error: serde_json::Error) -> Self {
        Self::Json(error.to_string())
    }
}

#[cfg(test)]
mod tests;

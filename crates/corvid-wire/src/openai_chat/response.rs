//! Whole (non-streamed) replies, and the usage arithmetic both directions share with the stream
//! codecs.

use serde::Serialize;
use serde_json::{Value, json};

use super::{finish_from_wire, finish_to_wire};

mod body;
pub(in crate::openai_chat) mod typed;
use crate::model::{
    ChatResponse, DecodeError, FinishReason, NameMap, Part, Reasoning, ToolCall, Usage,
    synthetic_call_id,
};
pub use body::encode_response_body;

/// Upstream → corvid: a whole `chat.completion`. Only `choices[0]` is read. Tool names are
/// restored through `names`; any tool call makes the finish [`FinishReason::ToolCalls`]; a
/// refusal becomes text and, unless the reply was cut short, [`FinishReason::ContentFilter`].
pub fn decode_response(body: &[u8], names: &NameMap) -> Result<ChatResponse, DecodeError> {
    // The typed fast path reads what it can read exactly as the tree below; anything else (an
    // error included) goes through the tree.
    match typed::decode(body, names) {
        Some(response) => Ok(response),
        None => decode_tree(body, names),
    }
}

/// [`decode_response`] through a `Value` tree: the reference reader, and the one whose errors
/// callers see.
pub(in crate::openai_chat) fn decode_tree(
    body: &[u8],
    names: &NameMap,
) -> Result<ChatResponse, DecodeError> {
    let value: Value = serde_json::from_slice(body)?;
    let choice = match value.get("choices").and_then(Value::as_array) {
        Some(choices) => {
            first_choice(choices).ok_or_else(|| DecodeError::field("choices", "is empty"))?
        }
        None => {
            let problem = match value.get("error") {
                Some(error) => format!("is missing; the reply is an error: {error}"),
                None => "is required".to_owned(),
            };
            return Err(DecodeError::field("choices", problem));
        }
    };
    let message = choice.get("message").unwrap_or(&Value::Null);

    let mut parts = Vec::new();
    if let Some(text) = reasoning_text(message) {
        parts.push(Part::Reasoning(Reasoning {
            text: text.to_owned(),
            ..Reasoning::default()
        }));
    }
    match message.get("content") {
        Some(Value::String(text)) if !text.is_empty() => {
            parts.push(Part::Text { text: text.clone() });
        }
        Some(Value::Array(items)) => {
            let text: String = items
                .iter()
                .filter_map(|item| item.get("text").and_then(Value::as_str))
                .collect();
            if !text.is_empty() {
                parts.push(Part::Text { text });
            }
        }
        _ => {}
    }
    let refused = match message.get("refusal").and_then(Value::as_str) {
        Some(refusal) if !refusal.is_empty() => {
            parts.push(Part::Text {
                text: refusal.to_owned(),
            });
            true
        }
        _ => false,
    };
    let calls = message.get("tool_calls").and_then(Value::as_array);
    for (position, call) in calls.into_iter().flatten().enumerate() {
        let function = call.get("function").unwrap_or(&Value::Null);
        parts.push(Part::ToolCall(tool_call(
            call.get("id").and_then(Value::as_str),
            function,
            names,
            position,
        )));
    }
    // The deprecated single `function_call`.
    if let Some(function) = message.get("function_call").filter(|call| call.is_object()) {
        parts.push(Part::ToolCall(tool_call(None, function, names, 0)));
    }

    let made_calls = parts.iter().any(|part| matches!(part, Part::ToolCall(_)));
    let wire_finish = choice.get("finish_reason").and_then(Value::as_str);
    Ok(ChatResponse {
        id: str_field(&value, "id"),
        model: str_field(&value, "model"),
        created: value.get("created").and_then(Value::as_i64).unwrap_or(0),
        parts,
        finish: finish(wire_finish, made_calls, refused),
        usage: value.get("usage").map(decode_usage).unwrap_or_default(),
    })
}

/// corvid → client: a whole `chat.completion`. `content` is `null` when the reply is only tool
/// calls; reasoning text goes to `reasoning_content`; signatures and encrypted reasoning are
/// dropped. `model` is the name the client asked for.
pub fn encode_response(response: &ChatResponse, model: &str) -> Value {
    let Gathered {
        text,
        reasoning,
        calls,
    } = Gathered::of(response);
    let calls: Vec<Value> = calls
        .into_iter()
        .map(|call| {
            json!({
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            })
        })
        .collect();
    let mut message = serde_json::Map::new();
    message.insert("role".into(), json!("assistant"));
    let content = if text.is_empty() && !calls.is_empty() {
        Value::Null
    } else {
        json!(text)
    };
    message.insert("content".into(), content);
    message.insert("refusal".into(), Value::Null);
    if !reasoning.is_empty() {
        message.insert("reasoning_content".into(), json!(reasoning));
    }
    let made_calls = !calls.is_empty();
    if made_calls {
        message.insert("tool_calls".into(), Value::Array(calls));
    }
    json!({
        "id": response.id,
        "object": "chat.completion",
        "created": response.created,
        "model": model,
        "choices": [{
            "index": 0,
            "message": message,
            "logprobs": null,
            "finish_reason": finish_to_wire(response.finish, made_calls),
        }],
        "usage": encode_usage(&response.usage),
    })
}

/// What a chat message carries of a reply: its texts and its reasoning joined, its tool calls
/// (signatures, encrypted reasoning and other parts have no place in it).
pub(in crate::openai_chat) struct Gathered<'a> {
    pub(in crate::openai_chat) text: String,
    pub(in crate::openai_chat) reasoning: String,
    pub(in crate::openai_chat) calls: Vec<&'a ToolCall>,
}

impl<'a> Gathered<'a> {
    pub(in crate::openai_chat) fn of(response: &'a ChatResponse) -> Self {
        let mut gathered = Gathered {
            text: String::new(),
            reasoning: String::new(),
            calls: Vec::new(),
        };
        for part in &response.parts {
            match part {
                Part::Text { text } => gathered.text.push_str(text),
                Part::Reasoning(item) => gathered.reasoning.push_str(&item.text),
                Part::ToolCall(call) => gathered.calls.push(call),
                Part::Image(_) | Part::ToolResult(_) | Part::System { .. } => {}
            }
        }
        gathered
    }
}

/// The choice with `index` 0, else the first.
pub(crate) fn first_choice(choices: &[Value]) -> Option<&Value> {
    choices
        .iter()
        .find(|choice| choice.get("index").and_then(Value::as_u64) == Some(0))
        .or_else(|| choices.first())
}

/// Reasoning text: `reasoning_content` (DeepSeek, xAI, vLLM), else a string `reasoning`
/// (OpenRouter, some vLLM builds).
pub(crate) fn reasoning_text(message: &Value) -> Option<&str> {
    let text = match message.get("reasoning_content").and_then(Value::as_str) {
        Some(text) => Some(text),
        None => message.get("reasoning").and_then(Value::as_str),
    };
    text.filter(|text| !text.is_empty())
}

/// The canonical finish: the wire reason, overridden by tool calls (pitfall 3) and refusals.
pub(crate) fn finish(wire: Option<&str>, made_calls: bool, refused: bool) -> FinishReason {
    let reason = wire.map_or(FinishReason::EndTurn, finish_from_wire);
    if made_calls {
        FinishReason::ToolCalls
    } else if refused && reason == FinishReason::EndTurn {
        FinishReason::ContentFilter
    } else {
        reason
    }
}

fn tool_call(id: Option<&str>, function: &Value, names: &NameMap, position: usize) -> ToolCall {
    let name = names.original(function.get("name").and_then(Value::as_str).unwrap_or(""));
    let arguments = match function.get("arguments") {
        Some(Value::String(arguments)) if !arguments.trim().is_empty() => arguments.clone(),
        Some(Value::Object(arguments)) => Value::Object(arguments.clone()).to_string(),
        _ => "{}".to_owned(),
    };
    let id = match id {
        Some(id) if !id.is_empty() => id.to_owned(),
        _ => synthetic_call_id(&name, &arguments, position),
    };
    ToolCall {
        id,
        name,
        arguments,
        signature: None,
    }
}

fn str_field(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// An OpenAI-style `usage` object → canonical (`wire-formats.md` §6.5); the rules live in
/// `usage.rs`, shared with the gateway's relay.
pub(crate) fn decode_usage(usage: &Value) -> Usage {
    super::usage::from_value(usage)
}

/// Canonical usage in OpenAI's shape: integer counts, cached tokens inside `prompt_tokens`,
/// reasoning inside `completion_tokens`.
#[derive(Debug, Serialize)]
pub(crate) struct WireUsage {
    prompt_tokens: u64,
    completion_tokens: u64,
    total_tokens: u64,
    prompt_tokens_details: PromptDetails,
    completion_tokens_details: CompletionDetails,
}

#[derive(Debug, Serialize)]
struct PromptDetails {
    cached_tokens: u64,
    #[serde(skip_serializing_if = "is_zero")]
    cache_write_tokens: u64,
}

#[derive(Debug, Serialize)]
struct CompletionDetails {
    reasoning_tokens: u64,
}

fn is_zero(count: &u64) -> bool {
    *count == 0
}

impl WireUsage {
    pub(crate) fn new(usage: &Usage) -> Self {
        Self {
            prompt_tokens: usage.total_input(),
            completion_tokens: usage.output,
            total_tokens: usage.total(),
            prompt_tokens_details: PromptDetails {
                cached_tokens: usage.cache_read,
                cache_write_tokens: usage.cache_write,
            },
            completion_tokens_details: CompletionDetails {
                reasoning_tokens: usage.reasoning,
            },
        }
    }
}

/// Canonical usage as an OpenAI `usage` object.
pub(crate) fn encode_usage(usage: &Usage) -> Value {
    // Cannot fail: a struct of integers.
    serde_json::to_value(WireUsage::new(usage)).unwrap_or(Value::Null)
}

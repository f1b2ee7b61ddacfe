//! The fast path of [`super::decode_response`]: a whole `chat.completion` read by serde into
//! borrowing structs, with no `serde_json::Value` tree for the reply.
//!
//! It reads only what it reads exactly as the tree path does and answers `None` for anything
//! else — a reply that is not an object, a repeated key, no `choices`, `content` as an array,
//! the deprecated `function_call`, a field of an unexpected type — so the caller reads that
//! reply through the tree, which gives the same answer or the precise error. The property tests
//! in `tests/response_typed.rs` hold the two paths to the same replies.

use serde::Deserialize;

use super::super::usage::ChatUsage;
use crate::borrowed::{AnyValue, MaybeText, Obj, Present, Text};
use crate::model::{ChatResponse, NameMap, Part, Reasoning, ToolCall, synthetic_call_id};

#[derive(Deserialize)]
struct Reply<'a> {
    #[serde(borrow, default)]
    id: MaybeText<'a>,
    #[serde(borrow, default)]
    model: MaybeText<'a>,
    #[serde(borrow, default)]
    created: Present<'a>,
    #[serde(borrow, default)]
    choices: Option<Vec<Obj<Choice<'a>>>>,
    /// Read typed as it comes (a repeated key inside refuses, so the tree reads it).
    #[serde(default)]
    usage: Option<ChatUsage>,
}

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(borrow, default)]
    index: Present<'a>,
    #[serde(borrow, default)]
    message: Option<Obj<Message<'a>>>,
    #[serde(borrow, default)]
    finish_reason: MaybeText<'a>,
}

#[derive(Default, Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    reasoning_content: MaybeText<'a>,
    #[serde(borrow, default)]
    reasoning: MaybeText<'a>,
    /// Text, or parts (rare in replies: the tree path joins them), or no text.
    #[serde(borrow, default)]
    content: AnyValue<'a>,
    #[serde(borrow, default)]
    refusal: MaybeText<'a>,
    #[serde(borrow, default)]
    tool_calls: Option<Vec<Obj<Call<'a>>>>,
    #[serde(borrow, default)]
    function_call: Present<'a>,
}

#[derive(Deserialize)]
struct Call<'a> {
    #[serde(borrow, default)]
    id: MaybeText<'a>,
    #[serde(borrow, default)]
    function: Option<Obj<Function<'a>>>,
}

#[derive(Deserialize)]
struct Function<'a> {
    #[serde(borrow, default)]
    name: MaybeText<'a>,
    #[serde(borrow, default)]
    arguments: Present<'a>,
}

/// The reply, or `None` to read it through the tree instead.
pub(in crate::openai_chat) fn decode(body: &[u8], names: &NameMap) -> Option<ChatResponse> {
    let Obj(reply) =
        serde_json::from_str::<Obj<Reply<'_>>>(std::str::from_utf8(body).ok()?).ok()?;
    // No `choices` is an error the tree path words.
    let choices = reply.choices.as_deref()?;
    let choice = choices
        .iter()
        .find(|choice| as_u64(&choice.index) == Some(0))
        .or_else(|| choices.first())?;
    let empty = Message::default();
    let message = choice.message.as_deref().unwrap_or(&empty);
    if message
        .function_call
        .0
        .is_some_and(|call| call.get().starts_with('{'))
    {
        return None;
    }

    let mut parts = Vec::new();
    let reasoning = match &message.reasoning_content.0 {
        Some(text) => Some(text.as_str()),
        None => message.reasoning.as_str(),
    };
    if let Some(text) = reasoning.filter(|text| !text.is_empty()) {
        parts.push(Part::Reasoning(Reasoning {
            text: text.to_owned(),
            ..Reasoning::default()
        }));
    }
    match &message.content {
        AnyValue::Text(text) if !text.as_str().is_empty() => parts.push(Part::Text {
            text: text.as_str().to_owned(),
        }),
        AnyValue::Array => return None,
        AnyValue::Text(_) | AnyValue::Other => {}
    }
    let refused = match message.refusal.as_str() {
        Some(refusal) if !refusal.is_empty() => {
            parts.push(Part::Text {
                text: refusal.to_owned(),
            });
            true
        }
        _ => false,
    };
    for (position, call) in message.tool_calls.iter().flatten().enumerate() {
        parts.push(Part::ToolCall(tool_call(call, names, position)?));
    }

    let made_calls = parts.iter().any(|part| matches!(part, Part::ToolCall(_)));
    Some(ChatResponse {
        id: reply.id.as_str().unwrap_or_default().to_owned(),
        model: reply.model.as_str().unwrap_or_default().to_owned(),
        created: reply
            .created
            .0
            .and_then(|raw| serde_json::from_str::<i64>(raw.get()).ok())
            .unwrap_or(0),
        parts,
        finish: super::finish(choice.finish_reason.as_str(), made_calls, refused),
        usage: reply.usage.map(|usage| usage.usage()).unwrap_or_default(),
    })
}

fn tool_call(call: &Call<'_>, names: &NameMap, position: usize) -> Option<ToolCall> {
    let function = call.function.as_deref();
    let name = names.original(function.and_then(|f| f.name.as_str()).unwrap_or(""));
    let arguments = match function.and_then(|f| f.arguments.0) {
        Some(raw) if raw.get().starts_with('"') => {
            let text = serde_json::from_str::<Text<'_>>(raw.get()).ok()?;
            if text.as_str().trim().is_empty() {
                "{}".to_owned()
            } else {
                text.into_string()
            }
        }
        Some(raw) if raw.get().starts_with('{') => crate::borrowed::compact(raw).ok()?,
        _ => "{}".to_owned(),
    };
    let id = match call.id.as_str() {
        Some(id) if !id.is_empty() => id.to_owned(),
        _ => synthetic_call_id(&name, &arguments, position),
    };
    Some(ToolCall {
        id,
        name,
        arguments,
        signature: None,
    })
}

/// What `Value::as_u64` reads from a field.
fn as_u64(field: &Present<'_>) -> Option<u64> {
    serde_json::from_str::<u64>(field.0?.get()).ok()
}

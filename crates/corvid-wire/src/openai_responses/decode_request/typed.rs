//! The fast path of [`super::decode_request`]: the body read once by serde into borrowing
//! structs, no `serde_json::Value` tree for the conversation or the function tools.
//!
//! Message, `function_call` and `function_call_output` items are read typed; any other item
//! (reasoning, an image part, a shape off the usual) is read from its own raw slice as a value
//! by the tree decoder's item reader, so the conversation is built by the same rules either
//! way. Anything the fast path does not decode exactly as the tree decoder (a wrong type, an
//! error, built-in or namespace tools, a repeated field) makes it answer `None`, and the
//! caller decodes the body as a tree. The property tests hold the two to the same answers.

use std::fmt;

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::Conversation;
use crate::borrowed::{MaybeText, Present, Text, TextOr, read_top};
use crate::model::{Part, RawJson, Tool, ToolCall, ToolResult, ToolResultContent};

/// `instructions` or `input`: a string or items.
type Input<'a> = TextOr<'a, &'a RawValue>;

struct Top<'a> {
    instructions: Option<Input<'a>>,
    input: Option<Input<'a>>,
    tools: Option<Vec<&'a RawValue>>,
    rest: Map<String, Value>,
}

#[derive(Deserialize)]
struct Item<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Text<'a>>,
    #[serde(borrow, default)]
    role: Present<'a>,
    #[serde(borrow, default)]
    content: Option<Contents<'a>>,
    #[serde(borrow, default)]
    call_id: Option<Text<'a>>,
    #[serde(borrow, default)]
    id: MaybeText<'a>,
    #[serde(borrow, default)]
    name: Option<Text<'a>>,
    #[serde(borrow, default)]
    arguments: Option<Text<'a>>,
    #[serde(borrow, default)]
    namespace: Option<Text<'a>>,
    #[serde(borrow, default)]
    output: Option<Contents<'a>>,
}

/// A message's `content` or a call output's `output`: a string or parts.
type Contents<'a> = TextOr<'a, ContentPart<'a>>;

#[derive(Deserialize)]
struct ContentPart<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: MaybeText<'a>,
    #[serde(borrow, default)]
    text: MaybeText<'a>,
    #[serde(borrow, default)]
    refusal: MaybeText<'a>,
}

#[derive(Deserialize)]
struct WireTool<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: MaybeText<'a>,
    #[serde(borrow, default)]
    name: Option<Text<'a>>,
    #[serde(borrow, default)]
    description: Option<Text<'a>>,
    #[serde(borrow, default)]
    parameters: Present<'a>,
    #[serde(default)]
    strict: Option<bool>,
}

/// What one typed item does to the conversation.
enum Action<'a> {
    Message(Text<'a>, Vec<Part>),
    Call(ToolCall),
    Output(ToolResult),
    Ignore,
}

/// The top-level fields other than `instructions`, `input` and `tools`, the conversation and
/// the function tools; `None` to decode the body as a tree.
pub(super) fn decode(body: &[u8]) -> Option<super::Parts> {
    // One UTF-8 check for the whole body, not one per string (`from_str` trusts its input).
    let top: Top<'_> = serde_json::from_str(std::str::from_utf8(body).ok()?).ok()?;
    let mut conversation = Conversation::default();
    for (input, path) in [(top.instructions, "instructions"), (top.input, "input")] {
        match input {
            None => {}
            Some(Input::Text(text)) if path == "instructions" => {
                conversation.push_system(text.into_string());
            }
            Some(Input::Text(text)) => conversation.user_text(text.as_str()),
            Some(Input::Items(items)) => {
                for (position, raw) in items.into_iter().enumerate() {
                    item(&mut conversation, raw, path, position)?;
                }
            }
        }
    }
    let functions = match top.tools {
        None => Vec::new(),
        Some(tools) => tools
            .into_iter()
            .map(function_tool)
            .collect::<Option<_>>()?,
    };
    Some((top.rest, conversation, functions))
}

/// One input item into the conversation, typed when it can be, else from its value.
fn item(
    conversation: &mut Conversation,
    raw: &RawValue,
    path: &str,
    position: usize,
) -> Option<()> {
    let action = serde_json::from_str::<Item<'_>>(raw.get())
        .ok()
        .and_then(read);
    match action {
        Some(action) => {
            let after_tool_output = conversation.take_after_tool_output();
            match action {
                Action::Message(role, parts) => {
                    conversation
                        .apply_message(role.as_str(), parts, path)
                        .ok()?;
                }
                Action::Call(call) => conversation.function_call(call, after_tool_output),
                Action::Output(result) => conversation.function_call_output(result),
                Action::Ignore => {}
            }
        }
        None => {
            let value: Value = serde_json::from_str(raw.get()).ok()?;
            conversation
                .item(&value, &format!("{path}[{position}]"))
                .ok()?;
        }
    }
    Some(())
}

/// What an item does, or `None` to read it from its value.
fn read(item: Item<'_>) -> Option<Action<'_>> {
    let kind = match &item.kind {
        Some(kind) => kind.as_str(),
        None if item.role.0.is_some() => "message",
        None => "",
    };
    Some(match kind {
        "message" => {
            let role: Text<'_> = serde_json::from_str(item.role.0?.get()).ok()?;
            let mut parts = Vec::new();
            match item.content {
                None => {}
                Some(Contents::Text(text)) if text.as_str().is_empty() => {}
                Some(Contents::Text(text)) => parts.push(Part::Text {
                    text: text.into_string(),
                }),
                Some(Contents::Items(items)) => {
                    for part in items {
                        if let Some(text) = part_text(part)?
                            && !text.is_empty()
                        {
                            parts.push(Part::Text { text });
                        }
                    }
                }
            }
            Action::Message(role, parts)
        }
        "function_call" => {
            let id = match item.call_id {
                Some(id) => id,
                None => item.id.0?,
            };
            let name = item.name?;
            let name = match item.namespace {
                Some(namespace) => {
                    crate::openai_responses::namespaced(namespace.as_str(), name.as_str())
                }
                None => name.into_string(),
            };
            Action::Call(ToolCall {
                id: id.into_string(),
                name,
                arguments: item
                    .arguments
                    .filter(|arguments| !arguments.as_str().trim().is_empty())
                    .map_or_else(|| "{}".to_owned(), Text::into_string),
                signature: None,
            })
        }
        "function_call_output" => {
            let mut content = Vec::new();
            match item.output {
                None => {}
                Some(Contents::Text(text)) if text.as_str().is_empty() => {}
                Some(Contents::Text(text)) => content.push(ToolResultContent::Text {
                    text: text.into_string(),
                }),
                Some(Contents::Items(parts)) => {
                    for part in parts {
                        if let Some(text) = part_text(part)? {
                            content.push(ToolResultContent::Text { text });
                        }
                    }
                }
            }
            Action::Output(ToolResult {
                call_id: item.call_id?.into_string(),
                name: None,
                content,
                is_error: false,
            })
        }
        // Reasoning has its own reader (ids, opaque content): from the value.
        "reasoning" => return None,
        _ => Action::Ignore,
    })
}

/// A content part's text (`Some(None)` for a part without one); `None` for an image part,
/// which is read from the value.
fn part_text(part: ContentPart<'_>) -> Option<Option<String>> {
    let kind = part.kind.0.as_ref().map(Text::as_str);
    match kind {
        Some("output_text" | "input_text" | "text") => Some(part.text.0.map(Text::into_string)),
        Some("refusal") => Some(part.refusal.0.map(Text::into_string)),
        Some("input_image") => None,
        _ => Some(None),
    }
}

/// A `function` tool; `None` for any other (built-in and namespace tools go through the tree).
fn function_tool(raw: &RawValue) -> Option<Tool> {
    let tool: WireTool<'_> = serde_json::from_str(raw.get()).ok()?;
    if tool.kind.0.as_ref().map(Text::as_str) != Some("function") {
        return None;
    }
    Some(Tool {
        name: tool.name?.into_string(),
        description: tool.description.map(Text::into_string),
        parameters: match tool.parameters.0 {
            Some(schema) if schema.get() != "null" => RawJson::from_raw(schema),
            _ => RawJson::empty_object_schema(),
        },
        strict: tool.strict,
    })
}

impl<'de: 'a, 'a> Deserialize<'de> for Top<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TopVisitor;
        impl<'de> Visitor<'de> for TopVisitor {
            type Value = Top<'de>;

            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut top = Top {
                    instructions: None,
                    input: None,
                    tools: None,
                    rest: Map::new(),
                };
                let mut rest = Map::new();
                read_top(
                    &mut map,
                    &["instructions", "input", "tools"],
                    &mut rest,
                    |slot, map| {
                        match slot {
                            0 => top.instructions = map.next_value()?,
                            1 => top.input = map.next_value()?,
                            _ => {
                                top.tools = map.next_value::<Option<Vec<&'de RawValue>>>()?;
                            }
                        }
                        Ok(())
                    },
                )?;
                top.rest = rest;
                Ok(top)
            }
        }
        deserializer.deserialize_map(TopVisitor)
    }
}

#[cfg(test)]
mod tests;

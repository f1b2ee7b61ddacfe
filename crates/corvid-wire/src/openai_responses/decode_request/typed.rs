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
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::Conversation;
use crate::borrowed::{MaybeText, Obj, Present, Text, TextOr, read_top};
use crate::model::{Part, RawJson, Tool, ToolCall, ToolResult, ToolResultContent};

/// `instructions` or `input`: a string or items, each item an `I`.
type Input<'a, I> = TextOr<'a, I>;

/// The body's top level, its items and tools read as `I` and `T`: typed in the one-pass read,
/// raw slices in the item-by-item one.
struct Top<'a, I, T> {
    instructions: Option<Input<'a, I>>,
    input: Option<Input<'a, I>>,
    tools: Option<Vec<T>>,
    rest: Map<String, Value>,
    /// A field in `rest` came twice (the last is kept, as the tree keeps it).
    repeated: bool,
}

/// The one-pass read: every item and tool typed as the body is read.
type TypedTop<'a> = Top<'a, Obj<Item<'a>>, WireTool<'a>>;

/// The item-by-item read: items and tools as raw slices, each read typed (or as a value) after.
type RawTop<'a> = Top<'a, &'a RawValue, &'a RawValue>;

#[derive(Deserialize)]
struct Item<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<ItemKind<'a>>,
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
    read_typed(body, Repeats::Kept)
}

/// [`decode`] for a body with every top-level key once: `None` also when one repeats.
pub(super) fn decode_plain(body: &[u8]) -> Option<super::Parts> {
    read_typed(body, Repeats::Refused)
}

/// What a top-level key that comes twice does to the typed read.
#[derive(Clone, Copy, PartialEq)]
enum Repeats {
    /// The last is kept, as the tree keeps it.
    Kept,
    /// The read answers `None`.
    Refused,
}

fn read_typed(body: &[u8], repeats: Repeats) -> Option<super::Parts> {
    // One UTF-8 check for the whole body, not one per string (`from_str` trusts its input).
    let text = std::str::from_utf8(body).ok()?;
    match serde_json::from_str::<TypedTop<'_>>(text) {
        Ok(top) if top.repeated && repeats == Repeats::Refused => None,
        Ok(top) => match decode_typed(top) {
            Decoded::Parts(parts) => Some(parts),
            Decoded::ItemsByItem => decode_item_by_item(text, repeats),
            Decoded::Tree => None,
        },
        // A reasoning item, or a field of a shape the typed items do not take: item by item
        // (which reads those items as values), or as a tree if that fails too.
        Err(_) => decode_item_by_item(text, repeats),
    }
}

/// What the one-pass read came to.
enum Decoded {
    Parts(super::Parts),
    /// An item is read from its value: read the body item by item.
    ItemsByItem,
    /// A tool other than a function: only the tree decoder reads those.
    Tree,
}

/// The one-pass read's items and tools into the conversation and the function tools.
fn decode_typed(top: TypedTop<'_>) -> Decoded {
    let Some(functions) = top
        .tools
        .unwrap_or_default()
        .into_iter()
        .map(function_tool)
        .collect::<Option<Vec<_>>>()
    else {
        return Decoded::Tree;
    };
    let mut conversation = Conversation::default();
    for (input, path) in [(top.instructions, "instructions"), (top.input, "input")] {
        let Some(input) = input else { continue };
        let Some(items) = conversation_text(&mut conversation, input, path) else {
            continue;
        };
        for Obj(item) in items {
            let Some(action) = read(item) else {
                return Decoded::ItemsByItem;
            };
            if apply(&mut conversation, action, path).is_none() {
                return Decoded::Tree;
            }
        }
    }
    Decoded::Parts((top.rest, conversation, functions))
}

/// The items of the body, each read after the whole from its raw slice: typed when it can be,
/// else from its value.
fn decode_item_by_item(text: &str, repeats: Repeats) -> Option<super::Parts> {
    let top: RawTop<'_> = serde_json::from_str(text).ok()?;
    if top.repeated && repeats == Repeats::Refused {
        return None;
    }
    let mut conversation = Conversation::default();
    for (input, path) in [(top.instructions, "instructions"), (top.input, "input")] {
        let Some(input) = input else { continue };
        let Some(items) = conversation_text(&mut conversation, input, path) else {
            continue;
        };
        for (position, raw) in items.into_iter().enumerate() {
            item(&mut conversation, raw, path, position)?;
        }
    }
    let functions = top
        .tools
        .unwrap_or_default()
        .into_iter()
        .map(|raw| function_tool(serde_json::from_str(raw.get()).ok()?))
        .collect::<Option<_>>()?;
    Some((top.rest, conversation, functions))
}

/// `instructions` or `input` given as text goes into the conversation; items are returned.
fn conversation_text<'a, I>(
    conversation: &mut Conversation,
    input: Input<'a, I>,
    path: &str,
) -> Option<Vec<I>> {
    match input {
        Input::Text(text) if path == "instructions" => {
            conversation.push_system(text.into_string());
            None
        }
        Input::Text(text) => {
            conversation.user_text(text.as_str());
            None
        }
        Input::Items(items) => Some(items),
    }
}

/// One input item into the conversation, typed when it can be, else from its value.
fn item(
    conversation: &mut Conversation,
    raw: &RawValue,
    path: &str,
    position: usize,
) -> Option<()> {
    let action = serde_json::from_str::<Obj<Item<'_>>>(raw.get())
        .ok()
        .and_then(|Obj(item)| read(item));
    match action {
        Some(action) => apply(conversation, action, path),
        None => {
            let value: Value = serde_json::from_str(raw.get()).ok()?;
            conversation
                .item(&value, &format!("{path}[{position}]"))
                .ok()
        }
    }
}

/// What a typed item does, done to the conversation; `None` where the tree decoder would
/// answer an error.
fn apply(conversation: &mut Conversation, action: Action<'_>, path: &str) -> Option<()> {
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
    Some(())
}

/// What an item does, or `None` to read it from its value.
fn read(item: Item<'_>) -> Option<Action<'_>> {
    let kind = match &item.kind {
        Some(kind) => kind.0.as_str(),
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
        // Refused as the item is read (`ItemKind`); kept so that no change there can let a
        // reasoning item be ignored.
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
fn function_tool(tool: WireTool<'_>) -> Option<Tool> {
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

/// An item's `type`. `reasoning` is refused, which ends the one-pass read at once: reasoning
/// items are read from their values (their ids and opaque content have their own reader).
struct ItemKind<'a>(Text<'a>);

impl<'de: 'a, 'a> Deserialize<'de> for ItemKind<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let kind = Text::deserialize(deserializer)?;
        if kind.as_str() == "reasoning" {
            return Err(serde::de::Error::custom(
                "a reasoning item is read from its value",
            ));
        }
        Ok(ItemKind(kind))
    }
}

impl<'de: 'a, 'a, I: Deserialize<'de>, T: Deserialize<'de>> Deserialize<'de> for Top<'a, I, T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TopVisitor<I, T>(PhantomData<(I, T)>);
        impl<'de, I: Deserialize<'de>, T: Deserialize<'de>> Visitor<'de> for TopVisitor<I, T> {
            type Value = Top<'de, I, T>;

            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut top = Top {
                    instructions: None,
                    input: None,
                    tools: None,
                    rest: Map::new(),
                    repeated: false,
                };
                let mut rest = Map::new();
                top.repeated = read_top(
                    &mut map,
                    &["instructions", "input", "tools"],
                    &mut rest,
                    |slot, map| {
                        match slot {
                            0 => top.instructions = map.next_value()?,
                            1 => top.input = map.next_value()?,
                            _ => {
                                top.tools = map.next_value::<Option<Vec<T>>>()?;
                            }
                        }
                        Ok(())
                    },
                )?;
                top.rest = rest;
                Ok(top)
            }
        }
        deserializer.deserialize_map(TopVisitor(PhantomData))
    }
}

#[cfg(test)]
mod tests;

//! The fast path of [`super::decode_request`]: the body read once by serde into borrowing
//! structs and turned into the canonical model, with no `serde_json::Value` tree for the
//! conversation, the system text or the function tools.
//!
//! It accepts only what it can decode exactly as the tree decoder does and answers `None` for
//! anything else (a wrong type, a missing field, an unusual block, a duplicate key), so the
//! caller falls back to the tree decoder, which gives the same request or the precise error.
//! The property tests in `tests.rs` hold the two to the same answers.

use std::fmt;

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::borrowed::{Present, Text, TextOr, compact, read_top_raw};
use crate::model::{
    ChatRequest, Image, ImageSource, Message, Part, Reasoning, Role, Tool, ToolCall, ToolResult,
    ToolResultContent,
};

/// The body with its three large fields read typed, the other top-level fields as raw text.
struct Top<'a> {
    system: Option<System<'a>>,
    messages: Option<Vec<WireMessage<'a>>>,
    tools: Option<Option<Vec<ToolEntry<'a>>>>,
    rest: Vec<(Text<'a>, &'a RawValue)>,
}

/// `system`, or a system turn's `content`: a string or blocks.
type System<'a> = TextOr<'a, Block<'a>>;

#[derive(Deserialize)]
struct WireMessage<'a> {
    #[serde(borrow)]
    role: Text<'a>,
    #[serde(borrow)]
    content: System<'a>,
}

/// Any content block, with every field a block type the model carries may have.
#[derive(Deserialize)]
struct Block<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Text<'a>>,
    #[serde(borrow, default)]
    text: Option<Text<'a>>,
    #[serde(borrow, default)]
    id: Option<Text<'a>>,
    #[serde(borrow, default)]
    name: Option<Text<'a>>,
    #[serde(borrow, default)]
    input: Present<'a>,
    #[serde(borrow, default)]
    tool_use_id: Option<Text<'a>>,
    #[serde(borrow, default)]
    content: Option<System<'a>>,
    #[serde(borrow, default)]
    is_error: Present<'a>,
    #[serde(borrow, default)]
    thinking: Option<Text<'a>>,
    #[serde(borrow, default)]
    signature: Option<Text<'a>>,
    #[serde(borrow, default)]
    data: Option<Text<'a>>,
    #[serde(borrow, default)]
    source: Option<Source<'a>>,
}

#[derive(Deserialize)]
struct Source<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Text<'a>>,
    #[serde(borrow, default)]
    media_type: Option<Text<'a>>,
    #[serde(borrow, default)]
    data: Option<Text<'a>>,
    #[serde(borrow, default)]
    url: Option<Text<'a>>,
}

/// The request, or `None` to fall back to the tree decoder.
pub(super) fn decode(body: &[u8]) -> Option<ChatRequest> {
    // One UTF-8 check for the whole body, not one per string (`from_str` trusts its input).
    let top: Top<'_> = serde_json::from_str(std::str::from_utf8(body).ok()?).ok()?;
    let mut system = match top.system {
        None => Vec::new(),
        Some(system) => system_texts(system)?,
    };
    let wire_messages = top.messages?;
    let mut messages: Vec<Message> = Vec::with_capacity(wire_messages.len());
    for message in wire_messages {
        match message.role.as_str() {
            "system" | "developer" => {
                let texts: Vec<String> = system_texts(message.content)?
                    .into_iter()
                    .filter(|text| !text.is_empty())
                    .collect();
                if texts.is_empty() {
                } else if messages.is_empty() {
                    system.extend(texts);
                } else {
                    crate::model::push_system_turn(
                        &mut messages,
                        texts
                            .into_iter()
                            .map(|text| Part::System { text })
                            .collect(),
                    );
                }
            }
            role @ ("user" | "assistant") => {
                let role = if role == "user" {
                    Role::User
                } else {
                    Role::Assistant
                };
                let parts = match message.content {
                    System::Text(text) => vec![Part::Text {
                        text: text.into_string(),
                    }],
                    System::Items(blocks) => {
                        let mut parts = Vec::with_capacity(blocks.len());
                        for block in blocks {
                            parts.extend(part(block)?);
                        }
                        parts
                    }
                };
                if !parts.is_empty() {
                    messages.push(Message { role, parts });
                }
            }
            _ => return None,
        }
    }
    let (tools, server_tools) = match top.tools.flatten() {
        None => (Vec::new(), Vec::new()),
        Some(tools) => self::tools(tools)?,
    };
    top::finish(top.rest, system, messages, tools, server_tools)
}

/// System text blocks (other blocks skipped), or the one string.
fn system_texts(system: System<'_>) -> Option<Vec<String>> {
    match system {
        System::Text(text) => Some(vec![text.into_string()]),
        System::Items(blocks) => {
            let mut texts = Vec::new();
            for block in blocks {
                if block.kind.as_ref().map(Text::as_str) == Some("text") {
                    texts.push(block.text?.into_string());
                }
            }
            Some(texts)
        }
    }
}

/// One block of a user or assistant message: `Some(None)` for block types the model does not
/// carry, `None` to fall back.
fn part(mut block: Block<'_>) -> Option<Option<Part>> {
    let kind = block.kind.take()?;
    Some(Some(match kind.as_str() {
        "text" => Part::Text {
            text: block.text?.into_string(),
        },
        "image" => match image(block.source?)? {
            Some(image) => Part::Image(image),
            None => return Some(None),
        },
        "tool_use" => Part::ToolCall(ToolCall {
            id: block.id?.into_string(),
            name: block.name?.into_string(),
            arguments: match block.input.0 {
                Some(raw) if raw.get() != "null" => compact(raw).ok()?,
                _ => "{}".to_owned(),
            },
            signature: None,
        }),
        "tool_result" => Part::ToolResult(tool_result(block)?),
        "thinking" => Part::Reasoning(Reasoning {
            text: block.thinking.map(Text::into_string).unwrap_or_default(),
            // As the tree decoder: an empty signature reads as unsigned.
            signature: block
                .signature
                .map(Text::into_string)
                .filter(|signature| !signature.is_empty()),
            encrypted: None,
            id: None,
        }),
        "redacted_thinking" => Part::Reasoning(Reasoning {
            encrypted: Some(block.data?.into_string()),
            ..Reasoning::default()
        }),
        _ => return Some(None),
    }))
}

/// An image source: `Some(None)` for sources the model does not carry (`file`).
fn image(source: Source<'_>) -> Option<Option<Image>> {
    let source = match source.kind.as_ref().map(Text::as_str) {
        Some("base64") => ImageSource::Base64 {
            media_type: source.media_type?.into_string(),
            data: source.data?.into_string(),
        },
        Some("url") => ImageSource::Url {
            url: source.url?.into_string(),
        },
        _ => return Some(None),
    };
    Some(Some(Image {
        source,
        detail: None,
    }))
}

fn tool_result(block: Block<'_>) -> Option<ToolResult> {
    let content = match block.content {
        None => Vec::new(),
        Some(System::Text(text)) => vec![ToolResultContent::Text {
            text: text.into_string(),
        }],
        Some(System::Items(items)) => {
            let mut content = Vec::with_capacity(items.len());
            for item in items {
                match item.kind.as_ref().map(Text::as_str) {
                    Some("text") => content.push(ToolResultContent::Text {
                        text: item.text?.into_string(),
                    }),
                    Some("image") => {
                        if let Some(image) = image(item.source?)? {
                            content.push(ToolResultContent::Image(image));
                        }
                    }
                    _ => {}
                }
            }
            content
        }
    };
    Some(ToolResult {
        call_id: block.tool_use_id?.into_string(),
        name: None,
        content,
        is_error: block.is_error.is_true(),
    })
}

/// Function tools, and server tools (kept whole, as values) apart.
fn tools(entries: Vec<ToolEntry<'_>>) -> Option<(Vec<Tool>, Vec<Value>)> {
    let mut functions = Vec::with_capacity(entries.len());
    let mut server = Vec::new();
    for entry in entries {
        match entry.read()? {
            Entry::Function(tool) => functions.push(tool),
            Entry::Server(tool) => server.push(tool),
        }
    }
    Some((functions, server))
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
                    system: None,
                    messages: None,
                    tools: None,
                    rest: Vec::new(),
                };
                let mut rest = Vec::new();
                read_top_raw(
                    &mut map,
                    &["system", "messages", "tools"],
                    &mut rest,
                    |slot, map| {
                        match slot {
                            0 => top.system = map.next_value()?,
                            1 => top.messages = Some(map.next_value()?),
                            _ => top.tools = Some(map.next_value()?),
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
mod tool_entry;
mod top;

use tool_entry::{Entry, ToolEntry};

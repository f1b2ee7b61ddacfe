//! The pass-through's side of what corvid minted: a byte search says whether a client's
//! conversation may hold a token, and [`strip`] settles the raw JSON for the provider it goes
//! to (the translation path settles the canonical request with [`super::settle`]).

use std::sync::LazyLock;

use memchr::memmem::{self, Finder};

use super::{Kind, MARKER, MARKER_BASE64, is_minted, open, open_id, origin_label};
use crate::Dialect;

/// The prefixes of the Anthropic tokens corvid once wrapped for Responses clients (before the
/// envelope above): no Responses provider can read them either.
const LEGACY_PREFIX: &str = "corvid-anthropic-";

/// The empty signature of thinking corvid (or another gateway) made from unsigned reasoning:
/// Anthropic refuses it ("Invalid signature in thinking block").
const EMPTY_SIGNATURE: &str = r#""signature":"""#;

/// Whether a request's conversation field (see [`conversation_field`]; the whole body works
/// too) in `dialect` may hold something corvid minted: one byte search or two (SIMD, about
/// 7 GB/s each), so the pass-through path stays as fast as it was when nothing is there.
pub fn may_hold_minted(dialect: Dialect, conversation: &[u8]) -> bool {
    static MARKER_FINDER: LazyLock<Finder<'static>> =
        LazyLock::new(|| Finder::new(MARKER.as_bytes()));
    static EMPTY_SIGNATURE_FINDER: LazyLock<Finder<'static>> =
        LazyLock::new(|| Finder::new(EMPTY_SIGNATURE.as_bytes()));
    let minted = MARKER_FINDER.find(conversation).is_some();
    minted
        || match dialect {
            Dialect::Anthropic => EMPTY_SIGNATURE_FINDER.find(conversation).is_some(),
            Dialect::OpenAiResponses => {
                memmem::find(conversation, LEGACY_PREFIX.as_bytes()).is_some()
            }
            Dialect::Gemini => memmem::find(conversation, MARKER_BASE64.as_bytes()).is_some(),
            Dialect::OpenAiChat => false,
        }
}

/// The top-level field that holds a `dialect` request's conversation.
pub fn conversation_field(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Anthropic | Dialect::OpenAiChat => "messages",
        Dialect::OpenAiResponses => "input",
        Dialect::Gemini => "contents",
    }
}

/// A conversation with what corvid minted settled for the pass-through target.
#[derive(Debug, Clone, PartialEq)]
pub struct Stripped {
    /// The new JSON text of the conversation field.
    pub conversation: String,
    /// Anthropic: whether thinking may stay on. With thinking on, the assistant turn of an
    /// ongoing tool loop must start with a thinking block; when stripping removed it, the
    /// request's `thinking` has to go.
    pub thinking_allowed: bool,
}

/// Settles what corvid minted in the raw JSON of a `dialect` request's conversation field
/// (see [`conversation_field`]) for the pass-through provider named `target`: a value the
/// target produced is given back in its own form, anything else is removed, and minted tool
/// call ids get their original ids back. `None` when nothing changed (or the field is not
/// JSON the dialect knows): the caller sends the body as it came.
pub fn strip(dialect: Dialect, target: &str, conversation: &[u8]) -> Option<Stripped> {
    let mut value: serde_json::Value = serde_json::from_slice(conversation).ok()?;
    let target = origin_label(target);
    let items = value.as_array_mut()?;
    let changed = match dialect {
        Dialect::Anthropic => strip_anthropic(items, &target),
        Dialect::OpenAiResponses => strip_responses(items, &target),
        Dialect::OpenAiChat => strip_chat(items),
        Dialect::Gemini => strip_gemini(items),
    };
    if !changed {
        return None;
    }
    let thinking_allowed = dialect != Dialect::Anthropic || anthropic_thinking_allowed(items);
    Some(Stripped {
        conversation: value.to_string(),
        thinking_allowed,
    })
}

/// What to do with one opaque value on its way to `target`.
enum Verdict {
    Keep,
    Replace(String),
    Remove,
}

fn verdict(text: &str, kind: Kind, target: &str) -> Verdict {
    match open(text) {
        Some(minted) if minted.origin == target && minted.kind == kind => {
            Verdict::Replace(minted.value)
        }
        Some(_) => Verdict::Remove,
        None => Verdict::Keep,
    }
}

/// A minted call id's original id, made valid for Anthropic when `anthropic`.
fn plain_id(id: &str, anthropic: bool) -> Option<String> {
    let minted = open_id(id)?;
    Some(if anthropic {
        crate::model::anthropic_safe_id(&minted.id)
    } else {
        minted.id
    })
}

fn strip_anthropic(messages: &mut Vec<serde_json::Value>, target: &str) -> bool {
    use serde_json::Value;
    let mut changed = false;
    for message in messages.iter_mut() {
        let Some(blocks) = message.get_mut("content").and_then(Value::as_array_mut) else {
            continue;
        };
        blocks.retain_mut(|block| {
            let (field, kind) = match block.get("type").and_then(Value::as_str) {
                Some("thinking") => ("signature", Kind::Signature),
                Some("redacted_thinking") => ("data", Kind::Redacted),
                Some("tool_use") => {
                    changed |= replace_id(block, "id", true);
                    return true;
                }
                Some("tool_result") => {
                    changed |= replace_id(block, "tool_use_id", true);
                    return true;
                }
                _ => return true,
            };
            let Some(text) = block.get(field).and_then(Value::as_str) else {
                return true;
            };
            let verdict = if text.is_empty() && kind == Kind::Signature {
                Verdict::Remove
            } else {
                verdict(text, kind, target)
            };
            match verdict {
                Verdict::Keep => true,
                Verdict::Replace(original) => {
                    block[field] = Value::String(original);
                    changed = true;
                    true
                }
                Verdict::Remove => {
                    changed = true;
                    false
                }
            }
        });
    }
    if changed {
        messages.retain(|message| {
            message
                .get("content")
                .and_then(Value::as_array)
                .is_none_or(|blocks| !blocks.is_empty())
        });
    }
    changed
}

fn replace_id(item: &mut serde_json::Value, field: &str, anthropic: bool) -> bool {
    match item
        .get(field)
        .and_then(serde_json::Value::as_str)
        .and_then(|id| plain_id(id, anthropic))
    {
        Some(plain) => {
            item[field] = serde_json::Value::String(plain);
            true
        }
        None => false,
    }
}

fn strip_responses(items: &mut Vec<serde_json::Value>, target: &str) -> bool {
    use serde_json::Value;
    let mut changed = false;
    items.retain_mut(|item| match item.get("type").and_then(Value::as_str) {
        Some("reasoning") => {
            let Some(text) = item.get("encrypted_content").and_then(Value::as_str) else {
                return true;
            };
            let verdict = if text.starts_with(LEGACY_PREFIX) {
                Verdict::Remove
            } else {
                verdict(text, Kind::Encrypted, target)
            };
            match verdict {
                Verdict::Keep => true,
                Verdict::Replace(original) => {
                    item["encrypted_content"] = Value::String(original);
                    changed = true;
                    true
                }
                Verdict::Remove => {
                    changed = true;
                    false
                }
            }
        }
        Some("function_call" | "function_call_output") => {
            if replace_id(item, "call_id", false) {
                changed = true;
                // The item id corvid derived from the minted call id names nothing upstream.
                if let Some(object) = item.as_object_mut()
                    && object
                        .get("id")
                        .and_then(Value::as_str)
                        .is_some_and(|id| id.contains(MARKER))
                {
                    object.remove("id");
                }
            }
            true
        }
        _ => true,
    });
    changed
}

fn strip_chat(messages: &mut [serde_json::Value]) -> bool {
    use serde_json::Value;
    let mut changed = false;
    for message in messages {
        changed |= replace_id(message, "tool_call_id", false);
        if let Some(calls) = message.get_mut("tool_calls").and_then(Value::as_array_mut) {
            for call in calls {
                changed |= replace_id(call, "id", false);
            }
        }
    }
    changed
}

/// A Gemini provider never made what corvid minted for a Gemini client (those come from other
/// providers): minted thought signatures go, and thought parts left empty with them.
fn strip_gemini(contents: &mut [serde_json::Value]) -> bool {
    use serde_json::Value;
    let mut changed = false;
    for content in contents {
        let Some(parts) = content.get_mut("parts").and_then(Value::as_array_mut) else {
            continue;
        };
        parts.retain_mut(|part| {
            let minted = part
                .get("thoughtSignature")
                .and_then(Value::as_str)
                .is_some_and(is_minted);
            if !minted {
                return true;
            }
            changed = true;
            if let Some(object) = part.as_object_mut() {
                object.remove("thoughtSignature");
            }
            let empty_thought = part.get("thought") == Some(&Value::Bool(true))
                && part
                    .get("text")
                    .and_then(Value::as_str)
                    .is_none_or(str::is_empty);
            !empty_thought
        });
    }
    changed
}

/// Whether Anthropic accepts thinking on for these messages: in an ongoing tool loop (the
/// last message answers the assistant turn before it with tool results), that assistant
/// turn must start with a thinking block.
fn anthropic_thinking_allowed(messages: &[serde_json::Value]) -> bool {
    let first_type = |message: &serde_json::Value| {
        message["content"]
            .get(0)
            .and_then(|block| block.get("type"))
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned)
    };
    let [.., assistant, user] = messages else {
        return true;
    };
    if assistant["role"] != "assistant" || first_type(user).as_deref() != Some("tool_result") {
        return true;
    }
    matches!(
        first_type(assistant).as_deref(),
        Some("thinking" | "redacted_thinking")
    )
}

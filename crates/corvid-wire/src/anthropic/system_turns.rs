//! System turns inside `messages` on the way to Anthropic itself (the pass-through): Claude
//! Code sends `{"role": "system"}` entries for model names it does not know — an alias or a
//! `provider/model` name corvid routes to Anthropic — and Anthropic's `messages` have no
//! system role. Leading ones join the top-level `system`; later ones become user text where
//! they were (after the tool results of the turn they land in, which must come first).

use std::sync::LazyLock;

use memchr::memmem::Finder;
use serde_json::{Map, Value, json};

/// What the rewrite produced: the new JSON text of `messages`, and of `system` when leading
/// system turns joined it.
#[derive(Debug, Clone, PartialEq)]
pub struct Folded {
    pub messages: String,
    pub system: Option<String>,
}

/// Whether raw `messages` may hold a system turn: one byte search for a compact
/// `"role":"system"` (what Claude Code writes; a top-level `"system":` key does not match).
pub fn may_hold_system_turns(messages: &[u8]) -> bool {
    static FINDER: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(br#":"system""#));
    FINDER.find(messages).is_some()
}

/// The raw `messages` (and `system`, if any) of a Messages request with its system turns
/// folded; `None` when it has none (or the field is not an array).
pub fn fold_system_turns(messages: &[u8], system: Option<&[u8]>) -> Option<Folded> {
    let Value::Array(messages) = serde_json::from_slice::<Value>(messages).ok()? else {
        return None;
    };
    if !messages.iter().any(is_system_turn) {
        return None;
    }
    let mut leading: Vec<String> = Vec::new();
    let mut out: Vec<Value> = Vec::with_capacity(messages.len());
    for message in messages {
        if !is_system_turn(&message) {
            out.push(message);
            continue;
        }
        let texts = turn_texts(&message);
        if out.is_empty() {
            leading.extend(texts);
            continue;
        }
        let blocks: Vec<Value> = texts
            .into_iter()
            .map(|text| json!({"type": "text", "text": text}))
            .collect();
        if blocks.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some(last) if last["role"] == "user" => append_blocks(last, blocks),
            _ => out.push(json!({"role": "user", "content": blocks})),
        }
    }
    // A user message made of system text followed by a user message: one turn, the tool
    // results first (Anthropic wants them at the start of the turn after the calls).
    let mut merged: Vec<Value> = Vec::with_capacity(out.len());
    for message in out {
        match merged.last_mut() {
            Some(last) if last["role"] == "user" && message["role"] == "user" => {
                let mut blocks = content_blocks(&message);
                let results = blocks
                    .iter()
                    .take_while(|block| block["type"] == "tool_result")
                    .count();
                let rest = blocks.split_off(results);
                let mut combined = blocks;
                combined.extend(content_blocks(last));
                combined.extend(rest);
                last["content"] = Value::Array(combined);
            }
            _ => merged.push(message),
        }
    }
    let system = (!leading.is_empty()).then(|| join_system(system, &leading));
    Some(Folded {
        messages: Value::Array(merged).to_string(),
        system,
    })
}

fn is_system_turn(message: &Value) -> bool {
    matches!(message["role"].as_str(), Some("system" | "developer"))
}

/// The texts of a system turn: a string, or its text blocks.
fn turn_texts(message: &Value) -> Vec<String> {
    match &message["content"] {
        Value::String(text) => vec![text.clone()],
        Value::Array(blocks) => blocks
            .iter()
            .filter(|block| block["type"] == "text")
            .filter_map(|block| block["text"].as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
    .into_iter()
    .filter(|text| !text.is_empty())
    .collect()
}

/// A message's content as blocks (a string becomes one text block).
fn content_blocks(message: &Value) -> Vec<Value> {
    match &message["content"] {
        Value::String(text) => vec![json!({"type": "text", "text": text})],
        Value::Array(blocks) => blocks.clone(),
        _ => Vec::new(),
    }
}

fn append_blocks(message: &mut Value, blocks: Vec<Value>) {
    let mut content = content_blocks(message);
    content.extend(blocks);
    message["content"] = Value::Array(content);
}

/// The top-level `system` with `texts` after what it held, as text blocks (a string or
/// nothing becomes blocks too, which Anthropic accepts alike).
fn join_system(system: Option<&[u8]>, texts: &[String]) -> String {
    let mut blocks: Vec<Value> = match system.and_then(|raw| serde_json::from_slice(raw).ok()) {
        Some(Value::String(text)) if !text.is_empty() => {
            vec![json!({"type": "text", "text": text})]
        }
        Some(Value::Array(blocks)) => blocks,
        _ => Vec::new(),
    };
    blocks.extend(texts.iter().map(|text| {
        let mut block = Map::new();
        block.insert("type".to_owned(), json!("text"));
        block.insert("text".to_owned(), json!(text));
        Value::Object(block)
    }));
    Value::Array(blocks).to_string()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn fold(messages: Value, system: Option<Value>) -> Option<(Value, Option<Value>)> {
        let system = system.map(|system| system.to_string());
        fold_system_turns(
            messages.to_string().as_bytes(),
            system.as_deref().map(str::as_bytes),
        )
        .map(|folded| {
            (
                serde_json::from_str(&folded.messages).unwrap(),
                folded
                    .system
                    .map(|system| serde_json::from_str(&system).unwrap()),
            )
        })
    }

    #[test]
    fn claude_codes_trailing_system_turn_joins_the_user_turn() {
        let (messages, system) = fold(
            json!([
                {"role": "user", "content": "say hi"},
                {"role": "system", "content": "Agents: general."},
            ]),
            Some(json!("You are a coding agent.")),
        )
        .unwrap();
        assert_eq!(
            messages,
            json!([{"role": "user", "content": [
                {"type": "text", "text": "say hi"},
                {"type": "text", "text": "Agents: general."}]}])
        );
        assert_eq!(system, None, "the top-level system is left alone");
    }

    #[test]
    fn leading_turns_join_system_and_tool_results_stay_first() {
        let (messages, system) = fold(
            json!([
                {"role": "system", "content": [{"type": "text", "text": "Lead."}]},
                {"role": "user", "content": "read a"},
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]},
                {"role": "system", "content": "Mind the size."},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "x"},
                    {"type": "text", "text": "go on"}]},
            ]),
            Some(json!([{"type": "text", "text": "Base."}])),
        )
        .unwrap();
        assert_eq!(
            system,
            Some(json!([{"type": "text", "text": "Base."}, {"type": "text", "text": "Lead."}]))
        );
        assert_eq!(
            messages[2],
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "x"},
                {"type": "text", "text": "Mind the size."},
                {"type": "text", "text": "go on"}]})
        );
        assert_eq!(messages.as_array().unwrap().len(), 3);
    }

    #[test]
    fn one_byte_search_finds_a_system_turn() {
        assert!(may_hold_system_turns(
            br#"[{"role":"user","content":"hi"},{"role":"system","content":"x"}]"#
        ));
        assert!(!may_hold_system_turns(
            br#"[{"role":"user","content":"the \"system\": prompt"}]"#
        ));
    }

    #[test]
    fn no_system_turn_no_rewrite() {
        assert_eq!(fold(json!([{"role": "user", "content": "hi"}]), None), None);
    }
}

//! Provider prompt caching kept through a translation. Anthropic caches only up to the
//! `cache_control` breakpoints a request marks; a client of another dialect has no way to mark
//! them, so a body corvid encodes for Anthropic gets the breakpoints Claude Code would set —
//! the end of the tools, of the system prompt, and of the conversation (the next turn reads
//! everything up to there from the cache) — unless it already carries one of its own. They are
//! set while the body is still a tree, so the encoded bytes are written once.

use serde_json::{Map, Value, json};

use crate::model::ChatRequest;

/// [`super::encode_request`] with the cache breakpoints Claude Code would set, unless the body
/// already carries one of its own: added to the body as it is built, not to its bytes.
pub fn encode_request_with_breakpoints(request: &ChatRequest) -> Value {
    let mut body = super::encode_request(request);
    if let Value::Object(object) = &mut body {
        add_breakpoints(object);
    }
    body
}

/// Adds Anthropic cache breakpoints to a Messages body that has none.
pub(crate) fn add_breakpoints(object: &mut Map<String, Value>) {
    if object.values().any(has_breakpoint) {
        return;
    }
    if let Some(last) = object
        .get_mut("tools")
        .and_then(Value::as_array_mut)
        .and_then(|tools| tools.last_mut())
        .and_then(Value::as_object_mut)
    {
        mark(last);
    }
    if let Some(system) = object.get_mut("system") {
        mark_last_block(system);
    }
    if let Some(content) = object
        .get_mut("messages")
        .and_then(Value::as_array_mut)
        .and_then(|messages| messages.last_mut())
        .and_then(|message| message.get_mut("content"))
    {
        mark_last_block(content);
    }
}

/// Whether any `cache_control` is already set (the client's own choice is kept as it is).
fn has_breakpoint(body: &Value) -> bool {
    match body {
        Value::Object(object) => {
            object.contains_key("cache_control") || object.values().any(has_breakpoint)
        }
        Value::Array(items) => items.iter().any(has_breakpoint),
        _ => false,
    }
}

/// Marks the last block of a content value; a plain string becomes one text block.
fn mark_last_block(content: &mut Value) {
    if let Value::String(text) = content {
        if text.is_empty() {
            return;
        }
        *content = json!([{"type": "text", "text": std::mem::take(text)}]);
    }
    if let Some(last) = content
        .as_array_mut()
        .and_then(|blocks| blocks.last_mut())
        .and_then(Value::as_object_mut)
    {
        // Thinking blocks cannot carry a breakpoint.
        let kind = last.get("type").and_then(Value::as_str);
        if !matches!(kind, Some("thinking" | "redacted_thinking")) {
            mark(last);
        }
    }
}

fn mark(block: &mut Map<String, Value>) {
    block.insert("cache_control".to_owned(), json!({"type": "ephemeral"}));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add_anthropic_breakpoints(body: &mut Value) {
        add_breakpoints(body.as_object_mut().unwrap());
    }

    #[test]
    fn tools_system_and_the_last_turn_get_a_breakpoint() {
        let mut body = json!({
            "system": "You are terse.",
            "tools": [{"name": "a"}, {"name": "b"}],
            "messages": [
                {"role": "user", "content": "first"},
                {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]}
            ]
        });
        add_anthropic_breakpoints(&mut body);
        let ephemeral = json!({"type": "ephemeral"});
        assert_eq!(body["tools"][1]["cache_control"], ephemeral);
        assert!(body["tools"][0].get("cache_control").is_none());
        assert_eq!(body["system"][0]["text"], "You are terse.");
        assert_eq!(body["system"][0]["cache_control"], ephemeral);
        assert_eq!(
            body["messages"][2]["content"][0]["cache_control"],
            ephemeral
        );
        assert_eq!(body["messages"][0]["content"], "first");
    }

    #[test]
    fn a_clients_own_breakpoints_are_left_alone() {
        let mut body = json!({
            "system": [{"type": "text", "text": "s", "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
            "messages": [{"role": "user", "content": "hi"}]
        });
        let before = body.clone();
        add_anthropic_breakpoints(&mut body);
        assert_eq!(body, before);
    }
}

//! Whole (non-streamed) replies: an Anthropic `message` object in and out.

use serde_json::{Map, Value, json};

use crate::model::{
    ChatResponse, DecodeError, FinishReason, NameMap, Part, Reasoning, ToolCall, anthropic_safe_id,
};

use super::{finish_from_wire, finish_to_wire, tool_input, usage_from_wire, usage_to_wire};

mod body;
#[cfg(test)]
mod tests;

pub use body::encode_response_body;

/// The message id sent to a client when the reply has none.
const FALLBACK_ID: &str = "msg_corvid";

/// Upstream → corvid: an Anthropic `message` object. `names` restores shortened tool names.
/// Server tool blocks (`server_tool_use`, `web_search_tool_result`…) are skipped.
pub fn decode_response(body: &[u8], names: &NameMap) -> Result<ChatResponse, DecodeError> {
    let Value::Object(message) = serde_json::from_slice(body)? else {
        return Err(DecodeError::field("body", "must be a JSON object"));
    };
    if message.get("type").and_then(Value::as_str) == Some("error") {
        let text = message
            .get("error")
            .and_then(|error| error.get("message"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        return Err(DecodeError::field(
            "type",
            format!("is `error`, not a message: {text}"),
        ));
    }
    let parts = match message.get("content") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|block| decode_block(block, names))
            .collect(),
        Some(_) => return Err(DecodeError::field("content", "must be an array")),
    };
    let made_calls = parts.iter().any(|part| matches!(part, Part::ToolCall(_)));
    let finish = match message.get("stop_reason").and_then(Value::as_str) {
        _ if made_calls => FinishReason::ToolCalls,
        Some(reason) => finish_from_wire(reason),
        None => FinishReason::EndTurn,
    };
    Ok(ChatResponse {
        id: string(&message, "id"),
        model: string(&message, "model"),
        created: 0,
        parts,
        finish,
        usage: usage_from_wire(message.get("usage")),
    })
}

fn decode_block(block: &Value, names: &NameMap) -> Option<Part> {
    let text = |field: &str| {
        block
            .get(field)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    Some(match block.get("type")?.as_str()? {
        "text" => Part::Text { text: text("text") },
        "thinking" => Part::Reasoning(Reasoning {
            text: text("thinking"),
            signature: Some(text("signature")).filter(|signature| !signature.is_empty()),
            ..Reasoning::default()
        }),
        "redacted_thinking" => Part::Reasoning(Reasoning {
            encrypted: Some(text("data")),
            ..Reasoning::default()
        }),
        "tool_use" => Part::ToolCall(ToolCall {
            id: text("id"),
            name: names.original(&text("name")),
            arguments: match block.get("input") {
                None | Some(Value::Null) => "{}".to_owned(),
                Some(input) => input.to_string(),
            },
            signature: None,
        }),
        _ => return None,
    })
}

/// corvid → client: an Anthropic `message` object. `model` is the name the client asked for.
///
/// Reasoning without an Anthropic signature becomes a thinking block with `"signature": ""`
/// (Claude Code drops thinking without the field, and the decoder reads `""` as unsigned);
/// tool arguments that are not a JSON object become `{}`.
pub fn encode_response(response: &ChatResponse, model: &str) -> Value {
    let content: Vec<Value> = response
        .parts
        .iter()
        .filter_map(|part| match part {
            Part::Text { text } if text.is_empty() => None,
            Part::Text { text } => Some(json!({"type": "text", "text": text})),
            Part::Reasoning(reasoning) => client_thinking_block(reasoning),
            Part::ToolCall(call) => Some(json!({
                "type": "tool_use",
                "id": anthropic_safe_id(&call.id),
                "name": call.name,
                "input": tool_input(&call.arguments),
            })),
            Part::Image(_) | Part::ToolResult(_) | Part::System { .. } => None,
        })
        .collect();
    let id = if response.id.is_empty() {
        FALLBACK_ID
    } else {
        &response.id
    };
    json!({
        "id": id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": finish_to_wire(response.finish),
        "stop_sequence": null,
        "usage": usage_to_wire(&response.usage),
    })
}

/// Reasoning as a client sees it: signed thinking, Anthropic's redacted thinking, or
/// synthetic thinking with an empty signature (nothing at all when there is no text).
fn client_thinking_block(reasoning: &Reasoning) -> Option<Value> {
    match (&reasoning.signature, &reasoning.encrypted, &reasoning.id) {
        (Some(signature), _, _) if !signature.is_empty() => {
            Some(json!({"type": "thinking", "thinking": reasoning.text, "signature": signature}))
        }
        (_, Some(data), None) if !data.is_empty() && reasoning.text.is_empty() => {
            Some(json!({"type": "redacted_thinking", "data": data}))
        }
        // Another provider's encrypted reasoning, minted by corvid, rides as the signature.
        (_, Some(data), Some(_)) if crate::minted::is_minted(data) => {
            Some(json!({"type": "thinking", "thinking": reasoning.text, "signature": data}))
        }
        _ if reasoning.text.is_empty() => None,
        _ => Some(json!({"type": "thinking", "thinking": reasoning.text, "signature": ""})),
    }
}

fn string(message: &Map<String, Value>, field: &str) -> String {
    message
        .get(field)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

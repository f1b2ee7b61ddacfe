//! Whole (non-streamed) replies: a `response` object in and out, and the output item shapes
//! the stream encoder shares.

use serde_json::{Value, json};

use super::json::{optional_array, timestamp};
use super::{
    Opaque, content_part_text, finish_from_status, function_call_item_id, item_id,
    opaque_reasoning, reasoning_item_text, response_id, status_for, usage_from_wire, usage_to_wire,
};
use crate::model::{ChatResponse, DecodeError, NameMap, Part, Reasoning, ToolCall, Usage};

mod body;

pub use body::encode_response_body;
pub(super) use body::{Envelope, UsageOut};

/// Decodes an upstream `response` object. Reasoning items become [`Part::Reasoning`] (summary
/// text, `encrypted_content`, item id), message text (refusals included) [`Part::Text`],
/// `function_call` items [`Part::ToolCall`] with the `call_id` as id and the tool name restored
/// through `names`. Built-in tool items (`web_search_call`, …) are skipped. A `failed` response
/// is an error.
pub fn decode_response(body: &[u8], names: &NameMap) -> Result<ChatResponse, DecodeError> {
    let response: Value = serde_json::from_slice(body)?;
    if !response.is_object() {
        return Err(DecodeError::field("(body)", "must be a JSON object"));
    }
    if response["status"] == "failed" {
        let message = response["error"]["message"]
            .as_str()
            .unwrap_or("no error message");
        return Err(DecodeError::field(
            "status",
            format!("is failed: {message}"),
        ));
    }
    let response_id = response["id"].as_str().unwrap_or_default();
    let output = optional_array(&response["output"], "output")?;
    let mut parts = Vec::new();
    let mut refused = false;
    let mut made_calls = false;
    for item in output {
        match item["type"].as_str() {
            Some("reasoning") => {
                let mut reasoning = Reasoning {
                    text: reasoning_item_text(item),
                    id: item["id"].as_str().map(str::to_owned),
                    ..Reasoning::default()
                };
                if let Some(data) = item["encrypted_content"].as_str() {
                    let fallback = || item_id("rs", response_id, parts.len());
                    Opaque::read(data).apply(&mut reasoning, fallback);
                }
                if !reasoning.text.is_empty()
                    || reasoning.encrypted.is_some()
                    || reasoning.signature.is_some()
                {
                    parts.push(Part::Reasoning(reasoning));
                }
            }
            Some("message") => {
                for part in item["content"].as_array().into_iter().flatten() {
                    refused |= part["type"] == "refusal";
                    if let Some(text) = content_part_text(part) {
                        push_text(&mut parts, text);
                    }
                }
            }
            Some("function_call") => {
                made_calls = true;
                parts.push(Part::ToolCall(function_call(item, names)));
            }
            _ => {}
        }
    }
    Ok(ChatResponse {
        id: response_id.to_owned(),
        model: response["model"].as_str().unwrap_or_default().to_owned(),
        created: timestamp(&response["created_at"]),
        parts,
        finish: finish_from_status(
            response["status"].as_str(),
            response["incomplete_details"]["reason"].as_str(),
            made_calls,
            refused,
        ),
        usage: match &response["usage"] {
            Value::Null => Usage::default(),
            usage => usage_from_wire(usage),
        },
    })
}

/// Appends text, joining it to the text part just before (as a streamed reply would build it).
fn push_text(parts: &mut Vec<Part>, text: &str) {
    if text.is_empty() {
        return;
    }
    match parts.last_mut() {
        Some(Part::Text { text: last }) => last.push_str(text),
        _ => parts.push(Part::Text {
            text: text.to_owned(),
        }),
    }
}

/// A `function_call` output item as a canonical call.
pub(crate) fn function_call(item: &Value, names: &NameMap) -> ToolCall {
    let arguments = item["arguments"].as_str().unwrap_or_default();
    ToolCall {
        id: item["call_id"]
            .as_str()
            .or(item["id"].as_str())
            .unwrap_or_default()
            .to_owned(),
        name: names.original(item["name"].as_str().unwrap_or_default()),
        arguments: if arguments.trim().is_empty() {
            "{}".to_owned()
        } else {
            arguments.to_owned()
        },
        signature: None,
    }
}

/// Encodes a whole reply as a `response` object for a Responses client. `model` is the name the
/// client asked for. Output items: `reasoning` (summary text, `encrypted_content` — or an
/// Anthropic signature, marked, in its place), `message` (`output_text` parts), `function_call`
/// (`fc_…` item id, the call id as `call_id`).
pub fn encode_response(response: &ChatResponse, model: &str) -> Value {
    let id = response_id(&response.id);
    let mut output = Vec::new();
    let mut texts: Vec<&str> = Vec::new();
    let flush = |output: &mut Vec<Value>, texts: &mut Vec<&str>| {
        if !texts.is_empty() {
            let item_id = item_id("msg", &id, output.len());
            output.push(message_item(&item_id, "completed", texts));
            texts.clear();
        }
    };
    for part in &response.parts {
        match part {
            Part::Text { text } if !text.is_empty() => texts.push(text),
            Part::Reasoning(reasoning) => {
                let opaque = opaque_reasoning(
                    reasoning.encrypted.as_deref(),
                    reasoning.id.is_some(),
                    reasoning.signature.as_deref(),
                );
                if reasoning.text.is_empty() && opaque.is_none() {
                    continue;
                }
                flush(&mut output, &mut texts);
                let item_id = reasoning
                    .id
                    .clone()
                    .unwrap_or_else(|| item_id("rs", &id, output.len()));
                output.push(reasoning_item(&item_id, &reasoning.text, opaque.as_deref()));
            }
            Part::ToolCall(call) => {
                flush(&mut output, &mut texts);
                output.push(function_call_item(
                    &call.id,
                    &call.name,
                    &call.arguments,
                    "completed",
                ));
            }
            _ => {}
        }
    }
    flush(&mut output, &mut texts);
    let (status, incomplete_details) = status_for(response.finish);
    envelope(
        &id,
        model,
        response.created,
        status,
        incomplete_details,
        output,
        usage_to_wire(&response.usage),
    )
}

/// A `response` object with every field the SDKs require.
pub(crate) fn envelope(
    id: &str,
    model: &str,
    created_at: i64,
    status: &str,
    incomplete_details: Value,
    output: Vec<Value>,
    usage: Value,
) -> Value {
    json!({
        "id": id,
        "object": "response",
        "created_at": created_at,
        "status": status,
        "error": null,
        "incomplete_details": incomplete_details,
        "instructions": null,
        "metadata": {},
        "model": model,
        "output": output,
        "parallel_tool_calls": true,
        "tool_choice": "auto",
        "tools": [],
        "usage": usage,
    })
}

/// An assistant `message` item with one `output_text` part per text.
pub(crate) fn message_item(id: &str, status: &str, texts: &[&str]) -> Value {
    let content: Vec<Value> = texts.iter().map(|text| output_text(text)).collect();
    json!({
        "type": "message",
        "id": id,
        "status": status,
        "role": "assistant",
        "content": content,
    })
}

/// An `output_text` content part.
pub(crate) fn output_text(text: &str) -> Value {
    json!({ "type": "output_text", "text": text, "annotations": [], "logprobs": [] })
}

/// A `reasoning` item: the text as one summary part (none when empty), `encrypted_content`
/// when there is some.
pub(crate) fn reasoning_item(id: &str, text: &str, encrypted: Option<&str>) -> Value {
    let summary: Vec<Value> = if text.is_empty() {
        Vec::new()
    } else {
        vec![json!({ "type": "summary_text", "text": text })]
    };
    let mut item = json!({ "type": "reasoning", "id": id, "summary": summary });
    if let Some(encrypted) = encrypted {
        item["encrypted_content"] = json!(encrypted);
    }
    item
}

/// A `function_call` item.
pub(crate) fn function_call_item(
    call_id: &str,
    name: &str,
    arguments: &str,
    status: &str,
) -> Value {
    let (namespace, name) = super::split_namespace(name);
    let mut item = json!({
        "type": "function_call",
        "id": function_call_item_id(call_id),
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
        "status": status,
    });
    if let Some(namespace) = namespace {
        item["namespace"] = json!(namespace);
    }
    item
}

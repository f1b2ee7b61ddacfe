//! What a client does with a reply in its own dialect on the next turn: it appends the
//! assistant turn unchanged to its history, then one result per tool call (or a user message
//! when there was none).

use serde_json::{Value, json};

use super::dialect::Dialect;

/// The tool's answer in these tests.
fn result_text(name: &str) -> String {
    format!("{name}: pub fn add() {{}}")
}

/// `base` (a client request body in `dialect`) with the reply `reply` (a whole reply in the
/// same dialect, as corvid sent it) and the results of its calls appended.
pub(crate) fn next_turn(dialect: Dialect, mut base: Value, reply: &Value) -> Value {
    match dialect {
        Dialect::Chat => {
            let message = reply["choices"][0]["message"].clone();
            let calls = message["tool_calls"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let history = base["messages"].as_array_mut().unwrap();
            history.push(message);
            for call in &calls {
                history.push(json!({
                    "role": "tool",
                    "tool_call_id": call["id"],
                    "content": result_text(call["function"]["name"].as_str().unwrap()),
                }));
            }
            if calls.is_empty() {
                history.push(json!({"role": "user", "content": "Go on."}));
            }
        }
        Dialect::Responses => {
            let output = reply["output"].as_array().cloned().unwrap_or_default();
            let history = base["input"].as_array_mut().unwrap();
            let mut calls = 0;
            for item in &output {
                history.push(item.clone());
            }
            for item in output.iter().filter(|item| item["type"] == "function_call") {
                calls += 1;
                history.push(json!({
                    "type": "function_call_output",
                    "call_id": item["call_id"],
                    "output": result_text(item["name"].as_str().unwrap()),
                }));
            }
            if calls == 0 {
                history.push(json!({"type": "message", "role": "user", "content": "Go on."}));
            }
        }
        Dialect::Anthropic => {
            let content = reply["content"].as_array().cloned().unwrap_or_default();
            let results: Vec<Value> = content
                .iter()
                .filter(|block| block["type"] == "tool_use")
                .map(|block| {
                    json!({
                        "type": "tool_result",
                        "tool_use_id": block["id"],
                        "content": result_text(block["name"].as_str().unwrap()),
                    })
                })
                .collect();
            let history = base["messages"].as_array_mut().unwrap();
            history.push(json!({"role": "assistant", "content": content}));
            if results.is_empty() {
                history.push(json!({"role": "user", "content": "Go on."}));
            } else {
                history.push(json!({"role": "user", "content": results}));
            }
        }
        Dialect::Gemini => {
            let content = reply["candidates"][0]["content"].clone();
            let responses: Vec<Value> = content["parts"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|part| part.get("functionCall"))
                .map(|call| {
                    let name = call["name"].as_str().unwrap();
                    let mut response = json!({
                        "name": name,
                        "response": {"result": result_text(name)},
                    });
                    // The google-genai SDK echoes the call's id when it had one.
                    if let Some(id) = call.get("id") {
                        response["id"] = id.clone();
                    }
                    json!({"functionResponse": response})
                })
                .collect();
            let history = base["contents"].as_array_mut().unwrap();
            history.push(content);
            if responses.is_empty() {
                history.push(json!({"role": "user", "parts": [{"text": "Go on."}]}));
            } else {
                history.push(json!({"role": "user", "parts": responses}));
            }
        }
    }
    base
}

//! What each provider refuses in a request body (reference §1–§4, §6.1, §6.4 and the
//! pitfalls 10–13, 16, 17), checked on every request the matrix produces.

use std::collections::HashSet;

use serde_json::Value;

use super::dialect::Dialect;

/// Panics with the rule a request body for a `provider` upstream breaks.
pub(crate) fn check_request(provider: Dialect, body: &Value, context: &str) {
    let problems = match provider {
        Dialect::Chat => chat(body),
        Dialect::Responses => responses(body),
        Dialect::Anthropic => anthropic(body),
        Dialect::Gemini => gemini(body),
    };
    assert!(
        problems.is_empty(),
        "{context}: invalid {} request:\n{}\n{body:#}",
        provider.name(),
        problems.join("\n")
    );
}

fn openai_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn array<'a>(value: &'a Value, key: &str) -> &'a [Value] {
    value[key].as_array().map(Vec::as_slice).unwrap_or_default()
}

/// Chat: one leading system message at most; each assistant `tool_calls` message is followed
/// by exactly one `tool` message per call; tool names OpenAI accepts.
fn chat(body: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let messages = array(body, "messages");
    let mut pending: Vec<String> = Vec::new();
    for (i, message) in messages.iter().enumerate() {
        let role = message["role"].as_str().unwrap_or_default();
        if role != "tool" && !pending.is_empty() {
            problems.push(format!("messages[{i}]: calls {pending:?} unanswered"));
            pending.clear();
        }
        match role {
            // Chat takes system messages anywhere (a system turn keeps its place), just not
            // between a call and its result, which the check above catches.
            "system" | "user" => {}
            "assistant" => {
                for call in array(message, "tool_calls") {
                    pending.push(call["id"].as_str().unwrap_or_default().to_owned());
                    let name = call["function"]["name"].as_str().unwrap_or_default();
                    if !openai_name(name) {
                        problems.push(format!("messages[{i}]: tool name {name:?}"));
                    }
                    if !call["function"]["arguments"].is_string() {
                        problems.push(format!("messages[{i}]: arguments not a string"));
                    }
                }
            }
            "tool" => {
                let id = message["tool_call_id"].as_str().unwrap_or_default();
                match pending.iter().position(|pending| pending == id) {
                    Some(position) => {
                        pending.remove(position);
                    }
                    None => problems.push(format!("messages[{i}]: result for unknown call {id}")),
                }
                if !message["content"].is_string() {
                    problems.push(format!("messages[{i}]: tool content not text"));
                }
            }
            other => problems.push(format!("messages[{i}]: role {other:?}")),
        }
    }
    if !pending.is_empty() {
        problems.push(format!("calls {pending:?} unanswered at the end"));
    }
    for tool in array(body, "tools") {
        let name = tool["function"]["name"].as_str().unwrap_or_default();
        if !openai_name(name) {
            problems.push(format!("tool name {name:?}"));
        }
    }
    if array(body, "tools").is_empty() && !body["tool_choice"].is_null() {
        problems.push("tool_choice without tools".to_owned());
    }
    problems
}

/// Responses: `store: false`; no item ids (the upstream would look them up); every
/// `function_call` answered by a `function_call_output` and no output without its call.
fn responses(body: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    if body["store"] != Value::Bool(false) {
        problems.push("store is not false".to_owned());
    }
    let mut calls = HashSet::new();
    let mut answered = HashSet::new();
    for (i, item) in array(body, "input").iter().enumerate() {
        if item.get("id").is_some() {
            problems.push(format!("input[{i}]: item id sent"));
        }
        let call_id = item["call_id"].as_str().unwrap_or_default().to_owned();
        match item["type"].as_str() {
            Some("function_call") => {
                calls.insert(call_id);
                let name = item["name"].as_str().unwrap_or_default();
                if !openai_name(name) {
                    problems.push(format!("input[{i}]: tool name {name:?}"));
                }
            }
            Some("function_call_output") => {
                if !calls.contains(&call_id) {
                    problems.push(format!("input[{i}]: output before/without call {call_id}"));
                }
                answered.insert(call_id);
            }
            Some("message" | "reasoning") => {}
            other => problems.push(format!("input[{i}]: item type {other:?}")),
        }
    }
    for call in calls.difference(&answered) {
        problems.push(format!("call {call} unanswered"));
    }
    problems
}

/// Anthropic: `max_tokens`; user/assistant turns alternating from a user turn; ids
/// `^[a-zA-Z0-9_-]+$`; every `tool_use` answered in the next user turn, results first; no
/// result without its call; thinking budget below `max_tokens`, no temperature/forced tool
/// with thinking on.
fn anthropic(body: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    if !body["max_tokens"].is_u64() {
        problems.push("max_tokens missing".to_owned());
    }
    let safe = |id: &str| {
        !id.is_empty()
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    let messages = array(body, "messages");
    let mut previous_calls: Vec<String> = Vec::new();
    for (i, message) in messages.iter().enumerate() {
        let role = message["role"].as_str().unwrap_or_default();
        let expected = if i % 2 == 0 { "user" } else { "assistant" };
        if role != expected {
            problems.push(format!("messages[{i}]: role {role}, want {expected}"));
        }
        let blocks = array(message, "content");
        if blocks.is_empty() && !message["content"].is_string() {
            problems.push(format!("messages[{i}]: empty content"));
        }
        let mut calls = Vec::new();
        let mut answered = Vec::new();
        let mut seen_other = false;
        for block in blocks {
            match block["type"].as_str() {
                Some("tool_use") => {
                    let id = block["id"].as_str().unwrap_or_default();
                    if !safe(id) {
                        problems.push(format!("messages[{i}]: tool_use id {id:?}"));
                    }
                    if !block["input"].is_object() {
                        problems.push(format!("messages[{i}]: input not an object"));
                    }
                    calls.push(id.to_owned());
                }
                Some("tool_result") => {
                    if seen_other {
                        problems.push(format!("messages[{i}]: tool_result after other blocks"));
                    }
                    answered.push(block["tool_use_id"].as_str().unwrap_or_default().to_owned());
                }
                Some("thinking") => {
                    if block["signature"].as_str().unwrap_or_default().is_empty() {
                        problems.push(format!("messages[{i}]: unsigned thinking sent"));
                    }
                    seen_other = true;
                }
                Some("text") => {
                    if block["text"].as_str().unwrap_or_default().is_empty() {
                        problems.push(format!("messages[{i}]: empty text block"));
                    }
                    seen_other = true;
                }
                _ => seen_other = true,
            }
        }
        if role == "user" {
            let mut wanted = previous_calls.clone();
            wanted.sort();
            let mut got = answered.clone();
            got.sort();
            if wanted != got {
                problems.push(format!(
                    "messages[{i}]: results {answered:?} for calls {previous_calls:?}"
                ));
            }
        }
        previous_calls = calls;
    }
    if !previous_calls.is_empty() {
        problems.push(format!("calls {previous_calls:?} unanswered at the end"));
    }
    if body["thinking"]["type"] == "enabled" {
        let budget = body["thinking"]["budget_tokens"].as_u64().unwrap_or(0);
        if budget < 1024 || budget >= body["max_tokens"].as_u64().unwrap_or(0) {
            problems.push(format!("thinking budget {budget}"));
        }
        if body.get("temperature").is_some() {
            problems.push("temperature with thinking".to_owned());
        }
        if matches!(body["tool_choice"]["type"].as_str(), Some("any" | "tool")) {
            problems.push("forced tool_choice with thinking".to_owned());
        }
    }
    problems
}

/// Gemini: `user`/`model` turns; no call/response ids; a model turn's calls answered by as
/// many `functionResponse`s in the next user turn, each named; the first call of a turn
/// signed (Gemini 3); at most 5 stop sequences.
fn gemini(body: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let contents = array(body, "contents");
    let mut previous_calls: Vec<String> = Vec::new();
    for (i, turn) in contents.iter().enumerate() {
        let role = turn["role"].as_str().unwrap_or_default();
        let parts = array(turn, "parts");
        if parts.is_empty() {
            problems.push(format!("contents[{i}]: no parts"));
        }
        let mut calls = Vec::new();
        let mut responses = Vec::new();
        for part in parts {
            if let Some(call) = part.get("functionCall") {
                if call.get("id").is_some() {
                    problems.push(format!("contents[{i}]: functionCall id sent"));
                }
                if calls.is_empty() && part.get("thoughtSignature").is_none() {
                    problems.push(format!("contents[{i}]: first call unsigned"));
                }
                calls.push(call["name"].as_str().unwrap_or_default().to_owned());
            }
            if let Some(response) = part.get("functionResponse") {
                if response.get("id").is_some() {
                    problems.push(format!("contents[{i}]: functionResponse id sent"));
                }
                if !response["response"].is_object() {
                    problems.push(format!("contents[{i}]: response not an object"));
                }
                responses.push(response["name"].as_str().unwrap_or_default().to_owned());
            }
        }
        match role {
            "model" => {
                if !previous_calls.is_empty() {
                    problems.push(format!(
                        "contents[{i}]: calls {previous_calls:?} unanswered"
                    ));
                }
                if !responses.is_empty() {
                    problems.push(format!("contents[{i}]: responses in a model turn"));
                }
            }
            "user" => {
                if !calls.is_empty() {
                    problems.push(format!("contents[{i}]: calls in a user turn"));
                }
                if responses != previous_calls {
                    problems.push(format!(
                        "contents[{i}]: responses {responses:?} for calls {previous_calls:?}"
                    ));
                }
            }
            other => problems.push(format!("contents[{i}]: role {other:?}")),
        }
        previous_calls = calls;
    }
    if !previous_calls.is_empty() {
        problems.push(format!("calls {previous_calls:?} unanswered at the end"));
    }
    if array(&body["generationConfig"], "stopSequences").len() > 5 {
        problems.push("more than 5 stop sequences".to_owned());
    }
    problems
}

//! corvid → Anthropic: the request body for an Anthropic upstream.
//!
//! Beyond the shape, this enforces the rules the API checks (wire-formats.md §3, §6.7, §8):
//! tool results first in the user message after their calls, every call answered, ids valid,
//! images of accepted types, no foreign or synthetic thinking, `max_tokens` present, and the
//! thinking constraints (budget < `max_tokens`, no temperature, no forced tool choice).

use serde_json::{Map, Value, json};

use crate::model::{
    ChatRequest, Image, ImageSource, Message, Part, Reasoning, ReasoningConfig, ResponseFormat,
    Role, ToolCall, ToolChoice, ToolResult, ToolResultContent, anthropic_safe_id, wire_name,
};

use super::tool_input;

#[cfg(test)]
mod tests;

/// `max_tokens` sent when the request names none (Anthropic requires one; the gateway clamps
/// it to the model's limit).
pub const DEFAULT_MAX_TOKENS: u32 = 8192;

/// The smallest thinking budget Anthropic accepts.
pub const MIN_THINKING_BUDGET: u32 = 1024;

/// The image media types Anthropic accepts.
const IMAGE_TYPES: [&str; 4] = ["image/jpeg", "image/png", "image/gif", "image/webp"];

/// The smallest `top_p` Anthropic accepts with thinking on.
const MIN_THINKING_TOP_P: f64 = 0.95;

/// What an unanswered tool call is answered with, so that the API accepts the history.
const MISSING_RESULT: &str = "No result was recorded for this tool call.";

/// corvid → Anthropic: the body to send upstream (`request.model` is the upstream name).
///
/// Of `extra`, only fields that are Anthropic-shaped and need no beta header go back:
/// `top_k`, `metadata.user_id`, `service_tier` and server tools (`extra["tools"]`).
pub fn encode_request(request: &ChatRequest) -> Value {
    let params = &request.params;
    let mut body = Map::new();
    body.insert("model".to_owned(), json!(request.model));
    // System turns ahead of the whole conversation are plain system text.
    let leading = request
        .messages
        .iter()
        .take_while(|message| {
            message
                .parts
                .iter()
                .all(|part| matches!(part, Part::System { .. }))
        })
        .count();
    let mut system = request.system.clone();
    system.extend(
        request.messages[..leading]
            .iter()
            .flat_map(|message| &message.parts)
            .filter_map(|part| match part {
                Part::System { text } => Some(text.clone()),
                _ => None,
            }),
    );
    if let Some(system) = encode_system(&system) {
        body.insert("system".to_owned(), system);
    }
    let messages = encode_messages(&request.messages[leading..]);
    let budget = thinking_budget(params.reasoning).filter(|_| tool_loop_allows_thinking(&messages));
    body.insert("messages".to_owned(), Value::Array(messages));

    let mut max_tokens = params.max_output_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
    if let Some(budget) = budget {
        // The budget is part of `max_tokens`: keep the client's room for the answer on top.
        if max_tokens <= budget {
            max_tokens = max_tokens.saturating_add(budget);
        }
        body.insert(
            "thinking".to_owned(),
            json!({"type": "enabled", "budget_tokens": budget}),
        );
    }
    body.insert("max_tokens".to_owned(), json!(max_tokens));

    let thinking = budget.is_some();
    match (params.temperature, params.top_p) {
        _ if thinking => {
            if let Some(top_p) = params.top_p.filter(|top_p| *top_p >= MIN_THINKING_TOP_P) {
                body.insert("top_p".to_owned(), json!(top_p.min(1.0)));
            }
        }
        // Recent models refuse `temperature` and `top_p` together; the temperature wins.
        (Some(temperature), _) => {
            body.insert("temperature".to_owned(), json!(temperature.clamp(0.0, 1.0)));
        }
        (None, Some(top_p)) => {
            body.insert("top_p".to_owned(), json!(top_p));
        }
        (None, None) => {}
    }
    let stop: Vec<&String> = params
        .stop
        .iter()
        .filter(|stop| !stop.trim().is_empty())
        .collect();
    if !stop.is_empty() {
        body.insert("stop_sequences".to_owned(), json!(stop));
    }

    let mut tools: Vec<Value> = request
        .tools
        .iter()
        .map(|tool| {
            let mut definition = Map::new();
            definition.insert("name".to_owned(), json!(wire_name(&tool.name)));
            if let Some(description) = tool.description.as_deref().filter(|d| !d.is_empty()) {
                definition.insert("description".to_owned(), json!(description));
            }
            let schema = if tool.parameters.is_object() {
                tool.parameters.to_value()
            } else {
                json!({"type": "object", "properties": {}})
            };
            definition.insert("input_schema".to_owned(), schema);
            Value::Object(definition)
        })
        .collect();
    tools.extend(server_tools(request));
    if !tools.is_empty() {
        if let Some(choice) = encode_tool_choice(request, thinking) {
            body.insert("tool_choice".to_owned(), choice);
        }
        body.insert("tools".to_owned(), Value::Array(tools));
    }
    if let Some(ResponseFormat::JsonSchema { schema, .. }) = &params.response_format {
        body.insert(
            "output_config".to_owned(),
            json!({"format": {"type": "json_schema", "schema": schema}}),
        );
    }
    put_back_extra(request, thinking, &mut body);
    body.insert("stream".to_owned(), json!(request.stream));
    Value::Object(body)
}

/// One string for one entry, text blocks for several (keeps their boundaries).
fn encode_system(system: &[String]) -> Option<Value> {
    let texts: Vec<&String> = system.iter().filter(|text| !text.is_empty()).collect();
    match texts.as_slice() {
        [] => None,
        [text] => Some(json!(text)),
        texts => Some(Value::Array(
            texts
                .iter()
                .map(|text| json!({"type": "text", "text": text}))
                .collect(),
        )),
    }
}

/// The thinking budget to send, if thinking is on.
fn thinking_budget(reasoning: Option<ReasoningConfig>) -> Option<u32> {
    match reasoning? {
        ReasoningConfig::Budget(0) | ReasoningConfig::Disabled => None,
        ReasoningConfig::Budget(budget) => Some(budget.max(MIN_THINKING_BUDGET)),
        ReasoningConfig::Effort(effort) => effort.to_budget(),
    }
}

fn encode_tool_choice(request: &ChatRequest, thinking: bool) -> Option<Value> {
    let mut choice = match &request.tool_choice {
        // Thinking refuses a forced tool: relax it to `auto` (pitfall 16).
        Some(ToolChoice::Required | ToolChoice::Named(_)) if thinking => json!({"type": "auto"}),
        Some(ToolChoice::Auto) => json!({"type": "auto"}),
        Some(ToolChoice::Required) => json!({"type": "any"}),
        Some(ToolChoice::None) => json!({"type": "none"}),
        Some(ToolChoice::Named(name)) => json!({"type": "tool", "name": wire_name(name)}),
        None if request.params.parallel_tool_calls == Some(false) => json!({"type": "auto"}),
        None => return None,
    };
    if request.params.parallel_tool_calls == Some(false)
        && let Value::Object(choice) = &mut choice
        && choice.get("type").and_then(Value::as_str) != Some("none")
    {
        choice.insert("disable_parallel_tool_use".to_owned(), json!(true));
    }
    Some(choice)
}

/// Server tools kept by the Anthropic decoder: entries whose `type` ends in a date
/// (`web_search_20250305`), which no other dialect writes.
fn server_tools(request: &ChatRequest) -> Vec<Value> {
    let Some(Value::Array(tools)) = request.extra.get("tools") else {
        return Vec::new();
    };
    tools
        .iter()
        .filter(|tool| {
            tool.get("type")
                .and_then(Value::as_str)
                .and_then(|kind| kind.rsplit_once('_'))
                .is_some_and(|(_, date)| {
                    date.len() == 8 && date.bytes().all(|b| b.is_ascii_digit())
                })
        })
        .cloned()
        .collect()
}

/// The `extra` fields that are safe to send back (see [`encode_request`]).
fn put_back_extra(request: &ChatRequest, thinking: bool, body: &mut Map<String, Value>) {
    let extra = &request.extra;
    if !thinking && let Some(top_k) = extra.get("top_k").filter(|top_k| top_k.is_u64()) {
        body.insert("top_k".to_owned(), top_k.clone());
    }
    if let Some(user_id) = extra
        .get("metadata")
        .and_then(|metadata| metadata.get("user_id"))
        .filter(|user_id| user_id.is_string())
    {
        body.insert("metadata".to_owned(), json!({"user_id": user_id}));
    }
    if let Some(tier) = extra
        .get("service_tier")
        .filter(|tier| matches!(tier.as_str(), Some("auto" | "standard_only")))
    {
        body.insert("service_tier".to_owned(), tier.clone());
    }
}

/// A message being built: its tool results apart, so that they can be put first.
struct Turn {
    role: Role,
    results: Vec<(String, Value)>,
    blocks: Vec<Value>,
    calls: Vec<String>,
}

/// The messages, merged and paired the way the API demands (pitfall 11).
fn encode_messages(messages: &[Message]) -> Vec<Value> {
    let mut turns: Vec<Turn> = Vec::new();
    for message in messages {
        let turn = encode_turn(message);
        if turn.blocks.is_empty() && turn.results.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some(last) if last.role == turn.role => {
                last.results.extend(turn.results);
                last.blocks.extend(turn.blocks);
                last.calls.extend(turn.calls);
            }
            _ => turns.push(turn),
        }
    }
    // Pair calls and results: the user turn after an assistant turn answers exactly its calls.
    let mut open_calls: Vec<String> = Vec::new();
    let mut paired = Vec::with_capacity(turns.len());
    for mut turn in turns {
        if turn.role == Role::User {
            answer(&mut turn, &open_calls);
            open_calls.clear();
        } else {
            // Merging made roles alternate, so the turn before this one answered its calls.
            orphan_results(&mut turn, &[]);
            open_calls = std::mem::take(&mut turn.calls);
        }
        paired.push(turn);
    }
    paired
        .into_iter()
        .map(|turn| {
            let role = match turn.role {
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            let mut content: Vec<Value> =
                turn.results.into_iter().map(|(_, block)| block).collect();
            content.extend(turn.blocks);
            json!({"role": role, "content": content})
        })
        .collect()
}

/// Keeps the results of `calls` in `turn`, turns the others into text, answers the missing.
fn answer(turn: &mut Turn, calls: &[String]) {
    orphan_results(turn, calls);
    for call in calls {
        if !turn.results.iter().any(|(id, _)| id == call) {
            turn.results.push((call.clone(), missing_result(call)));
        }
    }
}

fn missing_result(call: &str) -> Value {
    json!({"type": "tool_result", "tool_use_id": call, "content": MISSING_RESULT, "is_error": true})
}

/// Results that answer no call of the previous turn become text, which the API accepts.
fn orphan_results(turn: &mut Turn, calls: &[String]) {
    let (kept, orphans): (Vec<_>, Vec<_>) = std::mem::take(&mut turn.results)
        .into_iter()
        .partition(|(id, _)| calls.contains(id));
    turn.results = kept;
    let mut texts: Vec<Value> = Vec::new();
    for (id, block) in orphans {
        let mut text = format!("[Result of tool call {id}]");
        let mut images = Vec::new();
        match block.get("content") {
            Some(Value::String(content)) => text = format!("{text}\n{content}"),
            Some(Value::Array(items)) => {
                for item in items {
                    match item.get("text").and_then(Value::as_str) {
                        Some(content) => text = format!("{text}\n{content}"),
                        None => images.push(item.clone()),
                    }
                }
            }
            _ => {}
        }
        texts.push(json!({"type": "text", "text": text}));
        texts.extend(images);
    }
    texts.append(&mut turn.blocks);
    turn.blocks = texts;
}

fn encode_turn(message: &Message) -> Turn {
    let mut turn = Turn {
        role: message.role,
        results: Vec::new(),
        blocks: Vec::new(),
        calls: Vec::new(),
    };
    for part in &message.parts {
        match part {
            Part::Text { text } if text.is_empty() => {}
            Part::Text { text } => turn.blocks.push(json!({"type": "text", "text": text})),
            Part::Image(image) => turn.blocks.push(image_block(image)),
            Part::ToolCall(call) => {
                let block = tool_use_block(call);
                turn.calls.push(anthropic_safe_id(&call.id));
                turn.blocks.push(block);
            }
            Part::ToolResult(result) => turn.results.push((
                anthropic_safe_id(&result.call_id),
                tool_result_block(result),
            )),
            Part::Reasoning(reasoning) if message.role == Role::Assistant => {
                turn.blocks.extend(thinking_block(reasoning));
            }
            Part::Reasoning(_) => {}
            // In mid-conversation (leading ones went to `system` in `encode_request`) a
            // system turn stays where it was, as text of the user turn: Anthropic has no
            // system role inside `messages`, and moving it to the top would change its meaning.
            Part::System { text } if text.is_empty() => {}
            Part::System { text } => turn.blocks.push(json!({"type": "text", "text": text})),
        }
    }
    turn
}

/// Signed thinking goes back unchanged, Anthropic's redacted thinking as `redacted_thinking`;
/// unsigned (synthetic) or foreign reasoning is never forwarded (pitfall 14). Responses'
/// `encrypted_content` is told apart from `redacted_thinking` data by its item id.
fn thinking_block(reasoning: &Reasoning) -> Option<Value> {
    match (&reasoning.signature, &reasoning.encrypted, &reasoning.id) {
        (Some(signature), _, _) if !signature.is_empty() => {
            Some(json!({"type": "thinking", "thinking": reasoning.text, "signature": signature}))
        }
        (_, Some(data), None) if !data.is_empty() => {
            Some(json!({"type": "redacted_thinking", "data": data}))
        }
        _ => None,
    }
}

fn tool_use_block(call: &ToolCall) -> Value {
    json!({
        "type": "tool_use",
        "id": anthropic_safe_id(&call.id),
        "name": wire_name(&call.name),
        "input": tool_input(&call.arguments),
    })
}

fn tool_result_block(result: &ToolResult) -> Value {
    let mut block = Map::new();
    block.insert("type".to_owned(), json!("tool_result"));
    block.insert(
        "tool_use_id".to_owned(),
        json!(anthropic_safe_id(&result.call_id)),
    );
    let content: Vec<Value> = result
        .content
        .iter()
        .filter_map(|content| match content {
            ToolResultContent::Text { text } if text.is_empty() => None,
            ToolResultContent::Text { text } => Some(json!({"type": "text", "text": text})),
            ToolResultContent::Image(image) => Some(image_block(image)),
        })
        .collect();
    match content.as_slice() {
        [] => {}
        [single] if single.get("type") == Some(&json!("text")) => {
            block.insert("content".to_owned(), single["text"].clone());
        }
        _ => {
            block.insert("content".to_owned(), Value::Array(content));
        }
    }
    if result.is_error {
        block.insert("is_error".to_owned(), json!(true));
    }
    Value::Object(block)
}

/// An image block, or a text note when Anthropic cannot take the image (pitfall 18).
fn image_block(image: &Image) -> Value {
    match &image.source {
        ImageSource::Base64 { media_type, data } => {
            let media_type = match media_type.to_ascii_lowercase().as_str() {
                "image/jpg" => "image/jpeg".to_owned(),
                other => other.to_owned(),
            };
            if IMAGE_TYPES.contains(&media_type.as_str()) {
                json!({"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}})
            } else {
                omitted_image(&format!("an image of type {media_type}"))
            }
        }
        ImageSource::Url { url } if url.starts_with("https://") || url.starts_with("http://") => {
            json!({"type": "image", "source": {"type": "url", "url": url}})
        }
        ImageSource::Url { url } => omitted_image(&format!("an image at {url}")),
    }
}

fn omitted_image(what: &str) -> Value {
    json!({"type": "text", "text": format!("[{what} was omitted: Anthropic accepts only JPEG, PNG, GIF and WebP images by data or http(s) URL]")})
}

/// With thinking on, the assistant turn of an ongoing tool loop must start with a thinking
/// block. History from another provider has none: then thinking is left off for this turn.
fn tool_loop_allows_thinking(messages: &[Value]) -> bool {
    let first_type = |message: &Value| {
        message["content"]
            .get(0)
            .and_then(|block| block.get("type"))
            .and_then(Value::as_str)
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

//! Canonical → upstream: a Chat Completions request for OpenAI, xAI, Ollama, vLLM.

use serde_json::{Map, Value, json};

use crate::model::{
    ChatRequest, Effort, Image, Message, NameMap, Part, ReasoningConfig, ResponseFormat, Role,
    ToolChoice, ToolResult, ToolResultContent,
};

/// The `tool` message sent for a call the conversation never answered: Chat upstreams refuse an
/// assistant `tool_calls` message that is not followed by one `tool` message per call.
const UNANSWERED: &str = "No result was returned for this tool call.";

/// The `tool` message text of a result that was only images, which move to a user message.
const IMAGE_MOVED: &str = "The tool returned an image; it is attached to the next user message.";

/// Fields never written back from `extra`: xAI answers `search_parameters` (Live Search, now
/// removed) with 410 Gone, and no other upstream knows it.
const NEVER_FORWARDED: [&str; 1] = ["search_parameters"];

/// corvid → upstream: the Chat Completions body for `request` (`request.model` is already the
/// upstream's model name).
///
/// - All system entries become one leading `system` message, joined with a blank line.
/// - Tool results become `tool` messages right after the assistant turn, in the order of its
///   calls; a call left unanswered gets a placeholder result. Images in results move to the
///   user message that follows (Chat `tool` messages are text-only).
/// - Reasoning with text is echoed as `reasoning_content` on its assistant message (DeepSeek
///   requires it in tool loops; others ignore it); signatures and encrypted reasoning are
///   dropped.
/// - Tool names go through [`NameMap`] (OpenAI's `^[a-zA-Z0-9_-]{1,64}$`).
/// - A streamed request always asks for `stream_options.include_usage`.
///
/// `extra` is written back for fields the encoder did not set (but never `search_parameters`,
/// which xAI refuses with 410). It holds fields of the dialect the request was decoded from:
/// the caller clears it when that was not Chat Completions.
pub fn encode_request(request: &ChatRequest) -> Value {
    let names = NameMap::new(&request.tools);
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert("messages".into(), Value::Array(messages(request, &names)));

    // OpenAI refuses `tool_choice` and `parallel_tool_calls` without tools.
    if !request.tools.is_empty() {
        let tools = request.tools.iter().map(|tool| {
            let mut function = Map::new();
            function.insert("name".into(), json!(names.wire(&tool.name)));
            if let Some(description) = &tool.description {
                function.insert("description".into(), json!(description));
            }
            function.insert("parameters".into(), tool.parameters.clone());
            if let Some(strict) = tool.strict {
                function.insert("strict".into(), json!(strict));
            }
            json!({"type": "function", "function": function})
        });
        body.insert("tools".into(), tools.collect());
        if let Some(choice) = &request.tool_choice {
            let choice = match choice {
                ToolChoice::Auto => json!("auto"),
                ToolChoice::Required => json!("required"),
                ToolChoice::None => json!("none"),
                ToolChoice::Named(name) => {
                    json!({"type": "function", "function": {"name": names.wire(name)}})
                }
            };
            body.insert("tool_choice".into(), choice);
        }
        if let Some(parallel) = request.params.parallel_tool_calls {
            body.insert("parallel_tool_calls".into(), json!(parallel));
        }
    }

    let params = &request.params;
    if let Some(max) = params.max_output_tokens {
        body.insert("max_completion_tokens".into(), json!(max));
    }
    if let Some(temperature) = params.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    if let Some(top_p) = params.top_p {
        body.insert("top_p".into(), json!(top_p));
    }
    if !params.stop.is_empty() {
        body.insert("stop".into(), json!(params.stop));
    }
    if let Some(reasoning) = params.reasoning {
        let effort = match reasoning {
            ReasoningConfig::Effort(effort) => effort,
            ReasoningConfig::Budget(budget) => Effort::from_budget(i64::from(budget)),
            ReasoningConfig::Disabled => Effort::None,
        };
        body.insert("reasoning_effort".into(), json!(effort.as_str()));
    }
    if let Some(format) = &params.response_format {
        let format = match format {
            ResponseFormat::Text => json!({"type": "text"}),
            ResponseFormat::JsonObject => json!({"type": "json_object"}),
            ResponseFormat::JsonSchema {
                name,
                schema,
                strict,
            } => {
                let mut json_schema = Map::new();
                json_schema.insert("name".into(), json!(name));
                json_schema.insert("schema".into(), schema.clone());
                if let Some(strict) = strict {
                    json_schema.insert("strict".into(), json!(strict));
                }
                json!({"type": "json_schema", "json_schema": json_schema})
            }
        };
        body.insert("response_format".into(), format);
    }

    body.insert("stream".into(), json!(request.stream));
    if request.stream {
        // Always ask for the usage chunk (pitfall 8), keeping the client's other options.
        let mut options = match request.extra.get("stream_options") {
            Some(Value::Object(options)) => options.clone(),
            _ => Map::new(),
        };
        options.insert("include_usage".into(), json!(true));
        body.insert("stream_options".into(), Value::Object(options));
    }
    for (key, value) in &request.extra {
        // Without streaming, OpenAI refuses `stream_options`.
        if key != "stream_options" && !NEVER_FORWARDED.contains(&key.as_str()) {
            body.entry(key.clone()).or_insert_with(|| value.clone());
        }
    }
    Value::Object(body)
}

/// The `messages` array: system first, then the conversation.
fn messages(request: &ChatRequest, names: &NameMap) -> Vec<Value> {
    let mut out = Vec::with_capacity(request.messages.len() + 1);
    if !request.system.is_empty() {
        out.push(json!({"role": "system", "content": request.system.join("\n\n")}));
    }
    // The ids of the previous assistant message's calls, in order, while they await results.
    let mut calls: Vec<String> = Vec::new();
    // System turns that came between calls and their results: Chat wants the `tool` messages
    // right after the calls, so these follow the results.
    let mut deferred: Vec<&str> = Vec::new();
    let flush = |out: &mut Vec<Value>, deferred: &mut Vec<&str>| {
        for text in deferred.drain(..) {
            out.push(json!({"role": "system", "content": text}));
        }
    };
    for message in &request.messages {
        let system_only = message
            .parts
            .iter()
            .all(|part| matches!(part, Part::System { .. }));
        match message.role {
            Role::User if system_only && !calls.is_empty() => {
                deferred.extend(message.parts.iter().filter_map(|part| match part {
                    Part::System { text } => Some(text.as_str()),
                    _ => None,
                }));
            }
            Role::User => {
                user(message, &mut calls, &mut out);
                flush(&mut out, &mut deferred);
            }
            Role::Assistant => {
                answer_calls(&mut out, &mut calls, &[]);
                flush(&mut out, &mut deferred);
                out.push(assistant(message, names));
                calls = message.call_ids();
            }
        }
    }
    answer_calls(&mut out, &mut calls, &[]);
    flush(&mut out, &mut deferred);
    out
}

/// One `tool` message per call in `calls`, in call order, from `results` or a placeholder;
/// then results answering no pending call, in their order. Clears `calls`.
fn answer_calls(out: &mut Vec<Value>, calls: &mut Vec<String>, results: &[&ToolResult]) {
    for id in calls.iter() {
        match results.iter().find(|result| result.call_id == *id) {
            Some(result) => out.push(tool_message(result)),
            None => out.push(json!({"role": "tool", "tool_call_id": id, "content": UNANSWERED})),
        }
    }
    for result in results {
        if !calls.contains(&result.call_id) {
            out.push(tool_message(result));
        }
    }
    calls.clear();
}

fn tool_message(result: &ToolResult) -> Value {
    let only_images = !result.content.is_empty()
        && result
            .content
            .iter()
            .all(|content| matches!(content, ToolResultContent::Image(_)));
    let text = if only_images {
        IMAGE_MOVED.to_owned()
    } else {
        result.text()
    };
    json!({"role": "tool", "tool_call_id": result.call_id, "content": text})
}

/// A user message: its tool results as `tool` messages, then one `user` message with the
/// results' images followed by the message's own text and images.
fn user(message: &Message, calls: &mut Vec<String>, out: &mut Vec<Value>) {
    let results: Vec<&ToolResult> = message
        .parts
        .iter()
        .filter_map(|part| match part {
            Part::ToolResult(result) => Some(result),
            _ => None,
        })
        .collect();
    answer_calls(out, calls, &results);

    let mut content: Vec<Value> = Vec::new();
    for result in &results {
        for item in &result.content {
            if let ToolResultContent::Image(image) = item {
                content.push(image_part(image));
            }
        }
    }
    for part in &message.parts {
        match part {
            Part::Text { text } => content.push(json!({"type": "text", "text": text})),
            Part::Image(image) => content.push(image_part(image)),
            // A system turn keeps its place: the user content before it goes out first.
            Part::System { text } => {
                push_user(out, std::mem::take(&mut content));
                out.push(json!({"role": "system", "content": text}));
            }
            Part::ToolResult(_) | Part::ToolCall(_) | Part::Reasoning(_) => {}
        }
    }
    push_user(out, content);
}

/// A `user` message with `content` (a plain string for one text part), unless it is empty.
fn push_user(out: &mut Vec<Value>, content: Vec<Value>) {
    match content.as_slice() {
        [] => {}
        [single] if single["type"] == "text" => {
            out.push(json!({"role": "user", "content": single["text"]}));
        }
        _ => out.push(json!({"role": "user", "content": content})),
    }
}

fn image_part(image: &Image) -> Value {
    let mut image_url = Map::new();
    image_url.insert("url".into(), json!(image.source.to_url()));
    if let Some(detail) = &image.detail {
        image_url.insert("detail".into(), json!(detail));
    }
    json!({"type": "image_url", "image_url": image_url})
}

/// An assistant message: text as one string (`null` beside tool calls when there is none),
/// reasoning text as `reasoning_content`, calls as `tool_calls`.
fn assistant(message: &Message, names: &NameMap) -> Value {
    let mut texts = Vec::new();
    let mut reasoning = Vec::new();
    let mut calls = Vec::new();
    for part in &message.parts {
        match part {
            Part::Text { text } => texts.push(text.as_str()),
            Part::Reasoning(item) if !item.text.is_empty() => reasoning.push(item.text.as_str()),
            Part::ToolCall(call) => {
                let arguments = if call.arguments.trim().is_empty() {
                    "{}"
                } else {
                    call.arguments.as_str()
                };
                calls.push(json!({
                    "id": call.id,
                    "type": "function",
                    "function": {"name": names.wire(&call.name), "arguments": arguments},
                }));
            }
            Part::Reasoning(_) | Part::Image(_) | Part::ToolResult(_) | Part::System { .. } => {}
        }
    }
    let mut out = Map::new();
    out.insert("role".into(), json!("assistant"));
    let content = if texts.is_empty() && !calls.is_empty() {
        Value::Null
    } else {
        json!(texts.join("\n\n"))
    };
    out.insert("content".into(), content);
    if !reasoning.is_empty() {
        out.insert("reasoning_content".into(), json!(reasoning.join("\n\n")));
    }
    if !calls.is_empty() {
        out.insert("tool_calls".into(), Value::Array(calls));
    }
    Value::Object(out)
}

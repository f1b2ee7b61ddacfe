//! corvid → upstream: a [`ChatRequest`] into a Responses body for OpenAI or xAI.

use serde_json::{Map, Value, json};

use crate::model::{
    ChatRequest, Effort, Image, Message, NameMap, Part, Reasoning, ReasoningConfig, ResponseFormat,
    Role, Tool, ToolCall, ToolChoice, ToolResult, ToolResultContent,
};

/// The output sent for a call the conversation never answered.
const UNANSWERED: &str = "No result was returned for this tool call.";

/// What makes the upstream send reasoning back in a form it accepts again without state.
const ENCRYPTED_REASONING: &str = "reasoning.encrypted_content";

/// Built-in Responses tools (OpenAI's and xAI's) that a Responses client's request may carry in
/// `extra["tools"]`; only these go back, so another dialect's tool shapes never leak upstream.
const BUILTIN_TOOLS: [&str; 16] = [
    "web_search",
    "web_search_preview",
    "web_search_preview_2025_03_11",
    "web_search_2025_08_26",
    "file_search",
    "code_interpreter",
    "mcp",
    "image_generation",
    "shell",
    "local_shell",
    "computer_use_preview",
    "apply_patch",
    "x_search",
    "view_image",
    "view_x_video",
    "collections_search",
];

/// Top-level `extra` fields that mean the same in every OpenAI-style dialect and are sent on.
/// `store` (always false here), `previous_response_id` and `conversation` (state that a
/// `store: false` request cannot reference) are not.
const PASSED_EXTRA: [&str; 8] = [
    "metadata",
    "prompt_cache_key",
    "prompt_cache_retention",
    "safety_identifier",
    "service_tier",
    "truncation",
    "user",
    "max_tool_calls",
];

/// Encodes `request` for a Responses upstream (`POST {upstream}/responses`).
///
/// The conversation is replayed in `input` (corvid never relies on upstream state:
/// `store: false`); system text becomes `instructions`. Reasoning that carries
/// `encrypted_content` goes back as `reasoning` items, and `include:
/// ["reasoning.encrypted_content"]` is asked for whenever the history has such items or the
/// request asks for reasoning, so the next turn can replay it (pitfall 14). Item ids are not
/// sent: without stored state the upstream would look them up and fail. Tool names go through
/// [`NameMap`]; function tools are `strict` only when asked for and their schema allows it
/// (pitfall 15).
pub fn encode_request(request: &ChatRequest) -> Value {
    let names = NameMap::new(&request.tools);
    let mut body = Map::new();
    body.insert("model".to_owned(), json!(request.model));
    if !request.system.is_empty() {
        body.insert(
            "instructions".to_owned(),
            json!(request.system.join("\n\n")),
        );
    }
    body.insert(
        "input".to_owned(),
        Value::Array(input_items(&request.messages, &names)),
    );

    let mut tools: Vec<Value> = request
        .tools
        .iter()
        .map(|tool| function_tool(tool, &names))
        .collect();
    tools.extend(extra_builtin_tools(request));
    if !tools.is_empty() {
        if let Some(choice) = tool_choice(request, &names) {
            body.insert("tool_choice".to_owned(), choice);
        }
        if let Some(parallel) = request.params.parallel_tool_calls {
            body.insert("parallel_tool_calls".to_owned(), json!(parallel));
        }
        body.insert("tools".to_owned(), Value::Array(tools));
    }

    let params = &request.params;
    if let Some(max) = params.max_output_tokens {
        body.insert("max_output_tokens".to_owned(), json!(max));
    }
    if let Some(temperature) = params.temperature {
        body.insert("temperature".to_owned(), json!(temperature));
    }
    if let Some(top_p) = params.top_p {
        body.insert("top_p".to_owned(), json!(top_p));
    }
    if let Some(reasoning) = reasoning(request) {
        body.insert("reasoning".to_owned(), reasoning);
    }
    if let Some(text) = text(request) {
        body.insert("text".to_owned(), text);
    }
    for key in PASSED_EXTRA {
        if let Some(value) = request.extra.get(key) {
            body.insert(key.to_owned(), value.clone());
        }
    }
    let include = include(request);
    if !include.is_empty() {
        body.insert("include".to_owned(), json!(include));
    }
    body.insert("store".to_owned(), json!(false));
    body.insert("stream".to_owned(), json!(request.stream));
    Value::Object(body)
}

/// The conversation as input items, in order. User text and images become `message` items,
/// tool results `function_call_output` items; assistant text becomes `message` items with
/// `output_text`, calls `function_call` items and replayable reasoning `reasoning` items. A
/// call no result answers gets a placeholder output right after its turn: the upstream refuses
/// a `function_call` without one.
fn input_items(messages: &[Message], names: &NameMap) -> Vec<Value> {
    let answered = Message::answered_call_ids(messages);
    let mut items = Vec::new();
    for message in messages {
        let mut content = Vec::new();
        for part in &message.parts {
            match (message.role, part) {
                (Role::User, Part::Text { text }) if !text.is_empty() => {
                    content.push(json!({ "type": "input_text", "text": text }));
                }
                (Role::Assistant, Part::Text { text }) if !text.is_empty() => {
                    content.push(json!({ "type": "output_text", "text": text }));
                }
                (Role::User, Part::Image(image)) => content.push(input_image(image)),
                // A system turn keeps its place, as a `system` message item.
                (Role::User, Part::System { text }) if !text.is_empty() => {
                    flush_message(&mut items, message.role, &mut content);
                    items.push(json!({
                        "type": "message",
                        "role": "system",
                        "content": [{ "type": "input_text", "text": text }],
                    }));
                }
                (Role::User, Part::ToolResult(result)) => {
                    flush_message(&mut items, message.role, &mut content);
                    items.push(function_call_output(result));
                }
                (Role::Assistant, Part::ToolCall(call)) => {
                    flush_message(&mut items, message.role, &mut content);
                    items.push(function_call(call, names));
                }
                (Role::Assistant, Part::Reasoning(reasoning)) => {
                    if let Some(item) = reasoning_item(reasoning) {
                        flush_message(&mut items, message.role, &mut content);
                        items.push(item);
                    }
                }
                // Empty text, images in assistant turns, parts in the wrong role: nothing the
                // Responses input can hold.
                _ => {}
            }
        }
        flush_message(&mut items, message.role, &mut content);
        for part in &message.parts {
            if let (Role::Assistant, Part::ToolCall(call)) = (message.role, part)
                && !answered.contains(call.id.as_str())
            {
                items.push(json!({
                    "type": "function_call_output",
                    "call_id": call.id,
                    "output": UNANSWERED,
                }));
            }
        }
    }
    items
}

fn flush_message(items: &mut Vec<Value>, role: Role, content: &mut Vec<Value>) {
    if content.is_empty() {
        return;
    }
    let role = match role {
        Role::User => "user",
        Role::Assistant => "assistant",
    };
    items.push(json!({
        "type": "message",
        "role": role,
        "content": std::mem::take(content),
    }));
}

fn input_image(image: &Image) -> Value {
    json!({
        "type": "input_image",
        "image_url": image.source.to_url(),
        "detail": image.detail.as_deref().unwrap_or("auto"),
    })
}

fn function_call(call: &ToolCall, names: &NameMap) -> Value {
    let arguments = if call.arguments.trim().is_empty() {
        "{}"
    } else {
        &call.arguments
    };
    json!({
        "type": "function_call",
        "call_id": call.id,
        "name": names.wire(&call.name),
        "arguments": arguments,
    })
}

/// A tool result: its text as a string, or a list of parts when it holds images. Responses has
/// no error flag: `is_error` is not sent.
fn function_call_output(result: &ToolResult) -> Value {
    let has_images = result
        .content
        .iter()
        .any(|content| matches!(content, ToolResultContent::Image(_)));
    let output = if has_images {
        Value::Array(
            result
                .content
                .iter()
                .map(|content| match content {
                    ToolResultContent::Text { text } => {
                        json!({ "type": "input_text", "text": text })
                    }
                    ToolResultContent::Image(image) => input_image(image),
                })
                .collect(),
        )
    } else {
        json!(result.text())
    };
    json!({
        "type": "function_call_output",
        "call_id": result.call_id,
        "output": output,
    })
}

/// A `reasoning` item for reasoning a Responses upstream produced: it has an item id and
/// `encrypted_content`. Other reasoning (Anthropic thinking, plain reasoning text) cannot be
/// sent back to a Responses model and is left out.
fn reasoning_item(reasoning: &Reasoning) -> Option<Value> {
    let encrypted = reasoning.encrypted.as_ref()?;
    reasoning.id.as_ref()?;
    let summary: Vec<Value> = if reasoning.text.is_empty() {
        Vec::new()
    } else {
        vec![json!({ "type": "summary_text", "text": reasoning.text })]
    };
    Some(json!({
        "type": "reasoning",
        "summary": summary,
        "encrypted_content": encrypted,
    }))
}

fn has_replayable_reasoning(messages: &[Message]) -> bool {
    messages.iter().flat_map(|message| &message.parts).any(
        |part| matches!(part, Part::Reasoning(reasoning) if reasoning_item(reasoning).is_some()),
    )
}

fn function_tool(tool: &Tool, names: &NameMap) -> Value {
    let mut definition = Map::new();
    definition.insert("type".to_owned(), json!("function"));
    definition.insert("name".to_owned(), json!(names.wire(&tool.name)));
    if let Some(description) = &tool.description {
        definition.insert("description".to_owned(), json!(description));
    }
    let parameters = tool.parameters.to_value();
    let strict = tool.strict == Some(true) && strict_compatible(&parameters);
    definition.insert("parameters".to_owned(), parameters);
    definition.insert("strict".to_owned(), json!(strict));
    Value::Object(definition)
}

/// Whether OpenAI's strict mode accepts `schema`: every object schema, at any depth, has
/// `additionalProperties: false` and lists all its properties in `required`. An omitted
/// `strict` counts as true upstream, so anything else must be sent as `strict: false`.
fn strict_compatible(schema: &Value) -> bool {
    let Value::Object(object) = schema else {
        return true;
    };
    let is_object = match object.get("type") {
        Some(Value::String(kind)) => kind == "object",
        Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind == "object"),
        _ => object.contains_key("properties"),
    };
    if is_object {
        if object.get("additionalProperties") != Some(&Value::Bool(false)) {
            return false;
        }
        let required: Vec<&str> = object
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let properties = object.get("properties").and_then(Value::as_object);
        if !properties
            .into_iter()
            .flat_map(Map::keys)
            .all(|key| required.contains(&key.as_str()))
        {
            return false;
        }
    }
    object.iter().all(|(key, value)| match key.as_str() {
        "properties" | "$defs" | "definitions" => value
            .as_object()
            .is_none_or(|schemas| schemas.values().all(strict_compatible)),
        "items" | "not" => strict_compatible(value),
        "anyOf" | "allOf" | "oneOf" | "prefixItems" => value
            .as_array()
            .is_none_or(|schemas| schemas.iter().all(strict_compatible)),
        _ => true,
    })
}

fn is_builtin(value: &Value) -> bool {
    value["type"]
        .as_str()
        .is_some_and(|kind| BUILTIN_TOOLS.contains(&kind))
}

/// Built-in tools a Responses client asked for (kept in `extra["tools"]` by the decoder).
fn extra_builtin_tools(request: &ChatRequest) -> Vec<Value> {
    request
        .extra
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|tool| is_builtin(tool))
        .cloned()
        .collect()
}

fn tool_choice(request: &ChatRequest, names: &NameMap) -> Option<Value> {
    // A Responses-only choice (`allowed_tools`, a built-in tool) says more than the model can.
    if let Some(original) = request.extra.get("tool_choice")
        && (original["type"] == "allowed_tools" || is_builtin(original))
    {
        return Some(original.clone());
    }
    Some(match request.tool_choice.as_ref()? {
        ToolChoice::Auto => json!("auto"),
        ToolChoice::Required => json!("required"),
        ToolChoice::None => json!("none"),
        ToolChoice::Named(name) => json!({ "type": "function", "name": names.wire(name) }),
    })
}

/// `reasoning`: the effort (a budget becomes the nearest effort, "off" becomes `none`), plus
/// what a Responses client set besides it (`summary`).
fn reasoning(request: &ChatRequest) -> Option<Value> {
    let mut reasoning = fields_besides(request.extra.get("reasoning"), "effort");
    let effort = request.params.reasoning.map(|config| match config {
        ReasoningConfig::Effort(effort) => effort,
        ReasoningConfig::Budget(budget) => Effort::from_budget(i64::from(budget)),
        ReasoningConfig::Disabled => Effort::None,
    });
    if let Some(effort) = effort {
        reasoning.insert("effort".to_owned(), json!(effort.as_str()));
        // Without a summary a Responses model shows none of its reasoning: ask for one
        // whenever the client asked for reasoning (a Responses client's own choice stands).
        if effort != Effort::None {
            reasoning
                .entry("summary".to_owned())
                .or_insert_with(|| json!("auto"));
        }
    }
    (!reasoning.is_empty()).then_some(Value::Object(reasoning))
}

/// `text`: the response format, plus what a Responses client set besides it (`verbosity`).
fn text(request: &ChatRequest) -> Option<Value> {
    let mut text = fields_besides(request.extra.get("text"), "format");
    if let Some(format) = &request.params.response_format {
        let format = match format {
            ResponseFormat::Text => json!({ "type": "text" }),
            ResponseFormat::JsonObject => json!({ "type": "json_object" }),
            ResponseFormat::JsonSchema {
                name,
                schema,
                strict,
            } => {
                let mut format = json!({ "type": "json_schema", "name": name, "schema": schema });
                if let Some(strict) = strict {
                    format["strict"] = json!(strict);
                }
                format
            }
        };
        text.insert("format".to_owned(), format);
    }
    (!text.is_empty()).then_some(Value::Object(text))
}

/// The fields of an `extra` object other than `key` (which the model holds).
fn fields_besides(value: Option<&Value>, key: &str) -> Map<String, Value> {
    let mut fields = value
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    fields.remove(key);
    fields
}

/// `include`: what the client asked for, plus encrypted reasoning when the history carries it
/// or the request turns reasoning on.
fn include(request: &ChatRequest) -> Vec<String> {
    let mut include: Vec<String> = request
        .extra
        .get("include")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect();
    let reasoning_on = match request.params.reasoning {
        Some(ReasoningConfig::Effort(effort)) => effort != Effort::None,
        Some(ReasoningConfig::Budget(budget)) => budget > 0,
        Some(ReasoningConfig::Disabled) | None => false,
    };
    if (reasoning_on || has_replayable_reasoning(&request.messages))
        && !include.iter().any(|item| item == ENCRYPTED_REASONING)
    {
        include.push(ENCRYPTED_REASONING.to_owned());
    }
    include
}

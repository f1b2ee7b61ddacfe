//! Client → corvid: a Responses request body into a [`ChatRequest`].

use serde_json::{Map, Value};

use super::json::{
    optional_array, optional_bool, optional_f64, optional_string, optional_u32, string,
};
use super::{Opaque, content_part_text};

mod typed;
use crate::model::{
    ChatRequest, DecodeError, Effort, Image, ImageSource, Message, Params, Part, RawJson,
    Reasoning, ReasoningConfig, ResponseFormat, Role, Tool, ToolCall, ToolChoice, ToolResult,
    ToolResultContent,
};

/// Decodes a client's `POST /v1/responses` body.
///
/// `instructions` and `system`/`developer` messages become `system`; `input` items become
/// messages (assistant-side items — reasoning, text, function calls — share one assistant
/// message; consecutive `function_call_output`s share one user message). Top-level fields
/// corvid does not model (`store`, `include`, `previous_response_id`, `metadata`, …) are kept in
/// `extra`, and so are the original `tools`, `tool_choice`, `reasoning` and `text` when they hold
/// something the model cannot (built-in tools, `allowed_tools`, `reasoning.summary`,
/// `text.verbosity`).
pub fn decode_request(body: &[u8]) -> Result<ChatRequest, DecodeError> {
    // The typed fast path reads what it can exactly as the tree decoder below does; anything
    // else (an error included) goes through the tree, which words the error.
    let (fields, conversation, functions) = match typed::decode(body) {
        Some(decoded) => decoded,
        None => decode_tree(body)?,
    };
    finish(fields, conversation, functions)
}

/// The request when the typed path reads the body whole — valid JSON, an object, no top-level
/// key twice, `model` a string, nothing [`decode_request`] would refuse — and `None` for
/// anything else, which [`decode_request`] then reads or refuses. The gateway uses it to skip
/// its own validating pre-scan when the request will be translated anyway.
pub fn decode_plain_request(body: &[u8]) -> Option<ChatRequest> {
    let (fields, conversation, functions) = typed::decode_plain(body)?;
    finish(fields, conversation, functions).ok()
}

/// The whole body read as a `Value` tree first: the reference decoder. Returns the top-level
/// fields other than `instructions`, `input` and `tools` (the built-in tools' original
/// `tools` included, under its name), the conversation and the function tools.
fn decode_tree(body: &[u8]) -> Result<Parts, DecodeError> {
    let value: Value = serde_json::from_slice(body)?;
    let Value::Object(mut fields) = value else {
        return Err(DecodeError::field("(body)", "must be a JSON object"));
    };
    let instructions = fields.remove("instructions").unwrap_or(Value::Null);
    let input = fields.remove("input").unwrap_or(Value::Null);
    let tools = fields.remove("tools").unwrap_or(Value::Null);

    let mut conversation = Conversation::default();
    match &instructions {
        Value::Null => {}
        Value::String(text) => conversation.push_system(text.clone()),
        Value::Array(items) => conversation.items(items, "instructions")?,
        _ => return Err(DecodeError::field("instructions", "must be a string")),
    }
    match &input {
        Value::Null => {}
        Value::String(text) => conversation.user_text(text),
        Value::Array(items) => conversation.items(items, "input")?,
        _ => return Err(DecodeError::field("input", "must be a string or an array")),
    }

    let (functions, has_builtin_tools) = decode_tools(&tools)?;
    if has_builtin_tools {
        fields.insert(BUILTIN_TOOLS.to_owned(), tools);
    }
    Ok((fields, conversation, functions))
}

/// The top-level fields left to read, the conversation and the function tools.
type Parts = (Map<String, Value>, Conversation, Vec<Tool>);

/// Where [`decode_tree`] leaves the original `tools` when they hold built-in tools.
const BUILTIN_TOOLS: &str = "tools";

/// The request from the decoded conversation and tools and the other top-level fields.
fn finish(
    mut fields: Map<String, Value>,
    conversation: Conversation,
    functions: Vec<Tool>,
) -> Result<ChatRequest, DecodeError> {
    let builtin_tools = fields.remove(BUILTIN_TOOLS);
    let mut take = |key: &str| fields.remove(key).unwrap_or(Value::Null);
    let model = take("model");
    let tool_choice = take("tool_choice");
    let reasoning = take("reasoning");
    let text = take("text");
    let max_output_tokens = take("max_output_tokens");
    let temperature = take("temperature");
    let top_p = take("top_p");
    let parallel_tool_calls = take("parallel_tool_calls");
    let stream = take("stream");
    let mut extra = fields;
    if let Some(tools) = builtin_tools {
        extra.insert("tools".to_owned(), tools);
    }

    let tool_choice_modeled = decode_tool_choice(&tool_choice)?;
    if tool_choice_modeled.kept_in_extra {
        extra.insert("tool_choice".to_owned(), tool_choice);
    }
    let reasoning_config = decode_reasoning(&reasoning, &mut extra)?;
    let response_format = decode_text(&text, &mut extra)?;

    Ok(ChatRequest {
        model: match &model {
            Value::Null => return Err(DecodeError::field("model", "is required")),
            model => string(model, "model")?.to_owned(),
        },
        system: conversation.system,
        messages: conversation.messages,
        tools: functions,
        tool_choice: tool_choice_modeled.choice,
        params: Params {
            max_output_tokens: optional_u32(&max_output_tokens, "max_output_tokens")?,
            temperature: optional_f64(&temperature, "temperature")?,
            top_p: optional_f64(&top_p, "top_p")?,
            stop: Vec::new(),
            reasoning: reasoning_config,
            parallel_tool_calls: optional_bool(&parallel_tool_calls, "parallel_tool_calls")?,
            response_format,
        },
        stream: optional_bool(&stream, "stream")?.unwrap_or(false),
        extra,
    })
}

/// The system text and messages being built from input items, in order.
#[derive(Default)]
pub(super) struct Conversation {
    system: Vec<String>,
    messages: Vec<Message>,
    /// The previous item was a `function_call_output` (see [`Conversation::regroup_call`]).
    after_tool_output: bool,
}

impl Conversation {
    pub(super) fn push_system(&mut self, text: String) {
        if !text.is_empty() {
            self.system.push(text);
        }
    }

    pub(super) fn user_text(&mut self, text: &str) {
        if !text.is_empty() {
            self.messages.push(Message::text(Role::User, text));
        }
    }

    fn items(&mut self, items: &[Value], path: &str) -> Result<(), DecodeError> {
        for (position, item) in items.iter().enumerate() {
            self.item(item, &format!("{path}[{position}]"))?;
        }
        Ok(())
    }

    /// One input item, read from its value.
    pub(super) fn item(&mut self, item: &Value, path: &str) -> Result<(), DecodeError> {
        let after_tool_output = self.take_after_tool_output();
        // Easy input messages (`{"role","content"}`) have no `type`.
        let kind = optional_string(&item["type"], &format!("{path}.type"))?.unwrap_or(
            if item.get("role").is_some() {
                "message"
            } else {
                ""
            },
        );
        match kind {
            "message" => self.message(item, path)?,
            "function_call" => self.function_call(function_call(item, path)?, after_tool_output),
            "function_call_output" => {
                self.function_call_output(function_call_output(item, path)?);
            }
            "reasoning" => self.assistant_part(Part::Reasoning(reasoning(item, path)?)),
            // Built-in tool calls, item references, compaction items…: nothing canonical.
            _ => {}
        }
        Ok(())
    }

    /// A `function_call` item.
    pub(super) fn function_call(&mut self, call: ToolCall, after_tool_output: bool) {
        if !(after_tool_output && self.regroup_call(&call)) {
            self.assistant_part(Part::ToolCall(call));
        }
    }

    /// A `function_call_output` item.
    pub(super) fn function_call_output(&mut self, result: ToolResult) {
        self.tool_output(result);
        self.after_tool_output = true;
    }

    /// Whether the previous item was a `function_call_output`; clears it (each item reads it
    /// once).
    pub(super) fn take_after_tool_output(&mut self) -> bool {
        std::mem::take(&mut self.after_tool_output)
    }

    fn message(&mut self, item: &Value, path: &str) -> Result<(), DecodeError> {
        let role = string(&item["role"], &format!("{path}.role"))?;
        let parts = content_parts(&item["content"], &format!("{path}.content"))?;
        self.apply_message(role, parts, path)
    }

    /// A message item's parts, by its role.
    pub(super) fn apply_message(
        &mut self,
        role: &str,
        parts: Vec<Part>,
        path: &str,
    ) -> Result<(), DecodeError> {
        match role {
            "system" | "developer" => {
                let text: Vec<String> = parts
                    .into_iter()
                    .filter_map(|part| match part {
                        Part::Text { text } => Some(text),
                        _ => None,
                    })
                    .collect();
                let text = text.join("\n");
                if self.messages.is_empty() {
                    self.push_system(text);
                } else if !text.is_empty() {
                    // In mid-conversation a system turn keeps its position.
                    crate::model::push_system_turn(&mut self.messages, vec![Part::System { text }]);
                }
            }
            "user" if !parts.is_empty() => self.messages.push(Message {
                role: Role::User,
                parts,
            }),
            "assistant" => parts
                .into_iter()
                .filter(|part| matches!(part, Part::Text { .. }))
                .for_each(|part| self.assistant_part(part)),
            "user" => {}
            _ => {
                return Err(DecodeError::field(
                    format!("{path}.role"),
                    "must be user, assistant, system or developer",
                ));
            }
        }
        Ok(())
    }

    /// Adds a part to the assistant message being built, or starts one.
    fn assistant_part(&mut self, part: Part) {
        match self.messages.last_mut() {
            Some(message) if message.role == Role::Assistant => message.parts.push(part),
            _ => self.messages.push(Message {
                role: Role::Assistant,
                parts: vec![part],
            }),
        }
    }

    /// Adds a tool result to the user message of tool results just before, or starts one.
    fn tool_output(&mut self, result: ToolResult) {
        match self.messages.last_mut() {
            Some(message) if message.role == Role::User && only_tool_results(message) => {
                message.parts.push(Part::ToolResult(result));
            }
            _ => self.messages.push(Message {
                role: Role::User,
                parts: vec![Part::ToolResult(result)],
            }),
        }
    }

    /// Clients that answer each parallel call right after it (`call A, output A, call B,
    /// output B`, as in OpenAI's own examples) would otherwise split one assistant turn in
    /// two. A call that directly follows the outputs of the assistant turn before them joins
    /// that turn; its output then joins the same user message (pitfall 11).
    fn regroup_call(&mut self, call: &ToolCall) -> bool {
        let [.., assistant, results] = self.messages.as_mut_slice() else {
            return false;
        };
        let answers_turn = results.role == Role::User
            && only_tool_results(results)
            && assistant.role == Role::Assistant
            && results.parts.iter().all(|part| match part {
                Part::ToolResult(result) => assistant
                    .parts
                    .iter()
                    .any(|part| matches!(part, Part::ToolCall(made) if made.id == result.call_id)),
                _ => false,
            });
        if answers_turn {
            assistant.parts.push(Part::ToolCall(call.clone()));
        }
        answers_turn
    }
}

fn only_tool_results(message: &Message) -> bool {
    message
        .parts
        .iter()
        .all(|part| matches!(part, Part::ToolResult(_)))
}

/// A message `content`: a string or a list of parts. Files, audio and images given by
/// `file_id` have no canonical form and are dropped.
fn content_parts(content: &Value, path: &str) -> Result<Vec<Part>, DecodeError> {
    let mut parts = Vec::new();
    match content {
        Value::String(text) if !text.is_empty() => parts.push(Part::Text { text: text.clone() }),
        Value::String(_) | Value::Null => {}
        Value::Array(items) => {
            for (position, item) in items.iter().enumerate() {
                if let Some(text) = content_part_text(item) {
                    if !text.is_empty() {
                        parts.push(Part::Text {
                            text: text.to_owned(),
                        });
                    }
                } else if let Some(image) = input_image(item, &format!("{path}[{position}]"))? {
                    parts.push(Part::Image(image));
                }
            }
        }
        _ => return Err(DecodeError::field(path, "must be a string or an array")),
    }
    Ok(parts)
}

/// An `input_image` part with an `image_url` (data URL or https); `None` for other parts.
fn input_image(part: &Value, path: &str) -> Result<Option<Image>, DecodeError> {
    if part["type"].as_str() != Some("input_image") {
        return Ok(None);
    }
    // `image_url` is a string in Responses; tolerate Chat's `{"url": …}` object.
    let url = match &part["image_url"] {
        Value::Object(object) => object.get("url").unwrap_or(&Value::Null),
        other => other,
    };
    let Some(url) = optional_string(url, &format!("{path}.image_url"))? else {
        return Ok(None);
    };
    Ok(Some(Image {
        source: ImageSource::from_url(url),
        detail: optional_string(&part["detail"], &format!("{path}.detail"))?.map(str::to_owned),
    }))
}

fn function_call(item: &Value, path: &str) -> Result<ToolCall, DecodeError> {
    let id = optional_string(&item["call_id"], &format!("{path}.call_id"))?
        .or(item["id"].as_str())
        .ok_or_else(|| DecodeError::field(format!("{path}.call_id"), "is required"))?;
    let arguments = optional_string(&item["arguments"], &format!("{path}.arguments"))?
        .filter(|arguments| !arguments.trim().is_empty())
        .unwrap_or("{}");
    let name = string(&item["name"], &format!("{path}.name"))?;
    let name = match optional_string(&item["namespace"], &format!("{path}.namespace"))? {
        Some(namespace) => super::namespaced(namespace, name),
        None => name.to_owned(),
    };
    Ok(ToolCall {
        id: id.to_owned(),
        name,
        arguments: arguments.to_owned(),
        signature: None,
    })
}

fn function_call_output(item: &Value, path: &str) -> Result<ToolResult, DecodeError> {
    let call_id = string(&item["call_id"], &format!("{path}.call_id"))?;
    let output_path = format!("{path}.output");
    let mut is_error = false;
    let mut content = Vec::new();
    match &item["output"] {
        Value::String(text) if !text.is_empty() => {
            content.push(ToolResultContent::Text { text: text.clone() })
        }
        Value::String(_) | Value::Null => {}
        Value::Array(items) => {
            for (position, part) in items.iter().enumerate() {
                if let Some(text) = content_part_text(part) {
                    content.push(ToolResultContent::Text {
                        text: text.to_owned(),
                    });
                } else if let Some(image) =
                    input_image(part, &format!("{output_path}[{position}]"))?
                {
                    content.push(ToolResultContent::Image(image));
                }
            }
        }
        // An older Codex shape: `{"content": "...", "success": false}`.
        Value::Object(object) => {
            if let Some(text) = object.get("content").and_then(Value::as_str) {
                content.push(ToolResultContent::Text {
                    text: text.to_owned(),
                });
            }
            is_error = object.get("success").and_then(Value::as_bool) == Some(false);
        }
        _ => {
            return Err(DecodeError::field(
                output_path,
                "must be a string or an array",
            ));
        }
    }
    Ok(ToolResult {
        call_id: call_id.to_owned(),
        name: None,
        content,
        is_error,
    })
}

fn reasoning(item: &Value, path: &str) -> Result<Reasoning, DecodeError> {
    let mut reasoning = Reasoning {
        text: super::reasoning_item_text(item),
        id: optional_string(&item["id"], &format!("{path}.id"))?.map(str::to_owned),
        ..Reasoning::default()
    };
    let encrypted = optional_string(
        &item["encrypted_content"],
        &format!("{path}.encrypted_content"),
    )?;
    if let Some(data) = encrypted {
        // An id-less item (Codex sends none) gets one from its place in the input.
        Opaque::read(data).apply(&mut reasoning, || {
            format!("rs_{}", path.replace(['[', ']'], ""))
        });
    }
    Ok(reasoning)
}

/// Function tools, and whether built-in tools (`web_search`, `mcp`, …) were among them.
fn decode_tools(tools: &Value) -> Result<(Vec<Tool>, bool), DecodeError> {
    let mut functions = Vec::new();
    let mut has_builtin = false;
    for (position, tool) in optional_array(tools, "tools")?.iter().enumerate() {
        let path = format!("tools[{position}]");
        if tool["type"].as_str() == Some("namespace") {
            // Codex's MCP and subagent tools: each function inside becomes a tool named
            // `<namespace>.<tool>`, which dialects without namespaces can carry (see
            // `super::namespaced`).
            let namespace = string(&tool["name"], &format!("{path}.name"))?;
            for (inner, child) in optional_array(&tool["tools"], &format!("{path}.tools"))?
                .iter()
                .enumerate()
                .filter(|(_, child)| matches!(child["type"].as_str(), None | Some("function")))
            {
                let mut function = function_tool(child, &format!("{path}.tools[{inner}]"))?;
                function.name = super::namespaced(namespace, &function.name);
                functions.push(function);
            }
            continue;
        }
        if tool["type"].as_str() != Some("function") {
            has_builtin = true;
            continue;
        }
        functions.push(function_tool(tool, &path)?);
    }
    Ok((functions, has_builtin))
}

/// One `function` tool.
fn function_tool(tool: &Value, path: &str) -> Result<Tool, DecodeError> {
    {
        Ok(Tool {
            name: string(&tool["name"], &format!("{path}.name"))?.to_owned(),
            description: optional_string(&tool["description"], &format!("{path}.description"))?
                .map(str::to_owned),
            parameters: match &tool["parameters"] {
                Value::Null => RawJson::empty_object_schema(),
                schema => RawJson::from_value(schema),
            },
            strict: optional_bool(&tool["strict"], &format!("{path}.strict"))?,
        })
    }
}

struct DecodedToolChoice {
    choice: Option<ToolChoice>,
    /// The original has more than the model holds (`allowed_tools`, a built-in tool).
    kept_in_extra: bool,
}

fn decode_tool_choice(choice: &Value) -> Result<DecodedToolChoice, DecodeError> {
    let modeled = |choice| DecodedToolChoice {
        choice,
        kept_in_extra: false,
    };
    Ok(match choice {
        Value::Null => modeled(None),
        Value::String(mode) => modeled(Some(mode_choice(mode, "tool_choice")?)),
        Value::Object(object) => match object.get("type").and_then(Value::as_str) {
            Some("function") => modeled(Some(ToolChoice::Named(
                string(&choice["name"], "tool_choice.name")?.to_owned(),
            ))),
            Some("allowed_tools") => DecodedToolChoice {
                choice: optional_string(&choice["mode"], "tool_choice.mode")?
                    .map(|mode| mode_choice(mode, "tool_choice.mode"))
                    .transpose()?,
                kept_in_extra: true,
            },
            _ => DecodedToolChoice {
                choice: None,
                kept_in_extra: true,
            },
        },
        _ => {
            return Err(DecodeError::field(
                "tool_choice",
                "must be a string or an object",
            ));
        }
    })
}

fn mode_choice(mode: &str, path: &str) -> Result<ToolChoice, DecodeError> {
    match mode {
        "auto" => Ok(ToolChoice::Auto),
        "required" => Ok(ToolChoice::Required),
        "none" => Ok(ToolChoice::None),
        _ => Err(DecodeError::field(path, "must be auto, required or none")),
    }
}

/// `reasoning.effort`; the whole object goes to `extra` when it holds more (`summary`).
fn decode_reasoning(
    reasoning: &Value,
    extra: &mut Map<String, Value>,
) -> Result<Option<ReasoningConfig>, DecodeError> {
    let Value::Object(object) = reasoning else {
        return match reasoning {
            Value::Null => Ok(None),
            _ => Err(DecodeError::field("reasoning", "must be an object")),
        };
    };
    if object.keys().any(|key| key != "effort") {
        extra.insert("reasoning".to_owned(), reasoning.clone());
    }
    optional_string(&reasoning["effort"], "reasoning.effort")?
        .map(|effort| {
            Effort::parse(effort)
                .map(ReasoningConfig::Effort)
                .ok_or_else(|| DecodeError::field("reasoning.effort", "is not a known effort"))
        })
        .transpose()
}

/// `text.format`; the whole object goes to `extra` when it holds more (`verbosity`).
fn decode_text(
    text: &Value,
    extra: &mut Map<String, Value>,
) -> Result<Option<ResponseFormat>, DecodeError> {
    let Value::Object(object) = text else {
        return match text {
            Value::Null => Ok(None),
            _ => Err(DecodeError::field("text", "must be an object")),
        };
    };
    if object.keys().any(|key| key != "format") {
        extra.insert("text".to_owned(), text.clone());
    }
    let format = &text["format"];
    Ok(
        match optional_string(&format["type"], "text.format.type")? {
            None => None,
            Some("text") => Some(ResponseFormat::Text),
            Some("json_object") => Some(ResponseFormat::JsonObject),
            Some("json_schema") => Some(ResponseFormat::JsonSchema {
                name: optional_string(&format["name"], "text.format.name")?
                    .unwrap_or("response")
                    .to_owned(),
                schema: format["schema"].clone(),
                strict: optional_bool(&format["strict"], "text.format.strict")?,
            }),
            Some(_) => {
                return Err(DecodeError::field(
                    "text.format.type",
                    "must be text, json_object or json_schema",
                ));
            }
        },
    )
}

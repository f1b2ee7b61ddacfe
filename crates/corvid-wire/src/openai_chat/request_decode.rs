//! Client → canonical: a Chat Completions request body.

use serde_json::{Map, Value};

use super::json::{
    Object, as_object, get, opt_array, opt_bool, opt_f64, opt_str, opt_u32, path, req_str,
};
use crate::model::{
    ChatRequest, DecodeError, Effort, Image, ImageSource, Message, Params, Part, RawJson,
    Reasoning, ReasoningConfig, ResponseFormat, Role, Tool, ToolCall, ToolChoice, ToolResult,
    ToolResultContent, synthetic_call_id,
};

/// Top-level fields the canonical model holds; every other field goes to `extra`.
const MODELED: [&str; 13] = [
    "model",
    "messages",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "max_completion_tokens",
    "max_tokens",
    "temperature",
    "top_p",
    "stop",
    "reasoning_effort",
    "response_format",
    "stream",
];

/// Client → corvid: a Chat Completions request body.
///
/// `system` and `developer` messages ahead of the conversation become `system` entries in order
/// (one per text part); later ones become [`Part::System`] parts at their position. Each `tool` message becomes a [`ToolResult`] part; consecutive ones share one
/// user message, and a user message right after them joins it, after the results (Anthropic's
/// shape). `reasoning_content` (or `reasoning`) on an assistant message becomes a
/// [`Reasoning`] part ahead of its text. Fields the model does not hold (`stream_options`,
/// `user`, `seed`, `n`, `metadata`, `store`, `prompt_cache_key`, …), and values of modeled
/// fields it cannot represent (an `allowed_tools` `tool_choice`, an unknown
/// `reasoning_effort`), go to `extra` untouched.
pub fn decode_request(body: &[u8]) -> Result<ChatRequest, DecodeError> {
    let value: Value = serde_json::from_slice(body)?;
    let top = value
        .as_object()
        .ok_or_else(|| DecodeError::field("request", "must be a JSON object"))?;
    let mut extra: Map<String, Value> = top
        .iter()
        .filter(|(key, _)| !MODELED.contains(&key.as_str()))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();

    let model = req_str(top, "model", "")?.to_owned();
    let messages = opt_array(top, "messages", "")?
        .ok_or_else(|| DecodeError::field("messages", "is required"))?;
    let mut conversation = Conversation::default();
    for (i, message) in messages.iter().enumerate() {
        conversation.push(message, &format!("messages[{i}]"))?;
    }

    let tools = opt_array(top, "tools", "")?
        .map(|tools| {
            tools
                .iter()
                .enumerate()
                .map(|(i, tool)| decode_tool(tool, &format!("tools[{i}]")))
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()?
        .unwrap_or_default();

    let tool_choice = get(top, "tool_choice").and_then(|value| {
        let choice = decode_tool_choice(value);
        if choice.is_none() {
            extra.insert("tool_choice".to_owned(), value.clone());
        }
        choice
    });
    let reasoning = get(top, "reasoning_effort").and_then(|value| {
        let effort = value.as_str().and_then(Effort::parse);
        if effort.is_none() {
            extra.insert("reasoning_effort".to_owned(), value.clone());
        }
        effort.map(ReasoningConfig::Effort)
    });
    let response_format = get(top, "response_format").and_then(|value| {
        let format = decode_response_format(value);
        if format.is_none() {
            extra.insert("response_format".to_owned(), value.clone());
        }
        format
    });

    let params = Params {
        max_output_tokens: match opt_u32(top, "max_completion_tokens", "")? {
            Some(max) => Some(max),
            None => opt_u32(top, "max_tokens", "")?,
        },
        temperature: opt_f64(top, "temperature", "")?,
        top_p: opt_f64(top, "top_p", "")?,
        stop: decode_stop(top)?,
        reasoning,
        parallel_tool_calls: opt_bool(top, "parallel_tool_calls", "")?,
        response_format,
    };

    Ok(ChatRequest {
        model,
        system: conversation.system,
        messages: conversation.messages,
        tools,
        tool_choice,
        params,
        stream: opt_bool(top, "stream", "")?.unwrap_or(false),
        extra,
    })
}

/// The conversation as it is read, message by message.
#[derive(Default)]
struct Conversation {
    system: Vec<String>,
    messages: Vec<Message>,
    /// The last message holds tool results: more results, and the user's next text, join it.
    in_tool_turn: bool,
}

impl Conversation {
    fn push(&mut self, message: &Value, at: &str) -> Result<(), DecodeError> {
        let message = as_object(message, at)?;
        match req_str(message, "role", at)? {
            "system" | "developer" => {
                let texts = content_parts(message, at, Context::System)?
                    .into_iter()
                    .filter_map(|part| match part {
                        Part::Text { text } => Some(text),
                        _ => None,
                    });
                if self.messages.is_empty() {
                    self.system.extend(texts);
                } else {
                    // In mid-conversation a system turn keeps its position.
                    let parts: Vec<Part> = texts.map(|text| Part::System { text }).collect();
                    if !parts.is_empty() {
                        crate::model::push_system_turn(&mut self.messages, parts);
                        self.in_tool_turn = false;
                    }
                }
            }
            "user" => {
                let parts = content_parts(message, at, Context::User)?;
                match self.messages.last_mut() {
                    Some(last) if self.in_tool_turn => last.parts.extend(parts),
                    _ => self.messages.push(Message {
                        role: Role::User,
                        parts,
                    }),
                }
                self.in_tool_turn = false;
            }
            "tool" => {
                let result = Part::ToolResult(tool_result(message, at)?);
                match self.messages.last_mut() {
                    Some(last) if self.in_tool_turn => last.parts.push(result),
                    _ => self.messages.push(Message {
                        role: Role::User,
                        parts: vec![result],
                    }),
                }
                self.in_tool_turn = true;
            }
            "assistant" => {
                self.messages.push(assistant(message, at)?);
                self.in_tool_turn = false;
            }
            other => {
                return Err(DecodeError::field(
                    path(at, "role"),
                    format!("must be system, developer, user, assistant or tool (got `{other}`)"),
                ));
            }
        }
        Ok(())
    }
}

/// Which message a content part belongs to: each accepts different part types.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    System,
    User,
    Assistant,
    Tool,
}

/// A message's `content` (a string or a list of parts) as canonical parts. Empty text is
/// skipped: it carries nothing and some upstreams refuse it.
fn content_parts(message: &Object, at: &str, context: Context) -> Result<Vec<Part>, DecodeError> {
    let at = path(at, "content");
    match message.get("content") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(text)) if text.is_empty() => Ok(Vec::new()),
        Some(Value::String(text)) => Ok(vec![Part::Text { text: text.clone() }]),
        Some(Value::Array(parts)) => {
            let mut out = Vec::with_capacity(parts.len());
            for (j, part) in parts.iter().enumerate() {
                if let Some(part) = content_part(part, &format!("{at}[{j}]"), context)? {
                    out.push(part);
                }
            }
            Ok(out)
        }
        Some(_) => Err(DecodeError::field(
            at,
            "must be a string or an array of parts",
        )),
    }
}

fn content_part(part: &Value, at: &str, context: Context) -> Result<Option<Part>, DecodeError> {
    let part = as_object(part, at)?;
    let kind = req_str(part, "type", at)?;
    match (kind, context) {
        ("text", _) => {
            let text = req_str(part, "text", at)?;
            Ok((!text.is_empty()).then(|| Part::Text {
                text: text.to_owned(),
            }))
        }
        ("refusal", Context::Assistant) => {
            let text = req_str(part, "refusal", at)?;
            Ok((!text.is_empty()).then(|| Part::Text {
                text: text.to_owned(),
            }))
        }
        ("image_url", Context::User | Context::Tool) => Ok(Some(Part::Image(image(part, at)?))),
        _ => Err(DecodeError::field(
            path(at, "type"),
            format!("`{kind}` is not supported here"),
        )),
    }
}

/// An `image_url` part: `{"url","detail"}`, or a bare URL string as some clients send.
fn image(part: &Object, at: &str) -> Result<Image, DecodeError> {
    let at = path(at, "image_url");
    let (url, detail) = match part.get("image_url") {
        Some(Value::String(url)) => (url.as_str(), None),
        Some(Value::Object(image)) => (req_str(image, "url", &at)?, opt_str(image, "detail", &at)?),
        _ => return Err(DecodeError::field(at, "must be an object with a `url`")),
    };
    Ok(Image {
        source: ImageSource::from_url(url),
        detail: detail.map(str::to_owned),
    })
}

/// A `tool` message: its text and images become the result's content.
fn tool_result(message: &Object, at: &str) -> Result<ToolResult, DecodeError> {
    let call_id = req_str(message, "tool_call_id", at)?.to_owned();
    let content = content_parts(message, at, Context::Tool)?
        .into_iter()
        .filter_map(|part| match part {
            Part::Text { text } => Some(ToolResultContent::Text { text }),
            Part::Image(image) => Some(ToolResultContent::Image(image)),
            _ => None,
        })
        .collect();
    Ok(ToolResult {
        call_id,
        name: opt_str(message, "name", at)?.map(str::to_owned),
        content,
        is_error: false,
    })
}

/// An assistant message: reasoning, then text (and any refusal), then tool calls.
fn assistant(message: &Object, at: &str) -> Result<Message, DecodeError> {
    let mut parts = Vec::new();
    let reasoning = match opt_str(message, "reasoning_content", at)? {
        Some(text) => Some(text),
        // OpenRouter and some vLLM builds name it `reasoning`; elsewhere that is an object.
        None => get(message, "reasoning").and_then(Value::as_str),
    };
    if let Some(text) = reasoning.filter(|text| !text.is_empty()) {
        parts.push(Part::Reasoning(Reasoning {
            text: text.to_owned(),
            ..Reasoning::default()
        }));
    }
    parts.extend(content_parts(message, at, Context::Assistant)?);
    if let Some(refusal) = opt_str(message, "refusal", at)?.filter(|text| !text.is_empty()) {
        parts.push(Part::Text {
            text: refusal.to_owned(),
        });
    }
    for (k, call) in opt_array(message, "tool_calls", at)?
        .into_iter()
        .flatten()
        .enumerate()
    {
        parts.push(Part::ToolCall(tool_call(
            call,
            &format!("{at}.tool_calls[{k}]"),
            k,
        )?));
    }
    Ok(Message {
        role: Role::Assistant,
        parts,
    })
}

fn tool_call(call: &Value, at: &str, position: usize) -> Result<ToolCall, DecodeError> {
    let call = as_object(call, at)?;
    let function_at = path(at, "function");
    let function = as_object(
        get(call, "function").ok_or_else(|| DecodeError::field(&function_at, "is required"))?,
        &function_at,
    )?;
    let name = req_str(function, "name", &function_at)?.to_owned();
    let arguments = match get(function, "arguments") {
        None => "{}".to_owned(),
        Some(Value::String(arguments)) => arguments.clone(),
        // Some clients send the arguments as an object rather than JSON text.
        Some(other) => other.to_string(),
    };
    let id = match opt_str(call, "id", at)? {
        Some(id) => id.to_owned(),
        None => synthetic_call_id(&name, &arguments, position),
    };
    Ok(ToolCall {
        id,
        name,
        arguments,
        signature: None,
    })
}

fn decode_tool(tool: &Value, at: &str) -> Result<Tool, DecodeError> {
    let tool = as_object(tool, at)?;
    let kind = opt_str(tool, "type", at)?.unwrap_or("function");
    if kind != "function" {
        return Err(DecodeError::field(
            path(at, "type"),
            format!("`{kind}` is not supported (only `function` tools)"),
        ));
    }
    let function_at = path(at, "function");
    let function = as_object(
        get(tool, "function").ok_or_else(|| DecodeError::field(&function_at, "is required"))?,
        &function_at,
    )?;
    Ok(Tool {
        name: req_str(function, "name", &function_at)?.to_owned(),
        description: opt_str(function, "description", &function_at)?.map(str::to_owned),
        parameters: get(function, "parameters")
            .map_or_else(RawJson::empty_object_schema, RawJson::from_value),
        strict: opt_bool(function, "strict", &function_at)?,
    })
}

/// `auto` | `required` | `none` | `{"type":"function","function":{"name"}}`; `None` for shapes
/// the model cannot hold (they stay in `extra`).
fn decode_tool_choice(value: &Value) -> Option<ToolChoice> {
    match value {
        Value::String(choice) => match choice.as_str() {
            "auto" => Some(ToolChoice::Auto),
            "required" => Some(ToolChoice::Required),
            "none" => Some(ToolChoice::None),
            _ => None,
        },
        Value::Object(choice) if choice.get("type").and_then(Value::as_str) == Some("function") => {
            let name = choice.get("function")?.get("name")?.as_str()?;
            Some(ToolChoice::Named(name.to_owned()))
        }
        _ => None,
    }
}

/// `text` | `json_object` | `json_schema`; `None` for others (they stay in `extra`).
fn decode_response_format(value: &Value) -> Option<ResponseFormat> {
    match value.get("type")?.as_str()? {
        "text" => Some(ResponseFormat::Text),
        "json_object" => Some(ResponseFormat::JsonObject),
        "json_schema" => {
            let schema = value.get("json_schema")?;
            Some(ResponseFormat::JsonSchema {
                name: schema
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("response")
                    .to_owned(),
                schema: schema
                    .get("schema")
                    .cloned()
                    .unwrap_or_else(|| serde_json::json!({})),
                strict: schema.get("strict").and_then(Value::as_bool),
            })
        }
        _ => None,
    }
}

/// `stop`: a string or a list of strings.
fn decode_stop(top: &Object) -> Result<Vec<String>, DecodeError> {
    match get(top, "stop") {
        None => Ok(Vec::new()),
        Some(Value::String(stop)) => Ok(vec![stop.clone()]),
        Some(Value::Array(stops)) => stops
            .iter()
            .enumerate()
            .map(|(i, stop)| {
                stop.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| DecodeError::field(format!("stop[{i}]"), "must be a string"))
            })
            .collect(),
        Some(_) => Err(DecodeError::field(
            "stop",
            "must be a string or an array of strings",
        )),
    }
}

//! Client → corvid: an Anthropic Messages request body (Claude Code's) into a [`ChatRequest`].
//!
//! Strict about the shape of what it models (a wrong type is a 400 naming the field), lenient
//! about everything else: unknown top-level fields go to `extra`, unknown block types (`document`,
//! server tool blocks, `container_upload`…) and `cache_control` are skipped, never an error.

use serde_json::{Map, Value};

use crate::model::{
    ChatRequest, DecodeError, Effort, Image, ImageSource, Message, Params, Part, RawJson,
    Reasoning, ReasoningConfig, ResponseFormat, Role, Tool, ToolCall, ToolChoice, ToolResult,
    ToolResultContent,
};

#[cfg(test)]
mod tests;
mod typed;

/// The name given to an `output_config.format` JSON schema (Anthropic's has none).
pub(crate) const SCHEMA_NAME: &str = "response";

/// Client → corvid: an Anthropic Messages (or `count_tokens`) request body.
///
/// `max_tokens` is optional so that `count_tokens` bodies decode too. Server tools (those with a
/// `type` such as `web_search_20250305`) are kept in `extra["tools"]`.
pub fn decode_request(body: &[u8]) -> Result<ChatRequest, DecodeError> {
    // The typed fast path decodes what it can decode exactly as the tree below; anything else
    // (an error included) goes through the tree, which words the error.
    match typed::decode(body) {
        Some(request) => Ok(request),
        None => decode_tree(body)?.finish(),
    }
}

/// The request when the body is one the typed fast path reads whole — valid JSON (serde reads
/// every byte, the parts it skips included), an object, no top-level key twice (escaped
/// spellings included), `model` a string — and `None` for anything else, which
/// [`decode_request`] then reads or refuses. The gateway uses it to skip its own validating
/// pre-scan when the request will be translated anyway.
pub fn decode_plain_request(body: &[u8]) -> Option<ChatRequest> {
    typed::decode(body)
}

/// The request's parts as the two decoders produce them; [`Decoded::finish`] reads the small
/// top-level fields left in `fields`.
struct Decoded {
    fields: Map<String, Value>,
    system: Vec<String>,
    messages: Vec<Message>,
    tools: Vec<Tool>,
    server_tools: Vec<Value>,
}

/// The whole body read as a `Value` tree first: the reference decoder, and the one whose
/// errors clients see.
fn decode_tree(body: &[u8]) -> Result<Decoded, DecodeError> {
    let Value::Object(mut fields) = serde_json::from_slice(body)? else {
        return Err(DecodeError::field("body", "must be a JSON object"));
    };
    match fields.get("model") {
        Some(Value::String(_)) => {}
        Some(_) => return Err(DecodeError::field("model", "must be a string")),
        None => return Err(DecodeError::field("model", "is required")),
    }
    let system = match fields.remove("system") {
        None | Some(Value::Null) => Vec::new(),
        Some(system) => decode_system(&system)?,
    };
    let mut system = system;
    let messages = match fields.remove("messages") {
        Some(Value::Array(messages)) => {
            let mut decoded: Vec<Message> = Vec::with_capacity(messages.len());
            for (index, message) in messages.iter().enumerate() {
                match decode_message(index, message)? {
                    // System turns ahead of the conversation join the system text; later ones
                    // keep their position.
                    Some(Turn::System(texts)) if decoded.is_empty() => system.extend(texts),
                    Some(Turn::System(texts)) => crate::model::push_system_turn(
                        &mut decoded,
                        texts
                            .into_iter()
                            .map(|text| Part::System { text })
                            .collect(),
                    ),
                    Some(Turn::Message(message)) => decoded.push(message),
                    None => {}
                }
            }
            decoded
        }
        Some(_) => return Err(DecodeError::field("messages", "must be an array")),
        None => return Err(DecodeError::field("messages", "is required")),
    };
    let (tools, server_tools) = match fields.remove("tools") {
        None | Some(Value::Null) => (Vec::new(), Vec::new()),
        Some(Value::Array(tools)) => decode_tools(tools)?,
        Some(_) => return Err(DecodeError::field("tools", "must be an array")),
    };
    Ok(Decoded {
        fields,
        system,
        messages,
        tools,
        server_tools,
    })
}

impl Decoded {
    fn finish(self) -> Result<ChatRequest, DecodeError> {
        let Self {
            mut fields,
            system,
            messages,
            tools,
            server_tools,
        } = self;
        let model = match fields.remove("model") {
            Some(Value::String(model)) => model,
            Some(_) => return Err(DecodeError::field("model", "must be a string")),
            None => return Err(DecodeError::field("model", "is required")),
        };
        let mut extra = Map::new();
        if !server_tools.is_empty() {
            extra.insert("tools".to_owned(), Value::Array(server_tools));
        }
        let (tool_choice, parallel_tool_calls) = match fields.remove("tool_choice") {
            None | Some(Value::Null) => (None, None),
            Some(choice) => decode_tool_choice(&choice)?,
        };
        let mut output_config = match fields.remove("output_config") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(config)) => config,
            Some(_) => return Err(DecodeError::field("output_config", "must be an object")),
        };
        let effort = take_effort(&mut output_config);
        let response_format = take_format(&mut output_config);
        if !output_config.is_empty() {
            extra.insert("output_config".to_owned(), Value::Object(output_config));
        }
        let reasoning = match fields.remove("thinking") {
            None | Some(Value::Null) => effort.map(ReasoningConfig::Effort),
            Some(thinking) => decode_thinking(&thinking, effort)?,
        };
        let params = Params {
            max_output_tokens: take_u32(&mut fields, "max_tokens")?,
            temperature: take_f64(&mut fields, "temperature")?,
            top_p: take_f64(&mut fields, "top_p")?,
            stop: take_stop(&mut fields)?,
            reasoning,
            parallel_tool_calls,
            response_format,
        };
        let stream = match fields.remove("stream") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(stream)) => stream,
            Some(_) => return Err(DecodeError::field("stream", "must be a boolean")),
        };
        extra.extend(fields);
        Ok(ChatRequest {
            model,
            system,
            messages,
            tools,
            tool_choice,
            params,
            stream,
            extra,
        })
    }
}

/// `system`: a string, or text blocks (one canonical entry each; `cache_control` ignored).
fn decode_system(system: &Value) -> Result<Vec<String>, DecodeError> {
    match system {
        Value::String(text) => Ok(vec![text.clone()]),
        Value::Array(blocks) => {
            let mut texts = Vec::new();
            for (index, block) in blocks.iter().enumerate() {
                if block_type(block) == Some("text") {
                    texts.push(text_field(block, &format!("system[{index}].text"), "text")?);
                }
            }
            Ok(texts)
        }
        _ => Err(DecodeError::field(
            "system",
            "must be a string or an array of text blocks",
        )),
    }
}

/// One entry of `messages`: a message, or a system turn (Claude Code sends `{"role":
/// "system"}` entries for models it does not know).
enum Turn {
    Message(Message),
    System(Vec<String>),
}

/// One message; `None` when nothing in it can be carried (only unknown blocks).
fn decode_message(index: usize, message: &Value) -> Result<Option<Turn>, DecodeError> {
    let path = format!("messages[{index}]");
    let role = match message.get("role").and_then(Value::as_str) {
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        Some("system" | "developer") => {
            let texts = match message.get("content") {
                Some(content @ (Value::String(_) | Value::Array(_))) => decode_system(content)
                    .map_err(|_| {
                        DecodeError::field(
                            format!("{path}.content"),
                            "must be a string or an array of text blocks",
                        )
                    })?,
                _ => {
                    return Err(DecodeError::field(
                        format!("{path}.content"),
                        "must be a string or an array of text blocks",
                    ));
                }
            };
            let texts: Vec<String> = texts.into_iter().filter(|text| !text.is_empty()).collect();
            return Ok((!texts.is_empty()).then_some(Turn::System(texts)));
        }
        Some(other) => {
            return Err(DecodeError::field(
                format!("{path}.role"),
                format!("Unexpected role \"{other}\". Allowed roles are \"user\" or \"assistant\""),
            ));
        }
        None => return Err(DecodeError::field(format!("{path}.role"), "is required")),
    };
    let parts = match message.get("content") {
        Some(Value::String(text)) => vec![Part::Text { text: text.clone() }],
        Some(Value::Array(blocks)) => {
            let mut parts = Vec::with_capacity(blocks.len());
            for (block_index, block) in blocks.iter().enumerate() {
                let block_path = format!("{path}.content[{block_index}]");
                parts.extend(decode_block(&block_path, block)?);
            }
            parts
        }
        _ => {
            return Err(DecodeError::field(
                format!("{path}.content"),
                "must be a string or an array of content blocks",
            ));
        }
    };
    Ok((!parts.is_empty()).then_some(Turn::Message(Message { role, parts })))
}

/// One content block; `None` for block types the canonical model does not carry.
fn decode_block(path: &str, block: &Value) -> Result<Option<Part>, DecodeError> {
    let Some(kind) = block_type(block) else {
        return Err(DecodeError::field(
            format!("{path}.type"),
            "must be a string",
        ));
    };
    Ok(Some(match kind {
        "text" => Part::Text {
            text: text_field(block, &format!("{path}.text"), "text")?,
        },
        "image" => match decode_image(path, block)? {
            Some(image) => Part::Image(image),
            None => return Ok(None),
        },
        "tool_use" => Part::ToolCall(ToolCall {
            id: text_field(block, &format!("{path}.id"), "id")?,
            name: text_field(block, &format!("{path}.name"), "name")?,
            arguments: match block.get("input") {
                None | Some(Value::Null) => "{}".to_owned(),
                Some(input) => input.to_string(),
            },
            signature: None,
        }),
        "tool_result" => Part::ToolResult(decode_tool_result(path, block)?),
        "thinking" => Part::Reasoning(Reasoning {
            text: optional_text(block, "thinking"),
            // Synthetic thinking (ours, or another gateway's) carries `"signature": ""`: read it
            // as unsigned so that it is never forwarded to Anthropic as if it were signed.
            signature: Some(optional_text(block, "signature")).filter(|s| !s.is_empty()),
            encrypted: None,
            id: None,
        }),
        "redacted_thinking" => Part::Reasoning(Reasoning {
            encrypted: Some(text_field(block, &format!("{path}.data"), "data")?),
            ..Reasoning::default()
        }),
        _ => return Ok(None),
    }))
}

/// An `image` block; `None` for sources the model cannot carry (`file`).
fn decode_image(path: &str, block: &Value) -> Result<Option<Image>, DecodeError> {
    let Some(source) = block.get("source") else {
        return Err(DecodeError::field(format!("{path}.source"), "is required"));
    };
    let source_path = format!("{path}.source");
    let source = match block_type(source) {
        Some("base64") => ImageSource::Base64 {
            media_type: text_field(source, &format!("{source_path}.media_type"), "media_type")?,
            data: text_field(source, &format!("{source_path}.data"), "data")?,
        },
        Some("url") => ImageSource::Url {
            url: text_field(source, &format!("{source_path}.url"), "url")?,
        },
        _ => return Ok(None),
    };
    Ok(Some(Image {
        source,
        detail: None,
    }))
}

fn decode_tool_result(path: &str, block: &Value) -> Result<ToolResult, DecodeError> {
    let content = match block.get("content") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(text)) => vec![ToolResultContent::Text { text: text.clone() }],
        Some(Value::Array(items)) => {
            let mut content = Vec::with_capacity(items.len());
            for (index, item) in items.iter().enumerate() {
                let item_path = format!("{path}.content[{index}]");
                match block_type(item) {
                    Some("text") => content.push(ToolResultContent::Text {
                        text: text_field(item, &format!("{item_path}.text"), "text")?,
                    }),
                    Some("image") => {
                        if let Some(image) = decode_image(&item_path, item)? {
                            content.push(ToolResultContent::Image(image));
                        }
                    }
                    _ => {}
                }
            }
            content
        }
        Some(_) => {
            return Err(DecodeError::field(
                format!("{path}.content"),
                "must be a string or an array of blocks",
            ));
        }
    };
    Ok(ToolResult {
        call_id: text_field(block, &format!("{path}.tool_use_id"), "tool_use_id")?,
        name: None,
        content,
        is_error: block.get("is_error").and_then(Value::as_bool) == Some(true),
    })
}

/// Function tools, and the server tools (`{"type":"web_search_20250305",…}`) kept apart.
fn decode_tools(tools: Vec<Value>) -> Result<(Vec<Tool>, Vec<Value>), DecodeError> {
    let mut functions = Vec::new();
    let mut server = Vec::new();
    for (index, tool) in tools.into_iter().enumerate() {
        let custom = matches!(block_type(&tool), None | Some("custom"));
        if !custom || tool.get("input_schema").is_none() {
            server.push(tool);
            continue;
        }
        functions.push(Tool {
            name: text_field(&tool, &format!("tools[{index}].name"), "name")?,
            description: tool
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned),
            parameters: tool
                .get("input_schema")
                .map_or_else(RawJson::null, RawJson::from_value),
            strict: tool.get("strict").and_then(Value::as_bool),
        });
    }
    Ok((functions, server))
}

/// `tool_choice` → the choice, and `parallel_tool_calls: false` for `disable_parallel_tool_use`.
fn decode_tool_choice(choice: &Value) -> Result<(Option<ToolChoice>, Option<bool>), DecodeError> {
    let parallel = (choice
        .get("disable_parallel_tool_use")
        .and_then(Value::as_bool)
        == Some(true))
    .then_some(false);
    let choice = match block_type(choice) {
        Some("auto") => ToolChoice::Auto,
        Some("any") => ToolChoice::Required,
        Some("none") => ToolChoice::None,
        Some("tool") => ToolChoice::Named(text_field(choice, "tool_choice.name", "name")?),
        _ => {
            return Err(DecodeError::field(
                "tool_choice.type",
                "must be `auto`, `any`, `tool` or `none`",
            ));
        }
    };
    Ok((Some(choice), parallel))
}

/// `thinking` (with `output_config.effort`, already taken) → the reasoning knob.
fn decode_thinking(
    thinking: &Value,
    effort: Option<Effort>,
) -> Result<Option<ReasoningConfig>, DecodeError> {
    Ok(match block_type(thinking) {
        Some("enabled") => match thinking.get("budget_tokens").and_then(Value::as_u64) {
            Some(budget) => Some(ReasoningConfig::Budget(saturate(budget))),
            None => {
                return Err(DecodeError::field(
                    "thinking.budget_tokens",
                    "must be a non-negative integer",
                ));
            }
        },
        // Adaptive thinking without an effort runs at Anthropic's default effort, `high`.
        Some("adaptive") => Some(ReasoningConfig::Effort(effort.unwrap_or(Effort::High))),
        Some("disabled") => Some(ReasoningConfig::Disabled),
        _ => effort.map(ReasoningConfig::Effort),
    })
}

/// Removes `effort` from `output_config` when it is a known level.
fn take_effort(config: &mut Map<String, Value>) -> Option<Effort> {
    let effort = config
        .get("effort")
        .and_then(Value::as_str)
        .and_then(Effort::parse)?;
    config.remove("effort");
    Some(effort)
}

/// Removes `format` from `output_config` when it is a JSON schema (structured outputs).
fn take_format(config: &mut Map<String, Value>) -> Option<ResponseFormat> {
    let format = config.get("format")?;
    if block_type(format) != Some("json_schema") {
        return None;
    }
    let schema = format.get("schema")?.clone();
    config.remove("format");
    Some(ResponseFormat::JsonSchema {
        name: SCHEMA_NAME.to_owned(),
        schema,
        strict: None,
    })
}

fn take_u32(fields: &mut Map<String, Value>, name: &str) -> Result<Option<u32>, DecodeError> {
    match fields.remove(name) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => match value.as_u64() {
            Some(number) => Ok(Some(saturate(number))),
            None => Err(DecodeError::field(name, "must be a non-negative integer")),
        },
    }
}

fn take_f64(fields: &mut Map<String, Value>, name: &str) -> Result<Option<f64>, DecodeError> {
    match fields.remove(name) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => match value.as_f64() {
            Some(number) => Ok(Some(number)),
            None => Err(DecodeError::field(name, "must be a number")),
        },
    }
}

fn take_stop(fields: &mut Map<String, Value>) -> Result<Vec<String>, DecodeError> {
    let invalid = || DecodeError::field("stop_sequences", "must be an array of strings");
    match fields.remove("stop_sequences") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .into_iter()
            .map(|item| match item {
                Value::String(text) => Ok(text),
                _ => Err(invalid()),
            })
            .collect(),
        Some(_) => Err(invalid()),
    }
}

fn saturate(number: u64) -> u32 {
    u32::try_from(number).unwrap_or(u32::MAX)
}

/// The `type` of a block (or of a source, a tool, a `tool_choice`…).
fn block_type(value: &Value) -> Option<&str> {
    value.get("type").and_then(Value::as_str)
}

/// A required string field of a block; `path` names it in the error.
fn text_field(block: &Value, path: &str, name: &str) -> Result<String, DecodeError> {
    match block.get(name) {
        Some(Value::String(text)) => Ok(text.clone()),
        Some(_) => Err(DecodeError::field(path, "must be a string")),
        None => Err(DecodeError::field(path, "is required")),
    }
}

/// An optional string field, empty when absent.
fn optional_text(block: &Value, name: &str) -> String {
    block
        .get(name)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

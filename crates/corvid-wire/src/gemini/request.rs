//! Client → corvid: a `generateContent` body → [`ChatRequest`].

use serde_json::{Map, Value};

use super::{camel_case, field, schema, snake_case};
use crate::model::{
    ChatRequest, DecodeError, Effort, Image, ImageSource, Message, Params, Part, Reasoning,
    ReasoningConfig, ResponseFormat, Role, Tool, ToolCall, ToolChoice, ToolResult,
    ToolResultContent, synthetic_call_id,
};

/// Reads a `generateContent` / `streamGenerateContent` body.
///
/// `model` comes from the URL (`/v1beta/models/{model}:generateContent`); a leading `models/`
/// is removed. The body says nothing about streaming: the caller sets `stream`.
///
/// Calls without an `id` get [`synthetic_call_id`] (name, arguments, position of the call in
/// the conversation); a `functionResponse` without one takes the id of the first earlier
/// unanswered call of the same name. Fields corvid does not model (`safetySettings`,
/// `cachedContent`, `labels`, non-function tools, other `generationConfig` and `toolConfig`
/// fields) go to `extra`, camelCased, for [`encode_request`](super::encode_request) to put back.
pub fn decode_request(body: &[u8], model: &str) -> Result<ChatRequest, DecodeError> {
    let value: Value = serde_json::from_slice(body)?;
    let Value::Object(mut root) = value else {
        return Err(DecodeError::field("body", "must be a JSON object"));
    };
    let mut request = ChatRequest {
        model: model.strip_prefix("models/").unwrap_or(model).to_owned(),
        ..ChatRequest::default()
    };
    let mut extra = Map::new();

    if let Some(system) = take(&mut root, "systemInstruction") {
        request.system = decode_system(&system)?;
    }
    if let Some(contents) = take(&mut root, "contents") {
        request.messages = Conversation::default().decode(&contents)?;
    }
    if let Some(tools) = take(&mut root, "tools") {
        let others = decode_tools(&tools, &mut request.tools)?;
        if !others.is_empty() {
            extra.insert("tools".into(), others.into());
        }
    }
    if let Some(Value::Object(mut config)) = take(&mut root, "toolConfig") {
        if let Some(calling) = take(&mut config, "functionCallingConfig") {
            request.tool_choice = decode_tool_choice(&calling);
        }
        if !config.is_empty() {
            extra.insert("toolConfig".into(), config.into());
        }
    }
    if let Some(Value::Object(config)) = take(&mut root, "generationConfig") {
        let rest = decode_generation_config(config, &mut request.params)?;
        if !rest.is_empty() {
            extra.insert("generationConfig".into(), rest.into());
        }
    }
    // A model named in the body too (Vertex) is the URL's.
    take(&mut root, "model");
    for (key, value) in root {
        extra.insert(camel_case(&key), value);
    }
    request.extra = extra;
    Ok(request)
}

/// Removes field `name` (camelCase or snake_case) from `object`.
fn take(object: &mut Map<String, Value>, name: &str) -> Option<Value> {
    object
        .remove(name)
        .or_else(|| object.remove(&snake_case(name)))
}

fn decode_system(system: &Value) -> Result<Vec<String>, DecodeError> {
    match system {
        // Tolerated: a bare string.
        Value::String(text) => Ok(vec![text.clone()]),
        Value::Object(_) => Ok(parts_of(system, "systemInstruction")?
            .iter()
            .filter_map(|part| field(part, "text").and_then(Value::as_str))
            .map(str::to_owned)
            .collect()),
        _ => Err(DecodeError::field("systemInstruction", "must be an object")),
    }
}

fn parts_of<'a>(content: &'a Value, path: &str) -> Result<&'a [Value], DecodeError> {
    match field(content, "parts") {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(parts)) => Ok(parts),
        Some(_) => Err(DecodeError::field(
            format!("{path}.parts"),
            "must be an array",
        )),
    }
}

/// Walks `contents`, pairing function responses with the calls they answer.
#[derive(Default)]
struct Conversation {
    /// Every call so far: id, name, answered.
    calls: Vec<(String, String, bool)>,
}

impl Conversation {
    fn decode(mut self, contents: &Value) -> Result<Vec<Message>, DecodeError> {
        let Value::Array(contents) = contents else {
            return Err(DecodeError::field("contents", "must be an array"));
        };
        let mut messages = Vec::with_capacity(contents.len());
        for (i, content) in contents.iter().enumerate() {
            let path = format!("contents[{i}]");
            let role = match field(content, "role").and_then(Value::as_str) {
                Some("model") => Role::Assistant,
                // `function` is the role of responses in older clients.
                None | Some("user" | "function" | "") => Role::User,
                Some(_) => {
                    return Err(DecodeError::field(
                        format!("{path}.role"),
                        "must be `user` or `model`",
                    ));
                }
            };
            let mut parts = Vec::new();
            for (j, part) in parts_of(content, &path)?.iter().enumerate() {
                self.part(part, &format!("{path}.parts[{j}]"), &mut parts)?;
            }
            // A turn left empty (only empty text) would be refused by most upstreams.
            if !parts.is_empty() {
                messages.push(Message { role, parts });
            }
        }
        Ok(messages)
    }

    fn part(&mut self, part: &Value, path: &str, out: &mut Vec<Part>) -> Result<(), DecodeError> {
        if let Some(call) = field(part, "functionCall") {
            let name = required_str(call, "name", &format!("{path}.functionCall"))?;
            let arguments = arguments_text(field(call, "args"));
            let id = match non_empty(field(call, "id")) {
                Some(id) => id.to_owned(),
                None => synthetic_call_id(name, &arguments, self.calls.len()),
            };
            self.calls.push((id.clone(), name.to_owned(), false));
            out.push(Part::ToolCall(ToolCall {
                id,
                name: name.to_owned(),
                arguments,
                signature: non_empty(field(part, "thoughtSignature")).map(str::to_owned),
            }));
        } else if let Some(response) = field(part, "functionResponse") {
            out.push(Part::ToolResult(self.result(response, path)?));
        } else if let Some(data) = field(part, "inlineData") {
            out.push(Part::Image(inline_image(data)));
        } else if let Some(file) = field(part, "fileData") {
            let url = field(file, "fileUri").and_then(Value::as_str).unwrap_or("");
            out.push(Part::Image(Image {
                source: ImageSource::Url {
                    url: url.to_owned(),
                },
                detail: None,
            }));
        } else if let Some(text) = field(part, "text").and_then(Value::as_str) {
            if field(part, "thought") == Some(&Value::Bool(true)) {
                // A token corvid minted for another provider stays whole until
                // `minted::settle`; Gemini's own signatures on thoughts are not kept.
                let token = non_empty(field(part, "thoughtSignature"))
                    .filter(|token| crate::minted::is_minted(token))
                    .map(str::to_owned);
                if !text.is_empty() || token.is_some() {
                    out.push(Part::Reasoning(Reasoning {
                        text: text.to_owned(),
                        signature: token,
                        ..Reasoning::default()
                    }));
                }
            } else if !text.is_empty() {
                out.push(Part::Text {
                    text: text.to_owned(),
                });
            }
        }
        // `executableCode`, `codeExecutionResult`, `videoMetadata`…: not carried (LOSSES.md).
        Ok(())
    }

    fn result(&mut self, response: &Value, path: &str) -> Result<ToolResult, DecodeError> {
        let name = required_str(response, "name", &format!("{path}.functionResponse"))?;
        let call_id = match non_empty(field(response, "id")) {
            Some(id) => {
                if let Some(call) = self.calls.iter_mut().find(|(known, ..)| known == id) {
                    call.2 = true;
                }
                id.to_owned()
            }
            None => match self
                .calls
                .iter_mut()
                .find(|(_, called, answered)| called == name && !answered)
            {
                Some(call) => {
                    call.2 = true;
                    call.0.clone()
                }
                // An answer to a call the history does not show.
                None => synthetic_call_id(name, "", self.calls.len()),
            },
        };
        let (mut content, is_error) = result_content(field(response, "response"));
        // Gemini 3 multimodal function responses: `parts[].inlineData`.
        if let Some(Value::Array(parts)) = field(response, "parts") {
            for part in parts {
                if let Some(data) = field(part, "inlineData") {
                    content.push(ToolResultContent::Image(inline_image(data)));
                }
            }
        }
        Ok(ToolResult {
            call_id,
            name: Some(name.to_owned()),
            content,
            is_error,
        })
    }
}

/// A function response's `response` object as text. The SDK's documented `{"output": …}`
/// and `{"error": …}` keys, and `{"result": …}` (what [`encode_request`](super::encode_request)
/// sends), are unwrapped — a string as it is, other values as their JSON text; an error wins
/// over an output. Anything else is kept as its JSON text.
fn result_content(response: Option<&Value>) -> (Vec<ToolResultContent>, bool) {
    let text = |text: String| vec![ToolResultContent::Text { text }];
    let inner = |value: &Value| match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    match response {
        None | Some(Value::Null) => (Vec::new(), false),
        Some(Value::Object(object))
            if !object.is_empty()
                && object
                    .keys()
                    .all(|key| matches!(key.as_str(), "output" | "result" | "error")) =>
        {
            match (
                object.get("error"),
                object.get("output").or(object.get("result")),
            ) {
                (Some(error), _) if !error.is_null() => (text(inner(error)), true),
                (_, Some(output)) => (text(inner(output)), false),
                _ => (text(Value::Object(object.clone()).to_string()), false),
            }
        }
        Some(Value::String(result)) => (text(result.clone()), false),
        Some(other) => (text(other.to_string()), false),
    }
}

fn inline_image(data: &Value) -> Image {
    let get = |key: &str| {
        field(data, key)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    Image {
        source: ImageSource::Base64 {
            media_type: get("mimeType"),
            data: get("data"),
        },
        detail: None,
    }
}

/// The `args` object as JSON text (`{}` when absent).
pub(crate) fn arguments_text(args: Option<&Value>) -> String {
    match args {
        None | Some(Value::Null) => "{}".to_owned(),
        Some(args) => args.to_string(),
    }
}

fn required_str<'a>(object: &'a Value, key: &str, path: &str) -> Result<&'a str, DecodeError> {
    field(object, key)
        .and_then(Value::as_str)
        .ok_or_else(|| DecodeError::field(format!("{path}.{key}"), "must be a string"))
}

fn non_empty(value: Option<&Value>) -> Option<&str> {
    value
        .and_then(Value::as_str)
        .filter(|text| !text.is_empty())
}

/// Function declarations into `tools`; the other tool entries (`googleSearch`,
/// `codeExecution`, …) are returned for `extra`.
fn decode_tools(tools: &Value, out: &mut Vec<Tool>) -> Result<Vec<Value>, DecodeError> {
    let Value::Array(tools) = tools else {
        return Err(DecodeError::field("tools", "must be an array"));
    };
    let mut others = Vec::new();
    for (i, tool) in tools.iter().enumerate() {
        let Some(declarations) = field(tool, "functionDeclarations") else {
            others.push(tool.clone());
            continue;
        };
        let Value::Array(declarations) = declarations else {
            return Err(DecodeError::field(
                format!("tools[{i}].functionDeclarations"),
                "must be an array",
            ));
        };
        for (j, declaration) in declarations.iter().enumerate() {
            let path = format!("tools[{i}].functionDeclarations[{j}]");
            let name = required_str(declaration, "name", &path)?;
            let parameters = match (
                field(declaration, "parametersJsonSchema"),
                field(declaration, "parameters"),
            ) {
                (Some(json_schema), _) => json_schema.clone(),
                (None, Some(parameters)) => schema::from_gemini(parameters),
                (None, None) => serde_json::json!({ "type": "object", "properties": {} }),
            };
            out.push(Tool {
                name: name.to_owned(),
                description: field(declaration, "description")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                parameters: parameters.into(),
                strict: None,
            });
        }
    }
    Ok(others)
}

/// `functionCallingConfig.mode`: `ANY` with exactly one allowed name is a named choice;
/// `VALIDATED` counts as `AUTO`.
fn decode_tool_choice(config: &Value) -> Option<ToolChoice> {
    let allowed: Vec<&str> = match field(config, "allowedFunctionNames") {
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    match field(config, "mode").and_then(Value::as_str)? {
        "AUTO" | "VALIDATED" => Some(ToolChoice::Auto),
        "NONE" => Some(ToolChoice::None),
        "ANY" => match allowed.as_slice() {
            [only] => Some(ToolChoice::Named((*only).to_owned())),
            _ => Some(ToolChoice::Required),
        },
        _ => None,
    }
}

/// Reads the modelled `generationConfig` fields into `params`; returns the others.
fn decode_generation_config(
    mut config: Map<String, Value>,
    params: &mut Params,
) -> Result<Map<String, Value>, DecodeError> {
    let number = |value: Option<Value>, name: &str| -> Result<Option<f64>, DecodeError> {
        match value {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(number)) => Ok(number.as_f64()),
            Some(_) => Err(DecodeError::field(
                format!("generationConfig.{name}"),
                "must be a number",
            )),
        }
    };
    if let Some(max) = take(&mut config, "maxOutputTokens") {
        let max = max
            .as_u64()
            .and_then(|max| u32::try_from(max).ok())
            .ok_or_else(|| {
                DecodeError::field(
                    "generationConfig.maxOutputTokens",
                    "must be a positive integer",
                )
            })?;
        params.max_output_tokens = Some(max);
    }
    params.temperature = number(take(&mut config, "temperature"), "temperature")?;
    params.top_p = number(take(&mut config, "topP"), "topP")?;
    match take(&mut config, "stopSequences") {
        None | Some(Value::Null) => {}
        Some(Value::Array(stops)) => {
            params.stop = stops
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect();
        }
        Some(Value::String(stop)) => params.stop = vec![stop],
        Some(_) => {
            return Err(DecodeError::field(
                "generationConfig.stopSequences",
                "must be an array of strings",
            ));
        }
    }
    if let Some(thinking) = take(&mut config, "thinkingConfig") {
        params.reasoning = decode_thinking(&thinking);
        if params.reasoning.is_none() {
            // Dynamic budget (-1) or only `includeThoughts`: kept for a Gemini upstream.
            config.insert("thinkingConfig".into(), thinking);
        }
    }
    let mime = config
        .get("responseMimeType")
        .or_else(|| config.get("response_mime_type"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    match mime.as_deref() {
        Some("application/json") => {
            take(&mut config, "responseMimeType");
            let schema = match (
                take(&mut config, "responseJsonSchema"),
                take(&mut config, "responseSchema"),
            ) {
                (Some(json_schema), _) => Some(json_schema),
                (None, Some(schema)) => Some(schema::from_gemini(&schema)),
                (None, None) => None,
            };
            params.response_format = Some(match schema {
                Some(schema) => ResponseFormat::JsonSchema {
                    name: "response".to_owned(),
                    schema,
                    strict: None,
                },
                None => ResponseFormat::JsonObject,
            });
        }
        Some("text/plain") => {
            take(&mut config, "responseMimeType");
            params.response_format = Some(ResponseFormat::Text);
        }
        // Other types (`text/x.enum`) stay in `extra`, schema included.
        _ => {}
    }
    Ok(config
        .into_iter()
        .map(|(key, value)| (camel_case(&key), value))
        .collect())
}

/// `thinkingConfig` → reasoning: budget 0 is off, a positive budget is kept, a level is an
/// effort; the dynamic budget (-1) is the model's default (`None`).
fn decode_thinking(thinking: &Value) -> Option<ReasoningConfig> {
    if let Some(level) = field(thinking, "thinkingLevel").and_then(Value::as_str) {
        return Effort::parse(&level.to_ascii_lowercase()).map(ReasoningConfig::Effort);
    }
    match field(thinking, "thinkingBudget").and_then(Value::as_i64)? {
        0 => Some(ReasoningConfig::Disabled),
        budget if budget > 0 => u32::try_from(budget).ok().map(ReasoningConfig::Budget),
        _ => None,
    }
}

#[cfg(test)]
mod tests;

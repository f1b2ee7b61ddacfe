//! corvid → Gemini: a [`ChatRequest`] as a `generateContent` body.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::{SKIP_SIGNATURE, schema};
use crate::model::{
    ChatRequest, Image, ImageSource, Message, NameMap, Params, Part, ReasoningConfig,
    ResponseFormat, Role, ToolCall, ToolChoice, ToolResult, ToolResultContent,
};

/// Gemini accepts at most this many stop sequences (pitfall 17).
const MAX_STOP_SEQUENCES: usize = 5;

/// Top-level fields of `extra` put back as they are.
const EXTRA_FIELDS: [&str; 3] = ["safetySettings", "cachedContent", "labels"];

/// The `generateContent` body for `request` (the model goes in the URL, not here).
///
/// - System text becomes `systemInstruction`, never a user turn.
/// - Consecutive messages of one role become one turn, so all the results of a turn's calls
///   sit in one `user` turn, one `functionResponse` each (pitfall 12). Each response is named
///   after its call, found by id in the history; text results are wrapped as
///   `{"result": "…"}` (`{"error": "…"}` when `is_error`), JSON-object results sent as they
///   are. Images a tool returned follow the responses as `inlineData` parts. A call the
///   history never answers gets an `{"error": …}` response, in call order.
/// - Call and response ids are not sent: Gemini refuses them in requests
///   (`Unknown name "id" at 'contents[1].parts[0].function_call'`) and pairs by name.
/// - Each call's `thoughtSignature` goes back on its `functionCall` part; a turn whose first
///   call has none (it came from another provider) gets [`SKIP_SIGNATURE`] there (pitfall 13).
/// - Reasoning parts are not replayed: Gemini only needs the signatures.
/// - `https://` images cannot be fetched here: only `gs://` and Files API URIs become
///   `fileData`; any other URL becomes a text part naming it (the gateway may inline images
///   before encoding).
/// - Tool schemas are rewritten into Gemini's OpenAPI subset (pitfall 15); stop sequences are
///   cut to five; effort becomes `thinkingBudget` with `includeThoughts`.
pub fn encode_request(request: &ChatRequest) -> Value {
    let names = NameMap::new(&request.tools);
    let call_names: HashMap<&str, String> = request
        .messages
        .iter()
        .flat_map(|message| &message.parts)
        .filter_map(|part| match part {
            Part::ToolCall(call) => Some((call.id.as_str(), names.wire(&call.name))),
            _ => None,
        })
        .collect();

    let mut turns: Vec<(Role, Vec<Value>)> = Vec::new();
    for message in answer_calls(&request.messages).iter() {
        let mut parts = Vec::new();
        let mut after = Vec::new();
        for part in &message.parts {
            encode_part(part, &names, &call_names, &mut parts, &mut after);
        }
        parts.append(&mut after);
        if parts.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((role, existing)) if *role == message.role => existing.append(&mut parts),
            _ => turns.push((message.role, parts)),
        }
    }
    let contents: Vec<Value> = turns
        .into_iter()
        .map(|(role, mut parts)| {
            let role = match role {
                Role::User => "user",
                Role::Assistant => {
                    sign_first_call(&mut parts);
                    "model"
                }
            };
            json!({ "role": role, "parts": parts })
        })
        .collect();

    let mut body = Map::new();
    body.insert("contents".into(), contents.into());
    // Gemini has no system turn inside `contents`: system turns join `systemInstruction`, in
    // order, after the leading system text.
    let turns = request
        .messages
        .iter()
        .flat_map(|message| &message.parts)
        .filter_map(|part| match part {
            Part::System { text } => Some(text),
            _ => None,
        });
    let system: Vec<Value> = request
        .system
        .iter()
        .chain(turns)
        .filter(|text| !text.is_empty())
        .map(|text| json!({ "text": text }))
        .collect();
    if !system.is_empty() {
        body.insert("systemInstruction".into(), json!({ "parts": system }));
    }
    encode_tools(request, &names, &mut body);
    let config = generation_config(&request.params, request.extra.get("generationConfig"));
    if !config.is_empty() {
        body.insert("generationConfig".into(), config.into());
    }
    for key in EXTRA_FIELDS {
        if let Some(value) = request.extra.get(key) {
            body.insert(key.into(), value.clone());
        }
    }
    Value::Object(body)
}

/// The response sent for a call the conversation never answered.
const UNANSWERED: &str = "No result was returned for this tool call.";

/// `messages` with every call answered before the conversation goes on: Gemini refuses a
/// function-call turn that the next turn does not answer call for call, and pairs responses
/// with calls by name and position. When a call has no result anywhere, the user message
/// after its turn gets the results of that turn's calls first, in call order, with an error
/// response for the missing one (a user message of its own when an assistant message follows).
/// Calls that end the conversation are left as they are.
fn answer_calls(messages: &[Message]) -> Cow<'_, [Message]> {
    let answered = Message::answered_call_ids(messages);
    let calls = |message: &Message| -> Vec<ToolCall> {
        match message.role {
            Role::User => Vec::new(),
            Role::Assistant => message
                .parts
                .iter()
                .filter_map(|part| match part {
                    Part::ToolCall(call) => Some(call.clone()),
                    _ => None,
                })
                .collect(),
        }
    };
    let missing = |call: &ToolCall| {
        (!answered.contains(call.id.as_str())).then(|| {
            Part::ToolResult(ToolResult {
                call_id: call.id.clone(),
                name: Some(call.name.clone()),
                content: vec![ToolResultContent::Text {
                    text: UNANSWERED.to_owned(),
                }],
                is_error: true,
            })
        })
    };
    let all_answered = messages
        .iter()
        .flat_map(&calls)
        .all(|call| answered.contains(call.id.as_str()));
    if all_answered {
        return Cow::Borrowed(messages);
    }
    let mut out = Vec::with_capacity(messages.len() + 1);
    let mut open: Vec<ToolCall> = Vec::new();
    for message in messages {
        let mut message = message.clone();
        if message.role == Role::User && !open.is_empty() {
            let mut rest = std::mem::take(&mut message.parts);
            for call in open.drain(..) {
                let result = rest.iter().position(
                    |part| matches!(part, Part::ToolResult(result) if result.call_id == call.id),
                );
                match result {
                    Some(position) => message.parts.push(rest.remove(position)),
                    None => message.parts.extend(missing(&call)),
                }
            }
            message.parts.append(&mut rest);
        } else if message.role == Role::Assistant {
            let parts: Vec<Part> = open.drain(..).filter_map(|call| missing(&call)).collect();
            if !parts.is_empty() {
                out.push(Message {
                    role: Role::User,
                    parts,
                });
            }
        }
        open = calls(&message);
        out.push(message);
    }
    Cow::Owned(out)
}

/// Appends `part`'s Gemini parts to `parts`; images returned by tools go to `after`, behind the
/// function responses.
fn encode_part(
    part: &Part,
    names: &NameMap,
    call_names: &HashMap<&str, String>,
    parts: &mut Vec<Value>,
    after: &mut Vec<Value>,
) {
    match part {
        Part::Text { text } if !text.is_empty() => parts.push(json!({ "text": text })),
        // System turns go to `systemInstruction` (see `encode_request`).
        Part::Text { .. } | Part::Reasoning(_) | Part::System { .. } => {}
        Part::Image(image) => parts.push(image_part(image)),
        Part::ToolCall(call) => {
            let args = match serde_json::from_str::<Value>(&call.arguments) {
                Ok(Value::Object(args)) => Value::Object(args),
                _ => json!({}),
            };
            let mut part =
                json!({ "functionCall": { "name": names.wire(&call.name), "args": args } });
            if let Some(signature) = &call.signature {
                part["thoughtSignature"] = signature.clone().into();
            }
            parts.push(part);
        }
        Part::ToolResult(result) => {
            let name = call_names
                .get(result.call_id.as_str())
                .cloned()
                .or_else(|| result.name.as_deref().map(|name| names.wire(name)))
                .unwrap_or_else(|| "unknown".to_owned());
            parts.push(json!({
                "functionResponse": { "name": name, "response": result_response(result) }
            }));
            for content in &result.content {
                if let ToolResultContent::Image(image) = content {
                    after.push(image_part(image));
                }
            }
        }
    }
}

/// A tool result's `response` object: Gemini wants an object, so text is wrapped.
fn result_response(result: &ToolResult) -> Value {
    let text = result.text();
    if result.is_error {
        return json!({ "error": text });
    }
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(object)) => Value::Object(object),
        _ => json!({ "result": text }),
    }
}

/// The first call of a model turn carries a signature: its own, or the sentinel.
fn sign_first_call(parts: &mut [Value]) {
    if let Some(first) = parts
        .iter_mut()
        .find(|part| part.get("functionCall").is_some())
        && first.get("thoughtSignature").is_none()
    {
        first["thoughtSignature"] = SKIP_SIGNATURE.into();
    }
}

fn image_part(image: &Image) -> Value {
    let source = match &image.source {
        ImageSource::Url { url } => ImageSource::from_url(url),
        base64 @ ImageSource::Base64 { .. } => base64.clone(),
    };
    match source {
        ImageSource::Base64 { media_type, data } => {
            json!({ "inlineData": { "mimeType": media_type, "data": data } })
        }
        ImageSource::Url { url } if is_gemini_file(&url) => {
            let mut file = json!({ "fileUri": url });
            if let Some(mime) = mime_from_extension(&url) {
                file["mimeType"] = mime.into();
            }
            json!({ "fileData": file })
        }
        ImageSource::Url { url } => json!({ "text": format!("[image not included: {url}]") }),
    }
}

/// URIs Gemini's `fileData` accepts: Cloud Storage and the Files API.
fn is_gemini_file(url: &str) -> bool {
    url.starts_with("gs://") || url.starts_with("https://generativelanguage.googleapis.com/")
}

fn mime_from_extension(url: &str) -> Option<&'static str> {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    let extension = path.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match extension.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "heic" => "image/heic",
        "heif" => "image/heif",
        "pdf" => "application/pdf",
        _ => return None,
    })
}

fn encode_tools(request: &ChatRequest, names: &NameMap, body: &mut Map<String, Value>) {
    let declarations: Vec<Value> = request
        .tools
        .iter()
        .map(|tool| {
            let mut declaration = Map::new();
            declaration.insert("name".into(), names.wire(&tool.name).into());
            if let Some(description) = tool.description.as_deref().filter(|d| !d.is_empty()) {
                declaration.insert("description".into(), description.into());
            }
            if let Some(parameters) = schema::parameters_to_gemini(&tool.parameters.to_value()) {
                declaration.insert("parameters".into(), parameters);
            }
            Value::Object(declaration)
        })
        .collect();
    let mut tools = Vec::new();
    if !declarations.is_empty() {
        tools.push(json!({ "functionDeclarations": declarations }));
    }
    // Gemini's own tools (`googleSearch`, `codeExecution`…) kept by `decode_request`. Entries
    // with a `type` are another dialect's tools and are not sent.
    if let Some(Value::Array(others)) = request.extra.get("tools") {
        tools.extend(
            others
                .iter()
                .filter(|tool| tool.is_object() && tool.get("type").is_none())
                .cloned(),
        );
    }
    if !tools.is_empty() {
        body.insert("tools".into(), tools.into());
    }

    let mut config = match request.extra.get("toolConfig") {
        Some(Value::Object(config)) => config.clone(),
        _ => Map::new(),
    };
    if !declarations.is_empty()
        && let Some(choice) = &request.tool_choice
    {
        let calling = match choice {
            ToolChoice::Auto => json!({ "mode": "AUTO" }),
            ToolChoice::Required => json!({ "mode": "ANY" }),
            ToolChoice::None => json!({ "mode": "NONE" }),
            ToolChoice::Named(name) => {
                json!({ "mode": "ANY", "allowedFunctionNames": [names.wire(name)] })
            }
        };
        config.insert("functionCallingConfig".into(), calling);
    }
    if !config.is_empty() {
        body.insert("toolConfig".into(), config.into());
    }
}

fn generation_config(params: &Params, extra: Option<&Value>) -> Map<String, Value> {
    let mut config = Map::new();
    if let Some(max) = params.max_output_tokens {
        config.insert("maxOutputTokens".into(), max.into());
    }
    if let Some(temperature) = params.temperature {
        config.insert("temperature".into(), temperature.into());
    }
    if let Some(top_p) = params.top_p {
        config.insert("topP".into(), top_p.into());
    }
    let stops: Vec<&str> = params
        .stop
        .iter()
        .map(String::as_str)
        .filter(|stop| !stop.is_empty())
        .take(MAX_STOP_SEQUENCES)
        .collect();
    if !stops.is_empty() {
        config.insert("stopSequences".into(), stops.into());
    }
    if let Some(reasoning) = params.reasoning {
        let budget = match reasoning {
            ReasoningConfig::Effort(effort) => effort.to_budget().unwrap_or(0),
            ReasoningConfig::Budget(budget) => budget,
            ReasoningConfig::Disabled => 0,
        };
        let thinking = if budget == 0 {
            json!({ "thinkingBudget": 0 })
        } else {
            json!({ "thinkingBudget": budget, "includeThoughts": true })
        };
        config.insert("thinkingConfig".into(), thinking);
    }
    match &params.response_format {
        None | Some(ResponseFormat::Text) => {}
        Some(ResponseFormat::JsonObject) => {
            config.insert("responseMimeType".into(), "application/json".into());
        }
        Some(ResponseFormat::JsonSchema { schema, .. }) => {
            config.insert("responseMimeType".into(), "application/json".into());
            config.insert("responseSchema".into(), schema::to_gemini(schema));
        }
    }
    if let Some(Value::Object(extra)) = extra {
        for (key, value) in extra {
            config.entry(key.clone()).or_insert_with(|| value.clone());
        }
    }
    config
}

#[cfg(test)]
mod tests;

//! Canonical → upstream: a Chat Completions request for OpenAI, xAI, Ollama, vLLM.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use crate::encoded::EncodedBody;
use crate::model::{
    ChatRequest, Effort, Image, Message, NameMap, Part, RawJson, ReasoningConfig, ResponseFormat,
    Role, ToolChoice, ToolResult, ToolResultContent,
};

mod write;

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
///
/// The same body as [`encode_body`], as a value (for callers that edit it deeply, and tests).
pub fn encode_request(request: &ChatRequest) -> Value {
    encode_body(request).to_value()
}

/// [`encode_request`]'s body written straight to JSON text, field by field: no `Value` tree,
/// tool schemas serialised from the request in place.
pub fn encode_body(request: &ChatRequest) -> EncodedBody {
    let names = NameMap::new(&request.tools);
    let mut body = EncodedBody::with_capacity(estimate(request));
    body.push("model", &request.model);
    let messages = messages(request, &names);
    body.push_with("messages", |out| {
        write::array(out, &messages, write::message)
    });

    // OpenAI refuses `tool_choice` and `parallel_tool_calls` without tools.
    if !request.tools.is_empty() {
        let tools: Vec<ToolOut<'_>> = request
            .tools
            .iter()
            .map(|tool| ToolOut {
                kind: "function",
                function: FunctionOut {
                    name: names.wire_ref(&tool.name),
                    description: tool.description.as_deref(),
                    parameters: &tool.parameters,
                    strict: tool.strict,
                },
            })
            .collect();
        body.push_with("tools", |out| write::array(out, &tools, write::tool));
        if let Some(choice) = &request.tool_choice {
            match choice {
                ToolChoice::Auto => body.push("tool_choice", "auto"),
                ToolChoice::Required => body.push("tool_choice", "required"),
                ToolChoice::None => body.push("tool_choice", "none"),
                ToolChoice::Named(name) => body.push(
                    "tool_choice",
                    &NamedChoice {
                        kind: "function",
                        function: NameOnly {
                            name: names.wire_ref(name),
                        },
                    },
                ),
            }
        }
        if let Some(parallel) = request.params.parallel_tool_calls {
            body.push("parallel_tool_calls", &parallel);
        }
    }

    let params = &request.params;
    if let Some(max) = params.max_output_tokens {
        body.push("max_completion_tokens", &max);
    }
    if let Some(temperature) = params.temperature {
        body.push("temperature", &finite(temperature));
    }
    if let Some(top_p) = params.top_p {
        body.push("top_p", &finite(top_p));
    }
    if !params.stop.is_empty() {
        body.push("stop", &params.stop);
    }
    if let Some(reasoning) = params.reasoning {
        let effort = match reasoning {
            ReasoningConfig::Effort(effort) => effort,
            ReasoningConfig::Budget(budget) => Effort::from_budget(i64::from(budget)),
            ReasoningConfig::Disabled => Effort::None,
        };
        body.push("reasoning_effort", effort.as_str());
    }
    if let Some(format) = &params.response_format {
        body.push("response_format", &FormatOut(format));
    }

    body.push("stream", &request.stream);
    if request.stream {
        // Always ask for the usage chunk (pitfall 8), keeping the client's other options.
        let mut options = match request.extra.get("stream_options") {
            Some(Value::Object(options)) => options.clone(),
            _ => serde_json::Map::new(),
        };
        options.insert("include_usage".into(), Value::Bool(true));
        body.push("stream_options", &options);
    }
    for (key, value) in &request.extra {
        // Without streaming, OpenAI refuses `stream_options`.
        if key != "stream_options"
            && !NEVER_FORWARDED.contains(&key.as_str())
            && !body.contains(key)
        {
            body.push(key.clone(), value);
        }
    }
    body
}

/// About the size of the encoded body, so its buffer is allocated once.
fn estimate(request: &ChatRequest) -> usize {
    let text: usize = request
        .messages
        .iter()
        .flat_map(|message| &message.parts)
        .map(|part| match part {
            Part::Text { text } | Part::System { text } => text.len(),
            Part::ToolCall(call) => call.arguments.len() + 64,
            Part::ToolResult(result) => result
                .content
                .iter()
                .map(|content| match content {
                    ToolResultContent::Text { text } => text.len(),
                    ToolResultContent::Image(_) => 64,
                })
                .sum(),
            Part::Image(_) | Part::Reasoning(_) => 64,
        })
        .sum();
    let system: usize = request.system.iter().map(String::len).sum();
    1024 + text + text / 8 + system + request.tools.len() * 1024
}

/// `json!` writes a non-finite float as `null`; so does this.
fn finite(number: f64) -> Option<f64> {
    number.is_finite().then_some(number)
}

#[derive(Serialize)]
struct ToolOut<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: FunctionOut<'a>,
}

#[derive(Serialize)]
struct FunctionOut<'a> {
    name: Cow<'a, str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    parameters: &'a RawJson,
    #[serde(skip_serializing_if = "Option::is_none")]
    strict: Option<bool>,
}

#[derive(Serialize)]
struct NamedChoice<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: NameOnly<'a>,
}

#[derive(Serialize)]
struct NameOnly<'a> {
    name: Cow<'a, str>,
}

/// `response_format`.
struct FormatOut<'a>(&'a ResponseFormat);

impl Serialize for FormatOut<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        match self.0 {
            ResponseFormat::Text => map.serialize_entry("type", "text")?,
            ResponseFormat::JsonObject => map.serialize_entry("type", "json_object")?,
            ResponseFormat::JsonSchema {
                name,
                schema,
                strict,
            } => {
                map.serialize_entry("type", "json_schema")?;
                map.serialize_entry(
                    "json_schema",
                    &JsonSchemaOut {
                        name,
                        schema,
                        strict: *strict,
                    },
                )?;
            }
        }
        map.end()
    }
}

#[derive(Serialize)]
struct JsonSchemaOut<'a> {
    name: &'a str,
    schema: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    strict: Option<bool>,
}

/// One Chat message, borrowing from the request: `role`, then whichever of the others it has.
#[derive(Serialize)]
struct MessageOut<'a> {
    role: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
    content: Content<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_content: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<CallOut<'a>>,
}

impl<'a> MessageOut<'a> {
    fn new(role: &'static str, content: Content<'a>) -> Self {
        Self {
            role,
            tool_call_id: None,
            content,
            reasoning_content: None,
            tool_calls: Vec::new(),
        }
    }

    fn tool(id: &'a str, content: Cow<'a, str>) -> Self {
        Self {
            tool_call_id: Some(id),
            ..Self::new("tool", Content::Text(content))
        }
    }
}

#[derive(Serialize)]
#[serde(untagged)]
enum Content<'a> {
    Null,
    Text(Cow<'a, str>),
    Parts(Vec<UserPart<'a>>),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum UserPart<'a> {
    Text { text: &'a str },
    ImageUrl { image_url: ImageUrl<'a> },
}

#[derive(Serialize)]
struct ImageUrl<'a> {
    url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<&'a str>,
}

#[derive(Serialize)]
struct CallOut<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: CallFunction<'a>,
}

#[derive(Serialize)]
struct CallFunction<'a> {
    name: Cow<'a, str>,
    arguments: &'a str,
}

/// The `messages` array: system first, then the conversation.
fn messages<'a>(request: &'a ChatRequest, names: &'a NameMap) -> Vec<MessageOut<'a>> {
    let mut out = Vec::with_capacity(request.messages.len() + 4);
    if !request.system.is_empty() {
        let system = match request.system.as_slice() {
            [one] => Cow::Borrowed(one.as_str()),
            all => Cow::Owned(all.join("\n\n")),
        };
        out.push(MessageOut::new("system", Content::Text(system)));
    }
    // The ids of the previous assistant message's calls, in order, while they await results.
    let mut calls: Vec<&'a str> = Vec::new();
    // System turns that came between calls and their results: Chat wants the `tool` messages
    // right after the calls, so these follow the results.
    let mut deferred: Vec<&'a str> = Vec::new();
    let flush = |out: &mut Vec<MessageOut<'a>>, deferred: &mut Vec<&'a str>| {
        for text in deferred.drain(..) {
            out.push(MessageOut::new(
                "system",
                Content::Text(Cow::Borrowed(text)),
            ));
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
                calls = message
                    .parts
                    .iter()
                    .filter_map(|part| match part {
                        Part::ToolCall(call) => Some(call.id.as_str()),
                        _ => None,
                    })
                    .collect();
            }
        }
    }
    answer_calls(&mut out, &mut calls, &[]);
    flush(&mut out, &mut deferred);
    out
}

/// One `tool` message per call in `calls`, in call order, from `results` or a placeholder;
/// then results answering no pending call, in their order. Clears `calls`.
fn answer_calls<'a>(
    out: &mut Vec<MessageOut<'a>>,
    calls: &mut Vec<&'a str>,
    results: &[&'a ToolResult],
) {
    for id in calls.iter() {
        match results.iter().find(|result| result.call_id == *id) {
            Some(result) => out.push(tool_message(result)),
            None => out.push(MessageOut::tool(id, Cow::Borrowed(UNANSWERED))),
        }
    }
    for result in results {
        if !calls.contains(&result.call_id.as_str()) {
            out.push(tool_message(result));
        }
    }
    calls.clear();
}

fn tool_message(result: &ToolResult) -> MessageOut<'_> {
    let only_images = !result.content.is_empty()
        && result
            .content
            .iter()
            .all(|content| matches!(content, ToolResultContent::Image(_)));
    let text = if only_images {
        Cow::Borrowed(IMAGE_MOVED)
    } else {
        match result.content.as_slice() {
            // One text, the usual result: no joined copy.
            [ToolResultContent::Text { text }] => Cow::Borrowed(text.as_str()),
            _ => Cow::Owned(result.text()),
        }
    };
    MessageOut::tool(&result.call_id, text)
}

/// A user message: its tool results as `tool` messages, then one `user` message with the
/// results' images followed by the message's own text and images.
fn user<'a>(message: &'a Message, calls: &mut Vec<&'a str>, out: &mut Vec<MessageOut<'a>>) {
    let results: Vec<&ToolResult> = message
        .parts
        .iter()
        .filter_map(|part| match part {
            Part::ToolResult(result) => Some(result),
            _ => None,
        })
        .collect();
    answer_calls(out, calls, &results);

    let mut content: Vec<UserPart<'a>> = Vec::new();
    for result in &results {
        for item in &result.content {
            if let ToolResultContent::Image(image) = item {
                content.push(image_part(image));
            }
        }
    }
    for part in &message.parts {
        match part {
            Part::Text { text } => content.push(UserPart::Text { text }),
            Part::Image(image) => content.push(image_part(image)),
            // A system turn keeps its place: the user content before it goes out first.
            Part::System { text } => {
                push_user(out, std::mem::take(&mut content));
                out.push(MessageOut::new(
                    "system",
                    Content::Text(Cow::Borrowed(text)),
                ));
            }
            Part::ToolResult(_) | Part::ToolCall(_) | Part::Reasoning(_) => {}
        }
    }
    push_user(out, content);
}

/// A `user` message with `content` (a plain string for one text part), unless it is empty.
fn push_user<'a>(out: &mut Vec<MessageOut<'a>>, mut content: Vec<UserPart<'a>>) {
    match content.as_slice() {
        [] => {}
        [UserPart::Text { text }] => {
            out.push(MessageOut::new("user", Content::Text(Cow::Borrowed(text))));
        }
        _ => {
            content.shrink_to_fit();
            out.push(MessageOut::new("user", Content::Parts(content)));
        }
    }
}

fn image_part(image: &Image) -> UserPart<'_> {
    UserPart::ImageUrl {
        image_url: ImageUrl {
            url: image.source.to_url(),
            detail: image.detail.as_deref(),
        },
    }
}

/// An assistant message: text as one string (`null` beside tool calls when there is none),
/// reasoning text as `reasoning_content`, calls as `tool_calls`.
fn assistant<'a>(message: &'a Message, names: &'a NameMap) -> MessageOut<'a> {
    let mut texts: Vec<&str> = Vec::new();
    let mut reasoning: Vec<&str> = Vec::new();
    let mut calls = Vec::new();
    for part in &message.parts {
        match part {
            Part::Text { text } => texts.push(text),
            Part::Reasoning(item) if !item.text.is_empty() => reasoning.push(&item.text),
            Part::ToolCall(call) => {
                let arguments = if call.arguments.trim().is_empty() {
                    "{}"
                } else {
                    call.arguments.as_str()
                };
                calls.push(CallOut {
                    id: &call.id,
                    kind: "function",
                    function: CallFunction {
                        name: names.wire_ref(&call.name),
                        arguments,
                    },
                });
            }
            Part::Reasoning(_) | Part::Image(_) | Part::ToolResult(_) | Part::System { .. } => {}
        }
    }
    let content = if texts.is_empty() && !calls.is_empty() {
        Content::Null
    } else {
        match texts.as_slice() {
            [one] => Content::Text(Cow::Borrowed(one)),
            _ => Content::Text(Cow::Owned(texts.join("\n\n"))),
        }
    };
    MessageOut {
        reasoning_content: (!reasoning.is_empty()).then(|| reasoning.join("\n\n")),
        tool_calls: calls,
        ..MessageOut::new("assistant", content)
    }
}

//! The small top-level fields of the fast path, read from their raw text as
//! [`super::super::Decoded::finish`] reads them from a map of values: no `Value` and no
//! hashing for `model`, `max_tokens`, `temperature`, `stream`…; the rare structured ones
//! (`tool_choice`, `thinking`, `output_config`) and the fields kept in `extra` are parsed into
//! values, one each. Anything the map reading would refuse answers `None`, so the tree decoder
//! words the error.

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::borrowed::Text;
use crate::model::{ChatRequest, Message, Params, ReasoningConfig, Tool};

use super::super::{decode_thinking, decode_tool_choice, saturate, take_effort, take_format};

/// The request from its parts and the other top-level fields, or `None` to fall back.
pub(super) fn finish(
    rest: Vec<(Text<'_>, &RawValue)>,
    system: Vec<String>,
    messages: Vec<Message>,
    tools: Vec<Tool>,
    server_tools: Vec<Value>,
) -> Option<ChatRequest> {
    // A repeated key: the map keeps the last one; the tree decoder reads it so.
    for (at, (key, _)) in rest.iter().enumerate() {
        if rest[at + 1..].iter().any(|(later, _)| later == key) {
            return None;
        }
    }
    let mut fields = Fields::default();
    let mut others = Vec::new();
    for (key, raw) in rest {
        let raw = Some(raw).filter(|raw| raw.get() != "null");
        match key.as_str() {
            "model" => fields.model = raw,
            "tool_choice" => fields.tool_choice = raw,
            "output_config" => fields.output_config = raw,
            "thinking" => fields.thinking = raw,
            "max_tokens" => fields.max_tokens = raw,
            "temperature" => fields.temperature = raw,
            "top_p" => fields.top_p = raw,
            "stop_sequences" => fields.stop = raw,
            "stream" => fields.stream = raw,
            // `null` included: the map keeps it in `extra`.
            _ => others.push((key, raw.unwrap_or(RawValue::NULL))),
        }
    }

    let model = read::<Text<'_>>(fields.model?)?.into_string();
    let mut extra = Map::new();
    if !server_tools.is_empty() {
        extra.insert("tools".to_owned(), Value::Array(server_tools));
    }
    let (tool_choice, parallel_tool_calls) = match fields.tool_choice {
        None => (None, None),
        Some(raw) => decode_tool_choice(&read::<Value>(raw)?).ok()?,
    };
    let mut output_config = match fields.output_config {
        None => Map::new(),
        Some(raw) => match read::<Value>(raw)? {
            Value::Object(config) => config,
            _ => return None,
        },
    };
    let effort = take_effort(&mut output_config);
    let response_format = take_format(&mut output_config);
    if !output_config.is_empty() {
        extra.insert("output_config".to_owned(), Value::Object(output_config));
    }
    let reasoning = match fields.thinking {
        None => effort.map(ReasoningConfig::Effort),
        Some(raw) => decode_thinking(&read::<Value>(raw)?, effort).ok()?,
    };
    let params = Params {
        max_output_tokens: optional::<u64>(fields.max_tokens)?.map(saturate),
        temperature: optional::<f64>(fields.temperature)?,
        top_p: optional::<f64>(fields.top_p)?,
        stop: optional::<Vec<String>>(fields.stop)?.unwrap_or_default(),
        reasoning,
        parallel_tool_calls,
        response_format,
    };
    let stream = optional::<bool>(fields.stream)?.unwrap_or(false);
    for (key, raw) in others {
        extra.insert(key.into_string(), read::<Value>(raw)?);
    }
    Some(ChatRequest {
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

/// The fields [`finish`] reads, each unless absent or `null`.
#[derive(Default)]
struct Fields<'a> {
    model: Option<&'a RawValue>,
    tool_choice: Option<&'a RawValue>,
    output_config: Option<&'a RawValue>,
    thinking: Option<&'a RawValue>,
    max_tokens: Option<&'a RawValue>,
    temperature: Option<&'a RawValue>,
    top_p: Option<&'a RawValue>,
    stop: Option<&'a RawValue>,
    stream: Option<&'a RawValue>,
}

fn read<'a, T: serde::Deserialize<'a>>(raw: &'a RawValue) -> Option<T> {
    serde_json::from_str(raw.get()).ok()
}

/// `Some(None)` when absent, `Some(Some(value))` when it reads as `T`, `None` otherwise.
fn optional<'a, T: serde::Deserialize<'a>>(raw: Option<&'a RawValue>) -> Option<Option<T>> {
    match raw {
        None => Some(None),
        Some(raw) => read(raw).map(Some),
    }
}

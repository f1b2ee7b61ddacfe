//! A whole `response` object written straight to bytes: the same text as serialising
//! [`super::encode_response`]'s value, without building the value (a map per item, a hash per
//! key) first.

use serde::Serialize;
use serde_json::Value;

use super::super::{
    function_call_item_id, item_id, opaque_reasoning, response_id, split_namespace, status_for,
};
use crate::model::{ChatResponse, Part, Usage};

/// corvid → client: [`super::encode_response`]'s body as JSON bytes.
pub fn encode_response_body(response: &ChatResponse, model: &str) -> Vec<u8> {
    let id = response_id(&response.id);
    let mut output: Vec<Item<'_>> = Vec::new();
    let mut texts: Vec<&str> = Vec::new();
    for part in &response.parts {
        match part {
            Part::Text { text } if !text.is_empty() => texts.push(text),
            Part::Reasoning(reasoning) => {
                let opaque = opaque_reasoning(
                    reasoning.encrypted.as_deref(),
                    reasoning.id.is_some(),
                    reasoning.signature.as_deref(),
                );
                if reasoning.text.is_empty() && opaque.is_none() {
                    continue;
                }
                flush(&mut output, &mut texts, &id);
                let summary = if reasoning.text.is_empty() {
                    Vec::new()
                } else {
                    vec![Summary {
                        kind: "summary_text",
                        text: &reasoning.text,
                    }]
                };
                output.push(Item::Reasoning {
                    id: reasoning
                        .id
                        .clone()
                        .unwrap_or_else(|| item_id("rs", &id, output.len())),
                    summary,
                    encrypted_content: opaque,
                });
            }
            Part::ToolCall(call) => {
                flush(&mut output, &mut texts, &id);
                let (namespace, name) = split_namespace(&call.name);
                output.push(Item::FunctionCall {
                    id: function_call_item_id(&call.id),
                    call_id: &call.id,
                    name,
                    arguments: &call.arguments,
                    status: "completed",
                    namespace,
                });
            }
            _ => {}
        }
    }
    flush(&mut output, &mut texts, &id);
    let envelope = Envelope::new(
        &id,
        model,
        response.created,
        status_for(response.finish),
        output,
        Some(UsageOut::new(&response.usage)),
    );
    let mut out = Vec::with_capacity(768);
    // Serialising borrowed strings, integers and small values into a `Vec` cannot fail.
    let _ = serde_json::to_writer(&mut out, &envelope);
    out
}

/// The texts so far as one `message` item, as `message_item` writes it.
fn flush<'a>(output: &mut Vec<Item<'a>>, texts: &mut Vec<&'a str>, id: &str) {
    if texts.is_empty() {
        return;
    }
    output.push(Item::Message {
        id: item_id("msg", id, output.len()),
        status: "completed",
        role: "assistant",
        content: texts
            .drain(..)
            .map(|text| OutputText {
                kind: "output_text",
                text,
                annotations: [],
                logprobs: [],
            })
            .collect(),
    });
}

/// As `envelope`: every field the SDKs require, in its order. `O` is the output items (typed
/// here, the stream encoder's finished items as values); `usage` is `null` while streaming.
#[derive(Serialize)]
pub(in crate::openai_responses) struct Envelope<'a, O> {
    pub(in crate::openai_responses) id: &'a str,
    pub(in crate::openai_responses) object: &'static str,
    pub(in crate::openai_responses) created_at: i64,
    pub(in crate::openai_responses) status: &'static str,
    pub(in crate::openai_responses) error: Option<()>,
    pub(in crate::openai_responses) incomplete_details: Value,
    pub(in crate::openai_responses) instructions: Option<()>,
    pub(in crate::openai_responses) metadata: Empty,
    pub(in crate::openai_responses) model: &'a str,
    pub(in crate::openai_responses) output: O,
    pub(in crate::openai_responses) parallel_tool_calls: bool,
    pub(in crate::openai_responses) tool_choice: &'static str,
    pub(in crate::openai_responses) tools: [(); 0],
    pub(in crate::openai_responses) usage: Option<UsageOut>,
}

impl<'a, O> Envelope<'a, O> {
    /// A response `status` with these `output` items and `usage`.
    pub(in crate::openai_responses) fn new(
        id: &'a str,
        model: &'a str,
        created_at: i64,
        (status, incomplete_details): (&'static str, Value),
        output: O,
        usage: Option<UsageOut>,
    ) -> Self {
        Self {
            id,
            object: "response",
            created_at,
            status,
            error: None,
            incomplete_details,
            instructions: None,
            metadata: Empty {},
            model,
            output,
            parallel_tool_calls: true,
            tool_choice: "auto",
            tools: [],
            usage,
        }
    }
}

/// `{}`.
#[derive(Serialize)]
pub(in crate::openai_responses) struct Empty {}

/// The output items, as `message_item`, `reasoning_item` and `function_call_item` write them.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Item<'a> {
    Message {
        id: String,
        status: &'static str,
        role: &'static str,
        content: Vec<OutputText<'a>>,
    },
    Reasoning {
        id: String,
        summary: Vec<Summary<'a>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        encrypted_content: Option<String>,
    },
    FunctionCall {
        id: String,
        call_id: &'a str,
        name: &'a str,
        arguments: &'a str,
        status: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        namespace: Option<&'a str>,
    },
}

#[derive(Serialize)]
struct OutputText<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
    annotations: [(); 0],
    logprobs: [(); 0],
}

#[derive(Serialize)]
struct Summary<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
}

/// As `usage_to_wire`.
#[derive(Serialize)]
pub(in crate::openai_responses) struct UsageOut {
    input_tokens: u64,
    input_tokens_details: InputDetails,
    output_tokens: u64,
    output_tokens_details: OutputDetails,
    total_tokens: u64,
}

#[derive(Serialize)]
struct InputDetails {
    cached_tokens: u64,
    cache_write_tokens: u64,
}

#[derive(Serialize)]
struct OutputDetails {
    reasoning_tokens: u64,
}

impl UsageOut {
    pub(in crate::openai_responses) fn new(usage: &Usage) -> Self {
        Self {
            input_tokens: usage.total_input(),
            input_tokens_details: InputDetails {
                cached_tokens: usage.cache_read,
                cache_write_tokens: usage.cache_write,
            },
            output_tokens: usage.output,
            output_tokens_details: OutputDetails {
                reasoning_tokens: usage.reasoning,
            },
            total_tokens: usage.total(),
        }
    }
}

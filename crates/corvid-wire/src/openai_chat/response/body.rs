//! A whole `chat.completion` written straight to bytes: the same text as serialising
//! [`super::encode_response`]'s value, without building the value first.

use serde::Serialize;

use crate::model::ChatResponse;

use super::super::finish_to_wire;
use super::{Gathered, WireUsage};

/// corvid → client: [`super::encode_response`]'s body as JSON bytes.
pub fn encode_response_body(response: &ChatResponse, model: &str) -> Vec<u8> {
    let Gathered {
        text,
        reasoning,
        calls,
    } = Gathered::of(response);
    let calls: Vec<CallOut<'_>> = calls
        .into_iter()
        .map(|call| CallOut {
            id: &call.id,
            kind: "function",
            function: FunctionOut {
                name: &call.name,
                arguments: &call.arguments,
            },
        })
        .collect();
    let made_calls = !calls.is_empty();
    let capacity = 256 + text.len() + reasoning.len() + calls.len() * 64;
    let completion = CompletionOut {
        id: &response.id,
        object: "chat.completion",
        created: response.created,
        model,
        choices: [ChoiceOut {
            index: 0,
            message: MessageOut {
                role: "assistant",
                // `null` when the reply is only tool calls.
                content: (!text.is_empty() || !made_calls).then_some(text.as_str()),
                refusal: None,
                reasoning_content: (!reasoning.is_empty()).then_some(reasoning.as_str()),
                tool_calls: calls,
            },
            logprobs: None,
            finish_reason: finish_to_wire(response.finish, made_calls),
        }],
        usage: WireUsage::new(&response.usage),
    };
    let mut out = Vec::with_capacity(capacity);
    // Serialising borrowed strings and integers into a `Vec` cannot fail.
    let _ = serde_json::to_writer(&mut out, &completion);
    out
}

#[derive(Serialize)]
struct CompletionOut<'a> {
    id: &'a str,
    object: &'static str,
    created: i64,
    model: &'a str,
    choices: [ChoiceOut<'a>; 1],
    usage: WireUsage,
}

#[derive(Serialize)]
struct ChoiceOut<'a> {
    index: u32,
    message: MessageOut<'a>,
    logprobs: Option<()>,
    finish_reason: &'static str,
}

#[derive(Serialize)]
struct MessageOut<'a> {
    role: &'static str,
    content: Option<&'a str>,
    refusal: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_content: Option<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<CallOut<'a>>,
}

#[derive(Serialize)]
struct CallOut<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: FunctionOut<'a>,
}

#[derive(Serialize)]
struct FunctionOut<'a> {
    name: &'a str,
    arguments: &'a str,
}

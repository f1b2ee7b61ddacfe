//! A whole Anthropic `message` written straight to bytes: the same text as serialising
//! [`super::encode_response`]'s value, without building the value first.

use serde::Serialize;
use serde_json::Value;

use crate::model::{ChatResponse, Part, Reasoning, Usage, anthropic_safe_id};

use super::super::{finish_to_wire, tool_input};
use super::FALLBACK_ID;

/// corvid → client: [`super::encode_response`]'s body as JSON bytes.
pub fn encode_response_body(response: &ChatResponse, model: &str) -> Vec<u8> {
    let content: Vec<Block<'_>> = response.parts.iter().filter_map(block).collect();
    let message = MessageOut {
        id: if response.id.is_empty() {
            FALLBACK_ID
        } else {
            &response.id
        },
        kind: "message",
        role: "assistant",
        model,
        content,
        stop_reason: finish_to_wire(response.finish),
        stop_sequence: None,
        usage: UsageOut::new(&response.usage),
    };
    let mut out = Vec::with_capacity(256 + text_len(response));
    // Serialising borrowed strings and integers into a `Vec` cannot fail.
    let _ = serde_json::to_writer(&mut out, &message);
    out
}

fn text_len(response: &ChatResponse) -> usize {
    response
        .parts
        .iter()
        .map(|part| match part {
            Part::Text { text } => text.len() + 32,
            Part::Reasoning(reasoning) => reasoning.text.len() + 64,
            Part::ToolCall(call) => call.arguments.len() + call.id.len() + call.name.len() + 64,
            _ => 0,
        })
        .sum()
}

#[derive(Serialize)]
struct MessageOut<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    role: &'static str,
    model: &'a str,
    content: Vec<Block<'a>>,
    stop_reason: &'static str,
    stop_sequence: Option<&'a str>,
    usage: UsageOut,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block<'a> {
    Text {
        text: &'a str,
    },
    Thinking {
        thinking: &'a str,
        signature: &'a str,
    },
    RedactedThinking {
        data: &'a str,
    },
    ToolUse {
        id: String,
        name: &'a str,
        input: Value,
    },
}

/// The block a part becomes, as [`super::encode_response`] writes it.
fn block(part: &Part) -> Option<Block<'_>> {
    match part {
        Part::Text { text } if text.is_empty() => None,
        Part::Text { text } => Some(Block::Text { text }),
        Part::Reasoning(reasoning) => thinking_block(reasoning),
        Part::ToolCall(call) => Some(Block::ToolUse {
            id: anthropic_safe_id(&call.id),
            name: &call.name,
            input: tool_input(&call.arguments),
        }),
        Part::Image(_) | Part::ToolResult(_) | Part::System { .. } => None,
    }
}

/// As `client_thinking_block`: signed thinking, redacted thinking, a minted signature, or
/// synthetic thinking with an empty signature.
fn thinking_block(reasoning: &Reasoning) -> Option<Block<'_>> {
    let thinking = reasoning.text.as_str();
    match (&reasoning.signature, &reasoning.encrypted, &reasoning.id) {
        (Some(signature), _, _) if !signature.is_empty() => Some(Block::Thinking {
            thinking,
            signature,
        }),
        (_, Some(data), None) if !data.is_empty() && thinking.is_empty() => {
            Some(Block::RedactedThinking { data })
        }
        (_, Some(data), Some(_)) if crate::minted::is_minted(data) => Some(Block::Thinking {
            thinking,
            signature: data,
        }),
        _ if thinking.is_empty() => None,
        _ => Some(Block::Thinking {
            thinking,
            signature: "",
        }),
    }
}

/// As `usage_to_wire`: both cache fields always, the thinking share when there is one.
#[derive(Serialize)]
struct UsageOut {
    input_tokens: u64,
    cache_creation_input_tokens: u64,
    cache_read_input_tokens: u64,
    output_tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    output_tokens_details: Option<ThinkingOut>,
}

#[derive(Serialize)]
struct ThinkingOut {
    thinking_tokens: u64,
}

impl UsageOut {
    fn new(usage: &Usage) -> Self {
        Self {
            input_tokens: usage.input,
            cache_creation_input_tokens: usage.cache_write,
            cache_read_input_tokens: usage.cache_read,
            output_tokens: usage.output,
            output_tokens_details: (usage.reasoning > 0).then_some(ThinkingOut {
                thinking_tokens: usage.reasoning,
            }),
        }
    }
}

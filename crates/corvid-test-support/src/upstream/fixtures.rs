//! Ready-made reply bodies and streams in each wire shape: OpenAI chat, Responses, Anthropic,
//! Gemini.

use std::time::Duration;

use bytes::Bytes;
use serde_json::{Value, json};

use super::reply::{Reply, StreamEnd};

/// A non-streamed chat completion.
pub fn chat_json(model: &str, text: &str) -> Value {
    json!({
        "id": "chatcmpl-mock",
        "object": "chat.completion",
        "created": 1_750_000_000,
        "model": model,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": text},
            "finish_reason": "stop"
        }],
        "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}
    })
}

/// A streamed chat completion in xAI's shape: role, text pieces, finish, usage with
/// `choices: []`, `[DONE]`.
pub fn chat_stream(model: &str, pieces: &[&str]) -> Reply {
    let chunk = |delta: Value, finish: Value| {
        json!({
            "id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 1_750_000_000,
            "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]
        })
        .to_string()
    };
    let mut events = vec![chunk(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    )];
    events.extend(
        pieces
            .iter()
            .map(|piece| chunk(json!({"content": piece}), Value::Null)),
    );
    events.push(chunk(json!({}), json!("stop")));
    events.push(
        json!({
            "id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 1_750_000_000,
            "model": model, "choices": [],
            "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}
        })
        .to_string(),
    );
    events.push("[DONE]".to_owned());
    let refs: Vec<&str> = events.iter().map(String::as_str).collect();
    Reply::sse(&refs, Duration::ZERO)
}

/// A non-streamed Responses API reply.
pub fn responses_json(model: &str, text: &str) -> Value {
    json!({
        "id": "resp_mock",
        "object": "response",
        "created_at": 1_750_000_000,
        "status": "completed",
        "model": model,
        "output": [{
            "type": "message", "id": "msg_mock", "status": "completed", "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}]
        }],
        "usage": {"input_tokens": 20, "output_tokens": 4, "total_tokens": 24}
    })
}

/// A streamed Responses API reply (created, one text delta, completed).
pub fn responses_stream(model: &str, text: &str) -> Reply {
    let done = responses_json(model, text);
    let events = [
        json!({"type": "response.created", "sequence_number": 0,
               "response": {"id": "resp_mock", "object": "response", "created_at": 1_750_000_000,
                             "status": "in_progress", "model": model, "output": []}}),
        json!({"type": "response.output_text.delta", "sequence_number": 1, "item_id": "msg_mock",
               "output_index": 0, "content_index": 0, "delta": text}),
        json!({"type": "response.completed", "sequence_number": 2, "response": done}),
    ];
    let chunks = events
        .iter()
        .map(|event| {
            let kind = event["type"].as_str().unwrap_or_default();
            (
                Duration::ZERO,
                Bytes::from(format!("event: {kind}\ndata: {event}\n\n")),
            )
        })
        .collect();
    Reply::Stream {
        chunks,
        end: StreamEnd::Finish,
    }
}

/// A non-streamed Anthropic message.
pub fn anthropic_json(model: &str, text: &str) -> Value {
    json!({
        "id": "msg_mock", "type": "message", "role": "assistant", "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn", "stop_sequence": null,
        "usage": {"input_tokens": 12, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0, "output_tokens": 5}
    })
}

/// A streamed Anthropic message: message_start, one text block, message_delta, message_stop.
pub fn anthropic_stream(model: &str, pieces: &[&str]) -> Reply {
    let mut events = vec![json!({"type": "message_start", "message": {
        "id": "msg_mock", "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": 12, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0, "output_tokens": 1}}})];
    events.push(json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}));
    for piece in pieces {
        events.push(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}}));
    }
    events.push(json!({"type": "content_block_stop", "index": 0}));
    events.push(json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 5}}));
    events.push(json!({"type": "message_stop"}));
    anthropic_events(&events)
}

/// Anthropic SSE framing (`event:` equal to the data's type) for these events.
pub fn anthropic_events(events: &[Value]) -> Reply {
    let chunks = events
        .iter()
        .map(|event| {
            let kind = event["type"].as_str().unwrap_or_default();
            (
                Duration::ZERO,
                Bytes::from(format!("event: {kind}\ndata: {event}\n\n")),
            )
        })
        .collect();
    Reply::Stream {
        chunks,
        end: StreamEnd::Finish,
    }
}

/// A non-streamed Gemini reply.
pub fn gemini_json(model: &str, text: &str) -> Value {
    json!({
        "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 5, "totalTokenCount": 17},
        "modelVersion": model
    })
}

/// A streamed Gemini reply (`alt=sse`): one chunk per piece, the last with the finish and usage.
pub fn gemini_stream(model: &str, pieces: &[&str]) -> Reply {
    let last = pieces.len().saturating_sub(1);
    let chunks = pieces
        .iter()
        .enumerate()
        .map(|(index, piece)| {
            let mut chunk = json!({
                "candidates": [{"content": {"role": "model", "parts": [{"text": piece}]}, "index": 0}],
                "modelVersion": model
            });
            if index == last {
                chunk["candidates"][0]["finishReason"] = json!("STOP");
                chunk["usageMetadata"] = json!({"promptTokenCount": 12, "candidatesTokenCount": 5, "totalTokenCount": 17});
            }
            (Duration::ZERO, Bytes::from(format!("data: {chunk}\n\n")))
        })
        .collect();
    Reply::Stream {
        chunks,
        end: StreamEnd::Finish,
    }
}

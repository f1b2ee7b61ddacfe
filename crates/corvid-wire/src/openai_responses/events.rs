//! The shapes of the Responses stream events the stream encoder writes (`sequence_number` is
//! added when an event is written).

use serde_json::{Value, json};

use super::response::output_text;

/// The item an event is about.
#[derive(Debug, Clone, Copy)]
pub(crate) struct At<'a> {
    pub(crate) item_id: &'a str,
    pub(crate) output_index: usize,
}

/// `response.created`, `response.in_progress`, `response.completed`, `response.incomplete`:
/// the value the stream encoder's typed lifecycle events are held to.
#[cfg(test)]
pub(crate) fn lifecycle(kind: &str, response: Value) -> Value {
    json!({ "type": kind, "response": response })
}

/// `response.output_item.added` or `.done` (`stage`).
pub(crate) fn item(stage: &str, output_index: usize, item: Value) -> Value {
    json!({
        "type": format!("response.output_item.{stage}"),
        "output_index": output_index,
        "item": item,
    })
}

/// `response.content_part.added` or `.done` of a message's one `output_text` part.
pub(crate) fn content_part(stage: &str, at: At<'_>, text: &str) -> Value {
    json!({
        "type": format!("response.content_part.{stage}"),
        "item_id": at.item_id,
        "output_index": at.output_index,
        "content_index": 0,
        "part": output_text(text),
    })
}

#[cfg(test)]
pub(crate) fn text_delta(at: At<'_>, delta: &str) -> Value {
    json!({
        "type": "response.output_text.delta",
        "item_id": at.item_id,
        "output_index": at.output_index,
        "content_index": 0,
        "delta": delta,
        "logprobs": [],
    })
}

pub(crate) fn text_done(at: At<'_>, text: &str) -> Value {
    json!({
        "type": "response.output_text.done",
        "item_id": at.item_id,
        "output_index": at.output_index,
        "content_index": 0,
        "text": text,
        "logprobs": [],
    })
}

/// `response.reasoning_summary_part.added` or `.done` of a reasoning item's one summary part.
pub(crate) fn summary_part(stage: &str, at: At<'_>, text: &str) -> Value {
    json!({
        "type": format!("response.reasoning_summary_part.{stage}"),
        "item_id": at.item_id,
        "output_index": at.output_index,
        "summary_index": 0,
        "part": { "type": "summary_text", "text": text },
    })
}

#[cfg(test)]
pub(crate) fn summary_delta(at: At<'_>, delta: &str) -> Value {
    json!({
        "type": "response.reasoning_summary_text.delta",
        "item_id": at.item_id,
        "output_index": at.output_index,
        "summary_index": 0,
        "delta": delta,
    })
}

pub(crate) fn summary_done(at: At<'_>, text: &str) -> Value {
    json!({
        "type": "response.reasoning_summary_text.done",
        "item_id": at.item_id,
        "output_index": at.output_index,
        "summary_index": 0,
        "text": text,
    })
}

#[cfg(test)]
pub(crate) fn arguments_delta(at: At<'_>, delta: &str) -> Value {
    json!({
        "type": "response.function_call_arguments.delta",
        "item_id": at.item_id,
        "output_index": at.output_index,
        "delta": delta,
    })
}

pub(crate) fn arguments_done(at: At<'_>, name: &str, arguments: &str) -> Value {
    json!({
        "type": "response.function_call_arguments.done",
        "item_id": at.item_id,
        "output_index": at.output_index,
        "name": super::split_namespace(name).1,
        "arguments": arguments,
    })
}

/// An in-stream `error` event.
pub(crate) fn error(code: &str, message: &str) -> Value {
    json!({ "type": "error", "code": code, "message": message, "param": null })
}

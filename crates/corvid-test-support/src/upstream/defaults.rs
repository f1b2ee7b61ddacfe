//! The answer to a request nobody scripted, chosen by path (chat, responses, Anthropic, Gemini,
//! models) and by whether the request asked to stream.

use http::StatusCode;
use serde_json::{Value, json};

use super::fixtures::{
    anthropic_json, anthropic_stream, chat_json, chat_stream, gemini_json, gemini_stream,
    responses_json, responses_stream,
};
use super::reply::Reply;

/// A valid reply for a request nobody scripted: chat or responses, streamed or not.
pub(super) fn default_reply(path: &str, body: &[u8]) -> Reply {
    let request: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let model = request["model"].as_str().unwrap_or("mock-model").to_owned();
    let stream = request["stream"].as_bool().unwrap_or(false);
    if path.ends_with("/responses") {
        return if stream {
            responses_stream(&model, "Hello from the mock.")
        } else {
            Reply::ok(responses_json(&model, "Hello from the mock."))
        };
    }
    if path.ends_with("/messages/count_tokens") {
        return Reply::ok(json!({"input_tokens": 42}));
    }
    if path.ends_with("/messages") {
        return if stream {
            anthropic_stream(&model, &["Hello", " from", " the mock."])
        } else {
            Reply::ok(anthropic_json(&model, "Hello from the mock."))
        };
    }
    if let Some((_, method)) = path.rsplit_once(':') {
        let gemini_model = path
            .rsplit_once("/models/")
            .and_then(|(_, rest)| rest.split_once(':'))
            .map(|(model, _)| model.to_owned())
            .unwrap_or_else(|| model.clone());
        if method.starts_with("streamGenerateContent") {
            return gemini_stream(&gemini_model, &["Hello", " from", " the mock."]);
        }
        if method.starts_with("generateContent") {
            return Reply::ok(gemini_json(&gemini_model, "Hello from the mock."));
        }
    }
    if path.ends_with("/models") {
        return Reply::ok(json!({
            "object": "list",
            "data": [
                {"id": "grok-4.6", "object": "model", "created": 0, "owned_by": "mock"},
                {"id": "mock-extra-model", "object": "model", "created": 0, "owned_by": "mock"}
            ]
        }));
    }
    if path.ends_with("/chat/completions") {
        return if stream {
            chat_stream(&model, &["Hello", " from", " the mock."])
        } else {
            Reply::ok(chat_json(&model, "Hello from the mock."))
        };
    }
    Reply::status(
        StatusCode::NOT_FOUND,
        json!({"code": "not_found", "error": format!("no route {path}")}),
    )
}

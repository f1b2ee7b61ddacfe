//! What corvid-cli's integration tests share: the model's streamed replies as an xAI-style chat
//! upstream sends them (for a `MockUpstream` to play), and the `corvid` binary started with
//! none of this machine's environment, pointed at that upstream.
//!
//! A folder with `mod.rs`, not `common.rs`, so that Cargo does not build it as a test of its
//! own; each test file takes it with `mod common;`.

// Each test file is its own crate and uses only part of this module.
#![allow(dead_code)]

use std::path::Path;
use std::time::Duration;

use corvid_test_support::{MockUpstream, Reply};
use serde_json::{Value, json};

pub(crate) mod acp;
pub(crate) mod pane;
pub(crate) mod serving;

pub(crate) const CORVID: &str = env!("CARGO_BIN_EXE_corvid");
/// Where the xAI provider sends its chat completions.
pub(crate) const CHAT: &str = "/v1/chat/completions";

/// One streamed chat-completion chunk from `grok-4.6`.
pub(crate) fn chunk(delta: Value, finish: Value) -> String {
    json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "grok-4.6",
           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    .to_string()
}

/// The chunk that reports a step's tokens: 50 in, 5 out.
pub(crate) fn usage_chunk() -> String {
    json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "grok-4.6", "choices": [],
           "usage": {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55}})
    .to_string()
}

/// A streamed reply of `chunks`, then `[DONE]`, with no usage.
pub(crate) fn reply(chunks: Vec<String>) -> Reply {
    sse(chunks)
}

/// A streamed reply of `chunks`, then the usage chunk and `[DONE]`.
pub(crate) fn reply_with_usage(mut chunks: Vec<String>) -> Reply {
    chunks.push(usage_chunk());
    sse(chunks)
}

fn sse(mut events: Vec<String>) -> Reply {
    events.push("[DONE]".to_owned());
    let refs: Vec<&str> = events.iter().map(String::as_str).collect();
    Reply::sse(&refs, Duration::ZERO)
}

/// The chunks of a step that ends the turn: `delta`, then `stop`.
pub(crate) fn delta_then_stop(delta: Value) -> Vec<String> {
    vec![chunk(delta, Value::Null), chunk(json!({}), json!("stop"))]
}

/// The chunks of a step that calls one tool (`arguments` is its JSON text), then `tool_calls`.
pub(crate) fn tool_call_chunks(id: &str, name: &str, arguments: &str) -> Vec<String> {
    vec![
        chunk(
            json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0, "id": id, "type": "function", "function": {"name": name, "arguments": arguments}}]}),
            Value::Null,
        ),
        chunk(json!({}), json!("tool_calls")),
    ]
}

/// The assistant answers `answer` and the turn ends (with usage).
pub(crate) fn text(answer: &str) -> Reply {
    reply_with_usage(delta_then_stop(
        json!({"role": "assistant", "content": answer}),
    ))
}

/// The assistant calls one tool (with usage).
pub(crate) fn tool_call(id: &str, name: &str, arguments: &str) -> Reply {
    reply_with_usage(tool_call_chunks(id, name, arguments))
}

/// `corvid` with none of this machine's environment but `PATH`, and `home` as `CORVID_HOME`.
pub(crate) fn corvid(home: &Path) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(CORVID);
    command
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("CORVID_HOME", home);
    command
}

/// [`corvid`] with `upstream` as its xAI upstream and `upstream-key` as the xAI key.
pub(crate) fn corvid_with_upstream(
    upstream: &MockUpstream,
    home: &Path,
) -> tokio::process::Command {
    let mut command = corvid(home);
    command
        .env("CORVID_UPSTREAM", upstream.base_url())
        .env("XAI_API_KEY", "upstream-key");
    command
}

/// The events `corvid exec --json` printed, one JSON value a line.
pub(crate) fn json_lines(stdout: Vec<u8>) -> Vec<Value> {
    String::from_utf8(stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// The chat requests `upstream` received, in order, as JSON.
pub(crate) fn chat_requests(upstream: &MockUpstream) -> Vec<Value> {
    upstream
        .requests()
        .iter()
        .filter(|request| request.path == CHAT)
        .map(|request| request.json())
        .collect()
}

/// The names of the tools a chat request offered the model.
pub(crate) fn offered_tools(request: &Value) -> Vec<&str> {
    request["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap())
        .collect()
}

/// The first tool result among a chat request's messages.
pub(crate) fn tool_message(request: &Value) -> &Value {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|message| message["role"] == "tool")
        .unwrap()
}

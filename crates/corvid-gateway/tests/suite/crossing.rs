//! Sessions that cross providers (issue 10.1, 10.2, 10.4): Claude Code's system turns on a
//! non-Claude model, Anthropic-worded refusals, and what corvid minted never reaching a
//! provider that did not make it — on the translation and the pass-through path alike.

use corvid_test_support::Reply;
use corvid_wire::minted::{self, Kind};
use http::StatusCode;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::harness::{Gateway, providers_on_mock};

async fn gateway() -> Gateway {
    Gateway::start_with(|config| providers_on_mock(config, &["anthropic", "gemini", "openai"]))
        .await
}

async fn claude_code(gateway: &Gateway, body: &Value) -> reqwest::Response {
    gateway
        .client
        .post(gateway.url("/v1/messages?beta=true"))
        .header("x-api-key", "sk-ant-client")
        .header("anthropic-version", "2023-06-01")
        .body(body.to_string())
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn claude_code_system_turns_reach_a_grok_model_in_place() {
    let gateway = gateway().await;
    let body = json!({
        "model": "grok-4.6", "max_tokens": 32000,
        "system": [
            {"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.1; cc_entrypoint=cli;"},
            {"type": "text", "text": "You are Claude Code."},
        ],
        "messages": [
            {"role": "user", "content": "hello"},
            {"role": "system", "content": "Mind the plan."},
            {"role": "assistant", "content": [{"type": "text", "text": "Hi."}]},
            {"role": "user", "content": "go on"},
        ],
    });
    let response = claude_code(&gateway, &body).await;
    assert_eq!(response.status(), StatusCode::OK);
    let reply: Value = response.json().await.unwrap();
    assert_eq!(reply["type"], "message");

    let sent = gateway.upstream.requests()[0].json();
    let messages = sent["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|message| message["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "system", "assistant", "user"]);
    assert_eq!(messages[0]["content"], "You are Claude Code.");
    assert_eq!(messages[2]["content"], "Mind the plan.");
    assert!(!sent.to_string().contains("x-anthropic-billing-header"));
}

#[tokio::test]
async fn anthropic_route_refusals_read_as_anthropic_words_them() {
    let gateway = gateway().await;
    let refusal = |body: &'static str| {
        let gateway = &gateway;
        async move {
            let response = gateway
                .client
                .post(gateway.url("/v1/messages"))
                .body(body)
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), StatusCode::BAD_REQUEST);
            let body: Value = response.json().await.unwrap();
            assert_eq!(body["type"], "error");
            assert_eq!(body["error"]["type"], "invalid_request_error");
            body["error"]["message"].as_str().unwrap().to_owned()
        }
    };
    assert_eq!(
        refusal(
            r#"{"model":"grok-4.6","max_tokens":10,"messages":[{"role":"tool","content":"x"}]}"#
        )
        .await,
        r#"messages.0.role: Unexpected role "tool". Allowed roles are "user" or "assistant""#
    );
    assert_eq!(
        refusal(r#"{"model":"grok-4.6","max_tokens":10}"#).await,
        "messages: Field required"
    );
    assert!(
        refusal(r#"{"model":"grok-4.6","#)
            .await
            .starts_with("The request body is not valid JSON: ")
    );
    assert!(gateway.upstream.requests().is_empty());
}

/// A Claude Code session that ran on Grok (thinking with `"signature": ""`) and on another
/// provider (a minted signature) moves to a Claude model: the pass-through drops what
/// Anthropic did not sign, keeps what it did, and leaves every other byte alone.
#[tokio::test]
async fn a_session_moved_to_claude_sends_only_anthropic_signatures() {
    let gateway = gateway().await;
    gateway.upstream.enqueue(
        "/v1/chat/completions",
        Reply::ok(json!({
            "id": "c1", "object": "chat.completion", "created": 1, "model": "grok-4.6",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {
                "role": "assistant", "content": "Hi.", "reasoning_content": "Greet back."}}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
        })),
    );
    let first = json!({
        "model": "grok-4.6", "max_tokens": 1000,
        "messages": [{"role": "user", "content": "hello"}],
    });
    let reply: Value = claude_code(&gateway, &first).await.json().await.unwrap();
    assert_eq!(
        reply["content"][0],
        json!({"type": "thinking", "thinking": "Greet back.", "signature": ""})
    );

    let foreign = minted::mint("openai", Kind::Encrypted, "gAAAAopaque");
    let signed = json!({"type": "thinking", "thinking": "Real.", "signature": "EpcBreal"});
    let next = json!({
        "model": "claude-sonnet-4-5", "max_tokens": 1000,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "messages": [
            {"role": "user", "content": "hello"},
            {"role": "assistant", "content": reply["content"]},
            {"role": "user", "content": "and?"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "Elsewhere.", "signature": foreign},
                {"type": "text", "text": "More."}]},
            {"role": "user", "content": "ok"},
            {"role": "assistant", "content": [signed.clone(), {"type": "text", "text": "Done."}]},
            {"role": "user", "content": "thanks"},
        ],
    });
    let response = claude_code(&gateway, &next).await;
    assert_eq!(response.status(), StatusCode::OK);
    let sent = gateway.upstream.requests()[1].json();
    assert_eq!(
        sent["messages"][1]["content"],
        json!([{"type": "text", "text": "Hi."}])
    );
    assert_eq!(
        sent["messages"][3]["content"],
        json!([{"type": "text", "text": "More."}])
    );
    assert_eq!(sent["messages"][5]["content"][0], signed);
    assert_eq!(sent["thinking"], next["thinking"]);

    // Nothing minted: the body goes as it came, byte for byte.
    let plain = json!({
        "model": "claude-sonnet-4-5", "max_tokens": 1000,
        "messages": [
            {"role": "user", "content": "hello"},
            {"role": "assistant", "content": [signed, {"type": "text", "text": "Done."}]},
            {"role": "user", "content": "thanks"},
        ],
    })
    .to_string();
    gateway
        .client
        .post(gateway.url("/v1/messages"))
        .body(plain.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(gateway.upstream.requests()[2].body, plain.as_bytes());
}

/// A Codex session on a Claude model (Anthropic's signature minted into `encrypted_content`)
/// moves to Grok's Responses (pass-through: the item is dropped) and back to Claude (the
/// signature is restored).
#[tokio::test]
async fn a_codex_session_keeps_anthropic_reasoning_for_anthropic_only() {
    let gateway = gateway().await;
    gateway.upstream.enqueue(
        "/v1/messages",
        Reply::ok(json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [
                {"type": "thinking", "thinking": "Need the file.", "signature": "EpcBsigned"},
                {"type": "tool_use", "id": "toolu_1", "name": "shell", "input": {"cmd": "ls"}}],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 10, "output_tokens": 5},
        })),
    );
    let tools = json!([{"type": "function", "name": "shell", "parameters": {"type": "object"}}]);
    let first = json!({
        "model": "claude-sonnet-4-5", "input": "list files", "tools": tools,
        "reasoning": {"effort": "low"}, "store": false,
    });
    let reply: Value = gateway
        .post("/v1/responses", &first.to_string())
        .await
        .json()
        .await
        .unwrap();
    let reasoning = reply["output"]
        .as_array()
        .unwrap()
        .iter()
        .find(|item| item["type"] == "reasoning")
        .unwrap()
        .clone();
    let opaque = reasoning["encrypted_content"].as_str().unwrap();
    assert!(opaque.starts_with(minted::MARKER), "{opaque}");

    let mut input = vec![json!({"role": "user", "content": "list files"})];
    input.extend(reply["output"].as_array().unwrap().iter().cloned());
    input.push(json!({"type": "function_call_output", "call_id": "toolu_1", "output": "a.rs"}));
    let next = |model: &str| {
        json!({"model": model, "input": input, "tools": tools, "store": false}).to_string()
    };

    let response = gateway.post("/v1/responses", &next("grok-4.6")).await;
    assert_eq!(response.status(), StatusCode::OK);
    let to_grok = &gateway.upstream.requests()[1];
    assert_eq!(to_grok.path, "/v1/responses");
    let to_grok = to_grok.json();
    assert!(
        !to_grok.to_string().contains(minted::MARKER),
        "Grok never sees Anthropic's signature: {to_grok}"
    );
    assert!(
        to_grok["input"]
            .as_array()
            .unwrap()
            .iter()
            .all(|item| item["type"] != "reasoning")
    );

    let response = gateway
        .post("/v1/responses", &next("claude-sonnet-4-5"))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let to_claude = gateway.upstream.requests()[2].json();
    assert_eq!(
        to_claude["messages"][1]["content"][0],
        json!({"type": "thinking", "thinking": "Need the file.", "signature": "EpcBsigned"})
    );
}

/// A Gemini client's session that ran on Claude (Anthropic's signature minted into a thought
/// part's `thoughtSignature`) moves to a Gemini model: the pass-through drops the token and
/// nothing else; a body without one goes byte for byte.
#[tokio::test]
async fn a_gemini_session_moved_to_gemini_drops_anthropic_tokens() {
    let gateway = gateway().await;
    let token = minted::mint("anthropic", Kind::Signature, "EpcBsigned");
    let body = json!({"contents": [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "model", "parts": [
            {"text": "Think.", "thought": true, "thoughtSignature": token},
            {"text": "Hello."}]},
        {"role": "user", "parts": [{"text": "again"}]},
    ]})
    .to_string();
    let path = "/v1beta/models/gemini-2.5-flash:generateContent";
    let response = gateway.post(path, &body).await;
    assert_eq!(response.status(), StatusCode::OK);
    let sent = gateway.upstream.requests()[0].json();
    assert_eq!(
        sent["contents"][1]["parts"],
        json!([{"text": "Think.", "thought": true}, {"text": "Hello."}])
    );

    let plain = json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}).to_string();
    let response = gateway.post(path, &plain).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(gateway.upstream.requests()[1].body, plain.as_bytes());
}

/// Claude Code sends system turns for any name it does not know, `anthropic/claude-…`
/// included; that name passes through to Anthropic, which has no system role in `messages`.
#[tokio::test]
async fn claude_code_system_turns_are_folded_for_anthropic_itself() {
    let gateway = gateway().await;
    let body = json!({
        "model": "anthropic/claude-sonnet-4-5", "max_tokens": 1000,
        "system": [{"type": "text", "text": "You are Claude Code."}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "say hi"}]},
            {"role": "system", "content": "Agents: general."},
        ],
    });
    let response = claude_code(&gateway, &body).await;
    assert_eq!(response.status(), StatusCode::OK);
    let sent = gateway.upstream.requests()[0].json();
    assert_eq!(sent["model"], "claude-sonnet-4-5");
    assert_eq!(
        sent["messages"],
        json!([{"role": "user", "content": [
            {"type": "text", "text": "say hi"},
            {"type": "text", "text": "Agents: general."}]}])
    );
    assert_eq!(sent["system"], body["system"]);
}

/// A Chat client (Zed) on a Gemini model: the call's thought signature has no Chat field, so
/// it rides in the call id, and the next turn gives Gemini the real signature, not the
/// validator sentinel.
#[tokio::test]
async fn a_chat_client_gives_gemini_its_own_thought_signature_back() {
    let gateway = gateway().await;
    gateway.upstream.enqueue(
        "/v1/models/gemini-2.5-pro:generateContent",
        Reply::ok(json!({
            "candidates": [{"content": {"role": "model", "parts": [
                {"functionCall": {"name": "read_file", "args": {"path": "a.rs"}},
                 "thoughtSignature": "Cq0CAb+/sig=="}]},
                "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 3, "totalTokenCount": 8},
        })),
    );
    let tools = json!([{"type": "function", "function": {"name": "read_file",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}]);
    let first = json!({"model": "gemini-2.5-pro", "tools": tools,
        "messages": [{"role": "user", "content": "read a.rs"}]});
    let reply: Value = gateway
        .post("/v1/chat/completions", &first.to_string())
        .await
        .json()
        .await
        .unwrap();
    let message = reply["choices"][0]["message"].clone();
    let id = message["tool_calls"][0]["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with(minted::MARKER), "{id}");

    let next = json!({"model": "gemini-2.5-pro", "tools": tools, "messages": [
        {"role": "user", "content": "read a.rs"},
        message,
        {"role": "tool", "tool_call_id": id, "content": "fn main() {}"},
    ]});
    let response = gateway
        .post("/v1/chat/completions", &next.to_string())
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let sent = gateway.upstream.requests()[1].json();
    assert_eq!(
        sent["contents"][1]["parts"][0]["thoughtSignature"],
        "Cq0CAb+/sig=="
    );
    assert!(!sent.to_string().contains(minted::MARKER));
}

//! Local servers as first-class providers: a keyless server on this machine gets an output
//! limit when the client gave none (a small model left unbounded rambles for minutes), on the
//! pass-through and the translation alike; a client's own limit is kept.

use http::StatusCode;
use serde_json::json;

use super::harness::{Gateway, providers_on_mock};

#[tokio::test]
async fn a_local_server_gets_a_default_output_limit() {
    let gateway = Gateway::start_with(|config| providers_on_mock(config, &["ollama"])).await;
    let chat = |body: serde_json::Value| body.to_string();
    // Pass-through (a Chat client to an OpenAI-compatible server), no limit given.
    let response = gateway
        .post(
            "/v1/chat/completions",
            &chat(json!({"model": "ollama/qwen2.5-coder", "messages": [{"role": "user", "content": "hi"}]})),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    // A client's own limit stays.
    gateway
        .post(
            "/v1/chat/completions",
            &chat(json!({"model": "ollama/qwen2.5-coder", "max_tokens": 100,
                         "messages": [{"role": "user", "content": "hi"}]})),
        )
        .await;
    // Translation (an Anthropic client always gives one; a Gemini client may not).
    gateway
        .post(
            "/v1beta/models/ollama/qwen2.5-coder:generateContent",
            &chat(json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})),
        )
        .await;
    let sent: Vec<serde_json::Value> = gateway
        .upstream
        .requests()
        .iter()
        // (Ollama's `/api/show` is asked for each listed model's window.)
        .filter(|request| request.method == "POST" && request.path != "/api/show")
        .map(|request| request.json())
        .collect();
    assert_eq!(sent[0]["max_tokens"], 4096, "{}", sent[0]);
    assert_eq!(sent[1]["max_tokens"], 100);
    assert_eq!(sent.len(), 3, "{sent:?}");
    let translated = &sent[2];
    let limit = translated["max_completion_tokens"]
        .as_u64()
        .or(translated["max_tokens"].as_u64());
    assert_eq!(limit, Some(4096), "{translated}");
}

/// The server's own list states its window (vLLM's `max_model_len`, llama.cpp's
/// `context_length`…): a prompt above it is refused in the client's dialect, not cut silently.
#[tokio::test]
async fn a_prompt_above_a_local_window_is_refused_saying_so() {
    let gateway = Gateway::start_with(|config| providers_on_mock(config, &["ollama"])).await;
    gateway.upstream.enqueue(
        "/v1/models",
        corvid_test_support::Reply::ok(json!({"object": "list", "data": [
            {"id": "qwen2.5-coder", "object": "model", "max_model_len": 500}]})),
    );
    let long = "word ".repeat(4_000);
    let response = gateway
        .post(
            "/v1/messages",
            &json!({"model": "ollama/qwen2.5-coder", "max_tokens": 100,
                    "messages": [{"role": "user", "content": long}]})
            .to_string(),
        )
        .await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["type"], "error");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("500 tokens"), "{message}");
    assert!(
        gateway
            .upstream
            .requests()
            .iter()
            .all(|request| request.path != "/v1/chat/completions"),
        "nothing was sent to be cut"
    );
    // A prompt that fits goes through.
    let short = gateway
        .post(
            "/v1/messages",
            &json!({"model": "ollama/qwen2.5-coder", "max_tokens": 100,
                    "messages": [{"role": "user", "content": "hi"}]})
            .to_string(),
        )
        .await;
    assert_eq!(short.status(), StatusCode::OK);
}

/// llama.cpp's model list says nothing of the window the server was started with; its
/// `/props` does (`n_ctx`), and that is the window corvid holds prompts to.
#[tokio::test]
async fn a_llama_cpp_window_is_read_from_its_props() {
    let gateway = Gateway::start_with(|config| providers_on_mock(config, &["ollama"])).await;
    gateway.upstream.enqueue(
        "/props",
        corvid_test_support::Reply::ok(json!({
            "default_generation_settings": {"n_ctx": 300}, "total_slots": 1})),
    );
    let long = "word ".repeat(2_000);
    let response = gateway
        .post(
            "/v1/chat/completions",
            &json!({"model": "ollama/qwen2.5-coder",
                    "messages": [{"role": "user", "content": long}]})
            .to_string(),
        )
        .await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "context_length_exceeded", "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("300 tokens"),
        "{body}"
    );
}

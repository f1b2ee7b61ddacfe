//! `/v1/embeddings`: passed through to an OpenAI-shaped provider, translated to Gemini's
//! `batchEmbedContents`, refused for a provider without embeddings; a ledger row each.

use http::StatusCode;
use serde_json::{Value, json};

use super::harness::{Gateway, providers_on_mock};

#[tokio::test]
async fn embeddings_pass_through_translate_to_gemini_and_are_refused_elsewhere() {
    let gateway =
        Gateway::start_with(|config| providers_on_mock(config, &["openai", "gemini", "anthropic"]))
            .await;
    gateway.upstream.enqueue(
        "/v1/embeddings",
        corvid_test_support::Reply::ok(json!({
            "object": "list", "model": "text-embedding-3-small",
            "data": [{"object": "embedding", "index": 0, "embedding": [0.1, 0.2]}],
            "usage": {"prompt_tokens": 3, "total_tokens": 3}})),
    );
    let openai = gateway
        .post(
            "/v1/embeddings",
            &json!({"model": "openai/text-embedding-3-small", "input": "hello there"}).to_string(),
        )
        .await;
    assert_eq!(openai.status(), StatusCode::OK);
    let body: Value = openai.json().await.unwrap();
    assert_eq!(body["data"][0]["embedding"], json!([0.1, 0.2]));
    let sent = &gateway.upstream.requests()[0];
    assert_eq!(sent.path, "/v1/embeddings");
    assert_eq!(sent.json()["model"], "text-embedding-3-small");
    assert!(sent.json().get("max_tokens").is_none());

    gateway.upstream.enqueue(
        "/v1/models/gemini-embedding-001:batchEmbedContents",
        corvid_test_support::Reply::ok(json!({"embeddings": [
            {"values": [1.0, 0.0]}, {"values": [0.0, 1.0]}]})),
    );
    let gemini = gateway
        .post(
            "/v1/embeddings",
            &json!({"model": "gemini/gemini-embedding-001", "input": ["a", "b"], "dimensions": 2})
                .to_string(),
        )
        .await;
    assert_eq!(gemini.status(), StatusCode::OK);
    let body: Value = gemini.json().await.unwrap();
    assert_eq!(body["object"], "list");
    assert_eq!(body["data"][1]["index"], 1);
    assert_eq!(body["data"][1]["embedding"], json!([0.0, 1.0]));
    assert!(body["usage"]["prompt_tokens"].as_u64().unwrap() > 0);
    let sent = gateway.upstream.requests()[1].json();
    assert_eq!(
        sent["requests"][0],
        json!({"model": "models/gemini-embedding-001", "content": {"parts": [{"text": "a"}]},
               "outputDimensionality": 2})
    );

    let anthropic = gateway
        .post(
            "/v1/embeddings",
            &json!({"model": "anthropic/claude-sonnet-4-5", "input": "x"}).to_string(),
        )
        .await;
    assert_eq!(anthropic.status(), StatusCode::BAD_REQUEST);
    let body: Value = anthropic.json().await.unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("serves no embeddings"),
        "{body}"
    );
}

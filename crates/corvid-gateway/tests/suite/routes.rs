//! Gemini's routes under both API versions, answers to unknown routes in the dialect their path
//! implies, and Gemini's own errors (with the retry hint in their body) reaching Gemini clients.

use corvid_test_support::Reply;
use http::StatusCode;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::harness::{Gateway, providers_on_mock};

async fn gateway() -> Gateway {
    Gateway::start_with(|config| providers_on_mock(config, &["anthropic", "gemini", "openai"]))
        .await
}

const GEMINI_BODY: &str = r#"{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}"#;

#[tokio::test]
async fn gemini_routes_answer_under_v1_as_under_v1beta() {
    let gateway = gateway().await;
    for version in ["v1", "v1beta"] {
        let response = gateway
            .post(
                &format!("/{version}/models/gemini-2.5-pro:generateContent"),
                GEMINI_BODY,
            )
            .await;
        assert_eq!(response.status(), StatusCode::OK, "{version}");
        let reply: Value = response.json().await.unwrap();
        assert_eq!(
            reply["candidates"][0]["content"]["parts"][0]["text"],
            "Hello from the mock."
        );
        // Translated too: a Gemini client on a Claude model.
        let response = gateway
            .post(
                &format!("/{version}/models/claude-sonnet-4-5:streamGenerateContent?alt=sse"),
                GEMINI_BODY,
            )
            .await;
        assert_eq!(response.status(), StatusCode::OK, "{version}");
        assert!(response.text().await.unwrap().contains("Hello"));
        let response = gateway
            .post(
                &format!("/{version}/models/grok-4.6:countTokens"),
                GEMINI_BODY,
            )
            .await;
        assert_eq!(response.status(), StatusCode::OK, "{version}");
    }
    // google-genai 3 lists models under /v1 with its key header: Gemini's list shape.
    let listed: Value = gateway
        .client
        .get(gateway.url("/v1/models"))
        .header("x-goog-api-key", "any")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(listed["models"].as_array().is_some(), "{listed}");
    let openai: Value = gateway
        .client
        .get(gateway.url("/v1/models"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(openai["object"], "list");
}

#[tokio::test]
async fn one_model_is_retrievable_in_each_dialect_under_both_versions() {
    let gateway = gateway().await;
    let get = |path: &str, header: Option<(&'static str, &'static str)>| {
        let mut request = gateway.client.get(gateway.url(path));
        if let Some((name, value)) = header {
            request = request.header(name, value);
        }
        request.send()
    };
    for path in ["/v1beta/models/grok-4.6", "/v1/models/grok-4.6"] {
        let model: Value = get(path, Some(("x-goog-api-key", "any")))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(model["name"], "models/grok-4.6", "{path}: {model}");
    }
    let openai: Value = get("/v1/models/grok-4.6", None)
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(openai["id"], "grok-4.6");
    assert_eq!(openai["object"], "model");
    let anthropic: Value = get(
        "/v1/models/grok-4.6",
        Some(("anthropic-version", "2023-06-01")),
    )
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    assert_eq!(anthropic["type"], "model");

    let missing = get("/v1beta/models/no-such-model", None).await.unwrap();
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    let body: Value = missing.json().await.unwrap();
    assert_eq!(body["error"]["status"], "NOT_FOUND", "{body}");
    let missing = get("/v1/models/no-such-model", None).await.unwrap();
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    let body: Value = missing.json().await.unwrap();
    assert_eq!(body["error"]["code"], "model_not_found", "{body}");
}

#[tokio::test]
async fn unknown_routes_answer_in_the_dialect_their_path_implies() {
    let gateway = gateway().await;
    let cases = [
        ("/v1/models/gemini-2.5-pro:embedContent", "gemini"),
        ("/v1beta/cachedContents", "gemini"),
        ("/v1/messages/batches", "anthropic"),
        ("/v1/nothing", "openai"),
    ];
    for (path, dialect) in cases {
        let response = gateway.post(path, "{}").await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{path}");
        let body: Value = response.json().await.unwrap();
        match dialect {
            "gemini" => {
                assert_eq!(body["error"]["code"], 404, "{path}: {body}");
                assert_eq!(body["error"]["status"], "NOT_FOUND", "{path}: {body}");
            }
            "anthropic" => {
                assert_eq!(body["type"], "error", "{path}: {body}");
                assert_eq!(body["error"]["type"], "not_found_error", "{path}: {body}");
            }
            _ => assert_eq!(body["error"]["type"], "not_found_error", "{path}: {body}"),
        }
    }
    // A wrong method, too.
    let response = gateway
        .client
        .put(gateway.url("/v1/models/gemini-2.5-pro:generateContent"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], 405, "{body}");
    assert!(gateway.upstream.requests().is_empty());
}

fn gemini_429(delay: &str) -> Value {
    json!({"error": {"code": 429, "message": "Resource has been exhausted (e.g. check quota).",
        "status": "RESOURCE_EXHAUSTED", "details": [
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure",
             "violations": [{"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests"}]},
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}]}})
}

#[tokio::test]
async fn a_gemini_429_reaches_a_gemini_client_as_gemini_wrote_it_with_its_retry_hint() {
    let gateway = gateway().await;
    let path = "/v1/models/gemini-2.5-pro:generateContent";
    // Longer than corvid waits itself: handed to the client at once, not retried.
    gateway.upstream.enqueue(
        path,
        Reply::status(StatusCode::TOO_MANY_REQUESTS, gemini_429("45s")),
    );
    let response = gateway
        .post("/v1beta/models/gemini-2.5-pro:generateContent", GEMINI_BODY)
        .await;
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(response.headers()["retry-after"], "45");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body, gemini_429("45s"), "details kept");
    assert_eq!(gateway.upstream.requests().len(), 1);
}

#[tokio::test]
async fn a_gemini_retry_hint_paces_the_retry_and_reaches_other_dialects() {
    let gateway = Gateway::start_with(|config| {
        providers_on_mock(config, &["gemini"]);
        config.max_retries = 1;
    })
    .await;
    let path = "/v1/models/gemini-2.5-pro:generateContent";
    gateway.upstream.enqueue(
        path,
        Reply::status(StatusCode::TOO_MANY_REQUESTS, gemini_429("0.5s")),
    );
    let started = std::time::Instant::now();
    let response = gateway
        .post("/v1beta/models/gemini-2.5-pro:generateContent", GEMINI_BODY)
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    // 0.5 s rounds up to a whole second; a backoff without the hint is far shorter.
    assert!(started.elapsed() >= std::time::Duration::from_millis(900));
    assert_eq!(gateway.upstream.requests().len(), 2);

    // An OpenAI client on the Gemini model gets the hint as `Retry-After`.
    gateway.upstream.enqueue(
        path,
        Reply::status(StatusCode::TOO_MANY_REQUESTS, gemini_429("40s")),
    );
    let response = gateway
        .post(
            "/v1/chat/completions",
            r#"{"model":"gemini-2.5-pro","messages":[{"role":"user","content":"hi"}]}"#,
        )
        .await;
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(response.headers()["retry-after"], "40");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["type"], "rate_limit_error", "{body}");
}

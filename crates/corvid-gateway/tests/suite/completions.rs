use corvid_config::CompletionsBackend;
use corvid_test_support::Reply;
use corvid_test_support::upstream::{chat_json, responses_json};
use http::StatusCode;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::harness::Gateway;

const PREFIX: &str = "fn add(a: i32, b: i32) -> i32 {\n    ";
const SUFFIX: &str = "\n}\n";

/// Prompts exactly as Zed's `open_ai_compatible_api` provider writes them, per prompt_format.
fn zed_prompts() -> Vec<(&'static str, String, Vec<&'static str>)> {
    let (p, s) = (PREFIX, SUFFIX);
    vec![
        (
            "qwen",
            format!("<|fim_prefix|>{p}<|fim_suffix|>{s}<|fim_middle|>"),
            vec![
                "<|endoftext|>",
                "<|fim_prefix|>",
                "<|fim_middle|>",
                "<|fim_suffix|>",
            ],
        ),
        (
            "code_gemma",
            format!("<|fim_prefix|>{p}<|fim_suffix|>{s}<|fim_middle|>"),
            vec![
                "<|file_separator|>",
                "<|fim_prefix|>",
                "<|fim_middle|>",
                "<|fim_suffix|>",
            ],
        ),
        (
            "star_coder",
            format!("<fim_prefix>{p}<fim_suffix>{s}<fim_middle>"),
            vec![
                "<|endoftext|>",
                "<fim_prefix>",
                "<fim_middle>",
                "<fim_suffix>",
            ],
        ),
        (
            "code_llama",
            format!("<PRE> {p} <SUF>{s} <MID>"),
            vec!["<PRE>", "<SUF>", "<MID>"],
        ),
        (
            "deepseek_coder",
            format!("<｜fim▁begin｜>{p}<｜fim▁hole｜>{s}<｜fim▁end｜>"),
            vec!["<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>"],
        ),
        (
            "codestral",
            format!("[SUFFIX]{s}[PREFIX]{p}"),
            vec!["[PREFIX]", "[SUFFIX]"],
        ),
        (
            "glm",
            format!("<|code_prefix|>{p}<|code_suffix|>{s}<|code_middle|>"),
            vec![
                "<|endoftext|>",
                "<|code_prefix|>",
                "<|code_middle|>",
                "<|code_suffix|>",
            ],
        ),
    ]
}

fn with_cursor() -> String {
    format!("{PREFIX}<CURSOR>{SUFFIX}")
}

#[tokio::test]
async fn every_zed_fim_format_on_both_backends() {
    for backend in [CompletionsBackend::Responses, CompletionsBackend::Chat] {
        for (format, prompt, stop) in zed_prompts() {
            let gateway = Gateway::start_with(|config| config.completions_backend = backend).await;
            let (path, reply) = match backend {
                CompletionsBackend::Responses => {
                    ("/v1/responses", responses_json("grok-4.6", "a + b"))
                }
                CompletionsBackend::Chat => {
                    ("/v1/chat/completions", chat_json("grok-4.6", "a + b"))
                }
            };
            gateway.upstream.enqueue(path, Reply::ok(reply));
            let request =
                json!({"model": "supergrok", "prompt": prompt, "max_tokens": 256, "stop": stop});
            let response = gateway.post("/v1/completions", &request.to_string()).await;
            assert_eq!(response.status(), StatusCode::OK, "{format} {backend:?}");
            let answer: Value = response.json().await.unwrap();
            assert_eq!(answer["object"], "text_completion");
            assert_eq!(answer["model"], "supergrok");
            assert_eq!(
                answer["choices"][0]["text"], "a + b",
                "{format} {backend:?}"
            );
            assert_eq!(answer["choices"][0]["finish_reason"], "stop");
            assert!(answer["id"].as_str().unwrap().starts_with("cmpl-"));
            assert!(answer["created"].as_u64().unwrap() > 0);
            let usage = &answer["usage"];
            assert_eq!(
                usage["total_tokens"].as_u64(),
                Some(
                    usage["prompt_tokens"].as_u64().unwrap()
                        + usage["completion_tokens"].as_u64().unwrap()
                )
            );

            let sent = gateway.upstream.requests();
            assert_eq!(sent.len(), 1);
            assert_eq!(
                sent[0].path, path,
                "{format}: never the legacy completions endpoint"
            );
            let body = sent[0].json();
            assert_eq!(body["model"], "grok-4.6");
            assert_eq!(body["stream"], false);
            match backend {
                CompletionsBackend::Responses => {
                    assert_eq!(body["input"], with_cursor(), "{format}");
                    assert_eq!(body["store"], false);
                    assert_eq!(body["max_output_tokens"], 256);
                    for absent in ["tools", "search_parameters", "reasoning"] {
                        assert!(body.get(absent).is_none(), "{format}: {absent} sent");
                    }
                }
                CompletionsBackend::Chat => {
                    let user = body["messages"][1]["content"].as_str().unwrap();
                    assert!(user.contains(&with_cursor()), "{format}: {user}");
                    assert_eq!(body["max_completion_tokens"], 256);
                }
            }
        }
    }
}

#[tokio::test]
async fn stop_sequences_and_fences_are_applied_locally() {
    let gateway = Gateway::start().await;
    gateway.upstream.enqueue(
        "/v1/responses",
        Reply::ok(responses_json("grok-4.6", "```rust\na + b\n}\n```")),
    );
    let request = json!({"model": "grok", "prompt": "<|fim_prefix|>x<|fim_suffix|>y<|fim_middle|>", "stop": ["\n}"]});
    let answer: Value = gateway
        .post("/v1/completions", &request.to_string())
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(answer["choices"][0]["text"], "a + b");
    assert_eq!(answer["choices"][0]["finish_reason"], "stop");
}

#[tokio::test]
async fn an_incomplete_reply_reports_length() {
    let gateway = Gateway::start().await;
    let mut reply = responses_json("grok-4.6", "partial");
    reply["status"] = json!("incomplete");
    reply["incomplete_details"] = json!({"reason": "max_output_tokens"});
    gateway.upstream.enqueue("/v1/responses", Reply::ok(reply));
    let answer: Value = gateway
        .post("/v1/completions", r#"{"model":"grok","prompt":"abc"}"#)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(answer["choices"][0]["finish_reason"], "length");
    assert_eq!(
        gateway.upstream.requests()[0].json()["input"],
        "abc<CURSOR>"
    );
}

#[tokio::test]
async fn disabled_completions_are_404_not_found_error() {
    let gateway = Gateway::start_with(|config| config.completions_enabled = false).await;
    let response = gateway
        .post("/v1/completions", r#"{"model":"grok","prompt":"x"}"#)
        .await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    let value: Value = response.json().await.unwrap();
    assert_eq!(value["error"]["type"], "not_found_error");
    assert!(gateway.upstream.requests().is_empty());
}

#[tokio::test]
async fn bad_completion_requests_name_the_field() {
    let gateway = Gateway::start().await;
    for (body, field) in [
        (r#"{"prompt":"x"}"#, "model"),
        (r#"{"model":"grok","prompt":7}"#, "prompt"),
        (r#"{"model":"grok","prompt":"x","stream":true}"#, "stream"),
        ("not json", "JSON"),
    ] {
        let response = gateway.post("/v1/completions", body).await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{body}");
        let value: Value = response.json().await.unwrap();
        assert_eq!(value["error"]["type"], "invalid_request_error");
        assert!(
            value["error"]["message"].as_str().unwrap().contains(field),
            "{body}: {value}"
        );
    }
    assert!(gateway.upstream.requests().is_empty());
}

#[tokio::test]
async fn completions_retry_on_the_same_backend_only() {
    let gateway = Gateway::start().await;
    gateway.upstream.enqueue(
        "/v1/responses",
        Reply::status(StatusCode::SERVICE_UNAVAILABLE, json!({"error": "busy"}))
            .with_header("retry-after", "0"),
    );
    let response = gateway
        .post("/v1/completions", r#"{"model":"grok","prompt":"x"}"#)
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let paths: Vec<String> = gateway
        .upstream
        .requests()
        .into_iter()
        .map(|r| r.path)
        .collect();
    assert_eq!(paths, ["/v1/responses", "/v1/responses"]);
}

//! A Zed account's hosted models through every inbound dialect, against the mock Zed cloud.

use corvid_auth::Secret;
use corvid_auth::zed::{ZedCredentials, ZedHosts};
use corvid_providers::zed::{ZedClient, ZedConfig};
use corvid_test_support::zed_cloud::{
    ACCOUNT_TOKEN, CompletionReply, MockZedCloud, USER_ID, fixtures,
};
use http::StatusCode;
use serde_json::Value;

use super::harness::Gateway;

async fn gateway_with_zed() -> (Gateway, MockZedCloud) {
    let cloud = MockZedCloud::start().await;
    let client = ZedClient::new(
        ZedConfig::new(&ZedHosts::single(&cloud.base_url())),
        ZedCredentials {
            user_id: USER_ID.to_owned(),
            access_token: Secret::new(ACCOUNT_TOKEN),
            system_id: Some("00000000-0000-4000-8000-000000000000".to_owned()),
        },
    )
    .unwrap();
    let gateway = Gateway::start_with_zed(client).await;
    (gateway, cloud)
}

fn data_lines(text: &str) -> Vec<Value> {
    text.lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter(|data| *data != "[DONE]")
        .map(|data| serde_json::from_str(data).unwrap())
        .collect()
}

#[tokio::test]
async fn openai_client_streams_a_tool_call_from_a_zed_anthropic_model() {
    let (gateway, cloud) = gateway_with_zed().await;
    let response = gateway
        .post(
            "/v1/chat/completions",
            r#"{"model":"zed/claude-sonnet-4-6","stream":true,"messages":[{"role":"user","content":"weather?"}],
               "tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]}"#,
        )
        .await;
    let status = response.status();
    let text = response.text().await.unwrap();
    assert_eq!(status, StatusCode::OK, "{text}");
    assert!(text.trim_end().ends_with("data: [DONE]"), "{text}");
    let chunks = data_lines(&text);
    let name = chunks.iter().find_map(|chunk| {
        chunk["choices"][0]["delta"]["tool_calls"][0]["function"]["name"].as_str()
    });
    assert_eq!(name, Some("get_weather"));
    let arguments: String = chunks
        .iter()
        .filter_map(|chunk| {
            chunk["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"].as_str()
        })
        .collect();
    assert_eq!(
        serde_json::from_str::<Value>(&arguments).unwrap(),
        serde_json::json!({"city": "Paris"})
    );
    let finish = chunks
        .iter()
        .find_map(|chunk| chunk["choices"][0]["finish_reason"].as_str());
    assert_eq!(finish, Some("tool_calls"));
    let sent = cloud.requests_to("/completions");
    let body: Value = serde_json::from_slice(&sent[0].body).unwrap();
    assert_eq!(body["provider"], "anthropic");
    assert_eq!(body["model"], "claude-sonnet-4-6");
    assert_eq!(body["provider_request"]["model"], "claude-sonnet-4-6");
    assert!(
        gateway.upstream.requests().is_empty(),
        "nothing went to the xAI upstream"
    );
}

#[tokio::test]
async fn anthropic_client_streams_a_tool_call_from_a_zed_xai_model() {
    let (gateway, _cloud) = gateway_with_zed().await;
    let response = gateway
        .post(
            "/v1/messages",
            r#"{"model":"zed/grok-4","max_tokens":1024,"stream":true,"messages":[{"role":"user","content":"weather?"}],
               "tools":[{"name":"get_weather","input_schema":{"type":"object","properties":{"city":{"type":"string"}}}}]}"#,
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let text = response.text().await.unwrap();
    assert!(
        text.contains("event: message_start") && text.contains("event: message_stop"),
        "{text}"
    );
    assert!(
        text.contains(r#""type":"tool_use""#) && text.contains("get_weather"),
        "{text}"
    );
    assert!(text.contains(r#""stop_reason":"tool_use""#), "{text}");
}

#[tokio::test]
async fn zed_models_are_in_the_catalog_and_unknown_ones_are_refused() {
    let (gateway, _cloud) = gateway_with_zed().await;
    let list: Value = gateway
        .client
        .get(gateway.url("/v1/models"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let ids: Vec<&str> = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert!(
        ids.contains(&"zed/claude-sonnet-4-6") && ids.contains(&"zed/grok-4"),
        "{ids:?}"
    );
    let response = gateway
        .post(
            "/v1/chat/completions",
            r#"{"model":"zed/nope","messages":[]}"#,
        )
        .await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    let value: Value = response.json().await.unwrap();
    assert!(
        value["error"]["message"]
            .as_str()
            .unwrap()
            .contains("claude-sonnet-4-6"),
        "{value}"
    );
}

#[tokio::test]
async fn payment_required_says_what_to_do() {
    let (gateway, cloud) = gateway_with_zed().await;
    cloud.enqueue_completion(CompletionReply::payment_required());
    let response = gateway
        .post(
            "/v1/chat/completions",
            r#"{"model":"zed/claude-sonnet-4-6","messages":[{"role":"user","content":"hi"}]}"#,
        )
        .await;
    assert_eq!(response.status(), StatusCode::PAYMENT_REQUIRED);
    let value: Value = response.json().await.unwrap();
    let message = value["error"]["message"].as_str().unwrap();
    assert!(
        !message.is_empty() && message.to_lowercase().contains("plan"),
        "{message}"
    );
}

/// Issue 10, item 19: a Zed reply cut before `stream_ended` reaches an Anthropic client as an
/// error event, never as a `message_stop` success.
#[tokio::test]
async fn a_reply_without_stream_ended_is_an_error_for_an_anthropic_client() {
    let (gateway, cloud) = gateway_with_zed().await;
    cloud.enqueue_completion(CompletionReply::without_stream_ended(
        fixtures::provider_events("anthropic", "claude-sonnet-4-6"),
    ));
    let response = gateway
        .post(
            "/v1/messages",
            r#"{"model":"zed/claude-sonnet-4-6","max_tokens":1024,"stream":true,"messages":[{"role":"user","content":"weather?"}]}"#,
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let text = response.text().await.unwrap();
    assert!(text.contains("event: error"), "{text}");
    assert!(text.contains("stream_ended"), "{text}");
    assert!(!text.contains("event: message_stop"), "{text}");
    assert!(
        text.trim_end()
            .lines()
            .rev()
            .find(|line| line.starts_with("event: "))
            == Some("event: error"),
        "{text}"
    );
}

/// Issue 10, item 20: a Zed 5xx before any output is retried like any provider's.
#[tokio::test]
async fn a_zed_server_error_before_output_is_retried() {
    let (gateway, cloud) = gateway_with_zed().await;
    cloud.enqueue_completion(CompletionReply::status(
        500,
        serde_json::json!({"code": "upstream_http_error", "message": "overloaded", "upstream_status": 503}),
    ));
    let response = gateway
        .post(
            "/v1/chat/completions",
            r#"{"model":"zed/grok-4","messages":[{"role":"user","content":"hi"}]}"#,
        )
        .await;
    let status = response.status();
    let text = response.text().await.unwrap();
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(cloud.requests_to("/completions").len(), 2);
}

/// Issue 10, item 20: a Zed 429's `retry_after` reaches the client as `Retry-After` (whole
/// seconds, rounded up); one longer than corvid waits itself is not waited out.
#[tokio::test]
async fn a_zed_rate_limit_reaches_the_client_with_retry_after() {
    let (gateway, cloud) = gateway_with_zed().await;
    cloud.enqueue_completion(CompletionReply::status(
        429,
        serde_json::json!({"code": "upstream_http_429", "message": "rate limited", "retry_after": 30.5}),
    ));
    let response = gateway
        .post(
            "/v1/messages",
            r#"{"model":"zed/claude-sonnet-4-6","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}"#,
        )
        .await;
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(
        response
            .headers()
            .get("retry-after")
            .and_then(|value| value.to_str().ok()),
        Some("31")
    );
    let value: Value = response.json().await.unwrap();
    assert_eq!(value["type"], "error", "{value}");
    assert_eq!(cloud.requests_to("/completions").len(), 1);
}

const REQUEST_ID: &str = "2f6e1c9a-3b7d-4c1e-9a55-0d7c2b8e4f10";

/// Issue 10, item 20: a `failed` status before any output (after `queued`/`started`) is a
/// failed call like a 5xx: retried, and the retry's answer reaches the client.
#[tokio::test]
async fn a_failure_before_any_output_is_retried() {
    let (gateway, cloud) = gateway_with_zed().await;
    cloud.enqueue_completion(CompletionReply::lines(vec![
        fixtures::queued(1),
        fixtures::started(),
        fixtures::failed("upstream_http_503", "overloaded", REQUEST_ID, None),
    ]));
    let response = gateway
        .post(
            "/v1/chat/completions",
            r#"{"model":"zed/grok-4","stream":true,"messages":[{"role":"user","content":"hi"}]}"#,
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let text = response.text().await.unwrap();
    assert!(
        text.contains("Hello") && !text.contains("overloaded"),
        "{text}"
    );
    assert_eq!(cloud.requests_to("/completions").len(), 2);
}

/// Issue 10, item 20: a rate-limit failure before any output, with a `retry_after` longer than
/// corvid waits itself, is answered 429 with `Retry-After`, not as a 200 stream.
#[tokio::test]
async fn a_rate_limit_before_any_output_is_a_429_with_retry_after() {
    let (gateway, cloud) = gateway_with_zed().await;
    cloud.enqueue_completion(CompletionReply::lines(vec![
        fixtures::started(),
        fixtures::failed("upstream_http_429", "rate limited", REQUEST_ID, Some(45.0)),
    ]));
    let response = gateway
        .post(
            "/v1/chat/completions",
            r#"{"model":"zed/grok-4","stream":true,"messages":[{"role":"user","content":"hi"}]}"#,
        )
        .await;
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(
        response
            .headers()
            .get("retry-after")
            .and_then(|value| value.to_str().ok()),
        Some("45")
    );
    let value: Value = response.json().await.unwrap();
    assert!(
        value["error"]["message"]
            .as_str()
            .unwrap()
            .contains("rate limited"),
        "{value}"
    );
    assert_eq!(cloud.requests_to("/completions").len(), 1);
}

/// Issue 10, item 21: when Zed refuses the sign-in, the client is told to sign in again (a
/// 401, not a 404 about the model), and so is every later `zed/` request.
#[tokio::test]
async fn a_refused_sign_in_tells_the_client_to_sign_in_again() {
    let (gateway, cloud) = gateway_with_zed().await;
    cloud.revoke_account();
    for attempt in 0..2 {
        let response = gateway
            .post(
                "/v1/chat/completions",
                r#"{"model":"zed/claude-sonnet-4-6","messages":[{"role":"user","content":"hi"}]}"#,
            )
            .await;
        let status = response.status();
        let value: Value = response.json().await.unwrap();
        let message = value["error"]["message"].as_str().unwrap();
        assert!(message.contains("corvid login zed"), "{attempt}: {message}");
        if attempt == 0 {
            assert_eq!(status, StatusCode::UNAUTHORIZED, "{value}");
        }
    }
}

use std::time::Duration;

use corvid_auth::Credential;
use corvid_config::AuthMode;
use corvid_test_support::Reply;
use http::StatusCode;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::harness::{Gateway, providers_on_mock};

const CHAT: &str = r#"{"model":"grok","messages":[{"role":"user","content":"hi"}]}"#;

async fn error_body(response: reqwest::Response) -> (StatusCode, Value) {
    let status = response.status();
    assert_eq!(response.headers()["content-type"], "application/json");
    (status, response.json().await.unwrap())
}

#[tokio::test]
async fn health_needs_no_credential_and_no_upstream() {
    let gateway = Gateway::start_with_credential(
        |_| {},
        Credential::Missing {
            mode: AuthMode::ApiKey,
        },
    )
    .await;
    let response = gateway
        .client
        .get(gateway.url("/healthz"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.json::<Value>().await.unwrap(),
        json!({"status": "ok"})
    );
    assert!(gateway.upstream.requests().is_empty());
}

#[tokio::test]
async fn missing_credentials_are_a_401_authentication_error() {
    for mode in [AuthMode::ApiKey, AuthMode::OAuth] {
        let gateway = Gateway::start_with_credential(|_| {}, Credential::Missing { mode }).await;
        for path in ["/v1/chat/completions", "/v1/responses", "/v1/completions"] {
            let body = if path == "/v1/completions" {
                r#"{"model":"grok","prompt":"x"}"#
            } else {
                CHAT
            };
            let (status, body) = error_body(gateway.post(path, body).await).await;
            assert_eq!(status, StatusCode::UNAUTHORIZED, "{path}");
            assert_eq!(body["error"]["type"], "authentication_error");
            assert!(
                body["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains(mode.as_str()),
                "{body}"
            );
        }
        assert!(gateway.upstream.requests().is_empty());
    }
}

#[tokio::test]
async fn invalid_json_is_a_400_invalid_request_error() {
    let gateway = Gateway::start().await;
    for body in ["{not json", "[1,2]", "", r#"{"model": 42}"#] {
        let (status, value) = error_body(gateway.post("/v1/chat/completions", body).await).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(value["error"]["type"], "invalid_request_error");
        assert!(
            value["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty())
        );
    }
    assert!(gateway.upstream.requests().is_empty());
}

/// A body whose top level is fine but which is broken deep inside a value (a bad number,
/// literal or escape, a raw control character) is a 400 in the caller's dialect and reaches no
/// upstream, whether it would have been passed through or translated.
#[tokio::test]
async fn a_body_broken_inside_a_value_is_refused_whether_passed_through_or_translated() {
    let gateway = Gateway::start().await;
    let broken_inside = [
        r#"{"model":"grok","messages":[{"role":"user","content":"hi"}],"temperature":01}"#,
        r#"{"model":"grok","messages":[tru],"max_tokens":5}"#,
        r#"{"model":"grok","messages":[{"role":"user","content":"a \x escape"}],"max_tokens":5}"#,
        "{\"model\":\"grok\",\"messages\":[{\"role\":\"user\",\"content\":\"tab\there\"}],\"max_tokens\":5}",
    ];
    for path in ["/v1/chat/completions", "/v1/messages", "/v1/responses"] {
        for body in broken_inside {
            let response = gateway.post(path, body).await;
            let (status, value) = error_body(response).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{path} {body}");
            assert_eq!(
                value["error"]["type"], "invalid_request_error",
                "{path} {value}"
            );
            if path == "/v1/messages" {
                assert_eq!(value["type"], "error", "Anthropic's shape: {value}");
            }
            let message = value["error"]["message"].as_str().unwrap();
            assert!(message.contains("line 1 column"), "{path}: {message}");
        }
    }
    assert!(gateway.upstream.requests().is_empty());
}

#[tokio::test]
async fn huge_bodies_are_refused_with_413() {
    let gateway = Gateway::start_with(|config| config.max_body_bytes = 1024 * 1024).await;
    let big = format!(
        r#"{{"model":"grok","messages":[{{"role":"user","content":"{}"}}]}}"#,
        "x".repeat(2 * 1024 * 1024)
    );
    let (status, value) = error_body(gateway.post("/v1/chat/completions", &big).await).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert!(
        value["error"]["message"]
            .as_str()
            .unwrap()
            .contains("limit")
    );
}

/// Sends `chunks` as one chunked request (no Content-Length) and returns the raw answer.
async fn post_chunked(gateway: &Gateway, chunks: &[&str]) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(gateway.addr).await.unwrap();
    let mut request = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\n\
         transfer-encoding: chunked\r\nconnection: close\r\n\r\n",
        gateway.addr
    );
    for chunk in chunks {
        request.push_str(&format!("{:x}\r\n{chunk}\r\n", chunk.len()));
    }
    request.push_str("0\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    answer
}

#[tokio::test]
async fn a_chunked_body_is_read_to_its_end_and_still_limited() {
    let gateway = Gateway::start().await;
    let answer = post_chunked(
        &gateway,
        &[
            r#"{"model":"grok","#,
            r#""messages":[{"role":"user","#,
            r#""content":"hi"}]}"#,
        ],
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let sent = gateway.upstream.requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].json()["messages"][0]["content"], "hi");

    // Small enough to sit in the socket buffers whole, so the answer is never lost to a reset.
    let limited = Gateway::start_with(|config| config.max_body_bytes = 8 * 1024).await;
    let piece = "x".repeat(4 * 1024);
    let mut chunks = vec![r#"{"model":"grok","messages":[{"role":"user","content":""#];
    chunks.extend(std::iter::repeat_n(piece.as_str(), 5));
    chunks.push(r#""}]}"#);
    let answer = post_chunked(&limited, &chunks).await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer:.200}");
    assert!(limited.upstream.requests().is_empty());
}

#[tokio::test]
async fn the_generation_paths_answer_other_methods_and_near_misses_like_any_route() {
    let gateway = Gateway::start().await;
    for path in ["/v1/chat/completions", "/v1/responses", "/v1/messages"] {
        let response = gateway.client.get(gateway.url(path)).send().await.unwrap();
        let (status, value) = error_body(response).await;
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{path}");
        assert!(value["error"]["message"].as_str().unwrap().contains("GET"));
    }
    let (status, _) = error_body(gateway.post("/v1/chat/completions/", "{}").await).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(gateway.upstream.requests().is_empty());
}

#[tokio::test]
async fn unknown_routes_are_404_not_found_error() {
    let gateway = Gateway::start().await;
    let (status, value) = error_body(gateway.post("/v1/nothing", "{}").await).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(value["error"]["type"], "not_found_error");
}

#[tokio::test]
async fn retries_429_and_503_then_succeeds() {
    let gateway = Gateway::start().await;
    let path = "/v1/chat/completions";
    gateway.upstream.enqueue(
        path,
        Reply::status(StatusCode::TOO_MANY_REQUESTS, json!({"error": "slow"}))
            .with_header("retry-after", "0"),
    );
    gateway.upstream.enqueue(
        path,
        Reply::status(StatusCode::SERVICE_UNAVAILABLE, json!({"error": "busy"}))
            .with_header("retry-after", "0"),
    );
    let response = gateway.post(path, CHAT).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(gateway.upstream.requests().len(), 3);
}

#[tokio::test]
async fn backoff_without_retry_after_still_retries() {
    let gateway = Gateway::start_with(|config| config.max_retries = 1).await;
    let path = "/v1/chat/completions";
    gateway.upstream.enqueue(
        path,
        Reply::status(StatusCode::BAD_GATEWAY, json!({"error": "flaky"})),
    );
    let response = gateway.post(path, CHAT).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(gateway.upstream.requests().len(), 2);
}

#[tokio::test]
async fn retries_exhausted_returns_the_upstream_error_with_retry_after() {
    let gateway = Gateway::start_with(|config| config.max_retries = 2).await;
    let path = "/v1/chat/completions";
    for _ in 0..3 {
        gateway.upstream.enqueue(
            path,
            Reply::status(
                StatusCode::TOO_MANY_REQUESTS,
                json!({"code": "rate_limited", "error": "too many requests"}),
            )
            .with_header("retry-after", "0.2"),
        );
    }
    let response = gateway.post(path, CHAT).await;
    assert_eq!(
        response.headers()["retry-after"],
        "1",
        "whole seconds, rounded up"
    );
    let (status, value) = error_body(response).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(
        value,
        json!({"error": {"message": "too many requests", "type": "rate_limit_error", "code": "rate_limited", "param": null}})
    );
    assert_eq!(gateway.upstream.requests().len(), 3, "1 try + max_retries");
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    let gateway = Gateway::start().await;
    let path = "/v1/chat/completions";
    gateway.upstream.enqueue(
        path,
        Reply::status(
            StatusCode::BAD_REQUEST,
            json!({"code": "bad", "error": "Incorrect API key provided"}),
        ),
    );
    let (status, value) = error_body(gateway.post(path, CHAT).await).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(value["error"]["message"], "Incorrect API key provided");
    assert_eq!(gateway.upstream.requests().len(), 1);
}

#[tokio::test]
async fn a_dead_upstream_is_a_502_after_retries() {
    let gateway = Gateway::start_with(|config| {
        config.max_retries = 0;
        config.upstream = "http://127.0.0.1:9/v1".to_owned();
    })
    .await;
    let (status, value) = error_body(gateway.post("/v1/chat/completions", CHAT).await).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY);
    assert!(
        value["error"]["message"]
            .as_str()
            .unwrap()
            .contains("could not reach"),
        "{value}"
    );
    // Issue 10, seen as a new user: the message says why (the connect error's cause).
    assert!(
        value["error"]["message"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("refused"),
        "{value}"
    );
}

/// A refused connection reaches Claude Code as a connection failure with its cause (a 502
/// `api_error`), not as Anthropic's 529 "overloaded" (issue 22, item 8).
#[tokio::test]
async fn a_refused_connection_is_an_api_error_for_anthropic_clients() {
    let gateway = Gateway::start_with(|config| {
        config.max_retries = 0;
        config.upstream = "http://127.0.0.1:9/v1".to_owned();
    })
    .await;
    let answer = gateway
        .post(
            "/v1/messages",
            r#"{"model":"grok-4.6","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}"#,
        )
        .await;
    let (status, value) = error_body(answer).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY);
    assert_eq!(value["error"]["type"], "api_error", "{value}");
    assert!(
        value["error"]["message"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("refused"),
        "{value}"
    );
}

#[tokio::test]
async fn a_silent_upstream_times_out() {
    let gateway = Gateway::start_with(|config| {
        config.max_retries = 0;
        config.request_timeout = Duration::from_millis(300);
    })
    .await;
    gateway
        .upstream
        .enqueue("/v1/chat/completions", Reply::Hang);
    let (status, value) = error_body(gateway.post("/v1/chat/completions", CHAT).await).await;
    assert_eq!(status, StatusCode::GATEWAY_TIMEOUT);
    assert_eq!(value["error"]["type"], "timeout_error");
}

#[tokio::test]
async fn models_lists_aliases_known_and_fetched_models_once() {
    let gateway = Gateway::start().await;
    let list = || async {
        let value: Value = gateway
            .client
            .get(gateway.url("/v1/models"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(value["object"], "list");
        assert_eq!(value["data"][0]["object"], "model");
        value["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    let ids = list().await;
    for id in [
        "supergrok",
        "grok",
        "grok-4.6",
        "grok-4.5",
        "mock-extra-model",
        "xai/grok-4.6",
        "xai/mock-extra-model",
    ] {
        assert!(ids.iter().any(|known| known == id), "{id} in {ids:?}");
    }
    assert_eq!(list().await, ids);
    let paths: Vec<String> = gateway
        .upstream
        .requests()
        .into_iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert_eq!(paths, ["GET /v1/models"], "fetched once, then cached");
}

#[tokio::test]
async fn claude_code_gets_anthropics_model_list_shape() {
    let gateway = Gateway::start().await;
    let value: Value = gateway
        .client
        .get(gateway.url("/v1/models?limit=1000"))
        .header("anthropic-version", "2023-06-01")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(value["has_more"], false);
    assert_eq!(value["data"][0]["type"], "model");
    assert!(value["data"][0]["display_name"].is_string());
    assert_eq!(value["first_id"], value["data"][0]["id"]);
}

/// The field names of an OpenAI error object, in the order they were sent.
fn error_fields(body: &Value) -> Vec<String> {
    body["error"].as_object().unwrap().keys().cloned().collect()
}

/// One renderer: a failure class reads the same whether corvid refused the request itself or
/// an upstream did and the translation carried it to the client (type, fields, their order).
#[tokio::test]
async fn corvids_own_refusals_read_like_the_upstream_errors_it_translates() {
    const CLAUDE: &str =
        r#"{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hi"}]}"#;
    let translated = Gateway::start_with(|config| {
        providers_on_mock(config, &["anthropic"]);
        config.max_retries = 0;
    })
    .await;
    let upstream = |status: StatusCode, kind: &str, message: &str| {
        Reply::status(
            status,
            json!({"type": "error", "error": {"type": kind, "message": message}}),
        )
    };

    let missing = Gateway::start_with_credential(
        |_| {},
        Credential::Missing {
            mode: AuthMode::ApiKey,
        },
    )
    .await;
    let (status, own) = error_body(missing.post("/v1/chat/completions", CHAT).await).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    translated.upstream.enqueue(
        "/v1/messages",
        upstream(
            StatusCode::UNAUTHORIZED,
            "authentication_error",
            "invalid x-api-key",
        ),
    );
    let (status, carried) = error_body(translated.post("/v1/chat/completions", CLAUDE).await).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        own["error"]["type"], carried["error"]["type"],
        "{own} {carried}"
    );
    assert_eq!(error_fields(&own), error_fields(&carried));

    let dead = Gateway::start_with(|config| {
        config.max_retries = 0;
        config.upstream = "http://127.0.0.1:9/v1".to_owned();
    })
    .await;
    let (status, own) = error_body(dead.post("/v1/chat/completions", CHAT).await).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY);
    translated.upstream.enqueue(
        "/v1/messages",
        upstream(
            StatusCode::INTERNAL_SERVER_ERROR,
            "api_error",
            "Internal server error",
        ),
    );
    let (status, carried) = error_body(translated.post("/v1/chat/completions", CLAUDE).await).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(
        own["error"]["type"], carried["error"]["type"],
        "{own} {carried}"
    );
    assert_eq!(error_fields(&own), error_fields(&carried));
}

use std::time::Duration;

use corvid_test_support::{Reply, StreamEnd};
use futures_util::StreamExt;
use http::StatusCode;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::harness::{Gateway, UPSTREAM_KEY, eventually};

const CHAT: &str = r#"{"model":"supergrok","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"héllo"}],"temperature":1.0}"#;

#[tokio::test]
async fn streamed_chunks_reach_the_client_one_by_one() {
    let gateway = Gateway::start().await;
    let (feed, reply) = Reply::fed();
    gateway.upstream.enqueue("/v1/chat/completions", reply);
    let response = gateway.post("/v1/chat/completions", CHAT).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    assert_eq!(response.headers()["cache-control"], "no-cache");
    let mut body = response.bytes_stream();

    // Each piece is released only after the previous one arrived: buffering would deadlock.
    let events = [
        r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"grok-4.6","choices":[{"index":0,"delta":{"content":"a"}}]}"#,
        r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"grok-4.6","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"grok-4.6","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}"#,
        "[DONE]",
    ];
    let mut received = Vec::new();
    for event in events {
        assert!(feed.event(event));
        let chunk = tokio::time::timeout(Duration::from_secs(5), body.next())
            .await
            .expect("the chunk arrives before the next one is sent")
            .unwrap()
            .unwrap();
        received.extend_from_slice(&chunk);
    }
    drop(feed);
    while let Some(chunk) = body.next().await {
        received.extend_from_slice(&chunk.unwrap());
    }
    let expected: String = events
        .iter()
        .map(|event| format!("data: {event}\n\n"))
        .collect();
    assert_eq!(
        String::from_utf8(received).unwrap(),
        expected,
        "bytes relayed unchanged"
    );
}

#[tokio::test]
async fn alias_is_rewritten_and_the_rest_of_the_body_is_untouched() {
    let gateway = Gateway::start().await;
    let response = gateway.post("/v1/chat/completions", CHAT).await;
    assert_eq!(response.status(), StatusCode::OK);
    let _ = response.bytes().await.unwrap();
    let sent = &gateway.upstream.requests()[0];
    assert_eq!(sent.path, "/v1/chat/completions");
    let expected = CHAT.replace(r#""model":"supergrok""#, r#""model":"grok-4.6""#);
    assert_eq!(std::str::from_utf8(&sent.body).unwrap(), expected);
}

#[tokio::test]
async fn unknown_models_pass_through_byte_for_byte() {
    let gateway = Gateway::start().await;
    let body = r#"{ "model" : "grok-3-mini", "messages" : [] }"#;
    let _ = gateway
        .post("/v1/chat/completions", body)
        .await
        .bytes()
        .await
        .unwrap();
    assert_eq!(gateway.upstream.requests()[0].body, body.as_bytes());
}

#[tokio::test]
async fn fields_xai_rejects_are_dropped_by_the_rule_table() {
    let gateway = Gateway::start().await;
    let body =
        r#"{"model":"grok","prompt_cache_key":"thread-1","reasoning_effort":"none","messages":[]}"#;
    let _ = gateway
        .post("/v1/chat/completions", body)
        .await
        .bytes()
        .await
        .unwrap();
    let sent = gateway.upstream.requests()[0].json();
    assert_eq!(sent, json!({"model": "grok-4.6", "messages": []}));
}

#[tokio::test]
async fn non_streamed_chat_is_relayed() {
    let gateway = Gateway::start().await;
    let response = gateway
        .post(
            "/v1/chat/completions",
            r#"{"model":"grok","messages":[{"role":"user","content":"hi"}]}"#,
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.headers().get("content-encoding").is_none());
    let value: Value = response.json().await.unwrap();
    assert_eq!(
        value["choices"][0]["message"]["content"],
        "Hello from the mock."
    );
    assert_eq!(value["model"], "grok-4.6");
}

#[tokio::test]
async fn responses_are_forwarded_to_the_responses_endpoint() {
    let gateway = Gateway::start().await;
    let response = gateway
        .post(
            "/v1/responses",
            r#"{"model":"supergrok","input":"hi","stream":true,"store":false}"#,
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let text = response.text().await.unwrap();
    assert!(text.contains("response.completed"), "{text}");
    assert!(!text.contains("\"type\":\"error\""), "{text}");
    let sent = &gateway.upstream.requests()[0];
    assert_eq!(sent.path, "/v1/responses");
    assert_eq!(sent.json()["model"], "grok-4.6");
}

#[tokio::test]
async fn the_upstream_gets_the_server_credential_never_the_clients() {
    let gateway = Gateway::start().await;
    let response = gateway
        .client
        .post(gateway.url("/v1/chat/completions"))
        .header("authorization", "Bearer client-secret")
        .header("x-api-key", "client-secret-2")
        .header("api-key", "client-secret-3")
        .header("cookie", "session=client")
        .body(r#"{"model":"grok","messages":[]}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let sent = &gateway.upstream.requests()[0];
    assert_eq!(
        sent.headers["authorization"],
        format!("Bearer {UPSTREAM_KEY}")
    );
    for name in ["x-api-key", "api-key", "cookie"] {
        assert!(sent.headers.get(name).is_none(), "{name} leaked upstream");
    }
    let all = format!("{:?}", sent.headers);
    assert!(!all.contains("client-secret"), "{all}");
}

#[tokio::test]
async fn upstream_breaking_mid_stream_becomes_an_error_event() {
    let gateway = Gateway::start().await;
    gateway.upstream.enqueue(
        "/v1/chat/completions",
        Reply::Stream {
            chunks: vec![(
                Duration::ZERO,
                bytes::Bytes::from_static(b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\ndata: {\"cho"),
            )],
            end: StreamEnd::Abort,
        },
    );
    let response = gateway.post("/v1/chat/completions", CHAT).await;
    assert_eq!(response.status(), StatusCode::OK);
    let text = response.text().await.unwrap();
    let last = text.trim_end().lines().last().unwrap();
    let error: Value = serde_json::from_str(last.strip_prefix("data: ").unwrap()).unwrap();
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("broke"),
        "{text}"
    );
    assert!(
        text.contains("{\"cho\n\n"),
        "the half-written line is ended first: {text:?}"
    );
    assert_eq!(
        gateway.upstream.requests().len(),
        1,
        "no retry after the first byte"
    );
}

#[tokio::test]
async fn upstream_closing_before_done_is_reported() {
    let gateway = Gateway::start().await;
    gateway.upstream.enqueue(
        "/v1/chat/completions",
        Reply::sse(
            &[r#"{"choices":[{"index":0,"delta":{"content":"a"}}]}"#],
            Duration::ZERO,
        ),
    );
    let text = gateway
        .post("/v1/chat/completions", CHAT)
        .await
        .text()
        .await
        .unwrap();
    assert!(text.contains(r#"data: {"error":{"#), "{text}");
    assert!(text.contains("before it finished"), "{text}");
}

#[tokio::test]
async fn client_disconnect_cancels_the_upstream_request() {
    let gateway = Gateway::start().await;
    let (feed, reply) = Reply::fed();
    gateway.upstream.enqueue("/v1/chat/completions", reply);
    let response = gateway.post("/v1/chat/completions", CHAT).await;
    let mut body = response.bytes_stream();
    feed.event(r#"{"choices":[{"index":0,"delta":{"content":"a"}}]}"#);
    body.next().await.unwrap().unwrap();
    drop(body);
    // The upstream keeps generating; its writes fail once corvid has closed the connection.
    eventually("the upstream stream is abandoned", || {
        feed.event(r#"{"choices":[{"index":0,"delta":{"content":"more"}}]}"#);
        gateway.upstream.streams_abandoned() == 1
    })
    .await;
    assert_eq!(gateway.upstream.streams_completed(), 0);
}

#[tokio::test]
async fn a_stream_that_goes_quiet_ends_with_an_idle_timeout_event() {
    let gateway =
        Gateway::start_with(|config| config.request_timeout = Duration::from_millis(300)).await;
    let (feed, reply) = Reply::fed();
    gateway.upstream.enqueue("/v1/chat/completions", reply);
    let response = gateway.post("/v1/chat/completions", CHAT).await;
    feed.event(r#"{"choices":[{"index":0,"delta":{"content":"a"}}]}"#);
    // The upstream then says nothing; the relay gives up after the idle timeout.
    let text = tokio::time::timeout(Duration::from_secs(10), response.text())
        .await
        .expect("the stream ends")
        .unwrap();
    assert!(text.contains("idle timeout"), "{text}");
    drop(feed);
}

//! Faults and hostile input: model names that aim elsewhere, forged log lines, a silent
//! upstream, duplicate fields, slow clients, and streams still running at shutdown.

use std::time::{Duration, Instant};

use corvid_auth::{Credential, Secret};
use corvid_config::Config;
use corvid_gateway::{AppState, ServeLimits, router, serve_with};
use corvid_providers::Registry;
use corvid_test_support::{MockUpstream, Reply};
use http::StatusCode;
use serde_json::Value;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use super::harness::{Gateway, providers_on_mock};

#[tokio::test]
async fn model_names_that_would_aim_the_request_elsewhere_are_refused_in_the_callers_dialect() {
    let gateway = Gateway::start_with(|config| providers_on_mock(config, &["gemini"])).await;
    let body = r#"{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}"#;
    for target in [
        "..%2F..%2Fv1%2Ffiles:generateContent",
        "gemini-2.5-pro%3Fkey%3Dx:generateContent",
        "gemini-2.5-pro%23x:generateContent",
        "gemini%00:generateContent",
        "gemini%0Aforged:streamGenerateContent",
    ] {
        let response = gateway
            .post(&format!("/v1beta/models/{target}"), body)
            .await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{target}");
        let error: Value = response.json().await.unwrap();
        assert_eq!(
            error["error"]["status"], "INVALID_ARGUMENT",
            "{target}: {error}"
        );
    }
    for (path, model) in [
        ("/v1/chat/completions", "gemini/../../v1/files"),
        ("/v1/messages", "gemini/x?key=1"),
        ("/v1/responses", "grok\u{0}"),
    ] {
        let body = serde_json::json!({"model": model, "max_tokens": 8, "input": "hi",
            "messages": [{"role": "user", "content": "hi"}]});
        let response = gateway.post(path, &body.to_string()).await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{model}");
        let error: Value = response.json().await.unwrap();
        if path == "/v1/messages" {
            assert_eq!(error["type"], "error", "Anthropic's shape: {error}");
        }
    }
    assert!(
        gateway.upstream.requests().is_empty(),
        "nothing went upstream"
    );
}

#[tokio::test]
async fn a_model_name_reaches_a_gemini_upstream_as_one_encoded_segment() {
    let gateway = Gateway::start_with(|config| providers_on_mock(config, &["gemini"])).await;
    let response = gateway
        .post(
            "/v1/chat/completions",
            r#"{"model":"gemini/my model:v2","messages":[{"role":"user","content":"hi"}]}"#,
        )
        .await;
    let _ = response.text().await.unwrap();
    let sent = &gateway.upstream.requests()[0];
    assert_eq!(sent.path, "/v1/models/my%20model%3Av2:generateContent");
}

#[tokio::test]
async fn client_text_cannot_forge_a_log_line() {
    let logs = corvid_test_support::logs::capture("debug");
    let gateway = Gateway::start_with(|config| providers_on_mock(config, &["gemini"])).await;
    let forged = "FORGED INFO corvid: request finished";
    for model in [
        format!("grok\n{forged}"),
        format!("grok\r{forged}"),
        format!("grok\u{1b}[2K{forged}"),
    ] {
        let body = serde_json::json!({"model": model, "stream": true,
            "messages": [{"role": "user", "content": "hi"}]});
        let response = gateway
            .post("/v1/chat/completions", &body.to_string())
            .await;
        let _ = response.text().await.unwrap();
    }
    let path = format!("/v1beta/models/gemini%0A{}:generateContent", "FORGED%20x");
    let _ = gateway.post(&path, "{}").await.text().await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let text = logs.text();
    for line in text.split(['\n', '\r']) {
        assert!(!line.starts_with("FORGED"), "a forged line: {line:?}");
    }
    assert!(
        !text.contains('\u{1b}'),
        "no escape sequence reaches the log"
    );
}

#[tokio::test]
async fn an_upstream_that_takes_the_request_and_never_answers_is_asked_once() {
    let gateway = Gateway::start_with(|config| {
        config.request_timeout = Duration::from_millis(300);
    })
    .await;
    for _ in 0..3 {
        gateway
            .upstream
            .enqueue("/v1/chat/completions", Reply::Hang);
    }
    let started = Instant::now();
    let response = gateway
        .post(
            "/v1/chat/completions",
            r#"{"model":"grok","messages":[{"role":"user","content":"hi"}]}"#,
        )
        .await;
    assert_eq!(response.status(), StatusCode::GATEWAY_TIMEOUT);
    assert_eq!(
        gateway.upstream.requests().len(),
        1,
        "the POST was written once"
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_duplicate_top_level_field_is_refused_before_routing() {
    let gateway = Gateway::start_with(|config| providers_on_mock(config, &["anthropic"])).await;
    for (path, body) in [
        (
            "/v1/chat/completions",
            r#"{"model":"grok-4.6","model":"grok-code","messages":[{"role":"user","content":"hi"}]}"#,
        ),
        (
            "/v1/messages",
            r#"{"model":"claude-sonnet-4-5","max_tokens":8,"stream":false,"stream":true,"messages":[{"role":"user","content":"hi"}]}"#,
        ),
        (
            "/v1/responses",
            r#"{"model":"grok","input":"hi","mod\u0065l":"other"}"#,
        ),
    ] {
        let response = gateway.post(path, body).await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{body}");
        let text = response.text().await.unwrap();
        assert!(text.contains("more than once"), "{text}");
    }
    assert!(gateway.upstream.requests().is_empty());
}

/// With no provider that takes Anthropic bodies as they are, a `/v1/messages` request is read
/// whole by the decoder instead of pre-scanned: a repeated top-level field (typed or not,
/// escaped or not) is still refused before routing, worded as before.
#[tokio::test]
async fn a_duplicate_top_level_field_is_refused_when_every_route_translates() {
    let gateway = Gateway::start_with(|config| providers_on_mock(config, &["xai"])).await;
    for body in [
        r#"{"model":"grok-4.6","max_tokens":8,"stream":false,"stream":true,"messages":[{"role":"user","content":"hi"}]}"#,
        r#"{"model":"grok-4.6","max_tokens":8,"messages":[{"role":"user","content":"hi"}],"mod\u0065l":"grok-code"}"#,
        r#"{"model":"grok-4.6","max_tokens":8,"messages":[],"messages":[{"role":"user","content":"hi"}]}"#,
    ] {
        let response = gateway.post("/v1/messages", body).await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{body}");
        let text = response.text().await.unwrap();
        assert!(text.contains("more than once"), "{text}");
    }
    assert!(gateway.upstream.requests().is_empty());
    // A well-formed one goes through.
    let response = gateway
        .post(
            "/v1/messages",
            r#"{"model":"grok-4.6","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}"#,
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
}

/// Whether the body is pre-scanned (a provider takes it as it is) or read whole by the decoder
/// (every route translates), a body that is not what the API takes gets the same answer.
#[tokio::test]
async fn a_malformed_body_gets_the_same_answer_whether_or_not_it_is_pre_scanned() {
    let scanned = Gateway::start_with(|config| providers_on_mock(config, &["anthropic"])).await;
    let decoded = Gateway::start_with(|config| providers_on_mock(config, &["xai"])).await;
    let bodies = [
        r#"{"model":"grok-4.6","messages":[}"#,
        r#"{"model":"grok-4.6","messages":[]} trailing"#,
        r#"["model","grok-4.6"]"#,
        r#"{"model":7,"max_tokens":8,"messages":[]}"#,
        r#"{"model":"grok-4.6","max_tokens":8,"messages":[{"role":"user","content":"\ud800"}]}"#,
        r#"{"mod\ud800l":"x","model":"grok-4.6","max_tokens":8,"messages":[]}"#,
        "{\"model\":\"grok-4.6\",\"max_tokens\":8,\"messages\":[{\"role\":\"user\",\"content\":\"a\u{1}\"}]}",
        r#"{"max_tokens":8,"messages":[]}"#,
        r#"{"model":"../x","max_tokens":8,"messages":[]}"#,
    ];
    assert_same_refusals(&scanned, &decoded, "/v1/messages", &bodies).await;
}

/// The same for Responses bodies refused before routing: pre-scanned when a provider serves
/// `/responses` itself (the xai preset), read whole when every route translates (only
/// Anthropic).
#[tokio::test]
async fn a_malformed_responses_body_gets_the_same_answer_whether_or_not_it_is_pre_scanned() {
    let scanned = Gateway::start_with(|config| providers_on_mock(config, &["xai"])).await;
    let decoded = Gateway::start_with(|config| providers_on_mock(config, &["anthropic"])).await;
    let bodies = [
        r#"{"model":"claude-sonnet-4-5","input":"hi","store":false,"store":true}"#,
        r#"{"model":"claude-sonnet-4-5","input":"hi","mod\u0065l":"other"}"#,
        r#"{"model":"claude-sonnet-4-5","input":"hi","input":"again"}"#,
        r#"{"model":"claude-sonnet-4-5","input":[}"#,
        r#"{"model":7,"input":"hi"}"#,
    ];
    assert_same_refusals(&scanned, &decoded, "/v1/responses", &bodies).await;
    let response = decoded
        .post(
            "/v1/responses",
            r#"{"model":"claude-sonnet-4-5","input":"hi","max_output_tokens":8}"#,
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
}

/// Each of `bodies` is refused by both gateways with the same status and the same text, and
/// `decoded`'s upstream saw none of them.
async fn assert_same_refusals(scanned: &Gateway, decoded: &Gateway, path: &str, bodies: &[&str]) {
    for body in bodies {
        let (first, second) = (
            scanned.post(path, body).await,
            decoded.post(path, body).await,
        );
        assert_eq!(first.status(), second.status(), "{body}");
        assert!(
            first.status().is_client_error(),
            "{body}: {}",
            first.status()
        );
        assert_eq!(
            first.text().await.unwrap(),
            second.text().await.unwrap(),
            "{body}"
        );
    }
    assert!(decoded.upstream.requests().is_empty());
}

/// A gateway served with `limits` and `grace`, its ledger in `dir`; dropping the returned
/// sender starts the shutdown.
async fn served(
    upstream: &MockUpstream,
    limits: ServeLimits,
    grace: Duration,
    recorder: Option<corvid_store::UsageRecorder>,
) -> (
    std::net::SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<AppState>,
) {
    let mut config = Config {
        upstream: upstream.base_url(),
        ..Config::default()
    };
    for provider in &mut config.providers {
        if provider.name == "xai" {
            provider.base_url = upstream.base_url();
        }
    }
    let registry = Registry::build(&config, |_| Credential::ApiKey(Secret::new("k"))).unwrap();
    let mut state = AppState::new(config, registry);
    if let Some(recorder) = recorder {
        state = state.with_recorder(recorder);
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let app = router(state.clone());
    let served = tokio::spawn(async move {
        let shutdown = async move {
            let _ = stopped.await;
        };
        serve_with(listener, app, shutdown, grace, limits)
            .await
            .unwrap();
        state.settle().await;
        state
    });
    (addr, stop, served)
}

/// Reads until the peer closes the connection; `None` if it is still open after `within`.
async fn closed_within(tcp: &mut tokio::net::TcpStream, within: Duration) -> Option<Duration> {
    let started = Instant::now();
    let mut buffer = [0u8; 4096];
    let read = async {
        loop {
            match tcp.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    };
    tokio::time::timeout(within, read).await.ok()?;
    Some(started.elapsed())
}

#[tokio::test]
async fn slow_headers_and_idle_keep_alive_connections_are_closed() {
    let upstream = MockUpstream::start().await;
    let limits = ServeLimits {
        header_read_timeout: Duration::from_millis(300),
        ..ServeLimits::default()
    };
    let (addr, _stop, _served) = served(&upstream, limits, Duration::from_secs(1), None).await;

    // A header byte at a time, never finishing.
    let mut slow = tokio::net::TcpStream::connect(addr).await.unwrap();
    slow.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .await
        .unwrap();
    let trickle = async {
        for _ in 0..30 {
            tokio::time::sleep(Duration::from_millis(50)).await;
            if slow.write_all(b"x").await.is_err() {
                return;
            }
        }
    };
    trickle.await;
    assert!(
        closed_within(&mut slow, Duration::from_secs(2))
            .await
            .is_some(),
        "a trickling client is cut off"
    );

    // One whole request, then silence on a kept-alive connection.
    let mut idle = tokio::net::TcpStream::connect(addr).await.unwrap();
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    let mut first = [0u8; 512];
    let read = idle.read(&mut first).await.unwrap();
    assert!(String::from_utf8_lossy(&first[..read]).starts_with("HTTP/1.1 200"));
    let closed = closed_within(&mut idle, Duration::from_secs(3)).await;
    assert!(closed.is_some(), "an idle keep-alive connection is closed");
}

#[tokio::test]
async fn connections_beyond_the_cap_wait_to_be_served() {
    let upstream = MockUpstream::start().await;
    let limits = ServeLimits {
        max_connections: 1,
        header_read_timeout: Duration::from_millis(400),
        ..ServeLimits::default()
    };
    let (addr, _stop, _served) = served(&upstream, limits, Duration::from_secs(1), None).await;
    let mut holder = tokio::net::TcpStream::connect(addr).await.unwrap();
    holder
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .await
        .unwrap();
    let started = Instant::now();
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let response = client
        .get(format!("http://{addr}/healthz"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "served only once the first connection's slot was free: {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn streams_running_when_the_grace_ends_get_an_error_event_and_a_ledger_row() {
    let upstream = MockUpstream::start().await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("corvid.db");
    let recorder =
        corvid_store::UsageRecorder::spawn(corvid_store::Store::open(&path).unwrap()).unwrap();
    let (feed, reply) = Reply::fed();
    upstream.enqueue("/v1/chat/completions", reply);
    let (addr, stop, served) = served(
        &upstream,
        ServeLimits::default(),
        Duration::from_millis(300),
        Some(recorder.clone()),
    )
    .await;
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let mut response = client
        .post(format!("http://{addr}/v1/chat/completions"))
        .header("content-type", "application/json")
        .body(r#"{"model":"grok","stream":true,"messages":[{"role":"user","content":"hi"}]}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    feed.event(r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"grok-4.6","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"},"finish_reason":null}]}"#);
    let first = response.chunk().await.unwrap().unwrap();
    assert!(String::from_utf8_lossy(&first).contains("Hel"));
    drop(stop);
    let mut rest = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        rest.extend_from_slice(&chunk);
    }
    let rest = String::from_utf8_lossy(&rest).into_owned();
    assert!(
        rest.contains("shutting down"),
        "the client hears why: {rest:?}"
    );
    let _state = tokio::time::timeout(Duration::from_secs(5), served)
        .await
        .unwrap()
        .unwrap();
    recorder.flush().unwrap();
    let connection = rusqlite::Connection::open(&path).unwrap();
    let outcome: String = connection
        .query_row("SELECT outcome FROM requests", [], |row| row.get(0))
        .unwrap();
    assert_eq!(outcome, "stream_error");
    drop(feed);
}

#[tokio::test]
async fn the_header_timeout_never_cuts_a_reply_that_takes_longer() {
    let upstream = MockUpstream::start().await;
    let limits = ServeLimits {
        header_read_timeout: Duration::from_millis(200),
        ..ServeLimits::default()
    };
    let (addr, _stop, _served) = served(&upstream, limits, Duration::from_secs(1), None).await;
    let chunk = r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"grok-4.6","choices":[{"index":0,"delta":{"content":"tick"},"finish_reason":null}]}"#;
    let done = r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"grok-4.6","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#;
    upstream.enqueue(
        "/v1/chat/completions",
        Reply::sse(
            &[chunk, chunk, chunk, done, "[DONE]"],
            Duration::from_millis(150),
        ),
    );
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let started = Instant::now();
    let response = client
        .post(format!("http://{addr}/v1/chat/completions"))
        .header("content-type", "application/json")
        .body(r#"{"model":"grok","stream":true,"messages":[{"role":"user","content":"hi"}]}"#)
        .send()
        .await
        .unwrap();
    let text = response.text().await.unwrap();
    assert!(started.elapsed() > Duration::from_millis(600));
    assert_eq!(text.matches("tick").count(), 3, "{text}");
    assert!(text.contains("[DONE]"), "{text}");
}

#[tokio::test]
async fn a_body_that_trickles_in_is_cut_off() {
    let upstream = MockUpstream::start().await;
    let limits = ServeLimits {
        body_read_timeout: Duration::from_millis(300),
        ..ServeLimits::default()
    };
    let (addr, _stop, _served) = served(&upstream, limits, Duration::from_secs(1), None).await;
    let mut slow = tokio::net::TcpStream::connect(addr).await.unwrap();
    slow.write_all(
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{",
    )
    .await
    .unwrap();
    let started = Instant::now();
    let mut answer = Vec::new();
    let trickle = async {
        for _ in 0..40 {
            tokio::time::sleep(Duration::from_millis(50)).await;
            if slow.write_all(b" ").await.is_err() {
                break;
            }
        }
    };
    trickle.await;
    let _ = tokio::time::timeout(Duration::from_secs(2), slow.read_to_end(&mut answer)).await;
    let answer = String::from_utf8_lossy(&answer).into_owned();
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer:?}");
    assert!(answer.contains("did not arrive"), "{answer}");
    assert!(started.elapsed() < Duration::from_secs(4));
    assert!(upstream.requests().is_empty());
}

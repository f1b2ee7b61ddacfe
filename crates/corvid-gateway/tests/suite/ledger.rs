//! Every request lands in the usage ledger: dialect, provider, model, status, timings and
//! tokens, and never the prompt unless `log_prompts` is on.

use corvid_store::{Store, UsageRecorder};
use http::StatusCode;

use super::harness::Gateway;

/// A usage ledger in a temporary directory, and a gateway recording into it.
struct Ledger {
    dir: tempfile::TempDir,
    path: std::path::PathBuf,
    recorder: UsageRecorder,
}

impl Ledger {
    async fn start() -> (Self, Gateway) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("corvid.db");
        let recorder = UsageRecorder::spawn(Store::open(&path).unwrap()).unwrap();
        let gateway = Gateway::start_recording(recorder.clone()).await;
        (
            Self {
                dir,
                path,
                recorder,
            },
            gateway,
        )
    }

    /// `read` of the committed rows, once `done` says it is complete (or after ~2 s): rows
    /// are written after the response's bytes, off the serving thread.
    async fn once<T>(&self, read: impl Fn(&std::path::Path) -> T, done: impl Fn(&T) -> bool) -> T {
        let mut found = None;
        for _ in 0..100 {
            self.recorder.flush().unwrap();
            let rows = read(&self.path);
            if done(&rows) {
                return rows;
            }
            found = Some(rows);
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        found.unwrap()
    }

    /// The `outcome` column of every row, oldest first, once `count` rows are there.
    async fn outcomes(&self, count: usize) -> Vec<String> {
        let read = |path: &std::path::Path| -> Vec<String> {
            let connection = rusqlite::Connection::open(path).unwrap();
            let mut statement = connection
                .prepare("SELECT outcome FROM requests ORDER BY id")
                .unwrap();
            statement
                .query_map([], |row| row.get(0))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap()
        };
        self.once(read, |outcomes| outcomes.len() >= count).await
    }
}

#[tokio::test]
async fn a_finished_pass_through_is_recorded_ok_whether_or_not_its_length_was_known() {
    let (ledger, gateway) = Ledger::start().await;

    // The mock answers a whole reply with a Content-Length: hyper stops reading at the last
    // byte, so the relay has to notice the end itself.
    let whole = gateway
        .post(
            "/v1/chat/completions",
            r#"{"model":"grok","messages":[{"role":"user","content":"hi"}]}"#,
        )
        .await;
    assert_eq!(whole.status(), StatusCode::OK);
    assert!(whole.headers().contains_key(http::header::CONTENT_LENGTH));
    let _ = whole.text().await.unwrap();
    let streamed = gateway
        .post(
            "/v1/chat/completions",
            r#"{"model":"grok","stream":true,"messages":[{"role":"user","content":"hi"}]}"#,
        )
        .await;
    let _ = streamed.text().await.unwrap();

    assert_eq!(ledger.outcomes(2).await, ["ok", "ok"]);
}

#[tokio::test]
async fn requests_are_recorded_with_their_usage() {
    let (ledger, gateway) = Ledger::start().await;

    let streamed = gateway
        .post("/v1/chat/completions", r#"{"model":"grok","stream":true,"messages":[{"role":"user","content":"secret prompt"}]}"#)
        .await;
    assert_eq!(streamed.status(), StatusCode::OK);
    let _ = streamed.text().await.unwrap();
    let whole = gateway
        .post(
            "/v1/chat/completions",
            r#"{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hi"}]}"#,
        )
        .await;
    assert_eq!(whole.status(), StatusCode::OK);
    let _ = whole.text().await.unwrap();
    let missing = gateway
        .post(
            "/v1/chat/completions",
            r#"{"model":"nobody/x","messages":[]}"#,
        )
        .await;
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);

    // The ledger row is written once the body is done; wait for both.
    let rows = ledger
        .once(
            |path| {
                Store::open(path)
                    .unwrap()
                    .usage_by_day_and_model(None)
                    .unwrap()
            },
            |rows| rows.iter().map(|row| row.requests).sum::<u64>() >= 2,
        )
        .await;
    let grok = rows
        .iter()
        .find(|row| row.model == "grok-4.6")
        .expect("grok row");
    assert_eq!(grok.requests, 1);
    assert_eq!(grok.front_end, "gateway");
    assert_eq!(grok.tokens.input, 12);
    assert_eq!(grok.tokens.output, 5);
    let claude = rows
        .iter()
        .find(|row| row.model == "claude-sonnet-4-5")
        .expect("claude row");
    assert_eq!(claude.tokens.input, 12);
    assert_eq!(claude.tokens.output, 5);
    assert_eq!(
        rows.len(),
        2,
        "an unroutable request reaches no provider: {rows:?}"
    );

    for entry in std::fs::read_dir(ledger.dir.path()).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains("secret prompt"),
            "no prompt text without log_prompts"
        );
    }
}

impl Ledger {
    /// `(outcome, status, attempts)` of every row, oldest first, once `count` rows are there.
    async fn results(&self, count: usize) -> Vec<(String, i64, i64)> {
        let read = |path: &std::path::Path| -> Vec<(String, i64, i64)> {
            let connection = rusqlite::Connection::open(path).unwrap();
            let mut statement = connection
                .prepare("SELECT outcome, status, attempts FROM requests ORDER BY id")
                .unwrap();
            statement
                .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap()
        };
        self.once(read, |rows| rows.len() >= count).await
    }
}

/// A retryable status the upstream keeps answering; `Retry-After: 0` keeps the test fast.
fn unavailable() -> corvid_test_support::Reply {
    corvid_test_support::Reply::status(
        StatusCode::SERVICE_UNAVAILABLE,
        serde_json::json!({"error": {"message": "busy", "type": "server_error"}}),
    )
    .with_header("retry-after", "0")
}

#[tokio::test]
async fn a_failed_call_records_every_attempt_it_made() {
    let (ledger, gateway) = Ledger::start().await;
    // Passed through (grok on xAI) and translated (a chat client on Anthropic): 1 + 2 retries.
    for path in ["/v1/chat/completions", "/v1/messages"] {
        for _ in 0..3 {
            gateway.upstream.enqueue(path, unavailable());
        }
    }
    for model in ["grok", "claude-sonnet-4-5"] {
        let body =
            format!(r#"{{"model":"{model}","messages":[{{"role":"user","content":"hi"}}]}}"#);
        let response = gateway.post("/v1/chat/completions", &body).await;
        assert_eq!(
            response.status(),
            StatusCode::SERVICE_UNAVAILABLE,
            "{model}"
        );
    }
    assert_eq!(gateway.upstream.requests().len(), 6);
    assert_eq!(
        ledger.results(2).await,
        [("error".to_owned(), 503, 3), ("error".to_owned(), 503, 3)]
    );
}

#[tokio::test]
async fn a_corrupt_upstream_event_fails_the_stream_and_its_row() {
    let (ledger, gateway) = Ledger::start().await;
    let start = r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"usage":{"input_tokens":3,"output_tokens":0}}}"#;
    let block =
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#;
    let delta =
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}"#;
    let truncated =
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" wor"#;
    let stop = r#"{"type":"content_block_stop","index":0}"#;
    let message_delta = r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}"#;
    let end = r#"{"type":"message_stop"}"#;
    gateway.upstream.enqueue(
        "/v1/messages",
        corvid_test_support::Reply::sse(
            &[start, block, delta, truncated, stop, message_delta, end],
            std::time::Duration::ZERO,
        ),
    );
    let response = gateway
        .post(
            "/v1/chat/completions",
            r#"{"model":"claude-sonnet-4-5","stream":true,"messages":[{"role":"user","content":"hi"}]}"#,
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let text = response.text().await.unwrap();
    assert!(text.contains("Hello"), "{text}");
    assert!(text.contains("malformed"), "the client hears why: {text}");
    assert!(!text.contains("[DONE]"), "never a complete stream: {text}");
    assert_eq!(ledger.outcomes(1).await, ["stream_error"]);
}

#[tokio::test]
async fn a_request_the_client_abandons_before_any_reply_is_recorded_cancelled() {
    let (ledger, gateway) = Ledger::start().await;
    gateway
        .upstream
        .enqueue("/v1/messages", corvid_test_support::Reply::Hang);
    let abandoned = gateway
        .client
        .post(gateway.url("/v1/chat/completions"))
        .header("content-type", "application/json")
        .timeout(std::time::Duration::from_millis(300))
        .body(r#"{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hi"}]}"#)
        .send()
        .await;
    assert!(abandoned.is_err(), "the client gave up");
    assert_eq!(ledger.results(1).await, [("cancelled".to_owned(), 0, 0)]);
}

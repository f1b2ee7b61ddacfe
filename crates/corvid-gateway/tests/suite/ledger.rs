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

impl Ledger {
    /// `(inbound, input, cache_read, cache_write, output, reasoning)` of every row, oldest
    /// first, once `count` rows are there.
    async fn tokens(&self, count: usize) -> Vec<(String, [i64; 5])> {
        let read = |path: &std::path::Path| -> Vec<(String, [i64; 5])> {
            let connection = rusqlite::Connection::open(path).unwrap();
            let mut statement = connection
                .prepare(
                    "SELECT inbound, input, cache_read, cache_write, output, reasoning \
                     FROM requests ORDER BY id",
                )
                .unwrap();
            statement
                .query_map([], |row| {
                    Ok((
                        row.get(0)?,
                        [
                            row.get(1)?,
                            row.get(2)?,
                            row.get(3)?,
                            row.get(4)?,
                            row.get(5)?,
                        ],
                    ))
                })
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap()
        };
        self.once(read, |rows| rows.len() >= count).await
    }
}

/// A DeepSeek-style chat usage: cache hits at the top level, a top-level cache write, and
/// reasoning inside the completion.
fn deepseek_usage() -> serde_json::Value {
    serde_json::json!({
        "prompt_tokens": 100, "completion_tokens": 30, "total_tokens": 130,
        "prompt_cache_hit_tokens": 60, "prompt_cache_miss_tokens": 40,
        "cache_write_tokens": 10,
        "completion_tokens_details": {"reasoning_tokens": 12}
    })
}

#[tokio::test]
async fn one_deepseek_reply_is_ledgered_the_same_passed_through_or_translated() {
    let (ledger, gateway) = Ledger::start().await;
    let whole = serde_json::json!({
        "id": "c1", "object": "chat.completion", "created": 1, "model": "grok-4.6",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
        "usage": deepseek_usage(),
    });
    let chunks = [
        serde_json::json!({"id": "c2", "object": "chat.completion.chunk", "created": 1, "model": "grok-4.6",
            "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}]})
        .to_string(),
        serde_json::json!({"id": "c2", "object": "chat.completion.chunk", "created": 1, "model": "grok-4.6",
            "choices": [], "usage": deepseek_usage()})
        .to_string(),
        "[DONE]".to_owned(),
    ];
    let events: Vec<&str> = chunks.iter().map(String::as_str).collect();
    for _ in 0..2 {
        gateway.upstream.enqueue(
            "/v1/chat/completions",
            corvid_test_support::Reply::ok(whole.clone()),
        );
    }
    for _ in 0..2 {
        gateway.upstream.enqueue(
            "/v1/chat/completions",
            corvid_test_support::Reply::sse(&events, std::time::Duration::ZERO),
        );
    }
    for stream in [false, true] {
        // Passed through: an OpenAI chat client on grok.
        let chat = gateway
            .post(
                "/v1/chat/completions",
                &format!(r#"{{"model":"grok","stream":{stream},"stream_options":{{"include_usage":true}},"messages":[{{"role":"user","content":"hi"}}]}}"#),
            )
            .await;
        assert_eq!(chat.status(), StatusCode::OK);
        let _ = chat.text().await.unwrap();
        // Translated: an Anthropic client on the same model and upstream.
        let messages = gateway
            .client
            .post(gateway.url("/v1/messages"))
            .header("x-api-key", "client-dummy-key")
            .header("anthropic-version", "2023-06-01")
            .header("content-type", "application/json")
            .body(format!(r#"{{"model":"grok","max_tokens":100,"stream":{stream},"messages":[{{"role":"user","content":"hi"}}]}}"#))
            .send()
            .await
            .unwrap();
        assert_eq!(messages.status(), StatusCode::OK);
        let _ = messages.text().await.unwrap();
    }
    // Rows are compared as a set: a pass-through's row is written after its last byte on the
    // bookkeeping thread, a translation's when its body ends, so their order can vary.
    let mut rows = ledger.tokens(4).await;
    rows.sort();
    let expected = [30, 60, 10, 30, 12];
    assert_eq!(
        rows,
        [
            ("anthropic".to_owned(), expected),
            ("anthropic".to_owned(), expected),
            ("openai-chat".to_owned(), expected),
            ("openai-chat".to_owned(), expected),
        ]
    );
}

#[tokio::test]
async fn a_stream_the_client_leaves_right_after_its_end_event_is_recorded_ok() {
    let (ledger, gateway) = Ledger::start().await;
    let (feed, reply) = corvid_test_support::Reply::fed();
    gateway.upstream.enqueue("/v1/responses", reply);
    let response = gateway
        .post(
            "/v1/responses",
            r#"{"model":"grok","stream":true,"input":"hi"}"#,
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let mut body = futures_util::StreamExt::boxed(response.bytes_stream());
    let completed = serde_json::json!({"type": "response.completed", "sequence_number": 1,
        "response": {"id": "r1", "status": "completed", "output": [],
                     "usage": {"input_tokens": 7, "output_tokens": 3}}});
    assert!(feed.send(&format!("event: response.completed\ndata: {completed}\n\n")));
    // Codex CLI stops reading at `response.completed` and drops the connection, while the
    // upstream's stays open.
    let mut received = Vec::new();
    while !String::from_utf8_lossy(&received).contains("response.completed") {
        let chunk = futures_util::StreamExt::next(&mut body)
            .await
            .unwrap()
            .unwrap();
        received.extend_from_slice(&chunk);
    }
    drop(body);
    assert_eq!(ledger.outcomes(1).await, ["ok"]);
    assert_eq!(ledger.tokens(1).await[0].1, [7, 0, 0, 3, 0]);
    drop(feed);
}

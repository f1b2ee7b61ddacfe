//! Every request lands in the usage ledger: dialect, provider, model, status, timings and
//! tokens, and never the prompt unless `log_prompts` is on.

use corvid_store::{Store, UsageRecorder};
use http::StatusCode;

use super::harness::Gateway;

/// The `outcome` column of every row, oldest first, once `count` rows are there.
async fn outcomes(recorder: &UsageRecorder, path: &std::path::Path, count: usize) -> Vec<String> {
    let mut outcomes = Vec::new();
    for _ in 0..100 {
        recorder.flush().unwrap();
        let connection = rusqlite::Connection::open(path).unwrap();
        let mut statement = connection
            .prepare("SELECT outcome FROM requests ORDER BY id")
            .unwrap();
        outcomes = statement
            .query_map([], |row| row.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        if outcomes.len() >= count {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    outcomes
}

#[tokio::test]
async fn a_finished_pass_through_is_recorded_ok_whether_or_not_its_length_was_known() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("corvid.db");
    let recorder = UsageRecorder::spawn(Store::open(&path).unwrap()).unwrap();
    let gateway = Gateway::start_recording(recorder.clone()).await;

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

    assert_eq!(outcomes(&recorder, &path, 2).await, ["ok", "ok"]);
}

#[tokio::test]
async fn requests_are_recorded_with_their_usage() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("corvid.db");
    let recorder = UsageRecorder::spawn(Store::open(&path).unwrap()).unwrap();
    let gateway = Gateway::start_recording(recorder.clone()).await;

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
    let mut rows = Vec::new();
    for _ in 0..100 {
        recorder.flush().unwrap();
        rows = Store::open(&path)
            .unwrap()
            .usage_by_day_and_model(None)
            .unwrap();
        if rows.iter().map(|row| row.requests).sum::<u64>() >= 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let grok = rows
        .iter()
        .find(|row| row.model == "grok-4.6")
        .expect("grok row");
    assert_eq!(grok.requests, 1);
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

    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains("secret prompt"),
            "no prompt text without log_prompts"
        );
    }
}

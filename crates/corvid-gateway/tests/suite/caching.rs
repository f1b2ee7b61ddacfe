//! Provider prompt caching survives a translation: a Chat Completions client (which cannot mark
//! Anthropic cache breakpoints) on a Claude model gets breakpoints added by corvid, so its
//! second turn reads the first turn's prompt from the cache — on a mock that caches by
//! Anthropic's rules — and the ledger records the reads and writes.

use corvid_store::{Store, UsageRecorder};
use corvid_test_support::anthropic_cache::AnthropicCacheMock;
use serde_json::{Value, json};

use super::harness::Gateway;

#[tokio::test]
async fn the_second_turn_reads_the_first_from_the_cache() {
    let mock = AnthropicCacheMock::start().await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("corvid.db");
    let recorder = UsageRecorder::spawn(Store::open(&path).unwrap()).unwrap();
    let gateway = Gateway::start_recording_at(recorder.clone(), &mock.base_url()).await;
    let system = "You are a careful coding assistant. ".repeat(200);
    let mut messages = vec![
        json!({"role": "system", "content": system}),
        json!({"role": "user", "content": "What does main.rs do?"}),
    ];
    let ask = |messages: &Vec<Value>| {
        json!({"model": "anthropic/claude-sonnet-4-5", "messages": messages}).to_string()
    };
    let first: Value = gateway
        .post("/v1/chat/completions", &ask(&messages))
        .await
        .json()
        .await
        .unwrap();
    messages.push(json!({"role": "assistant", "content": "It starts the server."}));
    messages.push(json!({"role": "user", "content": "And lib.rs?"}));
    let second: Value = gateway
        .post("/v1/chat/completions", &ask(&messages))
        .await
        .json()
        .await
        .unwrap();
    let usages = mock.usages();
    assert_eq!(usages.len(), 2, "{usages:?}");
    assert_eq!(usages[0]["cache_read_input_tokens"], 0);
    assert!(
        usages[0]["cache_creation_input_tokens"].as_u64().unwrap() > 1000,
        "{usages:?}"
    );
    let read = usages[1]["cache_read_input_tokens"].as_u64().unwrap();
    assert!(read > 1000, "turn 2 read the cache: {usages:?}");
    assert_eq!(
        second["usage"]["prompt_tokens_details"]["cached_tokens"].as_u64(),
        Some(read),
        "{second}"
    );
    assert!(
        first["usage"]["prompt_tokens"].as_u64().unwrap() > 1000,
        "{first}"
    );
    // The ledger keeps the reads and writes.
    let mut rows: Vec<(i64, i64)> = Vec::new();
    for _ in 0..100 {
        recorder.flush().unwrap();
        let connection = rusqlite::Connection::open(&path).unwrap();
        let mut statement = connection
            .prepare("SELECT cache_read, cache_write FROM requests ORDER BY id")
            .unwrap();
        rows = statement
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        if rows.len() == 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(rows.len(), 2);
    assert!(rows[0].1 > 1000 && rows[0].0 == 0, "{rows:?}");
    assert_eq!(rows[1].0 as u64, read, "{rows:?}");
}

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

/// Toward OpenAI, every request of one conversation carries the same `prompt_cache_key`
/// (its requests then reach the same cache), translated or passed through; another
/// conversation gets another; a client's own key is kept.
#[tokio::test]
async fn a_conversation_keeps_one_prompt_cache_key_toward_openai() {
    let gateway = Gateway::start_with(|config| {
        super::harness::providers_on_mock(config, &["openai"]);
    })
    .await;
    let claude_code = |first: &str, turns: usize| {
        let mut messages = vec![json!({"role": "user", "content": first})];
        for turn in 0..turns {
            messages.push(json!({"role": "assistant", "content": format!("answer {turn}")}));
            messages.push(json!({"role": "user", "content": format!("more {turn}")}));
        }
        json!({"model": "openai/gpt-5", "max_tokens": 100, "messages": messages}).to_string()
    };
    for (first, turns) in [("A", 0), ("A", 1), ("B", 0)] {
        gateway
            .post("/v1/messages", &claude_code(first, turns))
            .await;
    }
    let chat = |key: Option<&str>| {
        let mut body =
            json!({"model": "openai/gpt-5", "messages": [{"role": "user", "content": "A"}]});
        if let Some(key) = key {
            body["prompt_cache_key"] = json!(key);
        }
        body.to_string()
    };
    gateway.post("/v1/chat/completions", &chat(None)).await;
    gateway
        .post("/v1/chat/completions", &chat(Some("mine")))
        .await;
    let keys: Vec<String> = gateway
        .upstream
        .requests()
        .iter()
        .filter(|request| request.method == "POST")
        .map(|request| {
            request.json()["prompt_cache_key"]
                .as_str()
                .unwrap_or("")
                .to_owned()
        })
        .collect();
    assert_eq!(keys.len(), 5, "{keys:?}");
    assert!(keys[0].starts_with("corvid-"), "{keys:?}");
    assert_eq!(keys[0], keys[1], "one conversation, one key");
    assert_ne!(keys[0], keys[2], "another conversation, another key");
    assert!(
        keys[3].starts_with("corvid-"),
        "a chat client's pass-through: {keys:?}"
    );
    assert_eq!(keys[4], "mine");
}

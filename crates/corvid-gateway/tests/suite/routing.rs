//! Routing: fallback chains before the first byte only, key pools resting a rate-limited key,
//! conversations staying where they began, a forced move settling opaque reasoning, and
//! task rules — each against mock providers on loopback.

use std::time::Duration;

use corvid_config::ProviderKind;
use corvid_test_support::upstream::{anthropic_json, chat_json};
use corvid_test_support::{MockUpstream, Reply};
use http::StatusCode;
use serde_json::{Value, json};

use super::routed_harness::{DEAD, Routed, chat, header, keys_sent, provider, route};

#[tokio::test]
async fn a_rate_limited_key_rests_and_the_next_key_serves() {
    let mock = MockUpstream::start().await;
    let gateway = Routed::start(
        vec![provider(
            "pool",
            ProviderKind::OpenAiChat,
            &mock.base_url(),
            2,
        )],
        |config| config.default_model = "pool/m".to_owned(),
    )
    .await;
    mock.enqueue(
        "/v1/chat/completions",
        Reply::status(
            StatusCode::TOO_MANY_REQUESTS,
            json!({"error": {"message": "slow down", "type": "rate_limit"}}),
        )
        .with_header("retry-after", "30"),
    );
    mock.enqueue("/v1/chat/completions", Reply::ok(chat_json("m", "hi")));
    let body = json!({"model": "pool/m", "messages": [{"role": "user", "content": "a"}]});
    let answer = gateway.post("/v1/chat/completions", &body, &[]).await;
    assert_eq!(answer.status(), 200);
    assert_eq!(
        header(&answer, "x-corvid-target").as_deref(),
        Some("pool/m")
    );
    assert_eq!(header(&answer, "x-corvid-key").as_deref(), Some("1"));
    assert_eq!(
        keys_sent(&mock),
        ["pool-key-0", "pool-key-1"],
        "no wait on key 0"
    );
    // Key 0 rests for its Retry-After: the next requests all go to key 1.
    for _ in 0..3 {
        let again = gateway.post("/v1/chat/completions", &body, &[]).await;
        assert_eq!(again.status(), 200);
        assert_eq!(header(&again, "x-corvid-key").as_deref(), Some("1"));
    }
    assert_eq!(keys_sent(&mock)[2..], ["pool-key-1"; 3]);
    let rows = gateway.rows(5).await;
    assert_eq!((rows[0].2, rows[0].3), (429, Some(0)));
    assert_eq!((rows[1].2, rows[1].3), (200, Some(1)));
    let text = format!("{rows:?}");
    assert!(!text.contains("pool-key-"), "keys are never in the ledger");
}

#[tokio::test]
async fn keys_are_spread_across_requests() {
    let mock = MockUpstream::start().await;
    let gateway = Routed::start(
        vec![provider(
            "pool",
            ProviderKind::OpenAiChat,
            &mock.base_url(),
            3,
        )],
        |_| {},
    )
    .await;
    for index in 0..3 {
        let body = json!({"model": "pool/m", "messages": [{"role": "user", "content": format!("q{index}")}]});
        assert_eq!(
            gateway
                .post("/v1/chat/completions", &body, &[])
                .await
                .status(),
            200
        );
    }
    let mut sent = keys_sent(&mock);
    sent.sort();
    assert_eq!(sent, ["pool-key-0", "pool-key-1", "pool-key-2"]);
}

#[tokio::test]
async fn a_dead_provider_fails_over_before_the_first_byte() {
    let live = MockUpstream::start().await;
    let gateway = Routed::start(
        vec![
            provider("dead", ProviderKind::Anthropic, DEAD, 1),
            provider("live", ProviderKind::OpenAiChat, &live.base_url(), 1),
        ],
        |config| route(config, "sonnet", &["dead/claude-x", "live/gpt-x"]),
    )
    .await;
    for stream in [false, true] {
        // Two conversations (a conversation that moved stays on live: see the stickiness test).
        let mut body = chat(&format!("hello, streamed {stream}"));
        body["stream"] = json!(stream);
        let answer = gateway.post("/v1/chat/completions", &body, &[]).await;
        assert_eq!(answer.status(), 200, "stream {stream}");
        assert_eq!(
            header(&answer, "x-corvid-target").as_deref(),
            Some("live/gpt-x")
        );
        let text = answer.text().await.unwrap();
        assert!(text.contains("chat.completion"), "{text}");
    }
    assert_eq!(live.requests()[0].json()["model"], "gpt-x");
    let rows = gateway.rows(4).await;
    // Rows are written as each exchange ends (a stream's once it is over): compare as a set.
    let mut targets: Vec<(&str, u16)> = rows.iter().map(|row| (row.0.as_str(), row.2)).collect();
    targets.sort();
    assert_eq!(
        targets,
        [("dead", 0), ("dead", 0), ("live", 200), ("live", 200)]
    );
}

#[tokio::test]
async fn nothing_moves_after_the_first_byte() {
    let first = MockUpstream::start().await;
    let second = MockUpstream::start().await;
    let gateway = Routed::start(
        vec![
            provider("a", ProviderKind::OpenAiChat, &first.base_url(), 1),
            provider("b", ProviderKind::OpenAiChat, &second.base_url(), 1),
        ],
        |config| route(config, "sonnet", &["a/m", "b/m"]),
    )
    .await;
    // A stream that starts, then breaks off.
    first.enqueue(
        "/v1/chat/completions",
        Reply::Stream {
            chunks: vec![(
                Duration::from_millis(1),
                bytes::Bytes::from(format!(
                    "data: {}\n\n",
                    json!({"id":"c","object":"chat.completion.chunk","created":1,"model":"m",
                           "choices":[{"index":0,"delta":{"role":"assistant","content":"par"}}]})
                )),
            )],
            end: corvid_test_support::StreamEnd::Abort,
        },
    );
    let mut body = chat("hello");
    body["stream"] = json!(true);
    let answer = gateway.post("/v1/chat/completions", &body, &[]).await;
    assert_eq!(answer.status(), 200);
    assert_eq!(header(&answer, "x-corvid-target").as_deref(), Some("a/m"));
    let text = answer.text().await.unwrap_or_default();
    assert!(text.contains("par"), "{text}");
    assert!(
        second.requests().is_empty(),
        "never retried elsewhere after output"
    );
}

#[tokio::test]
async fn a_refusal_that_would_be_the_same_anywhere_is_not_failed_over() {
    let first = MockUpstream::start().await;
    let second = MockUpstream::start().await;
    let gateway = Routed::start(
        vec![
            provider("a", ProviderKind::OpenAiChat, &first.base_url(), 1),
            provider("b", ProviderKind::OpenAiChat, &second.base_url(), 1),
        ],
        |config| route(config, "sonnet", &["a/m", "b/m"]),
    )
    .await;
    first.enqueue(
        "/v1/chat/completions",
        Reply::status(
            StatusCode::BAD_REQUEST,
            json!({"error": {"message": "max_tokens is too large", "type": "invalid_request_error"}}),
        ),
    );
    let answer = gateway
        .post("/v1/chat/completions", &chat("hello"), &[])
        .await;
    assert_eq!(answer.status(), 400);
    assert_eq!(header(&answer, "x-corvid-target").as_deref(), Some("a/m"));
    assert!(
        answer
            .text()
            .await
            .unwrap()
            .contains("max_tokens is too large")
    );
    assert!(second.requests().is_empty());
    // An overloaded first target does fail over.
    first.enqueue(
        "/v1/chat/completions",
        Reply::status(
            StatusCode::SERVICE_UNAVAILABLE,
            json!({"error": {"message": "down"}}),
        ),
    );
    let answer = gateway
        .post("/v1/chat/completions", &chat("again"), &[])
        .await;
    assert_eq!(answer.status(), 200);
    assert_eq!(header(&answer, "x-corvid-target").as_deref(), Some("b/m"));
}

#[tokio::test]
async fn interleaved_conversations_each_stay_on_their_own_target() {
    let first = MockUpstream::start().await;
    let second = MockUpstream::start().await;
    let gateway = Routed::start(
        vec![
            provider("a", ProviderKind::OpenAiChat, &first.base_url(), 1),
            provider("b", ProviderKind::OpenAiChat, &second.base_url(), 1),
        ],
        |config| route(config, "sonnet", &["a/m", "b/m"]),
    )
    .await;
    let turn = |first_turn: &str, later: usize| {
        let mut messages = vec![json!({"role": "user", "content": first_turn})];
        for index in 0..later {
            messages.push(json!({"role": "assistant", "content": format!("answer {index}")}));
            messages.push(json!({"role": "user", "content": format!("more {index}")}));
        }
        json!({"model": "sonnet", "messages": messages})
    };
    // X begins on b (a was down for its first turn); Y begins on a.
    first.enqueue(
        "/v1/chat/completions",
        Reply::status(
            StatusCode::BAD_GATEWAY,
            json!({"error": {"message": "down"}}),
        ),
    );
    let x = gateway
        .post("/v1/chat/completions", &turn("X", 0), &[])
        .await;
    assert_eq!(header(&x, "x-corvid-target").as_deref(), Some("b/m"));
    let y = gateway
        .post("/v1/chat/completions", &turn("Y", 0), &[])
        .await;
    assert_eq!(header(&y, "x-corvid-target").as_deref(), Some("a/m"));
    for later in 1..4 {
        let x = gateway
            .post("/v1/chat/completions", &turn("X", later), &[])
            .await;
        assert_eq!(
            header(&x, "x-corvid-target").as_deref(),
            Some("b/m"),
            "X turn {later}"
        );
        let y = gateway
            .post("/v1/chat/completions", &turn("Y", later), &[])
            .await;
        assert_eq!(
            header(&y, "x-corvid-target").as_deref(),
            Some("a/m"),
            "Y turn {later}"
        );
    }
    // A session header wins over the first turn: two bodies, one session.
    let session = [("x-claude-code-session-id", "s-1")];
    first.enqueue(
        "/v1/chat/completions",
        Reply::status(
            StatusCode::BAD_GATEWAY,
            json!({"error": {"message": "down"}}),
        ),
    );
    let one = gateway
        .post("/v1/chat/completions", &turn("S1", 0), &session)
        .await;
    assert_eq!(header(&one, "x-corvid-target").as_deref(), Some("b/m"));
    let two = gateway
        .post("/v1/chat/completions", &turn("S2", 0), &session)
        .await;
    assert_eq!(header(&two, "x-corvid-target").as_deref(), Some("b/m"));
}

#[tokio::test]
async fn a_forced_move_drops_reasoning_the_new_target_cannot_read() {
    let home = MockUpstream::start().await;
    let other = MockUpstream::start().await;
    let gateway = Routed::start(
        vec![
            provider("a", ProviderKind::Anthropic, &home.base_url(), 1),
            provider("c", ProviderKind::Anthropic, &other.base_url(), 1),
        ],
        |config| route(config, "claude", &["a/claude-x", "c/claude-x"]),
    )
    .await;
    let headers = [("anthropic-version", "2023-06-01")];
    let first_turn = json!({"role": "user", "content": "list the files"});
    let mut reply = anthropic_json("claude-x", "");
    reply["content"] = json!([
        {"type": "thinking", "thinking": "use ls", "signature": "sig-from-a"},
        {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"cmd": "ls"}}
    ]);
    reply["stop_reason"] = json!("tool_use");
    home.enqueue("/v1/messages", Reply::ok(reply.clone()));
    let tools = json!([{"name": "bash", "input_schema": {"type": "object"}}]);
    let one = gateway
        .post(
            "/v1/messages",
            &json!({"model": "claude", "max_tokens": 2048, "tools": tools,
                    "thinking": {"type": "enabled", "budget_tokens": 1024},
                    "messages": [first_turn]}),
            &headers,
        )
        .await;
    assert_eq!(
        header(&one, "x-corvid-target").as_deref(),
        Some("a/claude-x")
    );
    let answered: Value = one.json().await.unwrap();
    assert_eq!(
        answered["content"][0]["signature"], "sig-from-a",
        "passed through"
    );
    // Turn 2: a is overloaded; the conversation must move to c, which cannot read a's
    // signature.
    home.enqueue(
        "/v1/messages",
        Reply::status(
            StatusCode::from_u16(529).unwrap(),
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}),
        ),
    );
    let two = gateway
        .post(
            "/v1/messages",
            &json!({"model": "claude", "max_tokens": 2048, "tools": tools,
            "thinking": {"type": "enabled", "budget_tokens": 1024},
            "messages": [
                first_turn,
                {"role": "assistant", "content": answered["content"]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"}]}
            ]}),
            &headers,
        )
        .await;
    assert_eq!(two.status(), 200);
    assert_eq!(
        header(&two, "x-corvid-target").as_deref(),
        Some("c/claude-x")
    );
    let sent = other.requests();
    let body = String::from_utf8_lossy(&sent[0].body).into_owned();
    assert!(
        !body.contains("sig-from-a"),
        "a's signature reached c: {body}"
    );
    assert!(!body.contains("corvid1_"), "{body}");
    assert!(body.contains("toolu_1"), "the tool loop is kept: {body}");
}

#[tokio::test]
async fn task_rules_pick_the_target_and_say_so() {
    let main = MockUpstream::start().await;
    let fast = MockUpstream::start().await;
    let gateway = Routed::start(
        vec![
            provider("main", ProviderKind::Anthropic, &main.base_url(), 1),
            provider("fast", ProviderKind::OpenAiChat, &fast.base_url(), 1),
        ],
        |config| {
            config.routing.rules.background = Some("fast/small".to_owned());
            config.routing.rules.think = Some("main/claude-think".to_owned());
            config.routing.rules.long_context = Some("fast/long".to_owned());
            config.routing.rules.long_context_threshold = 2_000;
            config.default_model = "main/claude-x".to_owned();
        },
    )
    .await;
    let headers = [("anthropic-version", "2023-06-01")];
    let ask = |model: &str, extra: Value| {
        let mut body = json!({"model": model, "max_tokens": 2048,
                              "messages": [{"role": "user", "content": "hi"}]});
        if let Value::Object(extra) = extra {
            body.as_object_mut().unwrap().extend(extra);
        }
        body
    };
    // Claude Code's background call (its small/fast haiku model).
    let background = gateway
        .post(
            "/v1/messages",
            &ask("claude-haiku-4-5-20251001", json!({})),
            &headers,
        )
        .await;
    assert_eq!(background.status(), 200);
    assert_eq!(
        header(&background, "x-corvid-rule").as_deref(),
        Some("background")
    );
    assert_eq!(
        header(&background, "x-corvid-target").as_deref(),
        Some("fast/small")
    );
    assert_eq!(fast.requests()[0].json()["model"], "small");
    // Thinking asked for.
    let think = gateway
        .post(
            "/v1/messages",
            &ask(
                "main/claude-x",
                json!({"thinking": {"type": "enabled", "budget_tokens": 1024}}),
            ),
            &headers,
        )
        .await;
    assert_eq!(header(&think, "x-corvid-rule").as_deref(), Some("think"));
    assert_eq!(
        header(&think, "x-corvid-target").as_deref(),
        Some("main/claude-think")
    );
    // A long prompt.
    let long = gateway
        .post(
            "/v1/messages",
            &json!({"model": "main/claude-x", "max_tokens": 100,
                    "messages": [{"role": "user", "content": "word ".repeat(20_000)}]}),
            &headers,
        )
        .await;
    assert_eq!(
        header(&long, "x-corvid-rule").as_deref(),
        Some("long_context")
    );
    // Nothing special: no rule.
    let plain = gateway
        .post("/v1/messages", &ask("main/claude-x", json!({})), &headers)
        .await;
    assert_eq!(header(&plain, "x-corvid-rule"), None);
    assert_eq!(
        header(&plain, "x-corvid-target").as_deref(),
        Some("main/claude-x")
    );
    let rows = gateway.rows(4).await;
    let mut rules: Vec<Option<&str>> = rows.iter().map(|row| row.4.as_deref()).collect();
    rules.sort();
    assert_eq!(
        rules,
        [
            None,
            Some("background"),
            Some("long_context"),
            Some("think")
        ]
    );
}

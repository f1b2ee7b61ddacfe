//! Routing: fallback chains before the first byte only, key pools resting a rate-limited key,
//! conversations staying where they began, a forced move settling opaque reasoning, and
//! task rules — each against mock providers on loopback.

use std::collections::BTreeMap;
use std::time::Duration;

use corvid_auth::{Credential, Secret};
use corvid_config::{
    Capabilities, Config, CredentialSource, ProviderConfig, ProviderKind, RouteTargets,
};
use corvid_gateway::{AppState, router};
use corvid_providers::Registry;
use corvid_store::{Store, UsageRecorder};
use corvid_test_support::upstream::{anthropic_json, chat_json};
use corvid_test_support::{MockUpstream, Reply};
use http::StatusCode;
use serde_json::{Value, json};

/// A gateway over named providers, each on its own mock (or on a dead port).
struct Routed {
    addr: std::net::SocketAddr,
    client: reqwest::Client,
    ledger: std::path::PathBuf,
    recorder: UsageRecorder,
    _dir: tempfile::TempDir,
    _stop: tokio::sync::oneshot::Sender<()>,
}

/// A provider of `kind` at `base_url` with `keys` keys named `<name>-key-<i>`.
fn provider(name: &str, kind: ProviderKind, base_url: &str, keys: usize) -> ProviderConfig {
    ProviderConfig {
        name: name.to_owned(),
        kind,
        base_url: base_url.to_owned(),
        credential: CredentialSource::Env(vec![format!("{name}_KEY")]),
        key_pool: (1..keys)
            .map(|index| format!("{name}_KEY_{index}"))
            .collect(),
        headers: Vec::new(),
        models: Vec::new(),
        model_rules: BTreeMap::new(),
        explicit: true,
        enabled: true,
        capabilities: Capabilities::PLAIN,
    }
}

/// A base URL nothing listens on.
const DEAD: &str = "http://127.0.0.1:1/v1";

impl Routed {
    async fn start(providers: Vec<ProviderConfig>, configure: impl FnOnce(&mut Config)) -> Self {
        let mut config = Config {
            max_retries: 0,
            ..Config::default()
        };
        config.providers.extend(providers);
        configure(&mut config);
        let registry = Registry::build_pooled(&config, |provider| {
            (0..=provider.key_pool.len())
                .map(|index| Credential::Key {
                    provider: provider.name.clone(),
                    secret: Secret::new(format!("{}-key-{index}", provider.name)),
                })
                .collect()
        })
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let ledger = dir.path().join("corvid.db");
        let recorder = UsageRecorder::spawn(Store::open(&ledger).unwrap()).unwrap();
        let state = AppState::new(config, registry).with_recorder(recorder.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(corvid_gateway::serve(
            listener,
            router(state),
            async move {
                let _ = stopped.await;
            },
            Duration::from_secs(1),
        ));
        Self {
            addr,
            client: reqwest::Client::builder().no_proxy().build().unwrap(),
            ledger,
            recorder,
            _dir: dir,
            _stop: stop,
        }
    }

    async fn post(&self, path: &str, body: &Value, headers: &[(&str, &str)]) -> reqwest::Response {
        let mut request = self
            .client
            .post(format!("http://{}{path}", self.addr))
            .json(body);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.send().await.unwrap()
    }

    /// `(provider, model, status, key_index, rule)` of every ledger row, once `count` are in.
    async fn rows(&self, count: usize) -> Vec<(String, String, u16, Option<u32>, Option<String>)> {
        let mut rows = Vec::new();
        for _ in 0..100 {
            self.recorder.flush().unwrap();
            let connection = rusqlite::Connection::open(&self.ledger).unwrap();
            let mut statement = connection
                .prepare(
                    "SELECT provider, model, status, key_index, rule FROM requests ORDER BY id",
                )
                .unwrap();
            rows = statement
                .query_map([], |row| {
                    Ok((
                        row.get(0)?,
                        row.get(1)?,
                        row.get(2)?,
                        row.get(3)?,
                        row.get(4)?,
                    ))
                })
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            if rows.len() >= count {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        rows
    }
}

fn header(response: &reqwest::Response, name: &str) -> Option<String> {
    response
        .headers()
        .get(name)
        .map(|value| value.to_str().unwrap().to_owned())
}

fn chat(text: &str) -> Value {
    json!({"model": "sonnet", "messages": [{"role": "user", "content": text}]})
}

fn route(config: &mut Config, name: &str, targets: &[&str]) {
    config.routing.routes.insert(
        name.to_owned(),
        RouteTargets {
            targets: targets.iter().map(|target| (*target).to_owned()).collect(),
        },
    );
}

fn keys_sent(mock: &MockUpstream) -> Vec<String> {
    mock.requests()
        .iter()
        .map(|request| {
            request.headers["authorization"]
                .to_str()
                .unwrap()
                .trim_start_matches("Bearer ")
                .to_owned()
        })
        .collect()
}

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

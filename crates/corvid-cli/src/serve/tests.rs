use parking_lot::Mutex;
use std::collections::HashMap;
use std::time::Duration;

use corvid_agent::OpenConversation;
use corvid_protocol::{EventMsg, Op, SendParams};
use corvid_store::Store;
use corvid_test_support::upstream::{MockUpstream, Reply, chat_json, chat_stream};

use super::*;

/// `corvid serve`'s parts, as `run` wires them, over an in-memory store: an in-memory SQLite
/// database exists only inside its one connection, so every row found in it below went through
/// the one handle the gateway and the page's agent were given.
#[tokio::test]
async fn the_gateway_and_the_pages_agent_write_one_ledger_through_one_store() {
    let upstream = MockUpstream::start().await;
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let env = HashMap::from([
        ("CORVID_HOME".to_owned(), home.path().display().to_string()),
        ("CORVID_KEYRING".to_owned(), "off".to_owned()),
        ("CORVID_UPSTREAM".to_owned(), upstream.base_url()),
        ("XAI_API_KEY".to_owned(), "xai-test-key".to_owned()),
    ]);
    let loaded = corvid_config::load(&corvid_config::Flags::default(), &env).unwrap();
    let registry = Registry::from_config(&loaded, reqwest::Client::new()).unwrap();
    let store: SharedStore = Arc::new(Mutex::new(Store::open_in_memory().unwrap()));
    let state = gateway_state(loaded.config.clone(), registry, Some(&store));
    let (agent, root) = page_agent(
        &loaded,
        Some(project.path()),
        &state,
        store.clone(),
        &corvid_agent::AttentionFeed::new(),
    )
    .unwrap();
    assert_eq!(root, project.path());

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let page = PageState::new(
        state.clone(),
        agent.clone(),
        Token::from_text("test-token-0123456789"),
        loaded.clone(),
        port,
    );
    let app = corvid_server::app(router(state.clone()), page);
    tokio::spawn(corvid_gateway::serve(
        listener,
        app,
        std::future::pending(),
        Duration::from_secs(1),
    ));

    // An editor's request through the gateway.
    let model = loaded.config.default_model.clone();
    upstream.enqueue(
        "/v1/chat/completions",
        Reply::ok(chat_json(&model, "from the gateway")),
    );
    let answer = reqwest::Client::new()
        .post(format!("http://127.0.0.1:{port}/v1/chat/completions"))
        .json(&serde_json::json!({"model": model, "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);

    // A turn of the page's agent.
    upstream.enqueue(
        "/v1/chat/completions",
        chat_stream(&model, &["from ", "the agent"]),
    );
    let session = agent.open(OpenConversation::Current).await.unwrap();
    let mut events = session.subscribe_ready().await;
    session.submit(Op::Send(SendParams::text("hello")));
    let finished = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let frame = events.recv().await.expect("the session runs");
            if let Some(EventMsg::TurnFinished(finished)) =
                frame.event().map(|event| event.msg.clone())
            {
                return finished;
            }
        }
    })
    .await
    .expect("the turn finished");
    assert_eq!(finished.outcome, corvid_protocol::TurnOutcome::Completed);
    // A failed call of the agent is the provider's last error, as a gateway request's is.
    let xai = state.registry().provider("xai").unwrap().clone();
    assert_eq!(xai.upstream().last_failure(), None);
    upstream.enqueue(
        "/v1/chat/completions",
        Reply::status(
            http::StatusCode::SERVICE_UNAVAILABLE,
            serde_json::json!({"error": {"message": "overloaded right now"}}),
        )
        .with_header("retry-after", "0"),
    );
    for _ in 0..loaded.config.max_retries {
        upstream.enqueue(
            "/v1/chat/completions",
            Reply::status(
                http::StatusCode::SERVICE_UNAVAILABLE,
                serde_json::json!({"error": {"message": "overloaded right now"}}),
            )
            .with_header("retry-after", "0"),
        );
    }
    session.submit(Op::Send(SendParams::text("again")));
    tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let frame = events.recv().await.expect("the session runs");
            if frame
                .event()
                .is_some_and(|event| matches!(event.msg, EventMsg::TurnFinished(_)))
            {
                return;
            }
        }
    })
    .await
    .expect("the failed turn finished");
    let failure = xai
        .upstream()
        .last_failure()
        .expect("the agent's failure is noted");
    assert_eq!(failure.status, Some(503));
    assert_eq!(failure.message, "overloaded right now");
    state.settle().await;

    let store = store.lock();
    let rows = store.usage_by_day_and_model(None).unwrap();
    let requests = |front_end: &str| -> u64 {
        rows.iter()
            .filter(|row| row.front_end == front_end)
            .map(|row| row.requests)
            .sum()
    };
    // The gateway's request; the agent's answered call and its failed one.
    assert_eq!((requests("gateway"), requests("web")), (1, 2), "{rows:?}");
    let key = project.path().canonicalize().unwrap().display().to_string();
    assert_eq!(store.list_conversations(&key).unwrap().len(), 1);
    // Nothing was written to the database file in the data folder: there is no second handle.
    assert!(!loaded.paths.database().exists());
}

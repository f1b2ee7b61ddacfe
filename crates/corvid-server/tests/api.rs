//! The page's API through a real socket: the guard (Host, Origin, token, content type, size),
//! every route's answer to bad input, the WebSocket's answers to bad frames, and that a good
//! frame after a bad one still gets through.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use corvid_agent::{AgentConfig, EventStream, ModelClient, ModelError, StreamFuture};
use corvid_protocol::ErrorClass;
use corvid_server::{EngineSessions, PageState, Token};
use corvid_test_support::scripted::{ScriptedModel, ScriptedReply};
use corvid_wire::model::ChatRequest;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

const TOKEN: &str = "test-token-0123456789";

struct Scripted(Arc<ScriptedModel>);

impl ModelClient for Scripted {
    fn stream(&self, request: ChatRequest) -> StreamFuture<'_> {
        let reply = self.0.next(request);
        Box::pin(async move {
            match reply {
                ScriptedReply::Events(events) => {
                    Ok(Box::pin(futures_util::stream::iter(events)) as EventStream)
                }
                _ => Err(ModelError::new(ErrorClass::ServerError, "unscripted")),
            }
        })
    }
}

struct Running {
    base: String,
    host: String,
    home: tempfile::TempDir,
    _project: tempfile::TempDir,
    http: reqwest::Client,
}

async fn start(replies: Vec<ScriptedReply>) -> Running {
    start_with(replies, "").await
}

async fn start_with(replies: Vec<ScriptedReply>, config_toml: &str) -> Running {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    if !config_toml.is_empty() {
        std::fs::write(home.path().join("config.toml"), config_toml).unwrap();
    }
    // The keyring off: a test must never write to the machine's real one.
    let env = HashMap::from([
        ("CORVID_HOME".to_owned(), home.path().display().to_string()),
        ("CORVID_KEYRING".to_owned(), "off".to_owned()),
    ]);
    let loaded = corvid_config::load(&corvid_config::Flags::default(), &env).unwrap();
    let registry =
        corvid_providers::Registry::from_config(&loaded, reqwest::Client::new()).unwrap();
    let gateway_state = corvid_gateway::AppState::new(loaded.config.clone(), registry);
    let gateway = corvid_gateway::router(gateway_state.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut agent = AgentConfig::new(project.path().to_owned(), "scripted");
    agent.database = Some(home.path().join("agent.sqlite"));
    agent.output_dir = home.path().join("output");
    let model = Arc::new(Scripted(Arc::new(ScriptedModel::new(replies))));
    let sessions = EngineSessions::spawn(agent, model).unwrap();
    let page = PageState::new(
        gateway_state,
        Arc::new(sessions),
        Token::from_text(TOKEN),
        loaded,
        port,
        Some(home.path().join("agent.sqlite")),
    );
    let app = corvid_server::app(gateway, page);
    tokio::spawn(corvid_gateway::serve(
        listener,
        app,
        std::future::pending(),
        Duration::from_secs(1),
    ));
    Running {
        base: format!("http://127.0.0.1:{port}"),
        host: format!("127.0.0.1:{port}"),
        home,
        _project: project,
        http: reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap(),
    }
}

impl Running {
    fn origin(&self) -> String {
        self.base.clone()
    }

    /// A request with the right cookie and Origin.
    fn authed(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.http
            .request(method, format!("{}{path}", self.base))
            .header("cookie", format!("corvid_token={TOKEN}"))
            .header("origin", self.origin())
    }

    async fn json(&self, method: reqwest::Method, path: &str, body: Value) -> (u16, Value) {
        let response = self.authed(method, path).json(&body).send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }
}

fn message_of(body: &Value) -> String {
    body["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn forged_host_is_refused() {
    let server = start(vec![]).await;
    for path in ["/", "/api/status", "/assets/app.js"] {
        let response = server
            .http
            .get(format!("{}{path}", server.base))
            .header("host", "evil.example:80")
            .header("cookie", format!("corvid_token={TOKEN}"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 403, "{path}");
    }
    // The gateway's own routes keep the gateway's guard.
    let response = server
        .http
        .get(format!("{}/healthz", server.base))
        .header("host", "evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
    let response = server
        .http
        .get(format!("{}/healthz", server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
}

#[tokio::test]
async fn missing_or_wrong_token_is_refused() {
    let server = start(vec![]).await;
    let url = format!("{}/api/status", server.base);
    let missing = server.http.get(&url).send().await.unwrap();
    assert_eq!(missing.status(), 401);
    let body: Value = missing.json().await.unwrap();
    assert!(message_of(&body).contains("corvid serve"), "{body}");
    let wrong = server
        .http
        .get(&url)
        .header("cookie", "corvid_token=test-token-0123456788")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);
    let bearer = server
        .http
        .get(&url)
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(bearer.status(), 200);
    let right = server
        .authed(reqwest::Method::GET, "/api/status")
        .send()
        .await
        .unwrap();
    assert_eq!(right.status(), 200);
    let status: Value = right.json().await.unwrap();
    assert_eq!(status["gateway"], "up");

    // The page's link: a right token becomes the cookie; a wrong one is refused.
    let exchanged = server
        .http
        .get(format!("{}/?token={TOKEN}", server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(exchanged.status(), 303);
    let cookie = exchanged.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    let refused = server
        .http
        .get(format!("{}/?token=nope", server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    assert!(refused.headers().get("set-cookie").is_none());
    // The page itself carries a CSP without inline script.
    let page = server
        .http
        .get(format!("{}/", server.base))
        .send()
        .await
        .unwrap();
    let csp = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        csp.contains("script-src 'self'") && !csp.contains("unsafe-inline"),
        "{csp}"
    );
}

#[tokio::test]
async fn state_changes_need_this_origin_and_json() {
    let server = start(vec![]).await;
    let url = format!("{}/api/conversations", server.base);
    for origin in [
        None,
        Some("http://evil.example"),
        Some("http://127.0.0.1:1"),
    ] {
        let mut request = server
            .http
            .post(&url)
            .header("cookie", format!("corvid_token={TOKEN}"))
            .json(&json!({}));
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 403, "{origin:?}");
    }
    // A script: the bearer token instead of an Origin; a wrong one is refused.
    for (token, expected) in [(TOKEN, 201), ("wrong", 401)] {
        let response = server
            .http
            .post(&url)
            .bearer_auth(token)
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), expected, "{token}");
    }
    let text = server
        .authed(reqwest::Method::POST, "/api/conversations")
        .header("content-type", "text/plain")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(text.status(), 415);
    let malformed = server
        .authed(reqwest::Method::POST, "/api/conversations")
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(malformed.status(), 400);
    let (status, body) = server
        .json(
            reqwest::Method::POST,
            "/api/conversations",
            json!({"titel": 1}),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(message_of(&body).contains("titel"), "{body}");
    let big = "x".repeat(corvid_server::MAX_BODY_BYTES + 1);
    let (status, _) = server
        .json(
            reqwest::Method::PUT,
            "/api/settings",
            json!({"default_model": big}),
        )
        .await;
    assert_eq!(status, 413);

    // Nothing was lost: a good request still works, and creates exactly one conversation (the
    // refused ones created none).
    let (_, before) = server
        .json(reqwest::Method::GET, "/api/conversations", Value::Null)
        .await;
    let before = before["conversations"].as_array().unwrap().len();
    let (status, created) = server
        .json(reqwest::Method::POST, "/api/conversations", json!({}))
        .await;
    assert_eq!(status, 201, "{created}");
    let id = created["conversation"]["id"].as_str().unwrap().to_owned();
    let (status, got) = server
        .json(
            reqwest::Method::GET,
            &format!("/api/conversations/{id}"),
            Value::Null,
        )
        .await;
    assert_eq!(status, 200, "{got}");
    assert_eq!(got["current"], true);
    let (status, list) = server
        .json(reqwest::Method::GET, "/api/conversations", Value::Null)
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        list["conversations"].as_array().unwrap().len(),
        before + 1,
        "{list}"
    );
}

#[tokio::test]
async fn routes_answer_bad_input_clearly() {
    let server = start(vec![]).await;
    let (status, body) = server
        .json(
            reqwest::Method::DELETE,
            "/api/conversations/no-such-id",
            Value::Null,
        )
        .await;
    assert_eq!(status, 404, "{body}");
    let (status, _) = server
        .json(
            reqwest::Method::GET,
            "/api/conversations/no-such-id",
            Value::Null,
        )
        .await;
    assert_eq!(status, 404);
    for query in ["days=abc", "days=0", "weeks=1"] {
        let (status, body) = server
            .json(
                reqwest::Method::GET,
                &format!("/api/usage?{query}"),
                Value::Null,
            )
            .await;
        assert_eq!(status, 400, "{query}: {body}");
    }
    let (status, usage) = server
        .json(reqwest::Method::GET, "/api/usage?days=7", Value::Null)
        .await;
    assert_eq!(status, 200);
    assert_eq!(usage["rows"], json!([]));
    let (status, _) = server
        .json(reqwest::Method::GET, "/api/nothing", Value::Null)
        .await;
    assert_eq!(status, 404);
    for bad in [
        json!({"approval_policy": 5}),
        json!({"approval_policy": "yolo"}),
        json!({"default_model": ""}),
        json!({"providers": [{"name": "nope", "enabled": false}]}),
        json!({"providers": [{"name": "xai", "base_url": "ftp://x"}]}),
        json!({"keys": {"PATH": "/tmp"}}),
        json!({"keys": {"XAI_API_KEY": "two\nlines"}}),
        json!({"colour": "blue"}),
    ] {
        let (status, body) = server
            .json(reqwest::Method::PUT, "/api/settings", bad.clone())
            .await;
        assert_eq!(status, 400, "{bad}: {body}");
        assert!(!message_of(&body).is_empty(), "{bad}: {body}");
    }
    // None of them wrote anything.
    assert!(!server.home.path().join("config.toml").exists());
    assert!(!server.home.path().join("env").exists());
    let (status, models) = server
        .json(reqwest::Method::GET, "/api/models", Value::Null)
        .await;
    assert_eq!(status, 200);
    assert!(models["default_model"].is_string(), "{models}");
}

#[tokio::test]
async fn a_key_is_stored_and_never_read_back() {
    let server = start(vec![]).await;
    let secret = "xai-very-secret-key-42";
    let (status, body) = server
        .json(
            reqwest::Method::PUT,
            "/api/settings",
            json!({"keys": {"XAI_API_KEY": secret}, "default_model": "grok-code-fast-1", "approval_policy": "auto-edit"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert!(!body.to_string().contains(secret));
    let key = body["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|key| key["variable"] == "XAI_API_KEY")
        .unwrap();
    assert_eq!(key["set"], true);
    assert_eq!(body["session"]["approval_policy"], "auto-edit");
    assert_eq!(body["session"]["model"], "grok-code-fast-1");
    let env = std::fs::read_to_string(server.home.path().join("env")).unwrap();
    assert!(env.contains(secret));
    let config = std::fs::read_to_string(server.home.path().join("config.toml")).unwrap();
    assert!(config.contains("grok-code-fast-1"), "{config}");
    for path in ["/api/settings", "/api/status"] {
        let (_, body) = server.json(reqwest::Method::GET, path, Value::Null).await;
        assert!(!body.to_string().contains(secret), "{path}: {body}");
    }
    let (status, body) = server
        .json(
            reqwest::Method::PUT,
            "/api/settings",
            json!({"keys": {"XAI_API_KEY": null}}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let env = std::fs::read_to_string(server.home.path().join("env")).unwrap();
    assert!(!env.contains(secret));
}

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn connect(server: &Running, origin: Option<&str>, cookie: bool) -> Result<Socket, u16> {
    let url = format!("ws://{}/api/agent/ws", server.host);
    let mut request = url.into_client_request().unwrap();
    if let Some(origin) = origin {
        request
            .headers_mut()
            .insert("origin", origin.parse().unwrap());
    }
    if cookie {
        request
            .headers_mut()
            .insert("cookie", format!("corvid_token={TOKEN}").parse().unwrap());
    }
    match tokio_tungstenite::connect_async(request).await {
        Ok((socket, _)) => Ok(socket),
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            Err(response.status().as_u16())
        }
        Err(other) => panic!("{other}"),
    }
}

async fn next_frame(socket: &mut Socket) -> Value {
    loop {
        let message = tokio::time::timeout(Duration::from_secs(10), socket.next())
            .await
            .expect("a frame within 10 s")
            .expect("the socket is open")
            .unwrap();
        if let Message::Text(text) = message {
            return serde_json::from_str(text.as_str()).unwrap();
        }
    }
}

/// Frames until one satisfies `wanted`.
async fn frame_where(socket: &mut Socket, wanted: impl Fn(&Value) -> bool) -> Value {
    loop {
        let frame = next_frame(socket).await;
        if wanted(&frame) {
            return frame;
        }
    }
}

#[tokio::test]
async fn cross_origin_socket_is_refused() {
    let server = start(vec![]).await;
    let own = server.origin();
    assert_eq!(
        connect(&server, Some("http://evil.example"), true)
            .await
            .err(),
        Some(403)
    );
    assert_eq!(
        connect(&server, Some("http://127.0.0.1:1"), true)
            .await
            .err(),
        Some(403)
    );
    assert_eq!(
        connect(&server, Some("http://localhost:1"), true)
            .await
            .err(),
        Some(403)
    );
    assert_eq!(connect(&server, None, true).await.err(), Some(403));
    assert_eq!(connect(&server, Some(&own), false).await.err(), Some(401));
    let mut socket = connect(&server, Some(&own), true).await.unwrap();
    let first = next_frame(&mut socket).await;
    assert_eq!(first["type"], "protocol");
    assert_eq!(first["version"], corvid_protocol::PROTOCOL_VERSION);
}

#[tokio::test]
async fn bad_frames_are_answered_and_nothing_is_lost() {
    let server = start(vec![ScriptedReply::text("hello from the model")]).await;
    let mut socket = connect(&server, Some(&server.origin()), true)
        .await
        .unwrap();
    assert_eq!(next_frame(&mut socket).await["type"], "protocol");
    let oversize = format!(
        r#"{{"id":"big","op":{{"type":"send","text":"{}"}}}}"#,
        "x".repeat(corvid_server::MAX_FRAME_BYTES)
    );
    let bad: Vec<(Message, &str)> = vec![
        (Message::text("{not json"), "not JSON"),
        (
            Message::text(r#"{"id":"u","op":{"type":"explode"}}"#),
            "explode",
        ),
        (
            Message::text(r#"{"id":"w","op":{"type":"send","text":5}}"#),
            "invalid type",
        ),
        (Message::text(r#"{"op":{"type":"cancel"}}"#), "id"),
        (
            Message::text(r#"{"id":"","op":{"type":"cancel"}}"#),
            "non-empty id",
        ),
        (
            Message::text(r#"{"id":"s","op":{"type":"shutdown"}}"#),
            "shutdown",
        ),
        (Message::binary(vec![1, 2, 3]), "binary"),
        (Message::text(oversize), "bytes"),
    ];
    for (frame, expected) in bad {
        socket.send(frame).await.unwrap();
        let answer = next_frame(&mut socket).await;
        assert_eq!(answer["type"], "rejected", "{answer}");
        let message = answer["message"].as_str().unwrap();
        assert!(message.contains(expected), "{expected}: {message}");
    }
    // The socket is still open and the engine still answers.
    socket
        .send(Message::text(
            json!({"id": "m1", "op": {"type": "send", "text": "hi"}}).to_string(),
        ))
        .await
        .unwrap();
    let delta = frame_where(&mut socket, |frame| frame["msg"]["type"] == "text_delta").await;
    assert_eq!(delta["id"], "m1");
    assert_eq!(delta["msg"]["delta"], "hello from the model");
    let finished = frame_where(&mut socket, |frame| frame["msg"]["type"] == "turn_finished").await;
    assert_eq!(finished["msg"]["outcome"], "completed");
    // The conversation's tokens, from the store.
    let (_, list) = server
        .json(reqwest::Method::GET, "/api/conversations", Value::Null)
        .await;
    let current = list["current"].as_str().unwrap().to_owned();
    let (status, got) = server
        .json(
            reqwest::Method::GET,
            &format!("/api/conversations/{current}"),
            Value::Null,
        )
        .await;
    assert_eq!(status, 200, "{got}");
    assert!(
        got["usage"]["total"]["input"].as_u64().unwrap() > 0,
        "{got}"
    );
    // A second tab sees the same conversation.
    let mut other = connect(&server, Some(&server.origin()), true)
        .await
        .unwrap();
    assert_eq!(next_frame(&mut other).await["type"], "protocol");
    other
        .send(Message::text(
            json!({"id": "l1", "op": {"type": "list_conversations"}}).to_string(),
        ))
        .await
        .unwrap();
    let list = frame_where(&mut other, |frame| frame["id"] == "l1").await;
    assert_eq!(
        list["msg"]["conversations"].as_array().unwrap().len(),
        1,
        "{list}"
    );
    // …and the first tab sees the answer too (one engine, every listener).
    let echoed = frame_where(&mut socket, |frame| frame["id"] == "l1").await;
    assert_eq!(echoed["msg"]["type"], "conversation_list");
}

#[tokio::test]
async fn xai_sign_in_from_the_page() {
    let oauth = corvid_test_support::oauth::MockOAuth::start().await;
    oauth.set_device_timing(1, 60);
    oauth.push_device_polls([
        corvid_test_support::oauth::DevicePoll::Pending,
        corvid_test_support::oauth::DevicePoll::Approve,
    ]);
    let server = start_with(
        vec![],
        &format!("xai_auth_url = \"{}\"\n", oauth.base_url()),
    )
    .await;
    let (status, body) = server
        .json(reqwest::Method::POST, "/api/sign-in/nobody", json!({}))
        .await;
    assert_eq!(status, 404, "{body}");
    let (status, body) = server
        .json(reqwest::Method::POST, "/api/sign-in/xai", json!({}))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["xai"]["state"], "waiting", "{body}");
    assert_eq!(body["xai"]["code"], "ABCD-EFGH");
    let mut last = Value::Null;
    for _ in 0..100 {
        let (_, body) = server
            .json(reqwest::Method::GET, "/api/sign-in", Value::Null)
            .await;
        last = body;
        if last["xai"]["state"] != "waiting" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(last["xai"]["state"], "signed_in", "{last}");
    assert_eq!(last["xai"]["account"], "user@example.com");
    let env = corvid_config::EnvFile::read(&server.home.path().join("env")).unwrap();
    let secrets = [
        corvid_auth::REFRESH_TOKEN_VAR,
        corvid_auth::ACCESS_TOKEN_VAR,
    ]
    .map(|var| env.get(var).expect("the tokens are stored").to_owned());
    // No token in any answer.
    let (_, status) = server
        .json(reqwest::Method::GET, "/api/status", Value::Null)
        .await;
    let (_, settings) = server
        .json(reqwest::Method::GET, "/api/settings", Value::Null)
        .await;
    for body in [&last, &status, &settings] {
        for secret in &secrets {
            assert!(!body.to_string().contains(secret.as_str()), "{body}");
        }
    }
}

#[tokio::test]
async fn gateway_routes_still_reach_the_gateway() {
    let server = start(vec![]).await;
    // A generation POST goes to the gateway's hot path (its own error shape for a bad body),
    // not to the page's router.
    let response = server
        .http
        .post(format!("{}/v1/chat/completions", server.base))
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["type"], "invalid_request_error", "{body}");
    let models = server
        .http
        .get(format!("{}/v1/models", server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(models.status(), 200);
    assert!(models.headers().get("content-security-policy").is_none());
}

#[tokio::test]
async fn a_listener_that_never_reads_stalls_nothing() {
    use corvid_agent::AgentConfig;
    use corvid_protocol::{EventMsg, Op, SendParams, Submission};
    use corvid_server::{AgentSessions, Received};
    use corvid_wire::model::{FinishReason, StreamEvent, Usage};

    let project = tempfile::tempdir().unwrap();
    let deltas = corvid_server::LISTENER_BUFFER * 2;
    let mut events = vec![StreamEvent::Start {
        id: "s".to_owned(),
        model: "m".to_owned(),
    }];
    events.extend((0..deltas).map(|_| StreamEvent::TextDelta {
        text: "x".to_owned(),
    }));
    events.push(StreamEvent::Usage(Usage::default()));
    events.push(StreamEvent::Finish(FinishReason::EndTurn));
    let model = Arc::new(Scripted(Arc::new(ScriptedModel::new(vec![
        ScriptedReply::Events(events),
    ]))));
    let mut config = AgentConfig::new(project.path().to_owned(), "scripted");
    config.output_dir = project.path().join(".out");
    let sessions = EngineSessions::spawn(config, model).unwrap();
    let mut idle = sessions.subscribe();
    let mut reader = sessions.subscribe();
    sessions.submit(Submission::new("t1", Op::Send(SendParams::text("go"))));
    let mut seen = 0;
    let finished = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            match reader.recv().await {
                Received::Event(event) if matches!(event.msg, EventMsg::TurnFinished(_)) => {
                    return seen;
                }
                // Counted in text: a resync's replay hands deltas over merged.
                Received::Event(event) => {
                    if let EventMsg::TextDelta { delta } = &event.msg {
                        seen += delta.len();
                    }
                }
                other => panic!("the reading listener lost events: {other:?}"),
            }
        }
    })
    .await
    .expect("the turn finished although one listener never read");
    assert_eq!(finished, deltas);
    // The idle listener holds at most a buffer's worth (memory stays bounded): it is told it
    // lagged, or what it holds fits the buffer (when the engine's own listener was resynced
    // with merged deltas, fewer events were fanned out).
    let mut held = 0;
    loop {
        match idle.recv().await {
            Received::Lagged(missed) => {
                assert!(missed > 0);
                break;
            }
            Received::Event(event) if matches!(event.msg, EventMsg::TurnFinished(_)) => {
                assert!(held <= corvid_server::LISTENER_BUFFER, "{held} events held");
                break;
            }
            Received::Event(_) => held += 1,
            Received::Closed => panic!("the engine stopped"),
        }
    }
}

#[tokio::test]
async fn tabs_share_one_service_session_and_each_starts_with_its_replay() {
    use corvid_agent::Agents;
    use corvid_protocol::{EventMsg, Op, SendParams, Submission};
    use corvid_server::{AgentSessions, Received, ServiceSessions};
    use corvid_wire::model::{FinishReason, StreamEvent, Usage};

    let project = tempfile::tempdir().unwrap();
    let model = Arc::new(Scripted(Arc::new(ScriptedModel::new(vec![
        ScriptedReply::Events(vec![
            StreamEvent::TextDelta {
                text: "hello".to_owned(),
            },
            StreamEvent::Usage(Usage::default()),
            StreamEvent::Finish(FinishReason::EndTurn),
        ]),
    ]))));
    let store = corvid_store::Store::open_in_memory().unwrap();
    let agents = Agents::new(model, Arc::new(std::sync::Mutex::new(store)));
    let mut config = AgentConfig::new(project.path().to_owned(), "scripted");
    config.output_dir = project.path().join(".out");
    let sessions = ServiceSessions::open(agents.clone(), config.clone())
        .await
        .unwrap();
    // A second open of the project's current conversation joins the same session.
    let again = ServiceSessions::open(agents.clone(), config).await.unwrap();
    assert_eq!(agents.sessions().len(), 1);

    async fn until(
        listener: &mut Box<dyn corvid_server::Listener>,
        wanted: impl Fn(&corvid_protocol::Event) -> bool,
    ) -> corvid_protocol::Event {
        tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                match listener.recv().await {
                    Received::Event(event) if wanted(&event) => return *event,
                    Received::Event(_) => {}
                    other => panic!("unexpected {other:?}"),
                }
            }
        })
        .await
        .expect("the event within 10 s")
    }
    let mut first = sessions.subscribe();
    let ready = until(&mut first, |event| matches!(event.msg, EventMsg::Ready(_))).await;
    assert!(ready.replay, "a tab's listener starts with the replay");
    sessions.submit(Submission::new("t1", Op::Send(SendParams::text("hi"))));
    until(&mut first, |event| {
        matches!(event.msg, EventMsg::TurnFinished(_))
    })
    .await;
    // A tab opened later, through the other handle: the replay holds the finished turn.
    let mut second = again.subscribe();
    let switched = until(&mut second, |event| {
        matches!(event.msg, EventMsg::ConversationSwitched { .. })
    })
    .await;
    assert!(switched.replay);
    let EventMsg::ConversationSwitched { history, .. } = switched.msg else {
        unreachable!()
    };
    let text = serde_json::to_string(&history).unwrap();
    assert!(text.contains("hi") && text.contains("hello"), "{text}");
}

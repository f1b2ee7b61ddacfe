//! The page's API through a real socket: the guard (Host, Origin, token, content type, size),
//! every route's answer to bad input, the WebSocket's answers to bad frames, and that a good
//! frame after a bad one still gets through.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use corvid_agent::{AgentConfig, Agents};
use corvid_server::{PageAgent, PageState, Token};
use corvid_test_support::agent::ScriptedClient;
use corvid_test_support::scripted::{ScriptedModel, ScriptedReply};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

const TOKEN: &str = "test-token-0123456789";

struct Running {
    agents: Agents,
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
    start_full(replies, config_toml, &[]).await
}

async fn start_full(
    replies: Vec<ScriptedReply>,
    config_toml: &str,
    extra_env: &[(&str, &str)],
) -> Running {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    if !config_toml.is_empty() {
        std::fs::write(home.path().join("config.toml"), config_toml).unwrap();
    }
    // The keyring off: a test must never write to the machine's real one.
    let mut env = HashMap::from([
        ("CORVID_HOME".to_owned(), home.path().display().to_string()),
        ("CORVID_KEYRING".to_owned(), "off".to_owned()),
    ]);
    env.extend(
        extra_env
            .iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned())),
    );
    let loaded = corvid_config::load(&corvid_config::Flags::default(), &env).unwrap();
    let registry =
        corvid_providers::Registry::from_config(&loaded, reqwest::Client::new()).unwrap();
    let gateway_state = corvid_gateway::AppState::new(loaded.config.clone(), registry);
    let gateway = corvid_gateway::router(gateway_state.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut agent = AgentConfig::new(project.path().to_owned(), "scripted");
    agent.output_dir = home.path().join("output");
    agent.checkpoint_dir = Some(home.path().join("checkpoints"));
    let model = Arc::new(ScriptedClient(Arc::new(ScriptedModel::new(replies))));
    let store = corvid_store::Store::open(&home.path().join("agent.sqlite")).unwrap();
    let agents = Agents::new(model, Arc::new(parking_lot::Mutex::new(store)));
    let page = PageState::new(
        gateway_state,
        PageAgent::new(agents.clone(), agent),
        Token::from_text(TOKEN),
        loaded,
        port,
    );
    let app = corvid_server::app(gateway, page);
    tokio::spawn(corvid_gateway::serve(
        listener,
        app,
        std::future::pending(),
        Duration::from_secs(1),
    ));
    Running {
        agents,
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

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// A request with the right cookie and Origin.
    fn authed(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.http
            .request(method, self.url(path))
            .header("cookie", format!("corvid_token={TOKEN}"))
            .header("origin", self.origin())
    }

    async fn json(&self, method: reqwest::Method, path: &str, body: Value) -> (u16, Value) {
        let response = self.authed(method, path).json(&body).send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    async fn get(&self, path: &str) -> (u16, Value) {
        self.json(reqwest::Method::GET, path, Value::Null).await
    }

    async fn put_settings(&self, change: Value) -> (u16, Value) {
        self.json(reqwest::Method::PUT, "/api/settings", change)
            .await
    }

    /// A file of the test's CORVID_HOME, as text.
    fn home_file(&self, name: &str) -> String {
        std::fs::read_to_string(self.home.path().join(name)).unwrap()
    }

    /// The configuration as the next start would load it.
    fn reload(&self) -> corvid_config::Loaded {
        corvid_config::load(
            &corvid_config::Flags::default(),
            &HashMap::from([(
                "CORVID_HOME".to_owned(),
                self.home.path().display().to_string(),
            )]),
        )
        .expect("the edited file still loads")
    }

    /// A chat completion through the gateway with one user message.
    async fn chat(&self, model: &str, prompt: &str) -> reqwest::Response {
        self.http
            .post(self.url("/v1/chat/completions"))
            .json(&json!({"model": model, "messages": [{"role": "user", "content": prompt}]}))
            .send()
            .await
            .unwrap()
    }
}

/// The entry of provider `name` in an `/api/status` answer.
fn provider_in(status: &Value, name: &str) -> Value {
    status["providers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|provider| provider["name"] == name)
        .cloned()
        .unwrap()
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
            .get(server.url(path))
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
        .get(server.url("/healthz"))
        .header("host", "evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
    let response = server
        .http
        .get(server.url("/healthz"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
}

#[tokio::test]
async fn missing_or_wrong_token_is_refused() {
    let server = start(vec![]).await;
    let url = server.url("/api/status");
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
        .get(server.url(&format!("/?token={TOKEN}")))
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
        .get(server.url("/?token=nope"))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    assert!(refused.headers().get("set-cookie").is_none());
    // The page itself carries a CSP without inline script.
    let page = server.http.get(server.url("/")).send().await.unwrap();
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
    let url = server.url("/api/conversations");
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
    let (status, _) = server.put_settings(json!({"default_model": big})).await;
    assert_eq!(status, 413);

    // Nothing was lost: a good request still works, and creates exactly one conversation (the
    // refused ones created none).
    let (_, before) = server.get("/api/conversations").await;
    let before = before["conversations"].as_array().unwrap().len();
    let (status, created) = server
        .json(reqwest::Method::POST, "/api/conversations", json!({}))
        .await;
    assert_eq!(status, 201, "{created}");
    let id = created["conversation"]["id"].as_str().unwrap().to_owned();
    let (status, got) = server.get(&format!("/api/conversations/{id}")).await;
    assert_eq!(status, 200, "{got}");
    assert_eq!(got["current"], true);
    let (status, list) = server.get("/api/conversations").await;
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
    let (status, _) = server.get("/api/conversations/no-such-id").await;
    assert_eq!(status, 404);
    for query in ["days=abc", "days=0", "weeks=1"] {
        let (status, body) = server.get(&format!("/api/usage?{query}")).await;
        assert_eq!(status, 400, "{query}: {body}");
    }
    let (status, usage) = server.get("/api/usage?days=7").await;
    assert_eq!(status, 200);
    assert_eq!(usage["rows"], json!([]));
    let (status, _) = server.get("/api/nothing").await;
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
        let (status, body) = server.put_settings(bad.clone()).await;
        assert_eq!(status, 400, "{bad}: {body}");
        assert!(!message_of(&body).is_empty(), "{bad}: {body}");
    }
    // None of them wrote anything.
    assert!(!server.home.path().join("config.toml").exists());
    assert!(!server.home.path().join("env").exists());
    let (status, models) = server.get("/api/models").await;
    assert_eq!(status, 200);
    assert!(models["default_model"].is_string(), "{models}");
}

#[tokio::test]
async fn a_key_is_stored_and_never_read_back() {
    let server = start(vec![]).await;
    // A tab: the model and policy apply to its session.
    let (mut tab, conversation) = open_tab(&server, None).await;
    let secret = "xai-very-secret-key-42";
    let (status, body) = server
        .put_settings(json!({"keys": {"XAI_API_KEY": secret}, "default_model": "grok-code-fast-1", "approval_policy": "auto-edit", "conversation": conversation})).await;
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
    let changed = frame_where(&mut tab, |frame| frame["msg"]["type"] == "settings_changed").await;
    assert_eq!(changed["msg"]["model"], "grok-code-fast-1", "{changed}");
    let env = server.home_file("env");
    assert!(env.contains(secret));
    let config = server.home_file("config.toml");
    assert!(config.contains("grok-code-fast-1"), "{config}");
    for path in ["/api/settings", "/api/status"] {
        let (_, body) = server.get(path).await;
        assert!(!body.to_string().contains(secret), "{path}: {body}");
    }
    let (status, body) = server
        .put_settings(json!({"keys": {"XAI_API_KEY": null}}))
        .await;
    assert_eq!(status, 200, "{body}");
    let env = server.home_file("env");
    assert!(!env.contains(secret));
}

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn connect(server: &Running, origin: Option<&str>, cookie: bool) -> Result<Socket, u16> {
    connect_to(server, "", origin, cookie).await
}

/// A socket on `/api/agent/ws{query}` with the given Origin and, if `cookie`, the token; the
/// handshake's status when it is refused.
async fn connect_to(
    server: &Running,
    query: &str,
    origin: Option<&str>,
    cookie: bool,
) -> Result<Socket, u16> {
    let url = format!("ws://{}/api/agent/ws{query}", server.host);
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
            let frame: Value = serde_json::from_str(text.as_str()).unwrap();
            assert_server_frame(&frame);
            return frame;
        }
    }
}

/// Fails unless `frame` is a `ServerFrame` of the published schema (`/api/agent/schema`).
fn assert_server_frame(frame: &Value) {
    static VALIDATOR: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
    let validator = VALIDATOR.get_or_init(|| {
        let mut schema: Value = serde_json::from_str(&corvid_protocol::schema_json()).unwrap();
        let object = schema.as_object_mut().unwrap();
        object.remove("anyOf");
        object.insert("$ref".to_owned(), json!("#/$defs/ServerFrame"));
        jsonschema::validator_for(&schema).unwrap()
    });
    let errors: Vec<String> = validator
        .iter_errors(frame)
        .map(|error| error.to_string())
        .collect();
    assert!(errors.is_empty(), "not a schema frame: {frame}: {errors:?}");
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
    // The tab's replay comes first: `ready`, then the conversation.
    let ready = next_frame(&mut socket).await;
    assert_eq!(ready["msg"]["type"], "ready", "{ready}");
    frame_where(&mut socket, |frame| {
        frame["msg"]["type"] == "conversation_opened"
    })
    .await;
    let oversize = format!(
        r#"{{"type":"submission","id":"big","op":{{"type":"send","text":"{}"}}}}"#,
        "x".repeat(corvid_server::MAX_FRAME_BYTES)
    );
    let bad: Vec<(Message, &str)> = vec![
        (Message::text("{not json"), "not JSON"),
        (
            Message::text(r#"{"type":"submission","id":"u","op":{"type":"explode"}}"#),
            "explode",
        ),
        (
            Message::text(r#"{"type":"submission","id":"w","op":{"type":"send","text":5}}"#),
            "invalid type",
        ),
        (
            Message::text(r#"{"type":"submission","op":{"type":"cancel"}}"#),
            "id",
        ),
        (
            Message::text(r#"{"type":"submission","id":"","op":{"type":"cancel"}}"#),
            "non-empty id",
        ),
        (
            Message::text(r#"{"type":"submission","id":"s","op":{"type":"shutdown"}}"#),
            "shutdown",
        ),
        // A frame of protocol 5 (an untagged submission) says what is missing.
        (
            Message::text(r#"{"id":"old","op":{"type":"cancel"}}"#),
            "missing field `type`",
        ),
        (
            Message::text(r#"{"type":"response","id":"p9","decision":{"type":"maybe"}}"#),
            "maybe",
        ),
        // A response to a request nobody made is replied, under its id.
        (
            Message::text(r#"{"type":"response","id":"p9","decision":{"type":"approve"}}"#),
            "no proposal `p9` is waiting",
        ),
        (Message::binary(vec![1, 2, 3]), "binary"),
        (Message::text(oversize), "bytes"),
    ];
    for (frame, expected) in bad {
        socket.send(frame).await.unwrap();
        let answer = next_frame(&mut socket).await;
        assert_eq!(answer["type"], "reply", "{answer}");
        assert_eq!(answer["error"]["class"], "invalid_request", "{answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains(expected), "{expected}: {message}");
    }
    // The socket is still open and the engine still answers.
    socket
        .send(Message::text(
            json!({"type": "submission", "id": "m1", "op": {"type": "send", "text": "hi"}})
                .to_string(),
        ))
        .await
        .unwrap();
    let delta = frame_where(&mut socket, |frame| frame["msg"]["type"] == "text_delta").await;
    assert_eq!(delta["id"], "m1");
    assert_eq!(delta["msg"]["delta"], "hello from the model");
    let finished = frame_where(&mut socket, |frame| frame["msg"]["type"] == "turn_finished").await;
    assert_eq!(finished["msg"]["outcome"], "completed");
    // The conversation's tokens, from the store.
    let (_, list) = server.get("/api/conversations").await;
    let current = list["current"].as_str().unwrap().to_owned();
    let (status, got) = server.get(&format!("/api/conversations/{current}")).await;
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
            json!({"type": "submission", "id": "l1", "op": {"type": "list_conversations"}})
                .to_string(),
        ))
        .await
        .unwrap();
    let list = frame_where(&mut other, |frame| frame["id"] == "l1").await;
    assert_eq!(list["type"], "reply", "{list}");
    assert_eq!(
        list["ok"]["conversations"].as_array().unwrap().len(),
        1,
        "{list}"
    );
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
        let (_, body) = server.get("/api/sign-in").await;
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
    let (_, status) = server.get("/api/status").await;
    let (_, settings) = server.get("/api/settings").await;
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
        .post(server.url("/v1/chat/completions"))
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
        .get(server.url("/v1/models"))
        .send()
        .await
        .unwrap();
    assert_eq!(models.status(), 200);
    assert!(models.headers().get("content-security-policy").is_none());
}

/// A tab: a socket on `?conversation=` (or the project's current conversation), read up to the
/// `ready` its replay starts with; returns it and the conversation it shows.
async fn open_tab(server: &Running, conversation: Option<&str>) -> (Socket, String) {
    let query = conversation.map_or(String::new(), |id| format!("?conversation={id}"));
    let mut socket = connect_to(server, &query, Some(&server.origin()), true)
        .await
        .unwrap();
    assert_eq!(next_frame(&mut socket).await["type"], "protocol");
    let ready = frame_where(&mut socket, |frame| frame["msg"]["type"] == "ready").await;
    assert_eq!(
        ready["replay"], true,
        "a tab starts with its session's replay: {ready}"
    );
    let conversation = ready["msg"]["conversation_id"].as_str().unwrap().to_owned();
    (socket, conversation)
}

async fn submit(socket: &mut Socket, id: &str, op: Value) {
    socket
        .send(Message::text(
            json!({"type": "submission", "id": id, "op": op}).to_string(),
        ))
        .await
        .unwrap();
}

/// Answers the agent's request `id` with `decision`; returns the reply.
async fn respond(socket: &mut Socket, id: &str, decision: Value) -> Value {
    socket
        .send(Message::text(
            json!({"type": "response", "id": id, "decision": decision}).to_string(),
        ))
        .await
        .unwrap();
    frame_where(socket, |frame| {
        frame["type"] == "reply" && frame["id"] == id
    })
    .await
}

/// Frames up to the `turn_finished` of submission `id`, all of them.
async fn turn_of(socket: &mut Socket, id: &str) -> Vec<Value> {
    let mut frames = Vec::new();
    loop {
        let frame = next_frame(socket).await;
        let done = frame["id"] == id && frame["msg"]["type"] == "turn_finished";
        frames.push(frame);
        if done {
            return frames;
        }
    }
}

#[tokio::test]
async fn tabs_on_one_conversation_share_its_session_and_tabs_on_others_run_on_their_own() {
    let server = start(vec![
        ScriptedReply::tool_call(
            "call_w",
            "write",
            r#"{"path": "shared.txt", "content": "written\n"}"#,
        ),
        ScriptedReply::text("wrote it"),
        ScriptedReply::text("for the first tab"),
        ScriptedReply::text("for the second tab"),
    ])
    .await;
    // Two tabs on the project's current conversation: one session, both hear it, either answers.
    let (mut first, conversation) = open_tab(&server, None).await;
    let (mut second, same) = open_tab(&server, None).await;
    assert_eq!(same, conversation);
    assert_eq!(server.agents.sessions().len(), 1);
    submit(
        &mut first,
        "w1",
        json!({"type": "send", "text": "write the file"}),
    )
    .await;
    // The approval is a request to every tab; the first response wins.
    let request = frame_where(&mut second, |frame| frame["type"] == "request").await;
    assert_eq!(request["turn_id"], "w1");
    assert_eq!(
        request["approval"]["title"], "Write shared.txt",
        "{request}"
    );
    let request_id = request["id"].as_str().unwrap().to_owned();
    let asked_first = frame_where(&mut first, |frame| frame["type"] == "request").await;
    assert_eq!(asked_first, request);
    let taken = respond(&mut second, &request_id, json!({"type": "approve"})).await;
    assert_eq!(taken["ok"]["type"], "done", "{taken}");
    let closed = frame_where(&mut first, |frame| {
        frame["msg"]["type"] == "proposal_closed"
    })
    .await;
    assert_eq!(closed["msg"]["outcome"], "approved", "{closed}");
    turn_of(&mut first, "w1").await;
    turn_of(&mut second, "w1").await;
    // A tab that answers after that (here, once the turn is over) is told it was answered already.
    let late = respond(&mut first, &request_id, json!({"type": "reject"})).await;
    assert_eq!(late["error"]["class"], "invalid_request", "{late}");
    assert!(
        late["error"]["message"]
            .as_str()
            .unwrap()
            .contains("already answered (approved)"),
        "{late}"
    );
    assert_eq!(
        std::fs::read_to_string(server._project.path().join("shared.txt")).unwrap(),
        "written\n"
    );

    // The second tab starts a conversation of its own: a session of its own, with its replay.
    submit(&mut second, "n1", json!({"type": "open_conversation"})).await;
    let ready = frame_where(&mut second, |frame| frame["msg"]["type"] == "ready").await;
    let other = ready["msg"]["conversation_id"].as_str().unwrap().to_owned();
    assert_ne!(other, conversation);
    let switched = frame_where(&mut second, |frame| {
        frame["msg"]["type"] == "conversation_opened"
    })
    .await;
    assert_eq!(switched["replay"], true, "{switched}");
    assert_eq!(switched["msg"]["history"], json!([]));
    assert_eq!(server.agents.sessions().len(), 2);

    // Each runs on its own: the first tab's turn is not heard in the second, and back.
    submit(
        &mut first,
        "m2",
        json!({"type": "send", "text": "first again"}),
    )
    .await;
    let frames = turn_of(&mut first, "m2").await;
    assert!(
        frames
            .iter()
            .any(|f| f["msg"]["delta"] == "for the first tab")
    );
    submit(
        &mut second,
        "m3",
        json!({"type": "send", "text": "second topic"}),
    )
    .await;
    let frames = turn_of(&mut second, "m3").await;
    assert!(
        frames
            .iter()
            .any(|f| f["msg"]["delta"] == "for the second tab")
    );
    assert!(
        frames.iter().all(|f| f["id"] != "m2" && f["id"] != "w1"),
        "the second tab heard the first tab's session: {frames:?}"
    );
    let (_, list) = server.get("/api/conversations").await;
    assert_eq!(list["conversations"].as_array().unwrap().len(), 2, "{list}");
    assert_eq!(list["sessions"].as_array().unwrap().len(), 2, "{list}");

    // The conversation's history over REST, for a tab that did not see it live.
    let (status, got) = server
        .get(&format!("/api/conversations/{conversation}"))
        .await;
    assert_eq!(status, 200, "{got}");
    let history = got["history"].to_string();
    for text in [
        "write the file",
        "wrote it",
        "first again",
        "for the first tab",
    ] {
        assert!(history.contains(text), "{text}: {history}");
    }
    assert!(!history.contains("second topic"), "{history}");
    assert!(
        got["history"]
            .as_array()
            .unwrap()
            .iter()
            .any(|entry| entry["type"] == "tool_call" && entry["tool"] == "write"),
        "{history}"
    );
    assert!(got["session"].is_string(), "{got}");

    // The second tab goes: nobody listens to its idle session, so it is closed.
    drop(second);
    let mut open = server.agents.sessions();
    for _ in 0..400 {
        open = server.agents.sessions();
        if open.len() == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(open.len(), 1, "{open:?}");
    assert_eq!(open[0].conversation_id, conversation);

    // A tab reconnecting to it reopens it, with its history, and switches back.
    let (mut again, shown) = open_tab(&server, Some(&other)).await;
    assert_eq!(shown, other);
    let switched = frame_where(&mut again, |frame| {
        frame["msg"]["type"] == "conversation_opened"
    })
    .await;
    assert!(
        switched["msg"]["history"]
            .to_string()
            .contains("for the second tab"),
        "{switched}"
    );
    submit(
        &mut again,
        "s1",
        json!({"type": "open_conversation", "conversation_id": conversation}),
    )
    .await;
    let ready = frame_where(&mut again, |frame| frame["msg"]["type"] == "ready").await;
    assert_eq!(ready["msg"]["conversation_id"], conversation.as_str());
    // An unknown conversation is refused, and the tab stays where it is.
    submit(
        &mut again,
        "s2",
        json!({"type": "open_conversation", "conversation_id": "c_nope"}),
    )
    .await;
    let refused = frame_where(&mut again, |frame| frame["id"] == "s2").await;
    assert_eq!(refused["type"], "reply", "{refused}");
    assert_eq!(refused["error"]["class"], "invalid_request", "{refused}");

    // Deleting the conversation another tab shows moves that tab to a new one.
    submit(
        &mut again,
        "d1",
        json!({"type": "delete_conversation", "conversation_id": other}),
    )
    .await;
    let deleted = frame_where(&mut again, |frame| frame["id"] == "d1").await;
    assert_eq!(deleted["ok"]["type"], "done", "{deleted}");
    submit(
        &mut again,
        "d2",
        json!({"type": "delete_conversation", "conversation_id": conversation}),
    )
    .await;
    // The deleting tab moves first (its new conversation's replay), then hears the reply.
    let ready = frame_where(&mut again, |frame| frame["msg"]["type"] == "ready").await;
    let moved = ready["msg"]["conversation_id"].as_str().unwrap();
    assert!(moved != conversation && moved != other, "{ready}");
    let deleted = frame_where(&mut again, |frame| frame["id"] == "d2").await;
    assert_eq!(deleted["ok"]["type"], "done", "{deleted}");
    // The other tab showing it finds its session gone and opens a new conversation.
    let ready = frame_where(&mut first, |frame| frame["msg"]["type"] == "ready").await;
    let moved = ready["msg"]["conversation_id"].as_str().unwrap();
    assert!(moved != conversation && moved != other, "{ready}");
}

#[tokio::test]
async fn settings_keep_config_tomls_comments_and_layout() {
    let config = r#"# corvid, set up by hand
default_model = "grok-4" # the usual one

# shortcuts I use
[aliases]
fast = "grok-3-mini" # quick answers
old = "grok-2"

[providers.xai]
# the account's endpoint
base_url = "https://api.x.ai/v1"
"#;
    let server = start_with(vec![], config).await;
    let (status, body) = server
        .put_settings(json!({
            "default_model": "grok-code-fast-1",
            "aliases": {"fast": "grok-4-fast", "smart": "grok-4"},
            "providers": [{"name": "xai", "enabled": false}],
        }))
        .await;
    assert_eq!(status, 200, "{body}");
    let written = server.home_file("config.toml");
    assert_eq!(
        written,
        r#"# corvid, set up by hand
default_model = "grok-code-fast-1" # the usual one

# shortcuts I use
[aliases]
fast = "grok-4-fast" # quick answers
smart = "grok-4"

[providers.xai]
# the account's endpoint
base_url = "https://api.x.ai/v1"
enabled = false
"#
    );
    // What was written reads back.
    let (_, settings) = server.get("/api/settings").await;
    assert_eq!(settings["default_model"], "grok-code-fast-1");
    assert_eq!(
        settings["aliases"],
        json!({"fast": "grok-4-fast", "smart": "grok-4"})
    );
    // A file without the sections gets them.
    let bare = start_with(vec![], "# nothing yet\n").await;
    let (status, _) = bare
        .put_settings(json!({"aliases": {"fast": "grok-3-mini"}, "providers": [{"name": "xai", "enabled": true}]})).await;
    assert_eq!(status, 200);
    let written = bare.home_file("config.toml");
    assert_eq!(
        written,
        "# nothing yet\n\n[aliases]\nfast = \"grok-3-mini\"\n\n[providers.xai]\nenabled = true\n"
    );
    bare.reload();
}

#[tokio::test]
async fn a_providers_last_failure_is_on_the_status_page() {
    use corvid_test_support::upstream::{MockUpstream, Reply};

    let upstream = MockUpstream::start().await;
    let server = start_full(
        vec![],
        "",
        &[
            ("CORVID_UPSTREAM", upstream.base_url().as_str()),
            ("XAI_API_KEY", "xai-status-test-key-0123456789abcdef"),
        ],
    )
    .await;
    let (_, before) = server.get("/api/status").await;
    assert_eq!(
        provider_in(&before, "xai")["last_error"],
        Value::Null,
        "{before}"
    );
    upstream.enqueue(
        "/v1/chat/completions",
        Reply::status(
            http::StatusCode::INTERNAL_SERVER_ERROR,
            json!({"error": {"message": "the model fell over", "type": "server_error"}}),
        ),
    );
    let answer = server.chat("grok-4", "my private prompt").await;
    assert!(answer.status().is_server_error(), "{}", answer.status());
    let (_, after) = server.get("/api/status").await;
    let failure = &provider_in(&after, "xai")["last_error"];
    assert_eq!(failure["status"], 500, "{after}");
    assert_eq!(failure["cause"], "status");
    assert_eq!(failure["message"], "the model fell over");
    assert!(failure["at_ms"].as_i64().unwrap() > 0);
    let text = after.to_string();
    assert!(
        !text.contains("my private prompt") && !text.contains("xai-status-test-key"),
        "{text}"
    );
}

#[tokio::test]
async fn the_default_approval_policy_is_saved_with_comments_kept_and_new_sessions_start_with_it() {
    let config =
        "# my settings\nsandbox = \"on\" # keep it confined\n\n[aliases]\nfast = \"grok-3-mini\"\n";
    let server = start_with(vec![], config).await;
    let (_, before) = server.get("/api/settings").await;
    assert_eq!(before["default_approval_policy"], "ask", "{before}");
    let (mut tab, conversation) = open_tab(&server, None).await;

    // The tab's policy alone: the default and the file stay as they were.
    let (status, body) = server
        .put_settings(json!({"approval_policy": "full-auto", "conversation": conversation}))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["session"]["approval_policy"], "full-auto", "{body}");
    assert_eq!(body["default_approval_policy"], "ask", "{body}");
    assert_eq!(server.home_file("config.toml"), config);

    // The default: written as `approval`, the file's comments kept; the tab's session follows.
    let (status, body) = server
        .put_settings(json!({"default_approval_policy": "auto-edit", "conversation": conversation}))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["default_approval_policy"], "auto-edit", "{body}");
    assert_eq!(body["session"]["approval_policy"], "auto-edit", "{body}");
    let written = server.home_file("config.toml");
    assert_eq!(
        written,
        "# my settings\nsandbox = \"on\" # keep it confined\napproval = \"auto-edit\"\n\n[aliases]\nfast = \"grok-3-mini\"\n"
    );
    let loaded = server.reload();
    assert_eq!(
        loaded.config.approval,
        corvid_config::ApprovalSetting::AutoEdit
    );
    let (_, read) = server.get("/api/settings").await;
    assert_eq!(read["default_approval_policy"], "auto-edit", "{read}");

    // A conversation started from now on starts with the new default.
    submit(&mut tab, "n1", json!({"type": "open_conversation"})).await;
    let ready = frame_where(&mut tab, |frame| {
        frame["msg"]["type"] == "ready" && frame["msg"]["conversation_id"] != conversation.as_str()
    })
    .await;
    assert_eq!(ready["msg"]["approval_policy"], "auto-edit", "{ready}");

    // A policy that is not one is refused, and nothing is written.
    let (status, body) = server
        .put_settings(json!({"default_approval_policy": "yolo"}))
        .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(server.home_file("config.toml"), written);
}

#[tokio::test]
async fn the_zed_accounts_last_failure_is_on_the_status_page() {
    use corvid_test_support::zed_cloud::{ACCOUNT_TOKEN, CompletionReply, MockZedCloud, USER_ID};

    let cloud = MockZedCloud::start().await;
    let config = format!(
        "max_retries = 0\n[providers.zed]\nbase_url = \"{}\"\n",
        cloud.base_url()
    );
    let server = start_full(
        vec![],
        &config,
        &[
            ("ZED_USER_ID", USER_ID),
            ("ZED_ACCESS_TOKEN", ACCOUNT_TOKEN),
        ],
    )
    .await;
    let (_, before) = server.get("/api/status").await;
    assert_eq!(before["sign_ins"]["zed"]["signed_in"], true, "{before}");
    assert_eq!(
        provider_in(&before, "zed")["last_error"],
        Value::Null,
        "{before}"
    );
    cloud.enqueue_completion(CompletionReply::status(
        500,
        json!({"code": "internal_error", "message": "the hosted model fell over"}),
    ));
    let answer = server.chat("zed/grok-4", "my private prompt").await;
    assert!(answer.status().is_server_error(), "{}", answer.status());
    let (_, after) = server.get("/api/status").await;
    let failure = &provider_in(&after, "zed")["last_error"];
    assert_eq!(failure["status"], 500, "{after}");
    assert_eq!(failure["cause"], "status");
    assert!(
        failure["message"]
            .as_str()
            .unwrap()
            .contains("the hosted model fell over"),
        "{after}"
    );
    let text = after.to_string();
    assert!(
        !text.contains("my private prompt") && !text.contains(ACCOUNT_TOKEN),
        "{text}"
    );
}

#[tokio::test]
async fn a_second_sign_in_while_one_is_under_way_starts_no_second_flow() {
    // An OAuth server that takes connections and never answers: the first flow stays short of
    // its code, so the second click comes while it is under way.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = silent.local_addr().unwrap();
    let accepted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = Arc::clone(&accepted);
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = silent.accept().await {
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            held.push(stream);
        }
    });
    let connections = || accepted.load(std::sync::atomic::Ordering::SeqCst);
    let server = start_with(vec![], &format!("xai_auth_url = \"http://{address}\"\n")).await;
    // The first click's answer waits for a code that never comes; nobody waits for it.
    let first = tokio::spawn(
        server
            .authed(reqwest::Method::POST, "/api/sign-in/xai")
            .json(&json!({}))
            .send(),
    );
    for _ in 0..100 {
        if connections() > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(connections(), 1, "the first flow asks for its code");
    let second = server
        .authed(reqwest::Method::POST, "/api/sign-in/xai")
        .json(&json!({}))
        .timeout(Duration::from_secs(5))
        .send()
        .await
        .expect("the second click is answered at once");
    assert_eq!(second.status(), 200);
    let body: Value = second.json().await.unwrap();
    assert_eq!(body["xai"]["state"], "starting", "{body}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(connections(), 1, "a second flow was started");
    first.abort();
}

/// The status line of a request written by hand (headers a client library would not send).
async fn raw_status_line(server: &Running, request: String) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(&server.host).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    String::from_utf8_lossy(&answer)
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn a_second_host_or_origin_header_is_refused() {
    let server = start(vec![]).await;
    let own = server.host.clone();
    let request = |extra: &str| {
        format!(
            "GET /api/status HTTP/1.1\r\nHost: {own}\r\n{extra}Cookie: corvid_token={TOKEN}\r\nConnection: close\r\n\r\n"
        )
    };
    assert!(
        raw_status_line(&server, request(""))
            .await
            .contains(" 200 "),
        "the request itself is fine"
    );
    for extra in [
        "Host: evil.example\r\n".to_owned(),
        format!("Origin: http://{own}\r\nOrigin: http://evil.example\r\n"),
    ] {
        let status = raw_status_line(&server, request(&extra)).await;
        assert!(status.contains(" 403 "), "{extra:?}: {status}");
    }
}

#[tokio::test]
async fn the_page_parses_commands_with_the_protocols_one_table_and_skills_are_commands() {
    let server = start(vec![
        ScriptedReply::tool_call(
            "call_w",
            "write",
            r#"{"path": "one.txt", "content": "one\n"}"#,
        ),
        ScriptedReply::text("wrote it"),
        ScriptedReply::text("released"),
    ])
    .await;
    let skill = server._project.path().join(".corvid/skills/release");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: release\ndescription: cut a release\n---\nTag it.\n",
    )
    .unwrap();
    for (line, op) in [
        ("/undo 2", json!({"type": "undo", "turn": 2})),
        ("/diff 1", json!({"type": "diff", "turn": 1})),
        ("/compact", json!({"type": "compact"})),
        ("/new", json!({"type": "open_conversation"})),
        (
            "/release 1.2",
            json!({"type": "send", "text": "1.2", "skill": "release"}),
        ),
        ("fix the bug", Value::Null),
    ] {
        let (status, body) = server
            .json(
                reqwest::Method::POST,
                "/api/agent/command",
                json!({ "line": line }),
            )
            .await;
        assert_eq!(status, 200, "{line}: {body}");
        assert_eq!(body["op"], op, "{line}");
    }
    let (status, body) = server
        .json(
            reqwest::Method::POST,
            "/api/agent/command",
            json!({"line": "/undo two"}),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    // The socket's hello carries the table with the skill; `/diff 1` is replied with the diff.
    let mut socket = connect(&server, Some(&server.origin()), true)
        .await
        .unwrap();
    let hello = next_frame(&mut socket).await;
    assert_eq!(
        hello["version"],
        corvid_protocol::PROTOCOL_VERSION,
        "{hello}"
    );
    let names: Vec<&str> = hello["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|command| command["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"undo") && names.contains(&"release"),
        "{names:?}"
    );
    submit(
        &mut socket,
        "p1",
        json!({"type": "set_approval_policy", "policy": "full-auto"}),
    )
    .await;
    submit(
        &mut socket,
        "m1",
        json!({"type": "send", "text": "write one"}),
    )
    .await;
    turn_of(&mut socket, "m1").await;
    submit(&mut socket, "d1", json!({"type": "diff", "turn": 1})).await;
    let diff = frame_where(&mut socket, |frame| frame["id"] == "d1").await;
    assert_eq!(diff["ok"]["type"], "diff", "{diff}");
    assert_eq!(diff["ok"]["turns"][0]["turn"], 1, "{diff}");
    assert!(
        diff["ok"]["turns"][0]["diff"]
            .as_str()
            .unwrap()
            .contains("+one"),
        "{diff}"
    );
    submit(&mut socket, "u1", json!({"type": "undo", "turn": 1})).await;
    let undone = frame_where(&mut socket, |frame| {
        frame["id"] == "u1" && frame["type"] == "reply"
    })
    .await;
    assert_eq!(undone["ok"]["type"], "undone", "{undone}");
    assert!(!server._project.path().join("one.txt").exists());
    submit(&mut socket, "c1", json!({"type": "compact"})).await;
    let compacted = frame_where(&mut socket, |frame| {
        frame["id"] == "c1" && frame["type"] == "reply"
    })
    .await;
    assert!(
        compacted["ok"].is_object() || compacted["error"].is_object(),
        "{compacted}"
    );
    // A skill command is a message naming the skill: the engine writes the instruction.
    submit(
        &mut socket,
        "k1",
        json!({"type": "send", "text": "1.2", "skill": "release"}),
    )
    .await;
    let frames = turn_of(&mut socket, "k1").await;
    assert!(
        frames.iter().any(|f| f["msg"]["delta"] == "released"),
        "{frames:?}"
    );
}

#[tokio::test]
async fn a_tab_that_closes_mid_approval_leaves_the_request_to_the_next_tab() {
    let server = start(vec![
        ScriptedReply::tool_call(
            "call_w",
            "write",
            r#"{"path": "later.txt", "content": "kept\n"}"#,
        ),
        ScriptedReply::text("wrote it"),
    ])
    .await;
    let (mut first, conversation) = open_tab(&server, None).await;
    submit(
        &mut first,
        "w1",
        json!({"type": "send", "text": "write the file"}),
    )
    .await;
    let request = frame_where(&mut first, |frame| frame["type"] == "request").await;
    // The tab goes away without answering; the turn waits, and nothing hangs.
    drop(first);
    let (mut next, same) = open_tab(&server, Some(&conversation)).await;
    assert_eq!(same, conversation);
    let replayed = frame_where(&mut next, |frame| frame["type"] == "request").await;
    assert_eq!(replayed["replay"], true, "{replayed}");
    assert_eq!(replayed["id"], request["id"]);
    let taken = respond(
        &mut next,
        request["id"].as_str().unwrap(),
        json!({"type": "approve"}),
    )
    .await;
    assert_eq!(taken["ok"]["type"], "done", "{taken}");
    let finished = frame_where(&mut next, |frame| frame["msg"]["type"] == "turn_finished").await;
    assert_eq!(finished["msg"]["outcome"], "completed", "{finished}");
    assert_eq!(
        std::fs::read_to_string(server._project.path().join("later.txt")).unwrap(),
        "kept\n"
    );
}

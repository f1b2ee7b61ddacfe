//! A mock Zed cloud: the web sign-in (playing the browser too), the account API and the LLM
//! API on one loopback server, as reference `zed-cloud.md` §10 plans it.
//!
//! - `GET /native_app_signin` reads the key from the query (padded or not), encrypts the
//!   account token to it (RSA-OAEP-SHA256, or PKCS#1 v1.5 when switched) and redirects to the
//!   client's loopback callback with `user_id=42` and the token in padded URL-safe base64.
//!   [`MockZedCloud::play_browser`] follows that redirect like a browser.
//! - `GET /client/users/me` and `POST /client/llm_tokens` require `Authorization: 42 <token>`;
//!   the plan, the hosted-models switch and token-mint failures are knobs. Tokens are `tok-N`.
//! - `GET /models` and `POST /completions` require `Bearer tok-N`; [`MockZedCloud::expire_tokens`]
//!   makes every token issued so far stale, answered as a [`StaleReply`] says.
//! - `/completions` answers scripted [`CompletionReply`]s, else the fixture of the requested
//!   provider, wrapped in `queued`, `started` and `stream_ended` status lines.
//!
//! Every request but the sign-in page is recorded. Run as a process ([`serve_as_process`]), the
//! mock is scripted over HTTP under `/__mock/` (see `zed_cloud/control.rs`).

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use parking_lot::Mutex;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use base64::Engine;
use base64::engine::general_purpose::{URL_SAFE, URL_SAFE_NO_PAD};
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, StatusCode};
use rsa::pkcs1::DecodeRsaPublicKey;
use rsa::sha2::Sha256;
use serde_json::{Value, json};

use crate::oauth::{BrowserVisit, follow_authorize_redirect};
use crate::upstream::Recorded;
use crate::{ServerGuard, serve};

mod control;
pub mod fixtures;

/// The account's user id.
pub const USER_ID: &str = "42";
/// The plaintext access token the sign-in delivers (opaque JSON, as Zed's).
pub const ACCOUNT_TOKEN: &str = r#"{"version":1,"id":7,"token":"Zk3vQpL8xN2mRt6yWc1aHs9dJf4gBn7eUi0oKl5zXq3wEr8tYu2iOp6aSd1fGh4j"}"#;
/// The response header that says status lines are on.
pub const SERVER_STATUS_HEADER: &str = "x-zed-server-supports-status-messages";

/// How the sign-in encrypts the token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EncryptionScheme {
    /// RSA-OAEP, SHA-256 (Zed's "V1").
    Oaep,
    /// PKCS#1 v1.5 (legacy "V0").
    Pkcs1v15,
}

/// How a stale LLM token is answered: a status and, optionally, one of Zed's stale headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StaleReply {
    pub status: u16,
    pub header: Option<&'static str>,
}

impl StaleReply {
    /// 401 without a header.
    pub fn unauthorized() -> Self {
        Self {
            status: 401,
            header: None,
        }
    }
    /// 401 with `x-zed-expired-token`.
    pub fn expired() -> Self {
        Self {
            status: 401,
            header: Some("x-zed-expired-token"),
        }
    }
    /// 200 (a normal reply) with `x-zed-expired-token`.
    pub fn expired_ok() -> Self {
        Self {
            status: 200,
            header: Some("x-zed-expired-token"),
        }
    }
    /// 403 with `x-zed-outdated-token`.
    pub fn outdated() -> Self {
        Self {
            status: 403,
            header: Some("x-zed-outdated-token"),
        }
    }
}

/// One scripted `/completions` answer.
#[derive(Debug, Clone, PartialEq)]
pub enum CompletionReply {
    /// 200 with these NDJSON lines (each JSON value on its own line, no blank lines), with or
    /// without the server's status header.
    Lines {
        lines: Vec<Value>,
        server_header: bool,
    },
    /// This status with a JSON body and headers.
    Status {
        status: u16,
        body: Value,
        headers: Vec<(String, String)>,
    },
}

impl CompletionReply {
    /// Wrapped mode: `queued`, `started`, each event as `{"event":…}`, `stream_ended`.
    pub fn wrapped(events: Vec<Value>) -> Self {
        let mut lines = vec![fixtures::queued(1), fixtures::started()];
        lines.extend(events.into_iter().map(fixtures::wrapped));
        lines.push(fixtures::stream_ended());
        Self::Lines {
            lines,
            server_header: true,
        }
    }

    /// Wrapped mode without the final `stream_ended` (a truncated reply).
    pub fn without_stream_ended(events: Vec<Value>) -> Self {
        let mut reply = Self::wrapped(events);
        if let Self::Lines { lines, .. } = &mut reply {
            lines.pop();
        }
        reply
    }

    /// Bare mode: the events as they are, no server header.
    pub fn bare(events: Vec<Value>) -> Self {
        Self::Lines {
            lines: events,
            server_header: false,
        }
    }

    /// Wrapped mode lines as given.
    pub fn lines(lines: Vec<Value>) -> Self {
        Self::Lines {
            lines,
            server_header: true,
        }
    }

    /// An error status with a JSON body.
    pub fn status(status: u16, body: Value) -> Self {
        Self::Status {
            status,
            body,
            headers: Vec::new(),
        }
    }

    /// 402 as the cloud sends it when the plan has no (more) hosted-model access.
    pub fn payment_required() -> Self {
        Self::status(
            402,
            json!({"code": "payment_required", "message": "Payment required to use this model"}),
        )
    }
}

#[derive(Debug)]
struct MockState {
    base_url: String,
    encryption: EncryptionScheme,
    plan: String,
    models_enabled: bool,
    account_revoked: bool,
    models: Value,
    mint_replies: VecDeque<u16>,
    mint_delay: Duration,
    mint_requests: usize,
    issued: u64,
    fresh: HashSet<String>,
    stale: HashMap<String, StaleReply>,
    completions: VecDeque<CompletionReply>,
    recorded: Vec<Recorded>,
    sign_in_queries: Vec<HashMap<String, String>>,
}

/// The running mock; it stops when dropped.
pub struct MockZedCloud {
    base_url: String,
    state: Arc<Mutex<MockState>>,
    _server: ServerGuard,
}

impl MockZedCloud {
    /// Starts on `127.0.0.1:0` with a Pro account whose hosted models are on.
    pub async fn start() -> Self {
        let state = Arc::new(Mutex::new(MockState {
            base_url: String::new(),
            encryption: EncryptionScheme::Oaep,
            plan: "zed_pro".to_owned(),
            models_enabled: true,
            account_revoked: false,
            models: fixtures::models(),
            mint_replies: VecDeque::new(),
            mint_delay: Duration::ZERO,
            mint_requests: 0,
            issued: 0,
            fresh: HashSet::new(),
            stale: HashMap::new(),
            completions: VecDeque::new(),
            recorded: Vec::new(),
            sign_in_queries: Vec::new(),
        }));
        let app = Router::new().fallback(answer).with_state(state.clone());
        let (addr, server) = serve(app).await;
        let base_url = format!("http://{addr}");
        state.lock().base_url = base_url.clone();
        Self {
            base_url,
            state,
            _server: server,
        }
    }

    /// `http://127.0.0.1:<port>`: the web, account and LLM base alike.
    pub fn base_url(&self) -> String {
        self.base_url.clone()
    }

    /// The plaintext token the sign-in delivers and the account API accepts.
    pub fn account_token(&self) -> &'static str {
        ACCOUNT_TOKEN
    }

    /// The scheme the sign-in encrypts with (OAEP by default).
    pub fn set_encryption(&self, scheme: EncryptionScheme) {
        self.state.lock().encryption = scheme;
    }

    /// Plays the browser: opens the sign-in URL, follows the redirect to the callback.
    pub async fn play_browser(&self, sign_in_url: &str) -> std::io::Result<BrowserVisit> {
        follow_authorize_redirect(sign_in_url).await
    }

    /// The queries of the sign-in page visits.
    pub fn sign_in_queries(&self) -> Vec<HashMap<String, String>> {
        self.state.lock().sign_in_queries.clone()
    }

    /// The plan id `users/me` reports (`zed_pro` by default; any string).
    pub fn set_plan(&self, plan: &str) {
        self.state.lock().plan = plan.to_owned();
    }

    /// Whether the organization has hosted models on.
    pub fn set_models_enabled(&self, enabled: bool) {
        self.state.lock().models_enabled = enabled;
    }

    /// A revoked account: `users/me` and `llm_tokens` answer 401.
    pub fn revoke_account(&self) {
        self.state.lock().account_revoked = true;
    }

    /// The next `llm_tokens` requests answer these statuses (401, 500, …) instead of a token.
    pub fn fail_next_mints(&self, statuses: &[u16]) {
        self.state.lock().mint_replies.extend(statuses);
    }

    /// Each mint waits this long first (to widen races in tests).
    pub fn set_mint_delay(&self, delay: Duration) {
        self.state.lock().mint_delay = delay;
    }

    /// `llm_tokens` requests received.
    pub fn mint_requests(&self) -> usize {
        self.state.lock().mint_requests
    }

    /// Every token issued so far becomes stale and is answered with `reply`.
    pub fn expire_tokens(&self, reply: StaleReply) {
        let mut state = self.state.lock();
        let tokens: Vec<String> = state.fresh.drain().collect();
        for token in tokens {
            state.stale.insert(token, reply);
        }
    }

    /// Replaces the `/models` body.
    pub fn set_models(&self, models: Value) {
        self.state.lock().models = models;
    }

    /// Queues a `/completions` answer.
    pub fn enqueue_completion(&self, reply: CompletionReply) {
        self.state.lock().completions.push_back(reply);
    }

    /// Every request received (the sign-in page excepted).
    pub fn requests(&self) -> Vec<Recorded> {
        self.state.lock().recorded.clone()
    }

    /// The requests to `path`.
    pub fn requests_to(&self, path: &str) -> Vec<Recorded> {
        self.requests()
            .into_iter()
            .filter(|request| request.path == path)
            .collect()
    }
}

async fn answer(State(state): State<Arc<Mutex<MockState>>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let path = parts.uri.path().to_owned();
    let query: HashMap<String, String> =
        url::form_urlencoded::parse(parts.uri.query().unwrap_or_default().as_bytes())
            .into_owned()
            .collect();
    if let Some(command) = path.strip_prefix("/__mock/") {
        return control::control(&state, command, &body);
    }
    if path == "/native_app_signin" {
        return sign_in(&state, query);
    }
    if path == "/native_app_signin_succeeded" {
        return json_reply(200, &json!({"signed_in": true}), &[]);
    }
    state.lock().recorded.push(Recorded {
        method: parts.method.to_string(),
        path: path.clone(),
        headers: parts.headers.clone(),
        body: body.clone(),
    });
    match (parts.method.as_str(), path.as_str()) {
        ("GET", "/client/users/me") => users_me(&state, &parts.headers),
        ("POST", "/client/llm_tokens") => mint(&state, &parts.headers, &body).await,
        ("GET", "/models") => with_llm_token(&state, &parts.headers, |state| {
            json_reply(200, &state.models, &[])
        }),
        ("POST", "/completions") => {
            with_llm_token(&state, &parts.headers, |state| completion(state, &body))
        }
        _ => json_reply(404, &json!({"message": "not found"}), &[]),
    }
}

/// The browser's visit to the sign-in page: encrypt the token to the key, redirect to the
/// loopback callback.
fn sign_in(state: &Mutex<MockState>, query: HashMap<String, String>) -> Response {
    let scheme = {
        let mut state = state.lock();
        state.sign_in_queries.push(query.clone());
        state.encryption
    };
    let (Some(port), Some(key)) = (
        query.get("native_app_port"),
        query.get("native_app_public_key"),
    ) else {
        return json_reply(400, &json!({"message": "missing port or key"}), &[]);
    };
    let Some(public_key) = URL_SAFE_NO_PAD
        .decode(key.trim_end_matches('='))
        .ok()
        .and_then(|der| rsa::PublicKey::from_pkcs1_der(&der).ok())
    else {
        return json_reply(400, &json!({"message": "not a PKCS#1 public key"}), &[]);
    };
    let encrypted = match scheme {
        EncryptionScheme::Oaep => public_key.oaep_encrypt::<Sha256>(ACCOUNT_TOKEN.as_bytes()),
        EncryptionScheme::Pkcs1v15 => public_key.pkcs1v15_encrypt(ACCOUNT_TOKEN.as_bytes()),
    };
    let Ok(ciphertext) = encrypted else {
        return json_reply(500, &json!({"message": "encryption failed"}), &[]);
    };
    let callback_query = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("user_id", USER_ID)
        .append_pair("access_token", &URL_SAFE.encode(ciphertext))
        .finish();
    let location = format!("http://127.0.0.1:{port}/?{callback_query}");
    let mut response = Response::new(Body::empty());
    *response.status_mut() = StatusCode::FOUND;
    if let Ok(value) = HeaderValue::from_str(&location) {
        response.headers_mut().insert("location", value);
    }
    response
}

fn account_authorized(state: &MockState, headers: &HeaderMap) -> bool {
    let expected = format!("{USER_ID} {ACCOUNT_TOKEN}");
    !state.account_revoked
        && headers
            .get("authorization")
            .is_some_and(|value| value.as_bytes() == expected.as_bytes())
}

fn users_me(state: &Mutex<MockState>, headers: &HeaderMap) -> Response {
    let state = state.lock();
    if !account_authorized(&state, headers) {
        return json_reply(401, &json!({"message": "unauthorized"}), &[]);
    }
    json_reply(
        200,
        &fixtures::users_me(&state.plan, state.models_enabled),
        &[],
    )
}

async fn mint(state: &Mutex<MockState>, headers: &HeaderMap, body: &[u8]) -> Response {
    let delay = {
        let mut state = state.lock();
        state.mint_requests += 1;
        state.mint_delay
    };
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let mut state = state.lock();
    if !account_authorized(&state, headers) {
        return json_reply(401, &json!({"message": "unauthorized"}), &[]);
    }
    if let Some(status) = state.mint_replies.pop_front() {
        return json_reply(status, &json!({"message": "scripted failure"}), &[]);
    }
    let organization = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|body| body["organization_id"].as_str().map(str::to_owned));
    if !matches!(organization.as_deref(), Some("org_personal" | "org_team")) {
        return json_reply(400, &json!({"message": "unknown organization_id"}), &[]);
    }
    state.issued += 1;
    let token = format!("tok-{}", state.issued);
    state.fresh.insert(token.clone());
    json_reply(200, &json!({"token": token}), &[])
}

/// Runs `ok` when the request carries a fresh LLM token; answers a stale or unknown one.
fn with_llm_token(
    state: &Mutex<MockState>,
    headers: &HeaderMap,
    ok: impl FnOnce(&mut MockState) -> Response,
) -> Response {
    let mut state = state.lock();
    let token = headers
        .get("authorization")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .unwrap_or_default()
        .to_owned();
    if state.fresh.contains(&token) {
        return ok(&mut state);
    }
    match state.stale.get(&token).copied() {
        Some(StaleReply {
            status: 200,
            header,
        }) => {
            let mut response = ok(&mut state);
            if let Some(header) = header {
                response
                    .headers_mut()
                    .insert(header, HeaderValue::from_static("true"));
            }
            response
        }
        Some(StaleReply { status, header }) => {
            let headers: Vec<(&str, &str)> = header.map(|h| (h, "true")).into_iter().collect();
            json_reply(status, &json!({"message": "stale token"}), &headers)
        }
        None => json_reply(401, &json!({"message": "unknown token"}), &[]),
    }
}

fn completion(state: &mut MockState, body: &[u8]) -> Response {
    let request: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let reply = state.completions.pop_front().unwrap_or_else(|| {
        let provider = request["provider"].as_str().unwrap_or_default();
        let model = request["model"].as_str().unwrap_or_default();
        CompletionReply::wrapped(fixtures::provider_events(provider, model))
    });
    match reply {
        CompletionReply::Status {
            status,
            body,
            headers,
        } => {
            let headers: Vec<(&str, &str)> = headers
                .iter()
                .map(|(name, value)| (name.as_str(), value.as_str()))
                .collect();
            json_reply(status, &body, &headers)
        }
        CompletionReply::Lines {
            lines,
            server_header,
        } => {
            // One chunk per line, so a client sees the lines arrive one by one.
            let chunks: Vec<Result<Bytes, std::io::Error>> = lines
                .iter()
                .map(|line| Ok(Bytes::from(format!("{line}\n"))))
                .collect();
            let mut response = Response::new(Body::from_stream(futures_util::stream::iter(chunks)));
            let headers = response.headers_mut();
            headers.insert(
                "content-type",
                HeaderValue::from_static("application/x-ndjson"),
            );
            if server_header {
                headers.insert(SERVER_STATUS_HEADER, HeaderValue::from_static("true"));
            }
            response
        }
    }
}

/// Runs the mock as a process for SDK tests in other languages: prints its base URL on the
/// first line of stdout, then serves until killed. A binary's `main` is one call to this.
pub async fn serve_as_process() {
    use std::io::Write;
    let cloud = MockZedCloud::start().await;
    let mut stdout = std::io::stdout();
    let _ = writeln!(stdout, "{}", cloud.base_url());
    let _ = stdout.flush();
    std::future::pending::<()>().await;
}

fn json_reply(status: u16, body: &Value, headers: &[(&str, &str)]) -> Response {
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
    response
        .headers_mut()
        .insert("content-type", HeaderValue::from_static("application/json"));
    for (name, value) in headers {
        if let (Ok(name), Ok(value)) = (
            http::HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            response.headers_mut().insert(name, value);
        }
    }
    response
}

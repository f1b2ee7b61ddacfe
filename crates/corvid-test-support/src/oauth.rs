//! A mock OAuth 2.0 server in xAI's shape: `/oauth2/authorize`, `/oauth2/token` (authorization
//! code, refresh token and device code grants) and `/oauth2/device/code`.
//!
//! Everything is scriptable (the next refresh replies, the authorize outcome, the device-flow
//! poll sequence, an artificial token-endpoint delay) and recorded (every form posted to the
//! token endpoint, every authorize query), so tests can check PKCE, `state` and single-flight
//! refresh. Tokens are issued as `mock-access-N` / `mock-refresh-N`; a refresh token that was
//! rotated away is refused with `invalid_grant`, as xAI does.
//!
//! The browser step is [`follow_authorize_redirect`]: a raw HTTP GET of the authorize URL,
//! then of the `Location` it redirects to (the client's loopback callback).

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use parking_lot::Mutex;
use std::time::Duration;

use axum::Router;
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::Bytes;
use http::{StatusCode, header};
use serde_json::{Value, json};

use crate::ServerGuard;

mod browser;

pub use browser::{BrowserVisit, RawResponse, follow_authorize_redirect, http_get};

/// A form or query, decoded.
pub type Form = HashMap<String, String>;

/// The answer to the next `grant_type=refresh_token` request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefreshReply {
    /// 200 with a new access token and a new (rotated) refresh token.
    Rotate,
    /// 200 with a new access token and no refresh token.
    WithoutRefreshToken,
    /// An OAuth error body `{"error": error}` with `status` (400 `invalid_grant`, 500, ...).
    Error { status: u16, error: String },
}

impl RefreshReply {
    /// `status` with `{"error": error}`.
    pub fn error(status: u16, error: &str) -> Self {
        Self::Error {
            status,
            error: error.to_owned(),
        }
    }
}

/// What the authorize endpoint redirects back with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthorizeReply {
    /// `?code=...&state=<the client's state>`.
    Approve,
    /// `?error=...&error_description=...&state=...`.
    Deny { error: String, description: String },
    /// A code with a state the client never sent.
    ForgeState,
}

/// The answer to a `grant_type=authorization_code` request with a known code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExchangeReply {
    /// Access, refresh and id token (with the email claim).
    Tokens,
    /// Access and id token only.
    WithoutRefreshToken,
}

/// One answer to a device-code poll.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DevicePoll {
    Pending,
    SlowDown,
    Denied,
    Expired,
    Approve,
}

#[derive(Debug)]
struct MockState {
    refresh_replies: VecDeque<RefreshReply>,
    authorize_reply: AuthorizeReply,
    exchange_reply: ExchangeReply,
    device_polls: VecDeque<DevicePoll>,
    device_interval: u64,
    device_expires_in: u64,
    token_delay: Duration,
    expires_in: u64,
    email: String,
    issued: u64,
    /// Code → the authorize query that produced it.
    codes: HashMap<String, Form>,
    revoked_refresh_tokens: HashSet<String>,
    token_forms: Vec<Form>,
    authorize_queries: Vec<Form>,
    device_code_forms: Vec<Form>,
    poll_times: Vec<tokio::time::Instant>,
}

/// The mock server; stops when dropped.
pub struct MockOAuth {
    base_url: String,
    state: Arc<Mutex<MockState>>,
    _server: ServerGuard,
}

impl MockOAuth {
    /// Starts the server on `127.0.0.1:0`.
    pub async fn start() -> Self {
        let state = Arc::new(Mutex::new(MockState {
            refresh_replies: VecDeque::new(),
            authorize_reply: AuthorizeReply::Approve,
            exchange_reply: ExchangeReply::Tokens,
            device_polls: VecDeque::new(),
            device_interval: 5,
            device_expires_in: 600,
            token_delay: Duration::ZERO,
            expires_in: 3600,
            email: "user@example.com".to_owned(),
            issued: 0,
            codes: HashMap::new(),
            revoked_refresh_tokens: HashSet::new(),
            token_forms: Vec::new(),
            authorize_queries: Vec::new(),
            device_code_forms: Vec::new(),
            poll_times: Vec::new(),
        }));
        let app = Router::new()
            .route("/oauth2/authorize", get(authorize))
            .route("/oauth2/token", post(token))
            .route("/oauth2/device/code", post(device_code))
            .with_state(Arc::clone(&state));
        let (address, server) = crate::serve(app).await;
        Self {
            base_url: format!("http://{address}"),
            state,
            _server: server,
        }
    }

    /// `http://127.0.0.1:<port>`, the value for `xai_auth_url`.
    pub fn base_url(&self) -> String {
        self.base_url.clone()
    }

    /// Queues the answer to a coming refresh; with none queued, refreshes rotate.
    pub fn push_refresh_reply(&self, reply: RefreshReply) {
        self.state.lock().refresh_replies.push_back(reply);
    }

    /// Delays every token-endpoint answer (to make concurrent callers overlap).
    pub fn set_token_delay(&self, delay: Duration) {
        self.state.lock().token_delay = delay;
    }

    /// The `expires_in` of issued tokens (default 3600).
    pub fn set_expires_in(&self, seconds: u64) {
        self.state.lock().expires_in = seconds;
    }

    /// The email claim of issued id tokens (default `user@example.com`).
    pub fn set_email(&self, email: &str) {
        self.state.lock().email = email.to_owned();
    }

    pub fn set_authorize_reply(&self, reply: AuthorizeReply) {
        self.state.lock().authorize_reply = reply;
    }

    pub fn set_exchange_reply(&self, reply: ExchangeReply) {
        self.state.lock().exchange_reply = reply;
    }

    /// Queues device-code poll answers; with none queued, a poll is approved.
    pub fn push_device_polls(&self, polls: impl IntoIterator<Item = DevicePoll>) {
        self.state.lock().device_polls.extend(polls);
    }

    /// The `interval` and `expires_in` of the device-code reply (default 5 and 600).
    pub fn set_device_timing(&self, interval: u64, expires_in: u64) {
        let mut state = self.state.lock();
        state.device_interval = interval;
        state.device_expires_in = expires_in;
    }

    /// How many token requests had this `grant_type` (`refresh_token`,
    /// `authorization_code`, `urn:ietf:params:oauth:grant-type:device_code`).
    pub fn token_requests(&self, grant_type: &str) -> usize {
        self.state
            .lock()
            .token_forms
            .iter()
            .filter(|form| form.get("grant_type").map(String::as_str) == Some(grant_type))
            .count()
    }

    /// Every form posted to the token endpoint, in order.
    pub fn token_forms(&self) -> Vec<Form> {
        self.state.lock().token_forms.clone()
    }

    /// The last form posted to the token endpoint.
    pub fn last_token_form(&self) -> Option<Form> {
        self.state.lock().token_forms.last().cloned()
    }

    /// Every authorize query, in order.
    pub fn authorize_queries(&self) -> Vec<Form> {
        self.state.lock().authorize_queries.clone()
    }

    /// Every form posted to the device-code endpoint.
    pub fn device_code_forms(&self) -> Vec<Form> {
        self.state.lock().device_code_forms.clone()
    }

    /// When each device-code poll arrived.
    pub fn device_poll_times(&self) -> Vec<tokio::time::Instant> {
        self.state.lock().poll_times.clone()
    }
}

type Shared = Arc<Mutex<MockState>>;

async fn authorize(State(shared): State<Shared>, Query(query): Query<Form>) -> Response {
    let location = {
        let mut state = shared.lock();
        state.authorize_queries.push(query.clone());
        let redirect_uri = query.get("redirect_uri").cloned().unwrap_or_default();
        let client_state = query.get("state").cloned().unwrap_or_default();
        state.issued += 1;
        let code = format!("mock-code-{}", state.issued);
        let pairs: Vec<(&str, String)> = match state.authorize_reply.clone() {
            AuthorizeReply::Approve => vec![("code", code.clone()), ("state", client_state)],
            AuthorizeReply::ForgeState => {
                vec![("code", code.clone()), ("state", "forged-state".to_owned())]
            }
            AuthorizeReply::Deny { error, description } => vec![
                ("error", error),
                ("error_description", description),
                ("state", client_state),
            ],
        };
        state.codes.insert(code, query.clone());
        let encoded = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(pairs)
            .finish();
        format!("{redirect_uri}?{encoded}")
    };
    (StatusCode::FOUND, [(header::LOCATION, location)]).into_response()
}

async fn device_code(State(shared): State<Shared>, body: Bytes) -> Response {
    let form = parse_form(&body);
    let (interval, expires_in, base) = {
        let mut state = shared.lock();
        state.device_code_forms.push(form);
        (
            state.device_interval,
            state.device_expires_in,
            "https://accounts.example/device",
        )
    };
    json_reply(
        StatusCode::OK,
        json!({
            "device_code": "mock-device-code",
            "user_code": "ABCD-EFGH",
            "verification_uri": base,
            "verification_uri_complete": format!("{base}?user_code=ABCD-EFGH"),
            "expires_in": expires_in,
            "interval": interval,
        }),
    )
}

async fn token(State(shared): State<Shared>, body: Bytes) -> Response {
    let form = parse_form(&body);
    let (delay, status, reply) = {
        let mut state = shared.lock();
        state.token_forms.push(form.clone());
        let (status, reply) = answer_token(&mut state, &form);
        (state.token_delay, status, reply)
    };
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    json_reply(status, reply)
}

fn answer_token(state: &mut MockState, form: &Form) -> (StatusCode, Value) {
    let field = |name: &str| form.get(name).cloned().unwrap_or_default();
    match field("grant_type").as_str() {
        "refresh_token" => {
            let presented = field("refresh_token");
            if presented.is_empty() || state.revoked_refresh_tokens.contains(&presented) {
                return oauth_error(400, "invalid_grant");
            }
            match state
                .refresh_replies
                .pop_front()
                .unwrap_or(RefreshReply::Rotate)
            {
                RefreshReply::Rotate => {
                    state.revoked_refresh_tokens.insert(presented);
                    (StatusCode::OK, issue(state, true, false))
                }
                RefreshReply::WithoutRefreshToken => (StatusCode::OK, issue(state, false, false)),
                RefreshReply::Error { status, error } => oauth_error(status, &error),
            }
        }
        "authorization_code" => {
            let Some(authorize) = state.codes.remove(&field("code")) else {
                return oauth_error(400, "invalid_grant");
            };
            if authorize.get("redirect_uri") != form.get("redirect_uri") {
                return oauth_error(400, "invalid_grant");
            }
            let with_refresh = state.exchange_reply == ExchangeReply::Tokens;
            (StatusCode::OK, issue(state, with_refresh, true))
        }
        "urn:ietf:params:oauth:grant-type:device_code" => {
            state.poll_times.push(tokio::time::Instant::now());
            if field("device_code") != "mock-device-code" {
                return oauth_error(400, "invalid_grant");
            }
            match state
                .device_polls
                .pop_front()
                .unwrap_or(DevicePoll::Approve)
            {
                DevicePoll::Pending => oauth_error(400, "authorization_pending"),
                DevicePoll::SlowDown => oauth_error(400, "slow_down"),
                DevicePoll::Denied => oauth_error(400, "access_denied"),
                DevicePoll::Expired => oauth_error(400, "expired_token"),
                DevicePoll::Approve => (StatusCode::OK, issue(state, true, true)),
            }
        }
        _ => oauth_error(400, "unsupported_grant_type"),
    }
}

/// A token reply with fresh `mock-access-N` (and `mock-refresh-N`, an id token).
fn issue(state: &mut MockState, refresh: bool, id_token: bool) -> Value {
    state.issued += 1;
    let n = state.issued;
    let mut reply = json!({
        "access_token": format!("mock-access-{n}"),
        "token_type": "Bearer",
        "expires_in": state.expires_in,
    });
    if refresh {
        reply["refresh_token"] = json!(format!("mock-refresh-{n}"));
    }
    if id_token {
        reply["id_token"] = json!(unsigned_jwt(
            &json!({"email": state.email, "sub": "mock-user"})
        ));
    }
    reply
}

/// `header.payload.signature` with a fake signature: clients read claims without checking it.
pub fn unsigned_jwt(claims: &Value) -> String {
    let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#);
    let payload = URL_SAFE_NO_PAD.encode(claims.to_string());
    format!("{header}.{payload}.mock-signature")
}

fn oauth_error(status: u16, error: &str) -> (StatusCode, Value) {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST);
    (
        status,
        json!({"error": error, "error_description": format!("mock {error}")}),
    )
}

fn json_reply(status: StatusCode, body: Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn parse_form(body: &[u8]) -> Form {
    url::form_urlencoded::parse(body).into_owned().collect()
}

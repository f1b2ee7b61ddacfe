//! corvid's whole HTTP app on one port: the gateway's routes (`corvid_gateway::App`, with its
//! own guard and its router bypass for generation POSTs), and in front of them the agent's web
//! face: the page (`/`, `/assets/*`), the agent's WebSocket (`/api/agent/ws`) and the REST API
//! (`/api/*`).
//!
//! [`Server`] picks between the two by path prefix only, so the gateway's hot path pays one
//! string comparison. Everything under the page's prefixes passes [`security`] first: Host
//! allowlist, exact Origin, the per-launch token, JSON bodies, size limits and a strict CSP.

mod assets;
mod focus;
mod live;
mod rest;
mod security;
mod sessions;
mod settings;
mod signin;
mod ws;

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request};
use axum::response::Response;
use axum::routing::get;
use corvid_config::Loaded;
use corvid_gateway::{App, AppState};
use futures_util::future::Either;
use tower::Service;

pub use live::{ReloadOutcome, ReloadRequest, Reloads, SettingsNote};
pub use security::{Token, page_url};
pub use sessions::PageAgent;

/// The largest REST body the page sends (settings, a new conversation): JSON, small.
pub const MAX_BODY_BYTES: usize = 64 * 1024;
/// The largest WebSocket message: a user message with pasted text and a few images (the agent
/// takes images up to 5 MB each, a third larger as base64).
pub const MAX_FRAME_BYTES: usize = 24 * 1024 * 1024;

/// What the page's handlers share.
#[derive(Clone)]
pub struct PageState(Arc<Inner>);

struct Inner {
    gateway: AppState,
    agent: PageAgent,
    token: Token,
    allowed_hosts: Vec<String>,
    loaded: Loaded,
    /// The sign-ins under way: the host's (see `Reloads`), so a flow that ends after the
    /// settings changed is still reported by the page serving the new ones.
    sign_ins: Arc<signin::SignIns>,
    /// Live settings: apply the files now, and what the last look at them found.
    reloads: Reloads,
    /// Set once these settings are replaced: every tab's socket closes, and the page
    /// reconnects to the app serving the new ones.
    retired: tokio::sync::watch::Sender<bool>,
    /// Whether the user looks at each connected tab (for the host's notifications).
    tabs: Arc<focus::Tabs>,
}

impl PageState {
    /// `port` is the port actually bound: the Host allowlist and the one accepted Origin are
    /// built from it. The agent's store is the one the usage and conversation routes read (the
    /// process's one store: the gateway's ledger writer should write through it too).
    pub fn new(
        gateway: AppState,
        agent: PageAgent,
        token: Token,
        loaded: Loaded,
        port: u16,
    ) -> Self {
        Self::hosted(gateway, agent, token, loaded, port, Reloads::default())
    }

    /// [`PageState::new`] in a host that applies settings changes live (`reloads`).
    pub fn hosted(
        gateway: AppState,
        agent: PageAgent,
        token: Token,
        loaded: Loaded,
        port: u16,
        reloads: Reloads,
    ) -> Self {
        Self(Arc::new(Inner {
            allowed_hosts: security::allowed_hosts(&loaded.config.host, port),
            gateway,
            agent,
            token,
            loaded,
            sign_ins: reloads.sign_ins(),
            reloads,
            retired: tokio::sync::watch::Sender::new(false),
            tabs: Arc::default(),
        }))
    }

    /// The settings this page was built with are replaced: every tab's socket closes (the
    /// page reconnects, to the app serving the new settings) and none reopens a session here.
    pub fn retire(&self) {
        self.0.retired.send_replace(true);
    }

    fn retired(&self) -> tokio::sync::watch::Receiver<bool> {
        self.0.retired.subscribe()
    }
}

/// The whole app: the page and its API, then the gateway.
#[derive(Clone)]
pub struct Server {
    page: Router,
    gateway: App,
}

/// Builds the app over the gateway's `App` (built by `corvid_gateway::router`).
pub fn app(gateway: App, state: PageState) -> Server {
    let api = Router::new()
        .route("/api/agent/ws", get(ws::upgrade))
        .route("/api/agent/schema", get(ws::schema))
        .route("/api/agent/command", axum::routing::post(ws::command))
        .route("/api/agent/commands", axum::routing::get(ws::command_list))
        .merge(rest::routes())
        .merge(focus::routes())
        .merge(settings::routes())
        .merge(signin::routes())
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            security::api_guard,
        ));
    let page = Router::new()
        .merge(assets::routes())
        .merge(api)
        .fallback(rest::not_found)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            security::page_guard,
        ))
        .with_state(state);
    Server { page, gateway }
}

/// The page's paths; every other path is the gateway's.
fn is_page_path(path: &str) -> bool {
    path == "/" || path.starts_with("/api/") || path == "/api" || path.starts_with("/assets/")
}

impl Service<Request> for Server {
    type Response = Response;
    type Error = Infallible;
    type Future = Either<<Router as Service<Request>>::Future, <App as Service<Request>>::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // The router is always ready; the gateway decides.
        self.gateway.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        if is_page_path(request.uri().path()) {
            Either::Left(self.page.call(request))
        } else {
            Either::Right(self.gateway.call(request))
        }
    }
}

impl corvid_gateway::Served for Server {
    /// Only the gateway's bodies stream for long; a WebSocket ends when `serve` drops it.
    fn end_streams(&self) {
        self.gateway.end_streams();
    }
}

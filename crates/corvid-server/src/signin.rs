//! Sign-in from the page: `POST /api/sign-in/{xai,xai-browser,zed}` starts the account's flow
//! in the background (xAI: the device-code flow, whose code the page shows, or the browser flow
//! — PKCE with a loopback callback, as `corvid login xai` — whose link the page shows and corvid
//! also tries to open; Zed: the browser flow, likewise), `GET /api/sign-in` reports each flow's
//! state (both xAI flows share one slot: one xAI sign-in at a time). The tokens are stored exactly as `corvid login` stores them; no response ever
//! carries one. A new sign-in is applied at once: the host serving the page loads the settings
//! again (`Reloads::apply_now`), so the next request uses it.

use parking_lot::Mutex;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use corvid_auth::zed::{ZedLogin, ZedLoginError, ZedStore, login_zed};
use corvid_auth::{
    AuthError, BrowserLogin, CredentialStore, DeviceCode, OAuthEndpoints, login_browser,
    login_device, persist_login,
};
use corvid_gateway::ApiError;
use serde::Serialize;
use serde_json::{Value, json};

use crate::PageState;

/// One account's sign-in, as the page sees it.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub(crate) enum SignIn {
    #[default]
    Idle,
    /// The flow is under way and has no link yet.
    Starting,
    /// Waiting for the user: open `url` (and, for xAI, enter `code`).
    Waiting {
        url: String,
        code: Option<String>,
    },
    SignedIn {
        account: Option<String>,
    },
    Failed {
        message: String,
    },
}

/// The two flows' states.
#[derive(Debug, Default)]
pub(crate) struct SignIns {
    xai: Mutex<SignIn>,
    zed: Mutex<SignIn>,
}

impl SignIns {
    fn slot(&self, account: &str) -> Option<&Mutex<SignIn>> {
        match account {
            "xai" | "xai-browser" => Some(&self.xai),
            "zed" => Some(&self.zed),
            _ => None,
        }
    }
}

fn set(slot: &Mutex<SignIn>, state: SignIn) {
    *slot.lock() = state;
}

/// Marks a flow as started unless one is under way (starting or waiting for the user). The
/// check and the mark hold one lock, so two clicks or two tabs cannot start two flows, whose
/// later outcome would overwrite the other's.
fn claim(slot: &Mutex<SignIn>) -> bool {
    let mut current = slot.lock();
    if matches!(*current, SignIn::Starting | SignIn::Waiting { .. }) {
        return false;
    }
    *current = SignIn::Starting;
    true
}

/// Why a sign-in failed, as the page shows it.
#[derive(Debug, thiserror::Error)]
enum SignInError {
    #[error(transparent)]
    Auth(#[from] AuthError),
    #[error(transparent)]
    Zed(#[from] ZedLoginError),
    #[error("signed in, but the tokens could not be stored: {0}")]
    NotStored(AuthError),
}

/// A flow's end: signed in (as `account`, when the flow names it) or failed with why.
fn finish(slot: &Mutex<SignIn>, outcome: Result<Option<String>, SignInError>) {
    set(
        slot,
        match outcome {
            Ok(account) => SignIn::SignedIn { account },
            Err(error) => SignIn::Failed {
                message: error.to_string(),
            },
        },
    );
}

fn get_state(slot: &Mutex<SignIn>) -> SignIn {
    slot.lock().clone()
}

pub(crate) fn routes() -> Router<PageState> {
    Router::new()
        .route("/api/sign-in", get(read))
        .route("/api/sign-in/{account}", post(start))
}

fn snapshot(state: &PageState) -> Value {
    let sign_ins = &state.0.sign_ins;
    json!({"xai": get_state(&sign_ins.xai), "zed": get_state(&sign_ins.zed)})
}

async fn read(State(state): State<PageState>) -> Json<Value> {
    Json(snapshot(&state))
}

async fn start(
    State(state): State<PageState>,
    Path(account): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let Some(slot) = state.0.sign_ins.slot(&account) else {
        return Err(ApiError::not_found(format!(
            "no sign-in for {account:?} (xai, xai-browser or zed)"
        )));
    };
    if !claim(slot) {
        return Ok(Json(snapshot(&state)));
    }
    let task_state = state.clone();
    match account.as_str() {
        "xai" => {
            tokio::spawn(async move { xai(&task_state).await });
        }
        "xai-browser" => {
            tokio::spawn(async move { xai_browser(&task_state).await });
        }
        _ => {
            tokio::spawn(async move { zed(&task_state).await });
        }
    }
    // Answer once the link is known (or the flow failed), so the page can show it at once.
    for _ in 0..100 {
        if !matches!(get_state(slot), SignIn::Starting) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(Json(snapshot(&state)))
}

async fn xai(state: &PageState) {
    let slot = &state.0.sign_ins.xai;
    let loaded = &state.0.loaded;
    let outcome = async {
        let endpoints = OAuthEndpoints::from_config(&loaded.config);
        let http = corvid_auth::oauth_http_client()?;
        let on_code = |code: &DeviceCode| {
            let url = code
                .verification_uri_complete
                .clone()
                .unwrap_or_else(|| code.verification_uri.clone());
            set(
                slot,
                SignIn::Waiting {
                    url,
                    code: Some(code.user_code.clone()),
                },
            );
        };
        let tokens = login_device(&endpoints, &http, on_code).await?;
        persist_login(&CredentialStore::detect(loaded), &tokens).map_err(SignInError::NotStored)?;
        Ok::<_, SignInError>(tokens.email.clone())
    }
    .await;
    apply(state, &outcome).await;
    finish(slot, outcome);
}

/// xAI's browser flow: the callback listens on xAI's registered loopback port; an OAuth server
/// other than xAI's own (`xai_auth_url` changed: self-hosted, or a test's) gets a free port.
async fn xai_browser(state: &PageState) {
    let slot = &state.0.sign_ins.xai;
    let loaded = &state.0.loaded;
    let outcome = async {
        let endpoints = OAuthEndpoints::from_config(&loaded.config);
        let http = corvid_auth::oauth_http_client()?;
        let page = state.clone();
        let mut options = BrowserLogin::new(endpoints, http, move |url| {
            set(
                &page.0.sign_ins.xai,
                SignIn::Waiting {
                    url: url.to_owned(),
                    code: None,
                },
            );
            corvid_auth::open_in_browser(url);
        });
        if loaded.config.xai_auth_url != corvid_config::Config::default().xai_auth_url {
            options.redirect_port = 0;
        }
        let tokens = login_browser(options).await?;
        persist_login(&CredentialStore::detect(loaded), &tokens).map_err(SignInError::NotStored)?;
        Ok::<_, SignInError>(tokens.email.clone())
    }
    .await;
    apply(state, &outcome).await;
    finish(slot, outcome);
}

async fn zed(state: &PageState) {
    let slot = &state.0.sign_ins.zed;
    let loaded = &state.0.loaded;
    let outcome = async {
        let hosts = corvid_providers::zed_hosts(&loaded.config);
        let store = ZedStore::detect(loaded);
        let system_id = store.system_id()?;
        let page = state.clone();
        let mut options = ZedLogin::new(hosts, move |url| {
            set(
                &page.0.sign_ins.zed,
                SignIn::Waiting {
                    url: url.to_owned(),
                    code: None,
                },
            );
            corvid_auth::open_in_browser(url);
        });
        options.system_id = Some(system_id);
        let credentials = login_zed(options).await?;
        store.save(&credentials)?;
        Ok::<_, SignInError>(None)
    }
    .await;
    apply(state, &outcome).await;
    finish(slot, outcome);
}

/// A sign-in that stored its tokens is applied before the page hears it succeeded.
async fn apply<T, E>(state: &PageState, outcome: &Result<T, E>) {
    if outcome.is_ok() {
        let _ = state.0.reloads.apply_now().await;
    }
}

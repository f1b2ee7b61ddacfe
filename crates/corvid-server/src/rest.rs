//! The REST routes: conversations (through the session service, so the page, its sockets and
//! every other front end agree), models, status and usage. Every answer is JSON; every failure
//! is the gateway's error shape `{"error": {"type", "message"}}` with a status that says whose
//! fault it was.

use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use corvid_agent::AgentError;
use corvid_config::CredentialSource;
use corvid_gateway::ApiError;
use corvid_store::ConversationStore;
use http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::PageState;

pub(crate) fn routes() -> Router<PageState> {
    Router::new()
        .route(
            "/api/conversations",
            get(list_conversations).post(new_conversation),
        )
        .route(
            "/api/conversations/{id}",
            get(get_conversation).delete(delete_conversation),
        )
        .route("/api/models", get(models))
        .route("/api/status", get(status))
        .route("/api/usage", get(usage))
}

pub(crate) async fn not_found(uri: http::Uri) -> ApiError {
    ApiError::not_found(format!("no route for {}", uri.path()))
}

pub(crate) fn internal(error: impl std::fmt::Display) -> ApiError {
    ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, error.to_string())
}

fn agent_error(error: AgentError) -> ApiError {
    match error {
        AgentError::UnknownConversation { .. } => ApiError::not_found(error.to_string()),
        other => internal(other),
    }
}

/// Runs `work` on the process's one store, off the async threads.
pub(crate) async fn with_store<T: Send + 'static>(
    state: &PageState,
    work: impl FnOnce(&mut dyn ConversationStore) -> Result<T, corvid_store::StoreError>
    + Send
    + 'static,
) -> Result<T, ApiError> {
    on_store(state, work).await.map_err(internal)
}

/// Why work on the store gave no answer.
#[derive(Debug, thiserror::Error)]
enum StoreWorkError {
    #[error(transparent)]
    Store(#[from] corvid_store::StoreError),
    /// The blocking task panicked or was cancelled.
    #[error(transparent)]
    Task(#[from] tokio::task::JoinError),
}

async fn on_store<T: Send + 'static>(
    state: &PageState,
    work: impl FnOnce(&mut dyn ConversationStore) -> Result<T, corvid_store::StoreError>
    + Send
    + 'static,
) -> Result<T, StoreWorkError> {
    let store = state.0.agent.store();
    Ok(tokio::task::spawn_blocking(move || work(&mut *store.lock())).await??)
}

/// The project's conversations (most recent first), its current one, and the sessions open on
/// them (a tab's, or several tabs' shared one).
async fn list_conversations(State(state): State<PageState>) -> Result<Json<Value>, ApiError> {
    let agent = &state.0.agent;
    let agents = agent.agents();
    let conversations = agents
        .conversations(agent.project())
        .await
        .map_err(agent_error)?;
    let current = agents
        .current_conversation(agent.project())
        .await
        .map_err(agent_error)?;
    let sessions: Vec<Value> = agents
        .sessions()
        .into_iter()
        .map(|session| {
            json!({
                "id": session.id,
                "conversation_id": session.conversation_id,
                "listeners": session.listeners,
                "running": session.running,
            })
        })
        .collect();
    Ok(Json(json!({
        "conversations": conversations,
        "current": current,
        "sessions": sessions,
    })))
}

/// The body of `POST /api/conversations`: nothing yet; unknown fields are refused so a typo
/// is not silently ignored.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NewConversation {}

/// Creates an empty conversation (the project's current one from now on); a tab opens it with
/// `switch_conversation`.
async fn new_conversation(
    State(state): State<PageState>,
    body: Result<Json<NewConversation>, axum::extract::rejection::JsonRejection>,
) -> Result<Response, ApiError> {
    let Json(NewConversation {}) = body.map_err(json_error)?;
    let agent = &state.0.agent;
    let id = agent
        .agents()
        .create_conversation(agent.project(), &agent.model())
        .await
        .map_err(agent_error)?;
    let body = conversation_body(&state, &id).await?;
    Ok((StatusCode::CREATED, Json(body)).into_response())
}

async fn get_conversation(
    State(state): State<PageState>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    Ok(Json(conversation_body(&state, &id).await?))
}

/// One conversation with its history (its completed turns, as a `conversation_switched` event
/// carries them), the session holding it, whether it is the project's current one, and its
/// tokens per turn and in all.
async fn conversation_body(state: &PageState, id: &str) -> Result<Value, ApiError> {
    let agent = &state.0.agent;
    let found = agent
        .agents()
        .conversation(agent.project(), id)
        .await
        .map_err(agent_error)?;
    let Some(detail) = found else {
        return Err(ApiError::not_found(format!("no conversation {id:?}")));
    };
    let current = agent
        .agents()
        .current_conversation(agent.project())
        .await
        .map_err(agent_error)?;
    let owned = id.to_owned();
    let (turns, total) = with_store(state, move |store| store.conversation_usage(&owned)).await?;
    let tokens = |t: &corvid_store::Tokens| json!({"input": t.total_input(), "output": t.output});
    Ok(json!({
        "conversation": detail.summary,
        "history": detail.history,
        "session": detail.session,
        "current": current.as_deref() == Some(id),
        "usage": {
            "turns": turns.iter().map(|(turn, t)| json!({"turn": turn, "tokens": tokens(t)})).collect::<Vec<_>>(),
            "total": tokens(&total),
        },
    }))
}

/// Deletes a conversation; a session holding it is closed first (a tab showing it moves to a
/// new conversation).
async fn delete_conversation(
    State(state): State<PageState>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let agent = &state.0.agent;
    let deleted = agent
        .agents()
        .delete_conversation(agent.project(), &id)
        .await
        .map_err(agent_error)?;
    if !deleted {
        return Err(ApiError::not_found(format!("no conversation {id:?}")));
    }
    Ok(Json(json!({"conversation_id": id, "deleted": true})))
}

/// A JSON body that did not parse, as a 400 (or 413 when it was too big) that says why.
pub(crate) fn json_error(rejection: axum::extract::rejection::JsonRejection) -> ApiError {
    let status = rejection.status();
    let status = if status == StatusCode::PAYLOAD_TOO_LARGE {
        status
    } else {
        StatusCode::BAD_REQUEST
    };
    ApiError::new(status, rejection.body_text())
}

/// The models the page can pick: every available provider's listed models, the aliases and the
/// default; `without_key` names those whose provider has no credential yet (the pickers show
/// them apart: a request to one gets a 401 until a key or sign-in is added).
async fn models(State(state): State<PageState>) -> Json<Value> {
    let config = state.0.gateway.config();
    let registry = state.0.gateway.registry();
    let mut models = Vec::new();
    let mut without_key = Vec::new();
    for provider in registry.providers().iter().filter(|p| p.is_available()) {
        let ready = provider.upstream().credential().is_available();
        for model in &provider.config().models {
            let id = format!("{}/{model}", provider.name());
            if !ready {
                without_key.push(id.clone());
            }
            models.push(json!({"id": id, "provider": provider.name(), "ready": ready}));
        }
    }
    // A name that does not resolve is left with the others: its request says what is wrong.
    let names = std::iter::once(&config.default_model).chain(config.aliases.keys());
    for name in names {
        let ready = registry.resolve(name).map_or(true, |route| {
            route.provider.upstream().credential().is_available()
        });
        if !ready && !without_key.contains(name) {
            without_key.push(name.clone());
        }
    }
    // Per million tokens, by upstream model name, so the page can show what a turn cost.
    let prices: serde_json::Map<String, Value> = config
        .prices
        .iter()
        .map(|(model, price)| {
            let price = json!({
                "input": price.input,
                "cached_input": price.cached_input,
                "cache_write": price.cache_write,
                "output": price.output,
            });
            (model.clone(), price)
        })
        .collect();
    Json(json!({
        "default_model": config.default_model,
        "aliases": config.aliases,
        "models": models,
        "without_key": without_key,
        "prices": prices,
    }))
}

/// Whether each provider has what it needs to be called. Names and states only: never a value.
pub(crate) fn key_state(
    state: &PageState,
    credential: &CredentialSource,
) -> (&'static str, Option<String>) {
    let loaded = &state.0.loaded;
    match credential {
        CredentialSource::None => ("not_needed", None),
        CredentialSource::ZedAccount => ("zed_account", None),
        CredentialSource::XaiAuth => {
            let present = loaded.secret(corvid_auth::API_KEY_VAR).is_some()
                || loaded.secret(corvid_auth::ACCESS_TOKEN_VAR).is_some();
            (
                if present { "present" } else { "missing" },
                Some(corvid_auth::API_KEY_VAR.to_owned()),
            )
        }
        CredentialSource::Env(vars) => {
            let present = vars.iter().any(|var| loaded.secret(var).is_some());
            (
                if present { "present" } else { "missing" },
                vars.first().cloned(),
            )
        }
    }
}

/// A provider's last failed call: its upstream's or, for the `zed` provider, its account's
/// (the account's calls do not go through the upstream), whichever came last.
fn last_failure(provider: &corvid_providers::Provider) -> Option<corvid_providers::LastFailure> {
    let upstream = provider.upstream().last_failure();
    let account = provider
        .zed_service()
        .and_then(corvid_providers::ZedService::last_failure);
    upstream
        .into_iter()
        .chain(account)
        .max_by_key(|failure| failure.at_ms)
}

async fn status(State(state): State<PageState>) -> Json<Value> {
    let today = usage_since(&state, start_of_today_ms()).await;
    let registry = state.0.gateway.registry();
    let providers: Vec<Value> = registry
        .providers()
        .iter()
        .map(|provider| {
            let (key, variable) = key_state(&state, &provider.config().credential);
            json!({
                "name": provider.name(),
                "kind": provider.kind().as_str(),
                "enabled": provider.config().enabled,
                "available": provider.is_available(),
                "base_url": provider.config().base_url,
                "key": key,
                "key_variable": variable,
                "last_error": last_failure(provider).map(|failure| json!({
                    "at_ms": failure.at_ms,
                    "status": failure.status,
                    "cause": failure.cause,
                    "message": failure.message,
                })),
            })
        })
        .collect();
    let auth = corvid_auth::AuthStatus::from_loaded(&state.0.loaded);
    let daily = match state.0.gateway.access() {
        Some(access) => access.local_allowance().await,
        None => None,
    };
    let zed_signed_in = registry
        .providers()
        .iter()
        .any(|provider| provider.zed_service().is_some());
    Json(json!({
        "gateway": "up",
        "version": env!("CARGO_PKG_VERSION"),
        "daily": daily,
        "providers": providers,
        "sign_ins": {
            "xai": {
                "mode": auth.mode.as_str(),
                "signed_in": auth.signed_in,
                "email": auth.email,
                "expires_at": auth.expires_at,
            },
            "zed": {"signed_in": zed_signed_in},
        },
        "usage_today": today,
        "settings": state.0.reloads.note(),
    }))
}

fn start_of_today_ms() -> i64 {
    let now = corvid_store::now_ms();
    now - now.rem_euclid(86_400_000)
}

async fn usage_since(state: &PageState, since_ms: i64) -> Value {
    match on_store(state, move |store| store.totals(Some(since_ms))).await {
        Ok(totals) => json!({
            "requests": totals.requests,
            "errors": totals.errors,
            "input": totals.tokens.total_input(),
            "output": totals.tokens.output,
        }),
        Err(error) => json!({"error": error.to_string()}),
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct UsageQuery {
    /// Days back from today (UTC), today included; default 30.
    days: Option<u32>,
}

async fn usage(
    State(state): State<PageState>,
    query: Result<Query<UsageQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    let Query(query) =
        query.map_err(|rejection| ApiError::invalid_request(rejection.body_text()))?;
    let days = query.days.unwrap_or(30);
    if !(1..=3660).contains(&days) {
        return Err(ApiError::invalid_request("days must be between 1 and 3660"));
    }
    let since = start_of_today_ms() - i64::from(days - 1) * 86_400_000;
    let rows = with_store(&state, move |store| {
        store.usage_by_day_and_model(Some(since))
    })
    .await?;
    let prices = &state.0.gateway.config().prices;
    let rows: Vec<Value> = rows
        .iter()
        .map(|row| {
            let cost = corvid_store::priced(prices, &row.model, &row.tokens);
            let input = row.tokens.total_input();
            json!({
                "day": row.day,
                "model": row.model,
                "provider": row.provider,
                "front_end": row.front_end,
                "requests": row.requests,
                "errors": row.errors,
                "input": input,
                "cache_read": row.tokens.cache_read,
                // The share of input a provider's cache served.
                "cache_hit_rate": (input > 0).then(|| row.tokens.cache_read as f64 / input as f64),
                "output": row.tokens.output,
                "reasoning": row.tokens.reasoning,
                "cost_usd": cost,
            })
        })
        .collect();
    Ok(Json(json!({"days": days, "rows": rows})))
}

//! The REST routes: conversations (answered by the engine, so the page and the socket agree),
//! models, status and usage. Every answer is JSON; every failure is the gateway's error shape
//! `{"error": {"type", "message"}}` with a status that says whose fault it was.

use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use corvid_config::CredentialSource;
use corvid_gateway::ApiError;
use corvid_protocol::{EventMsg, Op};
use corvid_store::Store;
use http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::PageState;
use crate::sessions::{AskError, ask};

/// How long a REST call waits for the engine (it answers conversation operations between
/// turns' events, so this is generous).
const ENGINE_TIMEOUT: Duration = Duration::from_secs(10);

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

fn engine_error(error: AskError) -> ApiError {
    match error {
        AskError::Refused(message) => ApiError::new(StatusCode::NOT_FOUND, message),
        other => ApiError::new(StatusCode::SERVICE_UNAVAILABLE, other.to_string()),
    }
}

async fn conversation_list(state: &PageState) -> Result<Value, ApiError> {
    let answer = ask(
        state.0.sessions.as_ref(),
        Op::ListConversations,
        |msg| matches!(msg, EventMsg::ConversationList { .. }),
        ENGINE_TIMEOUT,
    )
    .await
    .map_err(engine_error)?;
    Ok(serde_json::to_value(answer).unwrap_or(Value::Null))
}

async fn list_conversations(State(state): State<PageState>) -> Result<Json<Value>, ApiError> {
    Ok(Json(conversation_list(&state).await?))
}

/// The body of `POST /api/conversations`: nothing yet; unknown fields are refused so a typo
/// is not silently ignored.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NewConversation {}

async fn new_conversation(
    State(state): State<PageState>,
    body: Result<Json<NewConversation>, axum::extract::rejection::JsonRejection>,
) -> Result<Response, ApiError> {
    let Json(NewConversation {}) = body.map_err(json_error)?;
    let answer = ask(
        state.0.sessions.as_ref(),
        Op::NewConversation,
        |msg| matches!(msg, EventMsg::ConversationSwitched { .. }),
        ENGINE_TIMEOUT,
    )
    .await
    .map_err(engine_error)?;
    let body = serde_json::to_value(answer).unwrap_or(Value::Null);
    Ok((StatusCode::CREATED, Json(body)).into_response())
}

async fn get_conversation(
    State(state): State<PageState>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let list = conversation_list(&state).await?;
    let found = list["conversations"]
        .as_array()
        .and_then(|all| {
            all.iter()
                .find(|conversation| conversation["id"] == id.as_str())
        })
        .cloned();
    // Tokens per turn and in all, from the store (`None` when there is no ledger).
    let usage = open_store(&state)
        .and_then(|store| store.conversation_usage(&id).ok())
        .map(|(turns, total)| {
            let tokens = |t: &corvid_store::Tokens| json!({"input": t.total_input(), "output": t.output});
            json!({
                "turns": turns.iter().map(|(turn, t)| json!({"turn": turn, "tokens": tokens(t)})).collect::<Vec<_>>(),
                "total": tokens(&total),
            })
        });
    match found {
        Some(conversation) => Ok(Json(json!({
            "conversation": conversation,
            "current": list["current"] == id.as_str(),
            "usage": usage,
        }))),
        None => Err(ApiError::not_found(format!("no conversation {id:?}"))),
    }
}

async fn delete_conversation(
    State(state): State<PageState>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let answer = ask(
        state.0.sessions.as_ref(),
        Op::DeleteConversation {
            conversation_id: id,
        },
        |msg| matches!(msg, EventMsg::ConversationDeleted { .. }),
        ENGINE_TIMEOUT,
    )
    .await
    .map_err(engine_error)?;
    Ok(Json(serde_json::to_value(answer).unwrap_or(Value::Null)))
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
/// default.
async fn models(State(state): State<PageState>) -> Json<Value> {
    let config = state.0.gateway.config();
    let registry = state.0.gateway.registry();
    let mut models = Vec::new();
    for provider in registry.providers().iter().filter(|p| p.is_available()) {
        for model in &provider.config().models {
            models.push(
                json!({"id": format!("{}/{model}", provider.name()), "provider": provider.name()}),
            );
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

async fn status(State(state): State<PageState>) -> Json<Value> {
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
            })
        })
        .collect();
    let auth = corvid_auth::AuthStatus::from_loaded(&state.0.loaded);
    let zed_signed_in = registry
        .providers()
        .iter()
        .any(|provider| provider.zed_service().is_some());
    let today = usage_since(&state, start_of_today_ms());
    Json(json!({
        "gateway": "up",
        "version": env!("CARGO_PKG_VERSION"),
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
    }))
}

fn start_of_today_ms() -> i64 {
    let now = corvid_store::now_ms();
    now - now.rem_euclid(86_400_000)
}

fn open_store(state: &PageState) -> Option<Store> {
    let path = state.0.database.as_ref()?;
    if !path.exists() {
        return None;
    }
    Store::open(path).ok()
}

fn usage_since(state: &PageState, since_ms: i64) -> Value {
    let Some(store) = open_store(state) else {
        return json!({"requests": 0, "errors": 0, "input": 0, "output": 0});
    };
    match store.totals(Some(since_ms)) {
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
    let Some(store) = open_store(&state) else {
        return Ok(Json(json!({"days": days, "rows": []})));
    };
    let rows = store
        .usage_by_day_and_model(Some(since))
        .map_err(|error| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, error.to_string()))?;
    let prices = &state.0.gateway.config().prices;
    let rows: Vec<Value> = rows
        .iter()
        .map(|row| {
            let cost = prices
                .get(&row.model)
                .map(|price| corvid_store::cost(&row.tokens, price));
            json!({
                "day": row.day,
                "model": row.model,
                "front_end": row.front_end,
                "requests": row.requests,
                "errors": row.errors,
                "input": row.tokens.total_input(),
                "output": row.tokens.output,
                "reasoning": row.tokens.reasoning,
                "cost_usd": cost,
            })
        })
        .collect();
    Ok(Json(json!({"days": days, "rows": rows})))
}

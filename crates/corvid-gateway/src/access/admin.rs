//! The admin API, behind the admin key (`CORVID_ADMIN_KEY`, sent as a bearer token): client
//! keys, teams and spend, on the store every instance shares.
//!
//! - `GET /admin/keys`, `POST /admin/keys` (`{"name", "team"?, "budget_usd"?, "period"?,
//!   "models"?: [..], "rpm"?, "tpm"?, "daily_requests"?}`; the answer's `key` is the only copy of the secret),
//!   `POST /admin/keys/{name}/revoke`
//! - `GET /admin/teams`, `POST /admin/teams` (`{"name", "budget_usd"?, "period"?}`)
//! - `GET /admin/spend`: every budget as it stands.

use axum::Json;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

use corvid_store::team::{
    BudgetSpec, BudgetState, KeyInfo, KeySpec, Period, TeamSpec, TeamStore, admin_key_matches,
};
use corvid_store::{StoreError, usd_to_micros};
use http::{HeaderMap, StatusCode};
use serde_json::{Value, json};

use crate::error::ApiError;
use crate::state::AppState;

/// The access settings and the admin key, or the answer that refuses the caller.
fn admitted(state: &AppState, headers: &HeaderMap) -> Result<super::Access, ApiError> {
    let access = state
        .access()
        .filter(|access| access.admin_key.is_some())
        .cloned()
        .ok_or_else(|| ApiError::not_found("the admin API is off: set CORVID_ADMIN_KEY"))?;
    let presented = headers
        .get(http::header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .unwrap_or_default();
    let expected = access.admin_key.as_deref().unwrap_or_default();
    if !admin_key_matches(expected, presented) {
        return Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "the admin API needs the admin key as a bearer token",
        ));
    }
    Ok(access)
}

fn store_error(error: &StoreError) -> ApiError {
    match error {
        StoreError::NotFound(_) => ApiError::not_found(error.to_string()),
        StoreError::Exists(_) => ApiError::new(StatusCode::CONFLICT, error.to_string()),
        _ if error.is_unreachable() => ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "the store cannot be reached",
        ),
        _ => {
            tracing::warn!(%error, "admin API: the store failed");
            ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "the store failed")
        }
    }
}

fn budget_json(budget: &BudgetState) -> Value {
    json!({
        "scope": budget.scope,
        "period": budget.period.as_str(),
        "cap_micros": budget.cap_micros,
        "spent_micros": budget.spent_micros,
        "reserved_micros": budget.reserved_micros,
        "resets_at_ms": budget.resets_at_ms,
    })
}

fn key_json(key: &KeyInfo) -> Value {
    json!({
        "name": key.name,
        "id": format!("cv-{}", key.public_id),
        "team": key.team,
        "models": key.models,
        "rpm": key.rpm,
        "daily_requests": key.daily_requests,
        "tpm": key.tpm,
        "revoked": key.revoked,
        "budgets": key.budgets.iter().map(budget_json).collect::<Vec<_>>(),
    })
}

fn budget_of(body: &Value) -> Result<Option<BudgetSpec>, ApiError> {
    let Some(usd) = body.get("budget_usd").and_then(Value::as_f64) else {
        return Ok(None);
    };
    let period = body
        .get("period")
        .and_then(Value::as_str)
        .unwrap_or("month");
    let period = Period::parse(period)
        .ok_or_else(|| ApiError::invalid_request("period must be day or month"))?;
    if !usd.is_finite() || usd < 0.0 {
        return Err(ApiError::invalid_request(
            "budget_usd must be a positive amount",
        ));
    }
    Ok(Some(BudgetSpec {
        cap_micros: usd_to_micros(usd),
        period,
    }))
}

fn name_of(body: &Value) -> Result<String, ApiError> {
    body.get("name")
        .and_then(Value::as_str)
        .filter(|name| !name.trim().is_empty())
        .map(|name| name.trim().to_owned())
        .ok_or_else(|| ApiError::invalid_request("name is required"))
}

pub(crate) async fn list_keys(State(state): State<AppState>, headers: HeaderMap) -> Response {
    read(&state, &headers, |store| async move {
        let keys = store.list_keys().await?;
        Ok(json!({"keys": keys.iter().map(key_json).collect::<Vec<_>>()}))
    })
    .await
}

pub(crate) async fn create_key(
    State(state): State<AppState>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    let answer = async {
        let access = admitted(&state, &headers)?;
        let spec = KeySpec {
            name: name_of(&body)?,
            team: body.get("team").and_then(Value::as_str).map(str::to_owned),
            budget: budget_of(&body)?,
            models: body
                .get("models")
                .and_then(Value::as_array)
                .map(|models| {
                    models
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default(),
            rpm: body
                .get("rpm")
                .and_then(Value::as_u64)
                .and_then(|rpm| u32::try_from(rpm).ok()),
            tpm: body.get("tpm").and_then(Value::as_u64),
            daily_requests: body
                .get("daily_requests")
                .and_then(Value::as_u64)
                .and_then(|daily| u32::try_from(daily).ok())
                .filter(|daily| *daily > 0),
        };
        let (info, key) = access
            .store()
            .create_key(&spec)
            .await
            .map_err(|e| store_error(&e))?;
        let mut answer = key_json(&info);
        answer["key"] = json!(key.reveal());
        Ok::<_, ApiError>((StatusCode::CREATED, Json(answer)))
    };
    answer.await.into_response()
}

pub(crate) async fn revoke_key(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> Response {
    let answer = async {
        let access = admitted(&state, &headers)?;
        let revoked = access
            .store()
            .revoke_key(&name)
            .await
            .map_err(|e| store_error(&e))?;
        if !revoked {
            return Err(ApiError::not_found(format!("no active key called {name}")));
        }
        Ok(Json(json!({"revoked": name})))
    };
    answer.await.into_response()
}

pub(crate) async fn list_teams(State(state): State<AppState>, headers: HeaderMap) -> Response {
    read(&state, &headers, |store| async move {
        let teams: Vec<Value> = store
            .list_teams()
            .await?
            .iter()
            .map(|team| json!({"name": team.name, "budget": team.budget.as_ref().map(budget_json)}))
            .collect();
        Ok(json!({"teams": teams}))
    })
    .await
}

pub(crate) async fn create_team(
    State(state): State<AppState>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    let answer = async {
        let access = admitted(&state, &headers)?;
        let spec = TeamSpec {
            name: name_of(&body)?,
            budget: budget_of(&body)?,
        };
        let team = access
            .store()
            .create_team(&spec)
            .await
            .map_err(|e| store_error(&e))?;
        Ok::<_, ApiError>((
            StatusCode::CREATED,
            Json(json!({"name": team.name, "budget": team.budget.as_ref().map(budget_json)})),
        ))
    };
    answer.await.into_response()
}

pub(crate) async fn spend(State(state): State<AppState>, headers: HeaderMap) -> Response {
    read(&state, &headers, |store| async move {
        let budgets = store.budgets().await?;
        Ok(json!({"budgets": budgets.iter().map(budget_json).collect::<Vec<_>>()}))
    })
    .await
}

/// A read for an admitted caller: `look` over the store, answered as JSON (or the refusal, or
/// the store's failure).
async fn read<F, Look>(state: &AppState, headers: &HeaderMap, look: F) -> Response
where
    F: FnOnce(Arc<dyn TeamStore>) -> Look,
    Look: Future<Output = Result<Value, StoreError>>,
{
    let answer = async {
        let access = admitted(state, headers)?;
        let found = look(Arc::clone(access.store()))
            .await
            .map_err(|e| store_error(&e))?;
        Ok::<_, ApiError>(Json(found))
    };
    answer.await.into_response()
}

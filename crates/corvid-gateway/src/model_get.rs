//! One model of the catalog: `GET /v1/models/{id}` (OpenAI's and Anthropic's retrieve, or
//! Gemini's `models.get` for a Google client) and `GET /v1beta/models/{id}`. The entry is the
//! one the list gives, so a model is retrievable exactly when it is listed.

use axum::Json;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, Uri};
use serde_json::Value;

use crate::error::ApiError;
use crate::models;
use crate::path_dialect;
use crate::state::AppState;
use corvid_wire::Dialect;

/// `GET /v1/models/{id}`.
pub(crate) async fn get_v1(
    state: State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    uri: Uri,
) -> Response {
    if path_dialect::is_google_client(&headers, uri.query()) {
        return gemini(state, &id).await;
    }
    let dialect = if headers.contains_key("anthropic-version") {
        Dialect::Anthropic
    } else {
        Dialect::OpenAiChat
    };
    let Json(list) = models::list(state, headers).await;
    find(&list, "data", "id", &id).unwrap_or_else(|| missing(&id, dialect))
}

/// `GET /v1beta/models/{id}`.
pub(crate) async fn get_v1beta(state: State<AppState>, Path(id): Path<String>) -> Response {
    gemini(state, &id).await
}

async fn gemini(state: State<AppState>, id: &str) -> Response {
    let Json(list) = models::list_gemini(state).await;
    find(&list, "models", "name", &format!("models/{id}"))
        .unwrap_or_else(|| missing(id, Dialect::Gemini))
}

/// The entry of `list[field]` whose `key` is `wanted`.
fn find(list: &Value, field: &str, key: &str, wanted: &str) -> Option<Response> {
    list.get(field)?
        .as_array()?
        .iter()
        .find(|entry| entry.get(key).and_then(Value::as_str) == Some(wanted))
        .map(|entry| Json(entry.clone()).into_response())
}

fn missing(id: &str, dialect: Dialect) -> Response {
    ApiError::not_found(format!("model {id:?} is not in corvid's catalog"))
        .with_code("model_not_found")
        .in_dialect(dialect)
        .into_response()
}

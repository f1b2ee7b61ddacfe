//! The model catalog: `GET /v1/models` (OpenAI's list, or Anthropic's when Claude Code asks)
//! and `GET /v1beta/models` (Gemini's). Aliases, each provider's configured models and — fetched
//! on demand and cached — each provider's own list.

use axum::Json;
use axum::extract::State;
use futures_util::future::join_all;
use http::HeaderMap;
use serde_json::{Value, json};

use crate::state::AppState;

/// Every model id a client may ask for: aliases, the default provider's models by bare name,
/// and every available provider's models as `provider/model`.
async fn catalog(state: &AppState) -> Vec<(String, String)> {
    let registry = state.registry();
    let mut entries: Vec<(String, String)> = Vec::new();
    let mut push = |id: String, owner: &str| {
        if !entries.iter().any(|(known, _)| *known == id) {
            entries.push((id, owner.to_owned()));
        }
    };
    for alias in registry.aliases().keys() {
        push(alias.clone(), "corvid");
    }
    let available: Vec<_> = registry
        .providers()
        .iter()
        .filter(|provider| provider.is_available())
        .collect();
    let lists = join_all(available.iter().map(|provider| provider.models())).await;
    let default = &state.config().default_provider;
    for (provider, models) in available.iter().zip(&lists) {
        if provider.name() == default {
            for model in models {
                push(model.clone(), provider.name());
            }
        }
    }
    for (provider, models) in available.iter().zip(&lists) {
        for model in models {
            push(format!("{}/{model}", provider.name()), provider.name());
        }
    }
    entries
}

/// `GET /v1/models`. Claude Code (which sends `anthropic-version`) gets Anthropic's shape.
pub(crate) async fn list(State(state): State<AppState>, headers: HeaderMap) -> Json<Value> {
    let entries = catalog(&state).await;
    if headers.contains_key("anthropic-version") {
        let data: Vec<Value> = entries
            .iter()
            .map(|(id, _)| json!({"type": "model", "id": id, "display_name": id, "created_at": "1970-01-01T00:00:00Z"}))
            .collect();
        let first = entries.first().map(|(id, _)| id.clone());
        let last = entries.last().map(|(id, _)| id.clone());
        return Json(json!({"data": data, "has_more": false, "first_id": first, "last_id": last}));
    }
    let data: Vec<Value> = entries
        .iter()
        .map(|(id, owner)| json!({"id": id, "object": "model", "created": 0, "owned_by": owner}))
        .collect();
    Json(json!({"object": "list", "data": data}))
}

/// `GET /v1beta/models`, Gemini's list.
pub(crate) async fn list_gemini(State(state): State<AppState>) -> Json<Value> {
    let entries = catalog(&state).await;
    let models: Vec<(&str, &str)> = entries
        .iter()
        .map(|(id, _)| (id.as_str(), id.as_str()))
        .collect();
    Json(corvid_wire::gemini::encode_models_list(&models))
}

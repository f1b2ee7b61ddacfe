//! `GET /v1/models`: the local catalog (aliases and the known xAI models), no upstream call.

use axum::Json;
use axum::extract::State;
use serde_json::{Value, json};

use crate::state::AppState;

/// xAI models corvid knows how to talk to (reference `zed-and-xai.md` §7.1).
const KNOWN_XAI_MODELS: &[&str] = &[
    "grok-4.6",
    "grok-4.5",
    "grok-build-0.1",
    "grok-4.3",
    "grok-4",
    "grok-4-fast-reasoning",
    "grok-4-fast-non-reasoning",
    "grok-3-mini",
];

pub(crate) async fn list(State(state): State<AppState>) -> Json<Value> {
    let config = state.config();
    let mut ids: Vec<&str> = config.aliases.keys().map(String::as_str).collect();
    let mut add = |id: &'static str| {
        if !ids.contains(&id) {
            ids.push(id);
        }
    };
    for id in KNOWN_XAI_MODELS {
        add(id);
    }
    if !ids.contains(&config.default_model.as_str()) {
        ids.push(&config.default_model);
    }
    let data: Vec<Value> = ids
        .iter()
        .map(|id| json!({"id": id, "object": "model", "created": 0, "owned_by": "xai"}))
        .collect();
    Json(json!({"object": "list", "data": data}))
}

//! The model catalog: `GET /v1/models` (OpenAI's list, or Anthropic's when Claude Code asks)
//! and `GET /v1beta/models` (Gemini's). Aliases, each provider's configured models and — fetched
//! on demand and cached — each provider's own list. Each entry carries what corvid knows of the
//! model (`Registry::model_info`, prices by `corvid_store::price_of`) in the fields its dialect
//! has for it: OpenAI objects gain `context_window`, `max_output_tokens`, `pricing` and
//! `capabilities`; Anthropic's `max_input_tokens` and `max_tokens`; Gemini's `inputTokenLimit`,
//! `outputTokenLimit` and `thinking`.

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

/// What corvid knows of `id`, for the list entries.
struct Known {
    info: corvid_providers::ModelInfo,
    price: Option<corvid_config::Price>,
}

fn known(state: &AppState, id: &str) -> Known {
    let info = state.registry().model_info(id);
    let price = corvid_store::price_of(&state.config().prices, &info.upstream);
    Known { info, price }
}

/// Sets `key` on `entry` when there is a value.
fn put(entry: &mut Value, key: &str, value: Option<Value>) {
    if let (Some(object), Some(value)) = (entry.as_object_mut(), value) {
        object.insert(key.to_owned(), value);
    }
}

/// An OpenAI model object with corvid's extra fields.
fn openai_entry(id: &str, owner: &str, known: &Known) -> Value {
    let mut entry = json!({"id": id, "object": "model", "created": 0, "owned_by": owner});
    let info = &known.info;
    put(
        &mut entry,
        "context_window",
        info.window.map(|window| json!(window.tokens)),
    );
    put(
        &mut entry,
        "max_output_tokens",
        info.max_output.map(Value::from),
    );
    put(
        &mut entry,
        "pricing",
        known.price.map(|price| {
            json!({"unit": "usd_per_million_tokens", "input": price.input,
                   "output": price.output, "cached_input": price.cached_input,
                   "cache_write": price.cache_write})
        }),
    );
    put(
        &mut entry,
        "capabilities",
        info.capabilities.map(
            |can| json!({"tools": can.tools, "images": can.images, "reasoning": can.reasoning}),
        ),
    );
    entry
}

/// `GET /v1/models`. Claude Code (which sends `anthropic-version`) gets Anthropic's shape.
pub(crate) async fn list(State(state): State<AppState>, headers: HeaderMap) -> Json<Value> {
    let entries = catalog(&state).await;
    if headers.contains_key("anthropic-version") {
        let data: Vec<Value> = entries
            .iter()
            .map(|(id, _)| {
                let mut entry = json!({"type": "model", "id": id, "display_name": id, "created_at": "1970-01-01T00:00:00Z"});
                let info = known(&state, id).info;
                put(&mut entry, "max_input_tokens", info.window.map(|window| json!(window.tokens)));
                put(&mut entry, "max_tokens", info.max_output.map(Value::from));
                entry
            })
            .collect();
        let first = entries.first().map(|(id, _)| id.clone());
        let last = entries.last().map(|(id, _)| id.clone());
        return Json(json!({"data": data, "has_more": false, "first_id": first, "last_id": last}));
    }
    let data: Vec<Value> = entries
        .iter()
        .map(|(id, owner)| openai_entry(id, owner, &known(&state, id)))
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
    let mut list = corvid_wire::gemini::encode_models_list(&models);
    if let Some(listed) = list["models"].as_array_mut() {
        for (entry, (id, _)) in listed.iter_mut().zip(&entries) {
            let info = known(&state, id).info;
            put(
                entry,
                "inputTokenLimit",
                info.window.map(|window| json!(window.tokens)),
            );
            put(entry, "outputTokenLimit", info.max_output.map(Value::from));
            put(
                entry,
                "thinking",
                info.capabilities.map(|can| json!(can.reasoning)),
            );
        }
    }
    Json(list)
}

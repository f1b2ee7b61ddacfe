//! `POST /v1/embeddings` (OpenAI's shape): passed through to a provider whose API serves it
//! (OpenAI, xAI, OpenAI-compatible servers), translated to Gemini's `batchEmbedContents` for a
//! Gemini model, refused (in OpenAI's words) for a provider without embeddings. Every request
//! is a ledger row.

use std::time::Instant;

use axum::Json;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use corvid_providers::{Route, UpstreamRequest};
use corvid_store::Outcome;
use corvid_wire::Dialect;
use corvid_wire::model::Usage;
use http::StatusCode;
use http_body_util::BodyExt;
use serde_json::{Value, json};

use crate::body::read_body;
use crate::error::ApiError;
use crate::exchange::Exchange;
use crate::passthrough::Passthrough;
use crate::state::AppState;
use crate::top_level::TopLevel;

const ROUTE: &str = "embeddings";

pub(crate) async fn embeddings(
    State(state): State<AppState>,
    request: Request,
) -> Result<Response, ApiError> {
    let started = Instant::now();
    let inbound = Dialect::OpenAiChat;
    let original = read_body(request, state.config().max_body_bytes)
        .await
        .map_err(|error| error.in_dialect(inbound))?;
    let top = TopLevel::parse(&original)
        .map_err(|error| ApiError::invalid_request(format!("invalid JSON body: {error}")))?;
    let requested = top
        .str("model")
        .map(|model| model.into_owned())
        .ok_or_else(|| ApiError::invalid_request("`model` is required").with_param("model"))?;
    crate::model_name::check(&requested, inbound)?;
    let route = state
        .registry()
        .resolve(&requested)
        .map_err(|error| ApiError::from_route(&error))?;
    match route.provider.api_dialect() {
        Some(Dialect::OpenAiChat | Dialect::OpenAiResponses) => {
            let passthrough = Passthrough {
                state: &state,
                route,
                inbound,
                route_name: ROUTE,
                path: "embeddings".to_owned(),
                headers: Vec::new(),
                started,
                tag: crate::routed::Tag::default(),
                cache_key: None,
            };
            passthrough.send(&original, &top, Some(&requested)).await
        }
        Some(Dialect::Gemini) => {
            let body: Value = serde_json::from_slice(&original).map_err(|error| {
                ApiError::invalid_request(format!("invalid JSON body: {error}"))
            })?;
            gemini(&state, route, &body, &requested, started).await
        }
        _ => Err(ApiError::invalid_request(format!(
            "provider `{}` serves no embeddings; use an OpenAI, xAI, Gemini or OpenAI-compatible \
             model",
            route.provider.name()
        ))
        .with_param("model")),
    }
}

/// The texts of an OpenAI `input`: one string or a list of strings.
fn texts(body: &Value) -> Result<Vec<String>, ApiError> {
    let refuse = || {
        ApiError::invalid_request("`input` must be a string or a list of strings for this model")
            .with_param("input")
    };
    match &body["input"] {
        Value::String(text) => Ok(vec![text.clone()]),
        Value::Array(items) => items
            .iter()
            .map(|item| item.as_str().map(str::to_owned).ok_or_else(refuse))
            .collect(),
        _ => Err(refuse()),
    }
}

/// Gemini's `batchEmbedContents`, answered in OpenAI's shape.
async fn gemini(
    state: &AppState,
    route: Route,
    body: &Value,
    requested: &str,
    started: Instant,
) -> Result<Response, ApiError> {
    let texts = texts(body)?;
    let model = format!("models/{}", route.model);
    let mut request = json!({"requests": texts.iter().map(|text| json!({
        "model": model, "content": {"parts": [{"text": text}]}
    })).collect::<Vec<_>>()});
    if let Some(dimensions) = body["dimensions"].as_u64() {
        for item in request["requests"].as_array_mut().into_iter().flatten() {
            item["outputDimensionality"] = json!(dimensions);
        }
    }
    let path = format!(
        "models/{}:batchEmbedContents",
        corvid_wire::url_path::segment(&route.model)
    );
    let mut exchange = Exchange {
        state: state.clone(),
        route: ROUTE,
        inbound: Dialect::OpenAiChat,
        provider: route.provider.name().to_owned(),
        model: route.model.clone(),
        started,
        attempts: 0,
        prompt: None,
        tag: crate::routed::Tag::default(),
        ticket: crate::access::take_ticket(),
    };
    let sent = route
        .upstream()
        .post(UpstreamRequest {
            path: &path,
            body: request.to_string().into(),
            ..UpstreamRequest::default()
        })
        .await;
    let upstream = match sent {
        Ok(upstream) => upstream,
        Err(failed) => {
            exchange.attempts = failed.attempts;
            exchange.finish(failed.error.status_code(), Outcome::Error, None, None);
            return Err(ApiError::from_provider(&failed.error, false));
        }
    };
    exchange.attempts = upstream.attempts;
    let status = upstream.response.status().as_u16();
    let bytes = upstream
        .response
        .into_body()
        .collect()
        .await
        .map(|collected| collected.to_bytes())
        .map_err(|error| {
            ApiError::new(
                StatusCode::BAD_GATEWAY,
                format!("the upstream reply broke off: {error}"),
            )
        })?;
    let reply: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let Some(embeddings) = reply["embeddings"].as_array() else {
        exchange.finish(status, Outcome::Error, None, None);
        return Err(ApiError::new(
            StatusCode::BAD_GATEWAY,
            "the upstream's embeddings could not be read",
        ));
    };
    let data: Vec<Value> = embeddings
        .iter()
        .enumerate()
        .map(|(index, embedding)| {
            json!({"object": "embedding", "index": index, "embedding": embedding["values"]})
        })
        .collect();
    // Gemini states no token count for embeddings: corvid's estimate, a quarter of the text.
    let tokens: u64 = texts.iter().map(|text| text.len() as u64 / 4 + 1).sum();
    let ttfb = Some(started.elapsed().as_millis() as u64);
    exchange.finish(
        status,
        Outcome::Ok,
        ttfb,
        Some(Usage {
            input: tokens,
            ..Usage::default()
        }),
    );
    Ok(Json(json!({
        "object": "list",
        "data": data,
        "model": requested,
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }))
    .into_response())
}

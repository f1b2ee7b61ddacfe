//! `/v1/chat/completions` and `/v1/responses`: same dialect in and out, so the body goes to the
//! upstream as it came, except for the model name and the fields xAI rejects.

use std::time::Instant;

use axum::extract::{Request, State};
use axum::response::Response;

use crate::body::read_body;
use crate::error::ApiError;
use crate::relay::{RequestLog, StreamKind, relay};
use crate::rules;
use crate::state::AppState;
use crate::top_level::{Edit, TopLevel, json_string};
use corvid_providers::UpstreamRequest;

pub(crate) async fn chat_completions(
    State(state): State<AppState>,
    request: Request,
) -> Result<Response, ApiError> {
    forward(state, request, Route::ChatCompletions).await
}

pub(crate) async fn responses(
    State(state): State<AppState>,
    request: Request,
) -> Result<Response, ApiError> {
    forward(state, request, Route::Responses).await
}

#[derive(Debug, Clone, Copy)]
enum Route {
    ChatCompletions,
    Responses,
}

async fn forward(state: AppState, request: Request, route: Route) -> Result<Response, ApiError> {
    let started = Instant::now();
    let (path, kind, name) = match route {
        Route::ChatCompletions => (
            "chat/completions",
            StreamKind::ChatCompletions,
            "chat_completions",
        ),
        Route::Responses => ("responses", StreamKind::Responses, "responses"),
    };
    let config = state.config();
    let original = read_body(request, config.max_body_bytes).await?;
    let (body, model) = {
        let top = TopLevel::parse(&original)
            .map_err(|error| ApiError::invalid_request(format!("invalid JSON body: {error}")))?;
        let requested = match top.raw("model") {
            None => String::new(),
            Some(_) => top
                .str("model")
                .ok_or_else(|| ApiError::invalid_request("`model` must be a string"))?
                .into_owned(),
        };
        let model = config.resolve_model(&requested).to_owned();
        let mut edits = rules::xai_removals(&model, &top);
        if model != requested {
            edits.push(Edit::Set("model", json_string(&model)));
        }
        (top.rewrite(&original, &edits), model)
    };
    if config.log_prompts {
        tracing::info!(route = name, model = %model, body = %String::from_utf8_lossy(&body), "prompt");
    }
    let upstream = state
        .upstream()
        .post(UpstreamRequest {
            path,
            body,
            deadline: None,
            headers: Vec::new(),
        })
        .await
        .map_err(|error| {
            tracing::warn!(route = name, model = %model, error = %error, "upstream call failed");
            ApiError::from_provider(&error, state.is_oauth())
        })?;
    let log = RequestLog {
        route: name,
        model,
        started,
        attempts: upstream.attempts,
    };
    Ok(relay(upstream.response, kind, log))
}

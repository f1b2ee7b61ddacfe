//! `POST /v1/completions` for edit predictions: a fill-in-the-middle prompt, as Zed's
//! `open_ai_compatible_api` provider writes it, answered from the Responses API (default) or
//! chat — never xAI's legacy completions endpoint — as an OpenAI `text_completion`.

use std::time::{Instant, SystemTime, UNIX_EPOCH};

use axum::Json;
use axum::extract::{Request, State};
use bytes::BytesMut;
use corvid_config::CompletionsBackend;
use corvid_providers::{UpstreamBody, UpstreamRequest, is_timeout};
use corvid_wire::fim::{self, CompletionRequest, FimError};
use http::StatusCode;
use http_body_util::BodyExt;
use serde_json::Value;

use crate::body::read_body;
use crate::error::ApiError;
use crate::state::AppState;

/// FIM replies are small; anything bigger than this is not one.
const REPLY_LIMIT: usize = 4 * 1024 * 1024;

pub(crate) async fn complete(
    State(state): State<AppState>,
    request: Request,
) -> Result<Json<Value>, ApiError> {
    let started = Instant::now();
    let config = state.config();
    if !config.completions_enabled {
        return Err(ApiError::not_found(
            "/v1/completions is disabled (completions_enabled = false)",
        ));
    }
    let body = read_body(request, config.max_body_bytes).await?;
    let request = CompletionRequest::from_json(&body).map_err(|error| request_error(&error))?;
    if request.stream {
        return Err(ApiError::invalid_request(
            "streaming is not supported on /v1/completions; send \"stream\": false",
        ));
    }
    let model = config.resolve_model(&request.model).to_owned();
    let prompt = request.fim_prompt();
    if config.log_prompts {
        tracing::info!(model = %model, prefix = %prompt.prefix, suffix = %prompt.suffix, "completion prompt");
    }
    let (path, upstream_body) = match config.completions_backend {
        CompletionsBackend::Responses => (
            "responses",
            fim::responses_request(
                &model,
                &prompt,
                request.max_output_tokens(),
                request.sampling(),
            ),
        ),
        CompletionsBackend::Chat => (
            "chat/completions",
            fim::chat_request(
                &model,
                &prompt,
                request.max_output_tokens(),
                request.sampling(),
            ),
        ),
    };
    let sent = state
        .upstream()
        .post(UpstreamRequest {
            path,
            body: upstream_body.to_string().into(),
            deadline: Some(config.completions_timeout),
            headers: Vec::new(),
        })
        .await
        .map_err(|error| {
            tracing::warn!(route = "completions", model = %model, error = %error, "upstream call failed");
            ApiError::from_provider(&error, state.is_oauth())
        })?;
    let reply = read_reply(sent.response).await?;
    let parsed = match config.completions_backend {
        CompletionsBackend::Responses => fim::parse_responses_reply(&reply),
        CompletionsBackend::Chat => fim::parse_chat_reply(&reply),
    }
    .map_err(|error| ApiError::new(StatusCode::BAD_GATEWAY, "api_error", error.to_string()))?;
    let usage = parsed.usage;
    let choice = fim::finish_completion(parsed, &request.stop);
    tracing::info!(
        route = "completions",
        model = %model,
        backend = config.completions_backend.as_str(),
        attempts = sent.attempts,
        duration_ms = started.elapsed().as_millis() as u64,
        input_tokens = usage.prompt_tokens,
        output_tokens = usage.completion_tokens,
        "request finished"
    );
    let created = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| elapsed.as_secs())
        .unwrap_or_default();
    let id = format!("cmpl-{:032x}", rand::random::<u128>());
    Ok(Json(fim::text_completion_json(
        &id,
        created,
        &request.model,
        &choice,
        usage,
    )))
}

fn request_error(error: &FimError) -> ApiError {
    let mut api = ApiError::invalid_request(error.to_string());
    api.param = error.field();
    api
}

async fn read_reply(response: http::Response<UpstreamBody>) -> Result<BytesMut, ApiError> {
    let mut body = response.into_body();
    let mut reply = BytesMut::new();
    loop {
        match body.frame().await {
            Some(Ok(frame)) => {
                let Ok(chunk) = frame.into_data() else {
                    continue;
                };
                if reply.len() + chunk.len() > REPLY_LIMIT {
                    return Err(ApiError::new(
                        StatusCode::BAD_GATEWAY,
                        "api_error",
                        "upstream completion reply is too large",
                    ));
                }
                reply.extend_from_slice(&chunk);
            }
            None => return Ok(reply),
            Some(Err(error)) => {
                let (status, kind) = if is_timeout(error.as_ref()) {
                    (StatusCode::GATEWAY_TIMEOUT, "timeout_error")
                } else {
                    (StatusCode::BAD_GATEWAY, "api_error")
                };
                return Err(ApiError::new(
                    status,
                    kind,
                    format!("upstream reply broke off: {error}"),
                ));
            }
        }
    }
}

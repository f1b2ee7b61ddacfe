//! `POST /v1/completions` for edit predictions: a fill-in-the-middle prompt, as Zed's
//! `open_ai_compatible_api` provider writes it, answered from the Responses API (default) or
//! chat — never a legacy completions endpoint — as an OpenAI `text_completion`. A model on an
//! Anthropic or Gemini provider is asked through its own API via the canonical model.

use std::time::{Instant, SystemTime, UNIX_EPOCH};

use axum::Json;
use axum::extract::{Request, State};
use bytes::{Bytes, BytesMut};
use corvid_config::CompletionsBackend;
use corvid_providers::{Route, UpstreamBody, UpstreamRequest, WholeFailure, is_timeout};
use corvid_store::Outcome;
use corvid_wire::fim::{
    self, CompletionRequest, FimError, FimPrompt, FinishReason, TokenUsage, UpstreamCompletion,
};
use corvid_wire::model::{self, ChatRequest, Message, NameMap, Part, Role};
use http::StatusCode;
use http_body_util::BodyExt;
use serde_json::Value;

use crate::body::read_body;
use crate::error::ApiError;
use crate::exchange::Exchange;
use crate::state::AppState;
use corvid_wire::Dialect;
use corvid_wire::codec;

/// FIM replies are small; anything bigger than this is not one.
const REPLY_LIMIT: usize = 4 * 1024 * 1024;

/// How the upstream is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backend {
    Responses,
    Chat,
    /// The provider's own API, through the canonical model.
    Canonical(Dialect),
}

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
    crate::model_name::check(&request.model, Dialect::OpenAiChat)?;
    let route = state
        .registry()
        .resolve(&request.model)
        .map_err(|error| ApiError::from_route(&error))?;
    let prompt = request.fim_prompt();
    let Some(backend) = backend_for(&route, config.completions_backend) else {
        return pipeline_fim(&state, route, &prompt, &request, started).await;
    };
    let (path, upstream_body) = upstream_body(backend, &route, &prompt, &request);
    let mut exchange = exchange_for(&state, &route, &prompt, started);
    let sent = route
        .provider
        .upstream()
        .post(UpstreamRequest {
            path: &path,
            body: upstream_body,
            deadline: Some(config.completions_timeout),
            headers: Vec::new(),
            retries: None,
        })
        .await;
    let sent = match sent {
        Ok(sent) => sent,
        Err(failed) => {
            let error = &failed.error;
            tracing::warn!(route = "completions", model = %crate::log_text::Clean(&route.model), error = %crate::log_text::Clean(&corvid_providers::error_chain(error)), "upstream call failed");
            let oauth =
                route.provider.upstream().credential().mode() == corvid_config::AuthMode::OAuth;
            exchange.attempts = failed.attempts;
            let status = match error {
                corvid_providers::ProviderError::Status { status, .. } => status.as_u16(),
                _ => 0,
            };
            exchange.finish(status, Outcome::Error, None, None);
            return Err(ApiError::from_provider(error, oauth));
        }
    };
    exchange.attempts = sent.attempts;
    let status = sent.response.status().as_u16();
    let reply = match read_reply(sent.response.into_body()).await {
        Ok(reply) => reply,
        Err(error) => {
            exchange.finish(status, Outcome::StreamError, None, None);
            return Err(error);
        }
    };
    let parsed = match parse_reply(backend, &reply) {
        Ok(parsed) => parsed,
        Err(error) => {
            exchange.finish(status, Outcome::Error, None, None);
            return Err(ApiError::new(StatusCode::BAD_GATEWAY, error.to_string()));
        }
    };
    Ok(answer(&mut exchange, status, parsed, &request))
}

/// The ledger's view of one edit prediction.
fn exchange_for(state: &AppState, route: &Route, prompt: &FimPrompt, started: Instant) -> Exchange {
    Exchange {
        state: state.clone(),
        route: "completions",
        inbound: Dialect::OpenAiChat,
        provider: route.provider.name().to_owned(),
        model: route.model.clone(),
        started,
        attempts: 0,
        prompt: state.config().log_prompts.then(|| prompt.with_cursor()),
        ticket: crate::access::take_ticket(),
        tag: crate::routed::Tag::default(),
    }
}

/// Records a finished prediction and answers it as a `text_completion`.
fn answer(
    exchange: &mut Exchange,
    status: u16,
    parsed: UpstreamCompletion,
    request: &CompletionRequest,
) -> Json<Value> {
    let usage = parsed.usage;
    exchange.finish(
        status,
        Outcome::Ok,
        Some(exchange.started.elapsed().as_millis() as u64),
        Some(model::Usage::from_openai(
            usage.prompt_tokens,
            0,
            0,
            usage.completion_tokens,
            0,
        )),
    );
    let choice = fim::finish_completion(parsed, &request.stop);
    let created = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| elapsed.as_secs())
        .unwrap_or_default();
    let id = format!("cmpl-{:032x}", rand::random::<u128>());
    Json(fim::text_completion_json(
        &id,
        created,
        &request.model,
        &choice,
        usage,
    ))
}

/// Edit predictions from a provider that takes canonical calls only (the Zed account),
/// through the one model-call pipeline: retried before any output, failures worded and
/// classified as every provider's.
async fn pipeline_fim(
    state: &AppState,
    route: Route,
    prompt: &FimPrompt,
    request: &CompletionRequest,
    started: Instant,
) -> Result<Json<Value>, ApiError> {
    let canonical = canonical_request(&route.model, prompt, request);
    let mut exchange = exchange_for(state, &route, prompt, started);
    let reply = match route.prepare(canonical).send().await {
        Ok(reply) => reply,
        Err(failed) => {
            exchange.attempts = failed.attempts;
            exchange.finish(failed.error.status_code(), Outcome::Error, None, None);
            return Err(ApiError::from_provider(&failed.error, false));
        }
    };
    exchange.attempts = reply.attempts();
    let status = reply.status();
    let response = match reply.whole().await {
        Ok(response) => response,
        Err(failure) => {
            let (outcome, message) = match failure {
                WholeFailure::Unreadable(message) => (Outcome::Error, message),
                WholeFailure::Broken(error) | WholeFailure::Reported(error) => {
                    (Outcome::StreamError, error.message)
                }
            };
            exchange.finish(status, outcome, None, None);
            return Err(ApiError::new(StatusCode::BAD_GATEWAY, message));
        }
    };
    Ok(answer(
        &mut exchange,
        status,
        completion_from(response),
        request,
    ))
}

fn canonical_request(model: &str, prompt: &FimPrompt, request: &CompletionRequest) -> ChatRequest {
    let sampling = request.sampling();
    ChatRequest {
        model: model.to_owned(),
        system: vec![fim::FIM_INSTRUCTIONS.to_owned()],
        messages: vec![Message::text(Role::User, fim::user_message(prompt))],
        params: model::Params {
            max_output_tokens: Some(request.max_output_tokens()),
            temperature: sampling.temperature,
            top_p: sampling.top_p,
            ..model::Params::default()
        },
        ..ChatRequest::default()
    }
}

fn completion_from(response: model::ChatResponse) -> UpstreamCompletion {
    let text = response
        .parts
        .iter()
        .filter_map(|part| match part {
            Part::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    let finish = match response.finish {
        model::FinishReason::MaxTokens | model::FinishReason::ContextOverflow => {
            FinishReason::Length
        }
        _ => FinishReason::Stop,
    };
    UpstreamCompletion {
        text,
        finish,
        usage: TokenUsage {
            prompt_tokens: response.usage.total_input(),
            completion_tokens: response.usage.output,
        },
    }
}

/// Responses for providers that have it (unless `completions_backend = "chat"`), chat for other
/// OpenAI-compatible servers, the provider's own API otherwise; `None` for a provider that
/// takes canonical calls only (the pipeline serves it). Never a failover between them.
fn backend_for(route: &Route, configured: CompletionsBackend) -> Option<Backend> {
    let backend = match route.provider.api_dialect()? {
        Dialect::OpenAiResponses => Backend::Responses,
        Dialect::OpenAiChat => {
            let has_responses = route.provider.config().capabilities.serves_responses;
            match configured {
                CompletionsBackend::Responses if has_responses => Backend::Responses,
                _ => Backend::Chat,
            }
        }
        other => Backend::Canonical(other),
    };
    Some(backend)
}

fn upstream_body(
    backend: Backend,
    route: &Route,
    prompt: &FimPrompt,
    request: &CompletionRequest,
) -> (String, Bytes) {
    let max = request.max_output_tokens();
    let sampling = request.sampling();
    let (path, value) = match backend {
        Backend::Responses => (
            "responses".to_owned(),
            fim::responses_request(&route.model, prompt, max, sampling),
        ),
        Backend::Chat => (
            "chat/completions".to_owned(),
            fim::chat_request(&route.model, prompt, max, sampling),
        ),
        Backend::Canonical(dialect) => {
            let canonical = canonical_request(&route.model, prompt, request);
            (
                codec::endpoint_path(dialect, &route.model, false),
                codec::encode_request(dialect, &canonical),
            )
        }
    };
    (path, Bytes::from(value.to_string()))
}

/// Why an upstream's completion reply could not be read (a 502 with this text).
#[derive(Debug, thiserror::Error)]
enum ReplyError {
    #[error(transparent)]
    Fim(FimError),
    #[error("upstream completion reply is malformed: {0}")]
    Malformed(model::DecodeError),
}

fn parse_reply(backend: Backend, reply: &[u8]) -> Result<UpstreamCompletion, ReplyError> {
    match backend {
        Backend::Responses => fim::parse_responses_reply(reply).map_err(ReplyError::Fim),
        Backend::Chat => fim::parse_chat_reply(reply).map_err(ReplyError::Fim),
        Backend::Canonical(dialect) => codec::decode_response(dialect, reply, &NameMap::default())
            .map(completion_from)
            .map_err(ReplyError::Malformed),
    }
}

fn request_error(error: &FimError) -> ApiError {
    let api = ApiError::invalid_request(error.to_string());
    match error.field() {
        Some(field) => api.with_param(field),
        None => api,
    }
}

async fn read_reply(mut body: UpstreamBody) -> Result<BytesMut, ApiError> {
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
                        "upstream completion reply is too large",
                    ));
                }
                reply.extend_from_slice(&chunk);
            }
            None => return Ok(reply),
            Some(Err(error)) => {
                let status = if is_timeout(error.as_ref()) {
                    StatusCode::GATEWAY_TIMEOUT
                } else {
                    StatusCode::BAD_GATEWAY
                };
                return Err(ApiError::new(
                    status,
                    format!("upstream reply broke off: {error}"),
                ));
            }
        }
    }
}

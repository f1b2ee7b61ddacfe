//! The inbound APIs: each reads the client's body, routes its model, and either passes it
//! through (the provider speaks the same dialect) or translates it.

use std::sync::OnceLock;
use std::time::Instant;

use axum::extract::{Path, Request, State};
use axum::response::Response;
use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue};
use serde::Deserialize as _;

use crate::body::read_body;
use crate::error::ApiError;
use crate::model_name;
use crate::passthrough::Passthrough;
use crate::routed::{Inbound, session_of};
use crate::state::AppState;
use crate::top_level::TopLevel;
use corvid_wire::Dialect;
use corvid_wire::codec;

/// The generation routes whose body goes through `handle`: path, dialect, name in the ledger.
pub(crate) const GENERATION_ROUTES: [(&str, Dialect, &str); 3] = [
    (
        "/v1/chat/completions",
        Dialect::OpenAiChat,
        "chat_completions",
    ),
    ("/v1/responses", Dialect::OpenAiResponses, "responses"),
    ("/v1/messages", Dialect::Anthropic, "messages"),
];

/// The request headers an Anthropic provider should see from an Anthropic client.
const ANTHROPIC_FORWARDED: [&str; 2] = ["anthropic-beta", "anthropic-version"];

pub(crate) async fn handle(
    state: &AppState,
    request: Request,
    inbound: Dialect,
    route_name: &'static str,
) -> Result<Response, ApiError> {
    let started = Instant::now();
    // Only Anthropic clients have headers worth forwarding; take them before the body.
    let anthropic_headers = if inbound == Dialect::Anthropic {
        forward_headers(request.headers(), &ANTHROPIC_FORWARDED)
    } else {
        Vec::new()
    };
    let session = session_of(request.headers());
    let original = body_of(state, request, inbound).await?;
    // A request no provider takes as it is will be translated on whichever route it takes: the
    // decoder reads the whole body (validating it as strictly as the pre-scan, repeated
    // top-level keys refused), so the pre-scan runs only if something needs it after all.
    let plain = translated_everywhere(state.registry(), inbound)
        .then(|| codec::decode_plain_request(inbound, &original))
        .flatten();
    let (top, requested, include_usage) = match &plain {
        Some(request) => {
            let include_usage = request
                .extra
                .get("stream_options")
                .and_then(|options| StreamOptions::deserialize(options).ok())
                .is_some_and(|options| options.include_usage == Some(true));
            (
                LazyTop::unread(&original, inbound),
                request.model.clone(),
                include_usage,
            )
        }
        None => {
            let top = top_level(&original, inbound)?;
            let requested = match top.raw("model") {
                None => String::new(),
                Some(_) => top
                    .str("model")
                    .ok_or_else(|| {
                        decode_refusal(
                            inbound,
                            &corvid_wire::model::DecodeError::field("model", "must be a string"),
                        )
                    })?
                    .into_owned(),
            };
            let include_usage = top
                .raw("stream_options")
                .and_then(|raw| serde_json::from_slice::<StreamOptions>(raw).ok())
                .is_some_and(|options| options.include_usage == Some(true));
            (LazyTop::read(top, inbound), requested, include_usage)
        }
    };
    model_name::check(&requested, inbound)?;
    Inbound {
        state,
        dialect: inbound,
        route_name,
        requested,
        original: original.clone(),
        top,
        decoded: plain,
        session,
        forwarded: anthropic_headers,
        gemini_stream: None,
        include_usage,
        started,
    }
    .serve()
    .await
}

/// The request body, read up to the configured limit; errors in the caller's dialect.
async fn body_of(state: &AppState, request: Request, inbound: Dialect) -> Result<Bytes, ApiError> {
    read_body(request, state.config().max_body_bytes)
        .await
        .map_err(|error| error.in_dialect(inbound))
}

/// Whether no available provider takes `inbound` bodies as they are, so every route that can
/// serve translates them. (Only a hint: a route that passes the body through after all reads
/// its top level then.)
fn translated_everywhere(registry: &corvid_providers::Registry, inbound: Dialect) -> bool {
    !registry
        .providers()
        .iter()
        .any(|provider| provider.is_available() && provider.takes_as_is(inbound))
}

/// A body's top level, read when first asked for: parsed at once on the usual path, later (or
/// never) when the decoder has read the whole body already.
pub(crate) struct LazyTop<'a> {
    body: &'a [u8],
    dialect: Dialect,
    read: OnceLock<TopLevel<'a>>,
}

impl<'a> LazyTop<'a> {
    fn read(top: TopLevel<'a>, dialect: Dialect) -> Self {
        Self {
            body: &[],
            dialect,
            read: OnceLock::from(top),
        }
    }

    fn unread(body: &'a [u8], dialect: Dialect) -> Self {
        Self {
            body,
            dialect,
            read: OnceLock::new(),
        }
    }

    /// The top level, parsed (and refused, in the caller's dialect) on first use.
    pub(crate) fn get(&self) -> Result<&TopLevel<'a>, ApiError> {
        if let Some(top) = self.read.get() {
            return Ok(top);
        }
        let top = top_level(self.body, self.dialect)?;
        Ok(self.read.get_or_init(|| top))
    }
}

/// The body's top level; a body that is not one JSON object, or that names a field twice
/// (corvid and the upstream could read different values), is a 400 in the caller's dialect.
fn top_level(body: &[u8], inbound: Dialect) -> Result<TopLevel<'_>, ApiError> {
    let top = TopLevel::parse(body).map_err(|error| {
        decode_refusal(
            inbound,
            &corvid_wire::model::DecodeError::Json(error.to_string()),
        )
    })?;
    if let Some(name) = top.duplicate() {
        return Err(ApiError::invalid_request(format!(
            "invalid JSON body: the top-level field {} appears more than once",
            crate::top_level::json_string(name)
        ))
        .in_dialect(inbound));
    }
    Ok(top)
}

/// A 400 for a body that could not be decoded, worded as the caller's own API words it.
fn decode_refusal(inbound: Dialect, error: &corvid_wire::model::DecodeError) -> ApiError {
    ApiError::invalid_request(codec::request_error_message(inbound, error)).in_dialect(inbound)
}

/// The part of an OpenAI `stream_options` value corvid reads.
#[derive(serde::Deserialize)]
struct StreamOptions {
    include_usage: Option<bool>,
}

fn forward_headers(headers: &HeaderMap, names: &[&'static str]) -> Vec<(HeaderName, HeaderValue)> {
    names
        .iter()
        .filter_map(|name| {
            let value = headers.get(*name)?;
            Some((HeaderName::from_static(name), value.clone()))
        })
        .collect()
}

/// `POST /v1/messages/count_tokens`: Anthropic's own count when the model is served by
/// Anthropic; otherwise corvid's estimate.
pub(crate) async fn count_tokens(
    State(state): State<AppState>,
    request: Request,
) -> Result<Response, ApiError> {
    let started = Instant::now();
    let inbound = Dialect::Anthropic;
    let forwarded = forward_headers(request.headers(), &ANTHROPIC_FORWARDED);
    let original = body_of(&state, request, inbound).await?;
    let top = top_level(&original, inbound)?;
    let requested = top
        .str("model")
        .map(|model| model.into_owned())
        .unwrap_or_default();
    model_name::check(&requested, inbound)?;
    let route = state
        .registry()
        .resolve(&requested)
        .map_err(|error| ApiError::from_route(&error).in_dialect(inbound))?;
    if route.provider.kind() == corvid_config::ProviderKind::Anthropic {
        let passthrough = Passthrough {
            state: &state,
            route,
            inbound,
            route_name: "count_tokens",
            path: "messages/count_tokens".to_owned(),
            headers: forwarded,
            started,
            tag: crate::routed::Tag::default(),
            cache_key: None,
        };
        return passthrough.send(&original, &top, Some(&requested)).await;
    }
    let request = corvid_wire::anthropic::decode_request(&original)
        .map_err(|error| decode_refusal(inbound, &error))?;
    let tokens = corvid_wire::anthropic::count_tokens_estimate(&request);
    Ok(axum::response::IntoResponse::into_response(axum::Json(
        serde_json::json!({ "input_tokens": tokens }),
    )))
}

/// `POST /v1beta/models/{model}:generateContent` and `:streamGenerateContent`.
pub(crate) async fn gemini(
    State(state): State<AppState>,
    Path(target): Path<String>,
    request: Request,
) -> Result<Response, ApiError> {
    let started = Instant::now();
    let inbound = Dialect::Gemini;
    let Some((model, method)) = target.rsplit_once(':') else {
        return Err(
            ApiError::not_found(format!("no route for models/{target}")).in_dialect(inbound)
        );
    };
    model_name::check(model, inbound)?;
    let stream = match method {
        "generateContent" => false,
        "streamGenerateContent" => true,
        "countTokens" => return gemini_count_tokens(&state, request, model).await,
        other => {
            return Err(
                ApiError::not_found(format!("unknown method {other:?}")).in_dialect(inbound)
            );
        }
    };
    let session = session_of(request.headers());
    let original = body_of(&state, request, inbound).await?;
    let top = top_level(&original, inbound)?;
    let route_name = if stream {
        "stream_generate_content"
    } else {
        "generate_content"
    };
    Inbound {
        state: &state,
        dialect: inbound,
        route_name,
        requested: model.to_owned(),
        original: original.clone(),
        top: LazyTop::read(top, inbound),
        decoded: None,
        session,
        forwarded: Vec::new(),
        gemini_stream: Some(stream),
        include_usage: false,
        started,
    }
    .serve()
    .await
}

async fn gemini_count_tokens(
    state: &AppState,
    request: Request,
    model: &str,
) -> Result<Response, ApiError> {
    let inbound = Dialect::Gemini;
    let original = body_of(state, request, inbound).await?;
    let top = top_level(&original, inbound)?;
    // countTokens wraps the request in `generateContentRequest` or sends `contents` directly.
    let inner = top.raw("generateContentRequest").unwrap_or(&original[..]);
    let request = corvid_wire::gemini::decode_request(inner, model)
        .map_err(|error| decode_refusal(inbound, &error))?;
    let tokens = corvid_wire::anthropic::count_tokens_estimate(&request);
    Ok(axum::response::IntoResponse::into_response(axum::Json(
        serde_json::json!({ "totalTokens": tokens }),
    )))
}

#[cfg(test)]
mod tests {
    use corvid_auth::{Credential, Secret};
    use corvid_config::Config;
    use corvid_providers::Registry;

    use super::*;

    /// The registry of the default providers, with a key for those named in `keyed`.
    fn registry(keyed: &[&str]) -> Registry {
        Registry::build(&Config::default(), |provider| {
            if keyed.contains(&provider.name.as_str()) {
                Credential::Key {
                    provider: provider.name.clone(),
                    secret: Secret::new("test-key"),
                }
            } else {
                Credential::None
            }
        })
        .unwrap()
    }

    #[test]
    fn a_dialect_is_translated_everywhere_only_when_no_available_provider_takes_it() {
        // xai alone (always available): Anthropic bodies are translated on every route,
        // Responses pass through (the xai preset serves `/responses`), chat too.
        let xai = registry(&[]);
        assert!(translated_everywhere(&xai, Dialect::Anthropic));
        assert!(!translated_everywhere(&xai, Dialect::OpenAiResponses));
        assert!(!translated_everywhere(&xai, Dialect::OpenAiChat));
        // A keyed Anthropic provider takes Anthropic bodies as they are; one without a key
        // (the preset, not declared) does not count.
        let anthropic = registry(&["anthropic"]);
        assert!(!translated_everywhere(&anthropic, Dialect::Anthropic));
    }
}

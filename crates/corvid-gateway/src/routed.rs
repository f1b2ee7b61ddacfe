//! One generation request through its route: the registry's [`Plan`] orders the targets and
//! keys (a `[routes.NAME]` chain, a task rule's target, the conversation's own target first);
//! each attempt is one pass-through or one translation — the same one pipeline — and the next
//! is tried only when the last failed before any output in a way another target could fix,
//! within the failover deadline. After the first byte went to the client nothing moves.
//!
//! Every attempt is its own ledger row (its target, key and rule). The answer says which
//! target served it: `x-corvid-target: provider/model`, `x-corvid-rule` when a task rule
//! chose it, `x-corvid-key` (the pool index) when the provider has several keys.

use std::time::Instant;

use axum::response::Response;
use bytes::Bytes;
use corvid_providers::{Plan, ProviderError, RequestShape, Route, dialect_of};
use corvid_wire::Dialect;
use corvid_wire::codec;
use corvid_wire::model::ChatRequest;
use http::{HeaderMap, HeaderName, HeaderValue};

use crate::error::ApiError;
use crate::inbound::LazyTop;
use crate::passthrough::Passthrough;
use crate::state::AppState;
use crate::translate::Translation;

/// The target that served a request, as `provider/model`.
pub(crate) const TARGET_HEADER: HeaderName = HeaderName::from_static("x-corvid-target");
/// The task rule that chose the target.
pub(crate) const RULE_HEADER: HeaderName = HeaderName::from_static("x-corvid-rule");
/// The pool key (its index) that sent the request.
pub(crate) const KEY_HEADER: HeaderName = HeaderName::from_static("x-corvid-key");

/// The session headers clients send that name a conversation: Claude Code's, Codex's, and
/// a generic one.
const SESSION_HEADERS: [&str; 4] = [
    "x-claude-code-session-id",
    "session_id",
    "conversation_id",
    "x-session-id",
];

/// Which pool key and which task rule served an exchange, for its ledger row.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Tag {
    /// The pool index, when the provider has more than one key.
    pub(crate) key_index: Option<u32>,
    pub(crate) rule: Option<&'static str>,
}

/// An attempt that failed before any output: the error (for the route's decision) and the
/// answer the client gets if no other target is tried.
pub(crate) struct Failed {
    pub(crate) error: ProviderError,
    pub(crate) response: Response,
}

impl Failed {
    pub(crate) fn new(error: ProviderError, response: Response) -> Self {
        Self { error, response }
    }
}

/// One attempt's outcome.
pub(crate) type Attempt = Result<Response, Failed>;

/// A generation request, read and checked, ready to route.
pub(crate) struct Inbound<'a> {
    pub(crate) state: &'a AppState,
    pub(crate) dialect: Dialect,
    pub(crate) route_name: &'static str,
    /// The model as the client named it.
    pub(crate) requested: String,
    pub(crate) original: Bytes,
    pub(crate) top: LazyTop<'a>,
    /// The request already decoded, when the body was read whole instead of pre-scanned.
    pub(crate) decoded: Option<ChatRequest>,
    /// The client's session header, when it sent one (see [`session_of`]).
    pub(crate) session: Option<HeaderValue>,
    /// Headers forwarded to a same-dialect provider (Anthropic's beta and version).
    pub(crate) forwarded: Vec<(HeaderName, HeaderValue)>,
    /// Gemini: whether the path asked for a stream (its body does not say).
    pub(crate) gemini_stream: Option<bool>,
    /// OpenAI chat clients: whether they asked for a usage chunk.
    pub(crate) include_usage: bool,
    pub(crate) started: Instant,
}

impl Inbound<'_> {
    /// Routes and sends the request (see the module docs).
    pub(crate) async fn serve(mut self) -> Result<Response, ApiError> {
        let registry = self.state.registry();
        let routing = registry.routing();
        let chooses = registry.has_choices();
        let mut decoded = self.decoded.take();
        let shape = if routing.rules.any() {
            let request = match decoded.take() {
                Some(request) => request,
                None => self.decode()?,
            };
            let shape = RequestShape::of(&request);
            decoded = Some(request);
            Some(shape)
        } else {
            None
        };
        let conversation = if chooses && routing.sticky {
            Some(self.conversation()?)
        } else {
            None
        };
        let mut cache_conversation = conversation;
        let plan = registry
            .plan(&self.requested, shape.as_ref(), conversation)
            .map_err(|error| ApiError::from_route(&error).in_dialect(self.dialect))?;
        let deadline = routing.failover_deadline;
        for (index, route) in plan.attempts.iter().enumerate() {
            let tag = Tag {
                key_index: (route.provider.keys().len() > 1).then_some(route.key as u32),
                rule: plan.rule,
            };
            let cache_key = if keeps_cache_by_key(route) {
                let conversation = match cache_conversation {
                    Some(conversation) => conversation,
                    None => *cache_conversation.insert(self.conversation()?),
                };
                Some(format!("corvid-{conversation:016x}"))
            } else {
                None
            };
            let last = index + 1 == plan.attempts.len();
            let outcome = self
                .attempt(route, &plan, tag, cache_key, &mut decoded, last)
                .await?;
            match outcome {
                Ok(mut response) => {
                    if let Some(conversation) = conversation {
                        registry.stick(conversation, route);
                    }
                    mark(&mut response, route, tag);
                    return Ok(response);
                }
                Err(failed) => {
                    if plan.fails_over_after(index, &failed.error, self.started, deadline) {
                        continue;
                    }
                    let mut response = failed.response;
                    mark(&mut response, route, tag);
                    return Ok(response);
                }
            }
        }
        // A plan always holds an attempt, and the last one returns above.
        Err(ApiError::new(
            http::StatusCode::BAD_GATEWAY,
            "no route target could be tried".to_owned(),
        )
        .in_dialect(self.dialect))
    }

    /// One attempt at `route`: passed through when its provider speaks the client's dialect
    /// and the conversation did not move there from another provider; translated otherwise
    /// (a moved conversation's opaque reasoning is settled as a user-moved session's is).
    async fn attempt(
        &self,
        route: &Route,
        plan: &Plan,
        tag: Tag,
        cache_key: Option<String>,
        decoded: &mut Option<ChatRequest>,
        last: bool,
    ) -> Result<Attempt, ApiError> {
        if corvid_providers::quirks::is_local_server(&route.provider) {
            self.check_local_window(route, decoded).await?;
        }
        if route.provider.takes_as_is(self.dialect) && plan.moved(route).is_none() {
            let outbound = dialect_of(route.provider.kind());
            let stream = self.gemini_stream.unwrap_or(false);
            let path = match self.dialect {
                Dialect::OpenAiResponses => "responses".to_owned(),
                _ => codec::endpoint_path(outbound, &route.model, stream),
            };
            let passthrough = Passthrough {
                state: self.state,
                route: route.clone(),
                inbound: self.dialect,
                route_name: self.route_name,
                path,
                headers: self.forwarded.clone(),
                started: self.started,
                tag,
                cache_key,
            };
            let top = self.top.get()?;
            return Ok(match self.gemini_stream {
                Some(_) => passthrough.attempt_settled(&self.original, top).await,
                None => {
                    passthrough
                        .attempt(&self.original, top, Some(&self.requested))
                        .await
                }
            });
        }
        let mut request = match decoded.take() {
            // A later attempt needs the request again: keep a copy unless this is the last.
            Some(request) if !last => {
                *decoded = Some(request.clone());
                request
            }
            Some(request) => request,
            None => self.decode()?,
        };
        plan.settle_move(route, &mut request);
        Ok(Translation {
            state: self.state,
            route: route.clone(),
            inbound: self.dialect,
            route_name: self.route_name,
            client_model: self.requested.clone(),
            request,
            include_usage: self.include_usage,
            started: self.started,
            tag,
            cache_key,
        }
        .attempt()
        .await)
    }

    /// A server on this machine serves the window it was started with and cuts a longer prompt
    /// silently: its own list is read (cached), and a prompt corvid estimates above the window
    /// is refused in the client's dialect, saying so.
    async fn check_local_window(
        &self,
        route: &Route,
        decoded: &mut Option<ChatRequest>,
    ) -> Result<(), ApiError> {
        route.provider.models().await;
        let Some(window) = self.state.registry().context_window(&route.target()) else {
            return Ok(());
        };
        if decoded.is_none() {
            *decoded = Some(self.decode()?);
        }
        let estimate = decoded
            .as_ref()
            .map_or(0, corvid_wire::anthropic::count_tokens_estimate);
        if estimate <= window.tokens {
            return Ok(());
        }
        Err(ApiError::invalid_request(format!(
            "the prompt is about {estimate} tokens, more than the {} tokens of {}'s context              window ({}); shorten or compact the conversation, or start the server with a              larger context",
            window.tokens,
            route.target(),
            window.source.as_str(),
        ))
        .with_code("context_length_exceeded")
        .in_dialect(self.dialect))
    }

    /// The request in the canonical model (a 400 in the client's dialect if it cannot be).
    fn decode(&self) -> Result<ChatRequest, ApiError> {
        let mut request = codec::decode_request(self.dialect, &self.original, &self.requested)
            .map_err(|error| {
                ApiError::invalid_request(codec::request_error_message(self.dialect, &error))
                    .in_dialect(self.dialect)
            })?;
        if let Some(stream) = self.gemini_stream {
            request.stream = stream;
        }
        Ok(request)
    }

    /// The conversation's key: the client's session header, else its first turn (the body's
    /// top level is read only then).
    fn conversation(&self) -> Result<u64, ApiError> {
        let session = self.session.as_ref().map(HeaderValue::as_bytes);
        let first = match session {
            Some(_) => &[][..],
            None => {
                let field = corvid_wire::minted::conversation_field(self.dialect);
                first_turn(self.top.get()?.raw(field).unwrap_or_default())
            }
        };
        Ok(corvid_providers::conversation_key(
            session,
            &self.requested,
            first,
        ))
    }
}

/// The session header a client sent, if any (Claude Code's, Codex's, a generic one).
pub(crate) fn session_of(headers: &HeaderMap) -> Option<HeaderValue> {
    SESSION_HEADERS
        .iter()
        .find_map(|name| headers.get(*name))
        .cloned()
}

/// The raw JSON of the first item of a JSON array (the conversation's first turn); the
/// whole text when it is not an array (a Responses `input` string) or is empty. Only the first
/// turn is read: reading the whole conversation for it was a full pass over most of the body.
fn first_turn(conversation: &[u8]) -> &[u8] {
    crate::top_level::first_item(conversation).unwrap_or(conversation)
}

/// Whether `route`'s provider keeps prompt caches by `prompt_cache_key` (OpenAI's API: an
/// OpenAI-dialect provider that serves Responses and has no xAI field table, which refuses
/// the key).
fn keeps_cache_by_key(route: &Route) -> bool {
    let config = route.provider.config();
    matches!(
        route.provider.api_dialect(),
        Some(Dialect::OpenAiChat | Dialect::OpenAiResponses)
    ) && config.capabilities.serves_responses
        && !config.capabilities.xai_field_rules
}

/// Says which target, rule and key served the request.
fn mark(response: &mut Response, route: &Route, tag: Tag) {
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&route.target()) {
        headers.insert(TARGET_HEADER, value);
    }
    if let Some(rule) = tag.rule {
        headers.insert(RULE_HEADER, HeaderValue::from_static(rule));
    }
    if let Some(key) = tag.key_index {
        headers.insert(KEY_HEADER, HeaderValue::from(key));
    }
}

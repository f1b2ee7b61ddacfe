//! Same dialect in and out: the body goes to the provider as it came, except for the model
//! name and the fields the provider's rules remove — spliced at the top level, never
//! re-serialised — and the reply comes back byte for byte.

use std::time::Instant;

use axum::response::Response;
use bytes::Bytes;
use corvid_providers::{Route, UpstreamRequest};
use http::{HeaderName, HeaderValue};

use crate::error::{ApiError, relayed_upstream_error};
use crate::exchange::Exchange;
use crate::log_text::Clean;
use crate::relay::relay;
use crate::routed::{Attempt, Failed};
use crate::rules;
use crate::state::AppState;
use crate::top_level::{Edit, TopLevel, json_string};
use axum::response::IntoResponse;
use corvid_wire::Dialect;
use corvid_wire::{anthropic, minted};

/// One request to pass through.
pub(crate) struct Passthrough<'a> {
    pub(crate) state: &'a AppState,
    pub(crate) route: Route,
    pub(crate) inbound: Dialect,
    pub(crate) route_name: &'static str,
    /// The path under the provider's base URL.
    pub(crate) path: String,
    pub(crate) headers: Vec<(HeaderName, HeaderValue)>,
    pub(crate) started: Instant,
    /// The pool key and task rule, for the ledger.
    pub(crate) tag: crate::routed::Tag,
    /// The conversation's `prompt_cache_key`, set when the body names none.
    pub(crate) cache_key: Option<String>,
}

impl Passthrough<'_> {
    /// Sends `original` (whose top level is `top`), with the model named `requested` by the
    /// client rewritten to the route's model when the body carries one.
    pub(crate) async fn send(
        self,
        original: &Bytes,
        top: &TopLevel<'_>,
        requested: Option<&str>,
    ) -> Result<Response, ApiError> {
        Ok(self
            .attempt(original, top, requested)
            .await
            .unwrap_or_else(|failed| failed.response))
    }

    /// `send`, with a failure before any output kept apart (the route may try elsewhere).
    pub(crate) async fn attempt(
        self,
        original: &Bytes,
        top: &TopLevel<'_>,
        requested: Option<&str>,
    ) -> Attempt {
        let provider = &self.route.provider;
        let default_limit =
            corvid_providers::quirks::default_output_limit(provider, &self.route.model);
        let mut edits = rules::provider_removals(
            provider.config(),
            &self.route.model,
            top,
            self.inbound,
            default_limit,
        );
        if let Some(requested) = requested
            && requested != self.route.model
        {
            edits.push(Edit::Set("model", json_string(&self.route.model)));
        }
        if let Some(key) = &self.cache_key
            && !top.has("prompt_cache_key")
        {
            edits.push(Edit::Set("prompt_cache_key", json_string(key)));
        }
        settle_minted(self.inbound, provider.name(), top, &mut edits);
        let body = top.rewrite(original, &edits);
        self.attempt_body(body).await
    }

    /// Sends `original` with only what corvid minted settled (Gemini: the model is in the
    /// path, so nothing else changes).
    pub(crate) async fn attempt_settled(self, original: &Bytes, top: &TopLevel<'_>) -> Attempt {
        let mut edits = Vec::new();
        settle_minted(self.inbound, self.route.provider.name(), top, &mut edits);
        let body = top.rewrite(original, &edits);
        self.attempt_body(body).await
    }

    /// Sends `body` unchanged.
    async fn attempt_body(self, body: Bytes) -> Attempt {
        let config = self.state.config();
        let prompt = config
            .log_prompts
            .then(|| String::from_utf8_lossy(&body).into_owned());
        let provider = &self.route.provider;
        let mut exchange = Exchange {
            state: self.state.clone(),
            route: self.route_name,
            inbound: self.inbound,
            provider: provider.name().to_owned(),
            model: self.route.model.clone(),
            started: self.started,
            attempts: 0,
            prompt,
            ticket: crate::access::take_ticket(),
            tag: self.tag,
        };
        let sent = self
            .route
            .upstream()
            .post(UpstreamRequest {
                path: &self.path,
                body,
                deadline: None,
                headers: self.headers,
                retries: self.route.in_place_retries(),
            })
            .await;
        match sent {
            Ok(upstream) => {
                exchange.attempts = upstream.attempts;
                Ok(relay(upstream.response, exchange))
            }
            Err(failed) => {
                let error = &failed.error;
                tracing::warn!(route = self.route_name, provider = %provider.name(), model = %Clean(&self.route.model), error = %Clean(&corvid_providers::error_chain(error)), "upstream call failed");
                let oauth =
                    provider.upstream().credential().mode() == corvid_config::AuthMode::OAuth;
                let status = match error {
                    corvid_providers::ProviderError::Status { status, .. } => status.as_u16(),
                    _ => 0,
                };
                exchange.attempts = failed.attempts;
                exchange.finish(status, corvid_store::Outcome::Error, None, None);
                // A SuperGrok 403 gets corvid's explanation; any other error already in the
                // caller's dialect goes back as the provider wrote it.
                let response = match relayed_upstream_error(error, self.inbound) {
                    Some(response) if !(oauth && status == 403) => response,
                    _ => ApiError::from_provider(error, oauth)
                        .in_dialect(self.inbound)
                        .into_response(),
                };
                Err(Failed::new(failed.error, response))
            }
        }
    }
}

/// What only corvid's clients write must not reach the provider as it is: Claude Code's
/// system turns inside `messages` (for names it does not know) are folded for Anthropic, and
/// what corvid minted for another provider (a thinking block from Grok, Anthropic reasoning
/// inside `encrypted_content`, a Gemini signature in a call id) is settled. The conversation
/// field is rewritten only when a byte search finds one of them, so the common case stays a
/// byte pass-through.
fn settle_minted(inbound: Dialect, provider: &str, top: &TopLevel<'_>, edits: &mut Vec<Edit>) {
    let field = minted::conversation_field(inbound);
    // Only the conversation is searched: the system prompt and tools can be as large.
    let Some(raw) = top.raw(field) else {
        return;
    };
    let mut conversation: Option<String> = None;
    if inbound == Dialect::Anthropic
        && anthropic::may_hold_system_turns(raw)
        && let Some(folded) = anthropic::fold_system_turns(raw, top.raw("system"))
    {
        if let Some(system) = folded.system {
            edits.push(Edit::Set("system", system));
        }
        conversation = Some(folded.messages);
    }
    if minted::may_hold_minted(inbound, raw)
        && let Some(stripped) = minted::strip(
            inbound,
            provider,
            conversation.as_deref().map_or(raw, str::as_bytes),
        )
    {
        if !stripped.thinking_allowed && top.has("thinking") {
            edits.push(Edit::Remove("thinking"));
        }
        conversation = Some(stripped.conversation);
    }
    if let Some(conversation) = conversation {
        edits.push(Edit::Set(field, conversation));
    }
}

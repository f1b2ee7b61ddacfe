//! Same dialect in and out: the body goes to the provider as it came, except for the model
//! name and the fields the provider's rules remove — spliced at the top level, never
//! re-serialised — and the reply comes back byte for byte.

use std::time::Instant;

use axum::response::Response;
use bytes::Bytes;
use corvid_providers::{Route, UpstreamRequest};
use http::{HeaderName, HeaderValue};

use crate::error::ApiError;
use crate::exchange::Exchange;
use crate::log_text::Clean;
use crate::relay::relay;
use crate::rules;
use crate::state::AppState;
use crate::top_level::{Edit, TopLevel, json_string};
use corvid_wire::Dialect;

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
        let provider = &self.route.provider;
        let mut edits =
            rules::provider_removals(provider.config(), &self.route.model, top, self.inbound);
        if let Some(requested) = requested
            && requested != self.route.model
        {
            edits.push(Edit::Set("model", json_string(&self.route.model)));
        }
        let body = top.rewrite(original, &edits);
        self.send_body(body).await
    }

    /// Sends `body` unchanged (Gemini: the model is in the path).
    pub(crate) async fn send_body(self, body: Bytes) -> Result<Response, ApiError> {
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
        };
        let sent = provider
            .upstream()
            .post(UpstreamRequest {
                path: &self.path,
                body,
                deadline: None,
                headers: self.headers,
            })
            .await;
        match sent {
            Ok(upstream) => {
                exchange.attempts = upstream.attempts;
                Ok(relay(upstream.response, exchange))
            }
            Err(failed) => {
                let error = &failed.error;
                tracing::warn!(route = self.route_name, provider = %provider.name(), model = %Clean(&self.route.model), error = %Clean(&error.to_string()), "upstream call failed");
                let oauth =
                    provider.upstream().credential().mode() == corvid_config::AuthMode::OAuth;
                let api = ApiError::from_provider(error, oauth).in_dialect(self.inbound);
                let status = match error {
                    corvid_providers::ProviderError::Status { status, .. } => status.as_u16(),
                    _ => 0,
                };
                exchange.attempts = failed.attempts;
                exchange.finish(status, corvid_store::Outcome::Error, None, None);
                Err(api)
            }
        }
    }
}

//! The one seam between the agent and the models: `ModelClient`. The binary implements it
//! in-process with the gateway's providers (same routing, aliases and credentials); tests
//! implement it with a scripted model.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use corvid_protocol::ErrorClass;
use corvid_wire::model::{ChatRequest, FailureClass, StreamEvent, WireError};
use futures_util::Stream;

/// A model's reply as canonical events.
pub type EventStream = Pin<Box<dyn Stream<Item = StreamEvent> + Send>>;

/// The future `ModelClient::stream` returns.
pub type StreamFuture<'a> =
    Pin<Box<dyn Future<Output = Result<EventStream, ModelError>> + Send + 'a>>;

/// The future `ModelClient::call` returns.
pub type ReplyFuture<'a> =
    Pin<Box<dyn Future<Output = Result<ModelReply, ModelError>> + Send + 'a>>;

/// A reply that started, and how many requests the client sent to get it (its retries
/// before any output), for the usage ledger.
pub struct ModelReply {
    pub events: EventStream,
    pub attempts: u32,
    /// Where the reply came from, when the client routed the call (a route's fallback may
    /// serve it rather than the first target): the ledger names it and prices by it.
    pub served_by: Option<ModelRoute>,
}

/// Streams one canonical request to a model.
pub trait ModelClient: Send + Sync {
    /// Sends `request` (its `model` already chosen); resolves once the reply has started.
    fn stream(&self, request: ChatRequest) -> StreamFuture<'_>;

    /// Like [`ModelClient::stream`], saying how many requests the call sent. A client that
    /// retries overrides it; one that does not sent exactly one.
    fn call(&self, request: ChatRequest) -> ReplyFuture<'_> {
        Box::pin(async move {
            let events = self.stream(request).await?;
            Ok(ModelReply {
                events,
                attempts: 1,
                served_by: None,
            })
        })
    }

    /// Where `model` leads (provider, upstream model name), for the usage ledger; `None` when
    /// the client cannot tell (the ledger then names no provider and keeps the requested name).
    fn route(&self, model: &str) -> Option<ModelRoute> {
        let _ = model;
        None
    }

    /// The context window of `model` in tokens as the client knows it (configuration, the
    /// provider's model list, the catalog); `None` when it cannot tell. Asked before each
    /// compaction check, so a `/model` switch uses the new model's window.
    fn context_window(&self, model: &str) -> Option<u64> {
        let _ = model;
        None
    }

    /// Whether `model` takes images as the client knows it (the provider's model list, the
    /// catalog); `None` when it cannot tell (the agent then asks the catalog by name, and an
    /// unknown model may try).
    fn takes_images(&self, model: &str) -> Option<bool> {
        let _ = model;
        None
    }
}

/// The provider and the upstream model name a requested model resolves to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelRoute {
    pub provider: String,
    /// The name prices are keyed by (after aliases).
    pub model: String,
}

/// A model call that failed before its reply started.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct ModelError {
    pub class: ErrorClass,
    pub message: String,
    pub retry_after: Option<Duration>,
    /// Requests the client sent before giving up (0 when none left: no credential, an
    /// unknown model).
    pub attempts: u32,
}

impl ModelError {
    /// A failure after one request (set `attempts` when the client knows better).
    pub fn new(class: ErrorClass, message: impl Into<String>) -> Self {
        Self {
            class,
            message: message.into(),
            retry_after: None,
            attempts: 1,
        }
    }

    /// A failure reported inside a reply that had started (an `Error` event), classified by
    /// the same rule as the gateway's and worded as the client worded it.
    pub fn in_reply(error: &WireError) -> Self {
        Self::new(
            error_class(FailureClass::of_stream_error(error.kind)),
            error.message.clone(),
        )
    }

    /// What the user should do about it.
    pub fn next_action(&self) -> String {
        next_action(self.class, self.retry_after)
    }
}

/// The agent's name for a model call's failure class (the one classification lives in
/// corvid-wire; this only renames it into the protocol's vocabulary).
pub fn error_class(class: FailureClass) -> ErrorClass {
    match class {
        FailureClass::NotConfigured => ErrorClass::NotConfigured,
        FailureClass::AuthenticationRejected => ErrorClass::AuthenticationRejected,
        FailureClass::RateLimited => ErrorClass::RateLimited,
        FailureClass::ServerError => ErrorClass::ServerError,
        FailureClass::Network => ErrorClass::Network,
        FailureClass::UnexpectedResponse => ErrorClass::UnexpectedResponse,
    }
}

/// The sentence each failure class ends with (`ErrorClass::next_action`), with the wait a rate
/// limit asked for when it said.
pub fn next_action(class: ErrorClass, retry_after: Option<Duration>) -> String {
    match (class, retry_after) {
        (ErrorClass::RateLimited, Some(wait)) => {
            format!("Wait about {} s and resend.", wait.as_secs().max(1))
        }
        _ => class.next_action().to_owned(),
    }
}

#[cfg(test)]
mod tests;

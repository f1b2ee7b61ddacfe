//! The in-process model client: one canonical request to whichever provider serves its model,
//! as a stream of canonical events. The agent uses this (through its `ModelClient` trait) with
//! the same routing, aliases and credentials as the gateway.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use corvid_wire::Dialect;
use corvid_wire::codec::{self, Decoder};
use corvid_wire::model::{ChatRequest, ErrorKind, NameMap, StreamEvent, WireError};
use futures_util::Stream;
use http_body::Body;

use crate::error::ProviderError;
use crate::quirks::prepare_request;
use crate::registry::{Registry, RouteError, dialect_of};
use crate::transport::{UpstreamBody, is_timeout};

/// What kind of failure stopped a model call, so a caller can say what to do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureClass {
    /// No provider is set up for the model (no key, unknown model or provider).
    NotConfigured,
    /// The provider refused the credential (401, 403).
    AuthenticationRejected,
    /// Too many requests (429) after the retries.
    RateLimited,
    /// The provider failed (5xx, overloaded) after the retries.
    ServerError,
    /// The provider could not be reached, or stopped answering.
    Network,
    /// The provider answered something corvid cannot use (another 4xx, an unreadable reply).
    UnexpectedResponse,
}

/// A failed model call.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct ModelFailure {
    pub class: FailureClass,
    pub message: String,
    pub retry_after: Option<Duration>,
}

impl ModelFailure {
    fn new(class: FailureClass, message: impl Into<String>) -> Self {
        Self {
            class,
            message: message.into(),
            retry_after: None,
        }
    }

    /// A Zed failure before any output, classified like any provider's.
    fn from_zed(error: &crate::zed::ZedError) -> Self {
        let class = match error {
            crate::zed::ZedError::SignedOut | crate::zed::ZedError::InvalidCredential => {
                FailureClass::AuthenticationRejected
            }
            crate::zed::ZedError::Transport { .. } => FailureClass::Network,
            _ => match error.status() {
                401 | 403 => FailureClass::AuthenticationRejected,
                402 => FailureClass::NotConfigured,
                429 => FailureClass::RateLimited,
                500..=599 => FailureClass::ServerError,
                _ => FailureClass::UnexpectedResponse,
            },
        };
        let retry_after = match error {
            crate::zed::ZedError::Status { retry_after, .. } => *retry_after,
            _ => None,
        };
        Self {
            class,
            message: crate::error_chain(error),
            retry_after,
        }
    }

    fn from_route(error: &RouteError) -> Self {
        Self::new(FailureClass::NotConfigured, error.to_string())
    }

    fn from_provider(error: &ProviderError, dialect: Dialect) -> Self {
        match error {
            ProviderError::Status {
                status,
                body,
                retry_after,
            } => {
                let wire = codec::decode_error(dialect, status.as_u16(), body);
                let class = match status.as_u16() {
                    401 | 403 => FailureClass::AuthenticationRejected,
                    429 => FailureClass::RateLimited,
                    500..=599 => FailureClass::ServerError,
                    _ => FailureClass::UnexpectedResponse,
                };
                Self {
                    class,
                    message: format!("{} ({})", wire.message, status.as_u16()),
                    retry_after: *retry_after,
                }
            }
            ProviderError::Connect { .. }
            | ProviderError::Timeout { .. }
            | ProviderError::Transport { .. } => {
                Self::new(FailureClass::Network, crate::error_chain(error))
            }
            ProviderError::Auth(auth) if auth.is_retryable() => {
                Self::new(FailureClass::Network, auth.to_string())
            }
            ProviderError::Auth(auth) => Self::new(FailureClass::NotConfigured, auth.to_string()),
            ProviderError::InvalidCredential | ProviderError::InvalidUrl { .. } => {
                Self::new(FailureClass::NotConfigured, error.to_string())
            }
        }
    }
}

impl Registry {
    /// Streams `request` to the provider serving `request.model`. Returns once the provider
    /// has answered with a success status; failures before that are classified.
    pub async fn stream(&self, mut request: ChatRequest) -> Result<ModelStream, ModelFailure> {
        let route = self
            .resolve(&request.model)
            .map_err(|error| ModelFailure::from_route(&error))?;
        let dialect = dialect_of(route.provider.kind());
        prepare_request(&route.provider, &route.model, &mut request);
        request.stream = true;
        if let Some(zed) = route.provider.zed_service() {
            let model = zed.model(&route.model).await.map_err(|error| match error {
                crate::ZedModelError::Zed(error) => ModelFailure::from_zed(&error),
                unlisted @ crate::ZedModelError::Unlisted { .. } => {
                    ModelFailure::new(FailureClass::NotConfigured, unlisted.to_string())
                }
            })?;
            let (completion, _attempts) = zed.completion(&request, &model).await;
            let completion = completion.map_err(|error| ModelFailure::from_zed(&error))?;
            return Ok(ModelStream {
                source: Source::Events(Box::pin(completion)),
                pending: VecDeque::new(),
                done: false,
                provider: route.provider.name().to_owned(),
            });
        }
        let names = NameMap::new(&request.tools);
        let mut encoded = codec::encode_request(dialect, &request);
        crate::quirks::settle_encoded(&route.provider, &route.model, &mut encoded);
        let path = codec::endpoint_path(dialect, &route.model, true);
        let sent = route
            .provider
            .upstream()
            .post_encoded(&path, &encoded)
            .await
            .map_err(|error| ModelFailure::from_provider(&error, dialect))?;
        Ok(ModelStream {
            source: Source::Bytes {
                body: sent.response.into_body(),
                decoder: Box::new(Decoder::new(dialect, names)),
            },
            pending: VecDeque::new(),
            done: false,
            provider: route.provider.name().to_owned(),
        })
    }
}

/// A provider's reply as canonical events. A broken or cut stream ends with an `Error` event.
pub struct ModelStream {
    source: Source,
    pending: VecDeque<StreamEvent>,
    done: bool,
    provider: String,
}

/// Where the events come from: a provider's bytes, or a Zed account's decoded stream.
enum Source {
    Bytes {
        body: UpstreamBody,
        decoder: Box<Decoder>,
    },
    Events(Pin<Box<dyn Stream<Item = StreamEvent> + Send>>),
}

impl ModelStream {
    /// The provider answering.
    pub fn provider(&self) -> &str {
        &self.provider
    }
}

impl Stream for ModelStream {
    type Item = StreamEvent;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<StreamEvent>> {
        let this = self.get_mut();
        loop {
            if let Some(event) = this.pending.pop_front() {
                return Poll::Ready(Some(event));
            }
            if this.done {
                return Poll::Ready(None);
            }
            let mut events = Vec::new();
            match &mut this.source {
                Source::Events(stream) => match stream.as_mut().poll_next(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Some(event)) => events.push(event),
                    Poll::Ready(None) => this.done = true,
                },
                Source::Bytes { body, decoder } => match Pin::new(body).poll_frame(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Some(Ok(frame))) => {
                        if let Ok(data) = frame.into_data() {
                            decoder.feed(&data, &mut events);
                            // The dialect's own end, even if the connection stays open.
                            this.done = decoder.ended();
                        }
                    }
                    Poll::Ready(None) => {
                        decoder.finish(&mut events);
                        this.done = true;
                    }
                    Poll::Ready(Some(Err(error))) => {
                        let (kind, message) = if is_timeout(error.as_ref()) {
                            (
                                ErrorKind::Timeout,
                                "the provider stopped sending (idle timeout)".to_owned(),
                            )
                        } else {
                            (
                                ErrorKind::Api,
                                format!("the provider's stream broke: {error}"),
                            )
                        };
                        events.push(StreamEvent::Error(WireError::new(kind, message)));
                        this.done = true;
                    }
                },
            }
            this.pending.extend(events);
        }
    }
}

#[cfg(test)]
mod tests {
    use corvid_wire::model::{Message, Part, Role, ToolCall, ToolResult, ToolResultContent};

    use crate::quirks::orphan_results_to_text;

    #[test]
    fn orphan_results_become_text_and_answered_ones_stay() {
        let result = |id: &str| {
            Part::ToolResult(ToolResult {
                call_id: id.to_owned(),
                name: None,
                content: vec![ToolResultContent::Text {
                    text: "out".to_owned(),
                }],
                is_error: false,
            })
        };
        let mut messages = vec![
            Message {
                role: Role::User,
                parts: vec![result("gone")],
            },
            Message {
                role: Role::Assistant,
                parts: vec![Part::ToolCall(ToolCall {
                    id: "c1".into(),
                    name: "x".into(),
                    arguments: "{}".into(),
                    signature: None,
                })],
            },
            Message {
                role: Role::User,
                parts: vec![result("c1")],
            },
        ];
        orphan_results_to_text(&mut messages);
        assert_eq!(
            messages[0].parts[0],
            Part::Text {
                text: "[Result of tool call gone]\nout".to_owned()
            }
        );
        assert!(matches!(messages[2].parts[0], Part::ToolResult(_)));
    }
}

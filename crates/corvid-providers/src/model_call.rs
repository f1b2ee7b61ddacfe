//! The in-process model client: one canonical request to whichever provider serves its model,
//! as a stream of canonical events, through the same pipeline as the gateway's translation
//! (`pipeline`). The agent uses this (through its `ModelClient` trait) with the same routing,
//! aliases and credentials as the gateway; this module only adapts failures to what the agent
//! shows (a class and a sentence).

use std::time::Duration;

use corvid_wire::Dialect;
use corvid_wire::codec;
use corvid_wire::model::ChatRequest;

use crate::error::{FailureClass, ProviderError};
use crate::pipeline::ModelStream;
use crate::registry::{Registry, RouteError, dialect_of};

/// A failed model call.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct ModelFailure {
    pub class: FailureClass,
    pub message: String,
    pub retry_after: Option<Duration>,
    /// Requests sent before giving up (0 when none left corvid).
    pub attempts: u32,
}

impl ModelFailure {
    fn from_route(error: &RouteError) -> Self {
        Self {
            class: FailureClass::NotConfigured,
            message: error.to_string(),
            retry_after: None,
            attempts: 0,
        }
    }

    /// Any provider's failure (the Zed account's too), classified by
    /// [`ProviderError::class`]; an upstream's error body is read in its own `dialect`.
    fn from_provider(error: &ProviderError, attempts: u32, dialect: Dialect) -> Self {
        let (message, retry_after) = match error {
            ProviderError::Status {
                status,
                body,
                retry_after,
            } => {
                let wire = codec::decode_error(dialect, status.as_u16(), body);
                (
                    format!("{} ({})", wire.message, status.as_u16()),
                    *retry_after,
                )
            }
            ProviderError::Refused(refusal) => (refusal.message.clone(), refusal.retry_after),
            ProviderError::Connect { .. }
            | ProviderError::Timeout { .. }
            | ProviderError::Transport { .. } => (crate::error_chain(error), None),
            ProviderError::Auth(_)
            | ProviderError::InvalidCredential
            | ProviderError::InvalidUrl { .. } => (error.to_string(), None),
        };
        Self {
            class: error.class(),
            message,
            retry_after,
            attempts,
        }
    }
}

impl Registry {
    /// Streams `request` to the provider serving `request.model`. Returns once the provider
    /// has answered with a success status; failures before that are classified.
    pub async fn stream(&self, request: ChatRequest) -> Result<ModelStream, ModelFailure> {
        self.call(request).await.map(|(stream, _)| stream)
    }

    /// Like [`Registry::stream`], with the requests sent to get the reply (its retries), for
    /// the agent's ledger rows.
    pub async fn call(&self, mut request: ChatRequest) -> Result<(ModelStream, u32), ModelFailure> {
        let route = self
            .resolve(&request.model)
            .map_err(|error| ModelFailure::from_route(&error))?;
        let dialect = dialect_of(route.provider.kind());
        request.stream = true;
        let reply = route.prepare(request).send().await.map_err(|failed| {
            ModelFailure::from_provider(&failed.error, failed.attempts, dialect)
        })?;
        let attempts = reply.attempts();
        Ok((reply.into_stream(), attempts))
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

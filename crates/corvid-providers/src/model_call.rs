//! The in-process model client: one canonical request to whichever provider serves its model,
//! as a stream of canonical events, through the same pipeline as the gateway's translation
//! (`pipeline`). The agent uses this (through its `ModelClient` trait) with the same routing,
//! aliases and credentials as the gateway. A failure is the pipeline's [`CallError`], which
//! classifies and words itself for the agent.

use corvid_wire::Dialect;
use corvid_wire::model::ChatRequest;

use crate::error::CallError;
use crate::pipeline::ModelStream;
use crate::registry::{Registry, dialect_of};

impl Registry {
    /// Streams `request` to the provider serving `request.model`. Returns once the provider
    /// has answered with a success status; failures before that are classified
    /// (`class`, through the [`ProviderError`](crate::ProviderError) it carries) and worded
    /// ([`CallError::message`]).
    pub async fn stream(&self, request: ChatRequest) -> Result<ModelStream, CallError> {
        self.call(request).await.map(|(stream, _)| stream)
    }

    /// Like [`Registry::stream`], with the requests sent to get the reply (its retries), for
    /// the agent's ledger rows.
    pub async fn call(&self, mut request: ChatRequest) -> Result<(ModelStream, u32), CallError> {
        let route = self.resolve(&request.model).map_err(CallError::route)?;
        request.stream = true;
        let reply = route.prepare(request).send().await?;
        let attempts = reply.attempts();
        Ok((reply.into_stream(), attempts))
    }

    /// The dialect `model`'s upstream speaks (its error bodies too); `None` when it has no
    /// route.
    pub fn dialect(&self, model: &str) -> Option<Dialect> {
        let route = self.resolve(model).ok()?;
        Some(dialect_of(route.provider.kind()))
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

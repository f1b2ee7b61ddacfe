//! The in-process model client: one canonical request to whichever provider serves its model,
//! as a stream of canonical events, through the same pipeline as the gateway's translation
//! (`pipeline`). The agent uses this (through its `ModelClient` trait) with the same routing
//! as the gateway — aliases, `[routes]` with their fallbacks, task rules, key pools, sticky
//! conversations — and the same credentials. A failure is the pipeline's [`CallError`], which
//! classifies and words itself for the agent.

use std::time::Instant;

use corvid_wire::Dialect;
use corvid_wire::model::{ChatRequest, Part, Role};

use crate::error::CallError;
use crate::pipeline::ModelStream;
use crate::registry::{Registry, Route, dialect_of};
use crate::routing::{RequestShape, conversation_key};

/// A reply that started, from the target that served it.
pub struct RoutedReply {
    pub stream: ModelStream,
    /// The requests sent to get it: the provider's retries and the route's fallbacks.
    pub attempts: u32,
    /// The target (and key) that answered: a fallback's, when the first failed.
    pub route: Route,
}

impl Registry {
    /// Streams `request` to the provider serving `request.model`. Returns once the provider
    /// has answered with a success status; failures before that are classified
    /// (`class`, through the [`ProviderError`](crate::ProviderError) it carries) and worded
    /// ([`CallError::message`]).
    pub async fn stream(&self, request: ChatRequest) -> Result<ModelStream, CallError> {
        self.call(request).await.map(|reply| reply.stream)
    }

    /// Like [`Registry::stream`], with the requests sent to get the reply (its retries and
    /// the route's fallbacks), for the agent's ledger rows.
    ///
    /// Routed as the gateway routes: the plan for the model (a task rule may pick another
    /// target, a route name expands into its targets, each with its keys), then one attempt
    /// after another while a target fails before any output in a way the next could fix and
    /// the failover deadline has not passed.
    pub async fn call(&self, mut request: ChatRequest) -> Result<RoutedReply, CallError> {
        request.stream = true;
        let routing = self.routing();
        let shape = routing.rules.any().then(|| RequestShape::of(&request));
        let conversation = (self.has_choices() && routing.sticky)
            .then(|| conversation_key(None, &request.model, &first_user_text(&request)));
        let plan = self
            .plan(&request.model, shape.as_ref(), conversation)
            .map_err(CallError::route)?;
        let started = Instant::now();
        let mut sent = 0;
        let count = plan.attempts.len();
        for (index, route) in plan.attempts.iter().enumerate() {
            let last = index + 1 == count;
            let mut attempt = if last {
                std::mem::take(&mut request)
            } else {
                request.clone()
            };
            plan.settle_move(route, &mut attempt);
            match route.clone().prepare(attempt).send().await {
                Ok(reply) => {
                    if let Some(conversation) = conversation {
                        self.stick(conversation, route);
                    }
                    return Ok(RoutedReply {
                        attempts: sent + reply.attempts(),
                        stream: reply.into_stream(),
                        route: route.clone(),
                    });
                }
                Err(mut failed) => {
                    sent += failed.attempts;
                    if plan.fails_over_after(
                        index,
                        &failed.error,
                        started,
                        routing.failover_deadline,
                    ) {
                        continue;
                    }
                    failed.attempts = sent;
                    return Err(failed);
                }
            }
        }
        // A plan always holds an attempt, and the last one returns above.
        Err(CallError::route(crate::RouteError::UnknownModel {
            model: request.model,
            available: Vec::new(),
        }))
    }

    /// The dialect `model`'s upstream speaks (its error bodies too); `None` when it has no
    /// route.
    pub fn dialect(&self, model: &str) -> Option<Dialect> {
        let route = self.resolve(model).ok()?;
        Some(dialect_of(route.provider.kind()))
    }
}

/// The text of the conversation's first user message: with the model asked for, what keeps
/// one agent conversation's key the same on every turn.
fn first_user_text(request: &ChatRequest) -> Vec<u8> {
    request
        .messages
        .iter()
        .find(|message| message.role == Role::User)
        .map(|message| {
            message
                .parts
                .iter()
                .filter_map(|part| match part {
                    Part::Text { text } => Some(text.as_bytes()),
                    _ => None,
                })
                .flatten()
                .copied()
                .collect()
        })
        .unwrap_or_default()
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

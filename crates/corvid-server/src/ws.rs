//! `GET /api/agent/ws[?conversation=<id>]`: one tab. corvid-protocol frames over a WebSocket,
//! one JSON text message each.
//!
//! A tab shows one conversation and listens to the session holding it (`sessions.rs`): the
//! conversation named in the URL (a tab reconnecting keeps its own), else the project's current
//! one. It starts with that session's replay (`ready`, the conversation and its history, the
//! running turn), then live events.
//!
//! The page's conversation operations move the tab, not the session: `new_conversation` opens a
//! session on a new conversation, `switch_conversation` the session of the one asked for (joined
//! when another tab has it open), and the tab listens there from then on, starting with that
//! session's replay; the session it left is released (closed once nobody listens and no turn
//! runs). `delete_conversation` deletes through the service (a tab showing it gets a new
//! conversation) and is answered `{"type": "conversation_deleted", "id", "conversation_id"}`.
//! Every other operation goes to the tab's session.
//!
//! Server → page: first `{"type": "protocol", "version": N, "schema": "/api/agent/schema"}`,
//! then every engine `Event` (objects with `seq` and `msg`; they have no top-level `type`).
//! A frame the server cannot take, or an operation that cannot be carried out here (a switch to
//! an unknown conversation), is answered `{"type": "rejected", "id": …, "message": …}` and the
//! connection stays open: nothing sent before or after it is lost.
//!
//! Page → server: `Submission`s. `shutdown` is refused here: a session may be shared with other
//! tabs.

use std::time::{Duration, Instant};

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use corvid_agent::{AgentError, OpenConversation, Session, Subscription};
use corvid_gateway::ApiError;
use corvid_protocol::{Op, PROTOCOL_VERSION, Submission, schema_json};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::sessions::PageAgent;
use crate::{MAX_FRAME_BYTES, PageState};

/// A session that ended under a tab is reopened for it at most this often; past that the
/// socket closes (the page reconnects by itself).
const REOPEN_INTERVAL: Duration = Duration::from_secs(1);
/// How long a tab waits for a session it opened to say `ready` before it listens anyway.
const READY_WAIT: Duration = Duration::from_secs(30);

/// The socket's query: the conversation the tab shows.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TabQuery {
    conversation: Option<String>,
}

pub(crate) async fn upgrade(
    State(state): State<PageState>,
    query: Result<Query<TabQuery>, axum::extract::rejection::QueryRejection>,
    socket: WebSocketUpgrade,
) -> Response {
    let Query(query) = match query {
        Ok(query) => query,
        Err(rejection) => return ApiError::invalid_request(rejection.body_text()).into_response(),
    };
    // The socket's own cap is above ours, so an oversize message gets a `rejected` answer from
    // `parse` instead of a dropped connection.
    socket
        .max_message_size(2 * MAX_FRAME_BYTES)
        .max_frame_size(2 * MAX_FRAME_BYTES)
        .on_upgrade(move |socket| run(state, socket, query.conversation))
}

/// The protocol's JSON Schema: the contract the frames follow.
pub(crate) async fn schema() -> Response {
    (
        [(http::header::CONTENT_TYPE, "application/schema+json")],
        schema_json(),
    )
        .into_response()
}

/// The session a tab listens to, and its listener.
struct Tab {
    session: Session,
    events: Subscription,
}

impl Tab {
    /// Opens (or joins) the session of `which`; the listener starts with its whole replay.
    async fn open(agent: &PageAgent, which: OpenConversation) -> Result<Self, AgentError> {
        let session = agent.open(which).await?;
        let events = tokio::time::timeout(READY_WAIT, session.subscribe_ready())
            .await
            .unwrap_or_else(|_| session.subscribe());
        Ok(Self { session, events })
    }

    /// The tab's conversation, or a new one when it is gone (deleted).
    async fn reopen(agent: &PageAgent, conversation: String) -> Result<Self, AgentError> {
        match Self::open(agent, OpenConversation::Existing(conversation)).await {
            Err(AgentError::UnknownConversation { .. }) => {
                Self::open(agent, OpenConversation::New).await
            }
            other => other,
        }
    }

    /// Moves to `next`, releasing the session left (when it is another one).
    fn replace(&mut self, agent: &PageAgent, next: Tab) {
        let left = std::mem::replace(self, next);
        let Tab { session, events } = left;
        drop(events);
        if session.id() != self.session.id() {
            agent.release(session);
        }
    }
}

async fn run(state: PageState, mut socket: WebSocket, conversation: Option<String>) {
    let agent = state.0.agent.clone();
    let first = match conversation {
        Some(id) => Tab::reopen(&agent, id).await,
        None => Tab::open(&agent, OpenConversation::Current).await,
    };
    let mut tab = match first {
        Ok(tab) => tab,
        Err(error) => {
            let _ = send(
                &mut socket,
                &rejected(None, &format!("the agent cannot start: {error}")),
            )
            .await;
            return;
        }
    };
    let hello =
        json!({"type": "protocol", "version": PROTOCOL_VERSION, "schema": "/api/agent/schema"});
    if send(&mut socket, &hello).await.is_ok() {
        serve(&agent, &mut socket, &mut tab).await;
    }
    let Tab { session, events } = tab;
    drop(events);
    agent.release(session);
}

async fn serve(agent: &PageAgent, socket: &mut WebSocket, tab: &mut Tab) {
    let mut reopened: Option<Instant> = None;
    loop {
        tokio::select! {
            incoming = socket.recv() => {
                let reply = match incoming {
                    Some(Ok(Message::Text(text))) => match parse(text.as_str()) {
                        Ok(submission) => carry_out(agent, tab, submission).await,
                        Err(rejection) => Some(rejection),
                    },
                    Some(Ok(Message::Binary(_))) => Some(rejected(None, "binary frames are not part of the protocol: send JSON text")),
                    Some(Ok(Message::Close(_))) | None => return,
                    Some(Ok(_)) => None,
                    Some(Err(error)) => {
                        tracing::debug!(%error, "agent socket closed");
                        return;
                    }
                };
                if let Some(reply) = reply && send(socket, &reply).await.is_err() {
                    return;
                }
            }
            event = tab.events.recv() => {
                let Some(event) = event else {
                    // The session ended under the tab: its conversation was deleted (from this
                    // tab or another), or it was closed for idleness as this tab joined it.
                    if reopened.is_some_and(|at| at.elapsed() < REOPEN_INTERVAL) {
                        return;
                    }
                    reopened = Some(Instant::now());
                    match Tab::reopen(agent, tab.session.conversation_id()).await {
                        Ok(next) => tab.replace(agent, next),
                        Err(error) => {
                            tracing::debug!(%error, "cannot reopen a tab's session");
                            return;
                        }
                    }
                    continue;
                };
                let frame = serde_json::to_value(&event).unwrap_or(Value::Null);
                if send(socket, &frame).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// Carries out one submission: conversation moves here, everything else in the tab's session.
/// Returns the frame that answers it here, if any (the session's events answer the rest).
async fn carry_out(agent: &PageAgent, tab: &mut Tab, submission: Submission) -> Option<Value> {
    let id = submission.id.clone();
    let which = match submission.op {
        Op::NewConversation => OpenConversation::New,
        Op::SwitchConversation { conversation_id } => OpenConversation::Existing(conversation_id),
        Op::DeleteConversation { conversation_id } => {
            let deleted = agent
                .agents()
                .delete_conversation(agent.project(), &conversation_id)
                .await;
            return Some(match deleted {
                Ok(true) => {
                    json!({"type": "conversation_deleted", "id": id, "conversation_id": conversation_id})
                }
                Ok(false) => rejected(
                    Some(&id),
                    &format!("no conversation `{conversation_id}` in this project"),
                ),
                Err(error) => rejected(Some(&id), &error.to_string()),
            });
        }
        _ => {
            tab.session.submit_with_id(submission);
            return None;
        }
    };
    match Tab::open(agent, which).await {
        Ok(next) => {
            tab.replace(agent, next);
            None
        }
        Err(error) => Some(rejected(Some(&id), &error.to_string())),
    }
}

async fn send(socket: &mut WebSocket, frame: &Value) -> Result<(), axum::Error> {
    socket.send(Message::Text(frame.to_string().into())).await
}

fn rejected(id: Option<&str>, message: &str) -> Value {
    json!({"type": "rejected", "id": id, "message": message})
}

/// A text frame as a submission, or the rejection that explains why it is not one.
pub(crate) fn parse(text: &str) -> Result<Submission, Value> {
    if text.len() > MAX_FRAME_BYTES {
        return Err(rejected(
            None,
            &format!(
                "the frame is {} bytes; the most is {MAX_FRAME_BYTES}",
                text.len()
            ),
        ));
    }
    let value: Value = serde_json::from_str(text)
        .map_err(|error| rejected(None, &format!("not JSON: {error}")))?;
    let id = value.get("id").and_then(Value::as_str).map(str::to_owned);
    let submission: Submission = serde_json::from_value(value).map_err(|error| {
        rejected(
            id.as_deref(),
            &format!("not a submission of protocol version {PROTOCOL_VERSION}: {error}"),
        )
    })?;
    if submission.id.is_empty() {
        return Err(rejected(None, "a submission needs a non-empty id"));
    }
    if matches!(submission.op, Op::Shutdown) {
        return Err(rejected(
            Some(&submission.id),
            "shutdown is not available from the page: a session may be shared with other tabs; stop `corvid serve` instead",
        ));
    }
    Ok(submission)
}

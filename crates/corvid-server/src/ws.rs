//! `GET /api/agent/ws[?conversation=<id>]`: one tab. corvid-protocol frames over a WebSocket,
//! one JSON text message each.
//!
//! A tab shows one conversation and listens to the session holding it (a `corvid_agent::Link`):
//! the conversation named in the URL (a tab reconnecting keeps its own; a new one when it is
//! gone), else the project's current one. It starts with that session's replay (`ready`, the
//! conversation and its history, the running turn), then live events.
//!
//! Server → page: `ServerFrame`s only, each in the schema: first `protocol` (the version, where
//! the schema is served, and the command table with the project's skills), then `event`s, the
//! agent's `request`s (approvals) and `reply`s. Every submission and response is replied exactly
//! once; a frame the server cannot take (not JSON, too big, neither a submission nor a response,
//! `shutdown`) is replied an `invalid_request` error (with an empty id when it had none), and
//! the connection stays open.
//!
//! Page → server: `ClientFrame`s. A `response` answers a request of the tab's session (the
//! first answer from any face counts; a later one is replied "already answered"); a tab that
//! closes mid-approval leaves the request to the other faces, and the service closes a session
//! whose request nobody is left to answer. Of the `submission`s, `open_conversation`,
//! `rename_conversation` and
//! `delete_conversation` are carried to the session service by the link (the tab moves to the
//! conversation it opens; the session it left is closed by the service once idle); everything
//! else goes to the tab's session. `shutdown` is refused here: a session may be shared with
//! other tabs or faces.

use std::time::{Duration, Instant};

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use corvid_agent::{AgentError, Link, LinkFrames, OpenConversation};
use corvid_gateway::ApiError;
use corvid_protocol::{
    ClientFrame, ErrorNotification, Op, PROTOCOL_VERSION, ProtocolHello, Reply, ServerFrame,
    commands, schema_json,
};
use serde::Deserialize;
use serde_json::Value;

use crate::{MAX_FRAME_BYTES, PageState};

/// A session that ended under a tab is reopened for it at most this often; past that the
/// socket closes (the page reconnects by itself).
const REOPEN_INTERVAL: Duration = Duration::from_secs(1);

/// The socket's query: the conversation the tab shows.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TabQuery {
    conversation: Option<String>,
    /// The tab's name for its focus reports (see `crate::focus`).
    tab: Option<String>,
    /// Whether the user looks at the tab as it connects (`1`/`true`).
    focused: Option<String>,
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
        .on_upgrade(move |socket| run(state, socket, query))
}

/// The protocol's JSON Schema: the contract the frames follow.
pub(crate) async fn schema() -> Response {
    (
        [(http::header::CONTENT_TYPE, "application/schema+json")],
        schema_json(),
    )
        .into_response()
}

async fn run(state: PageState, mut socket: WebSocket, query: TabQuery) {
    let mut retired = state.retired();
    if *retired.borrow_and_update() {
        // Settings replaced while this socket was opening: the page comes back to the new app.
        close_for_new_settings(&mut socket).await;
        return;
    }
    let agent = state.0.agent.clone();
    // The tab's focus report counts while this socket is open.
    let _focus = query
        .tab
        .as_deref()
        .filter(|tab| crate::focus::valid_tab(tab))
        .map(|tab| {
            let focused = matches!(query.focused.as_deref(), Some("1" | "true"));
            state
                .0
                .tabs
                .attach(tab, focused, agent.agents().attention())
        });
    let conversation = query.conversation;
    let first = match conversation {
        Some(id) => match agent.link(OpenConversation::Existing(id)).await {
            // The tab's conversation is gone (deleted): it shows a new one.
            Err(AgentError::UnknownConversation { .. }) => agent.link(OpenConversation::New).await,
            other => other,
        },
        None => agent.link(OpenConversation::Current).await,
    };
    let (link, mut frames) = match first {
        Ok(opened) => opened,
        Err(error) => {
            let _ = send(
                &mut socket,
                &rejected(None, format!("the agent cannot start: {error}")),
            )
            .await;
            return;
        }
    };
    let hello = ServerFrame::Protocol(ProtocolHello {
        version: PROTOCOL_VERSION,
        schema: Some("/api/agent/schema".to_owned()),
        commands: commands::specs(&agent.commands()),
    });
    if send(&mut socket, &hello).await.is_ok() {
        serve(&link, &mut frames, &mut socket, &mut retired).await;
    }
}

/// Closes a tab's socket because the settings changed: 1012 ("service restart") tells the page
/// to reconnect, which it does to the app serving the new settings.
async fn close_for_new_settings(socket: &mut WebSocket) {
    let frame = axum::extract::ws::CloseFrame {
        code: 1012,
        reason: "settings changed".into(),
    };
    let _ = socket.send(Message::Close(Some(frame))).await;
}

async fn serve(
    link: &Link,
    frames: &mut LinkFrames,
    socket: &mut WebSocket,
    retired: &mut tokio::sync::watch::Receiver<bool>,
) {
    let mut reopened: Option<Instant> = None;
    loop {
        tokio::select! {
            biased;
            Ok(()) = retired.changed() => {
                if *retired.borrow_and_update() {
                    close_for_new_settings(socket).await;
                    return;
                }
            }
            incoming = socket.recv() => {
                let refusal = match incoming {
                    Some(Ok(Message::Text(text))) => match parse(text.as_str()) {
                        Ok(frame) => {
                            link.send(frame);
                            None
                        }
                        Err(rejection) => Some(*rejection),
                    },
                    Some(Ok(Message::Binary(_))) => Some(rejected(None, "binary frames are not part of the protocol: send JSON text".to_owned())),
                    Some(Ok(Message::Close(_))) | None => return,
                    Some(Ok(_)) => None,
                    Some(Err(error)) => {
                        tracing::debug!(%error, "agent socket closed");
                        return;
                    }
                };
                if let Some(refusal) = refusal && send(socket, &refusal).await.is_err() {
                    return;
                }
            }
            frame = frames.recv() => {
                let Some(frame) = frame else {
                    // The session ended under the tab: its conversation was deleted (from
                    // another face), or it was closed for idleness as this tab joined it.
                    if reopened.is_some_and(|at| at.elapsed() < REOPEN_INTERVAL) || *retired.borrow() {
                        return;
                    }
                    reopened = Some(Instant::now());
                    if let Err(error) = link.reopen().await {
                        tracing::debug!(%error, "cannot reopen a tab's session");
                        return;
                    }
                    continue;
                };
                if send(socket, &frame).await.is_err() {
                    return;
                }
            }
        }
    }
}

async fn send(socket: &mut WebSocket, frame: &ServerFrame) -> Result<(), axum::Error> {
    let text = serde_json::to_string(frame).unwrap_or_default();
    socket.send(Message::Text(text.into())).await
}

/// A refusal of a frame the server cannot take: a reply to its id (empty when it had none).
fn rejected(id: Option<&str>, message: String) -> ServerFrame {
    ServerFrame::Reply(Reply::error(
        id.unwrap_or_default(),
        ErrorNotification::invalid(message),
    ))
}

/// A text frame as a submission or a response, or the rejection that explains why it is
/// neither.
pub(crate) fn parse(text: &str) -> Result<ClientFrame, Box<ServerFrame>> {
    if text.len() > MAX_FRAME_BYTES {
        return Err(Box::new(rejected(
            None,
            format!(
                "the frame is {} bytes; the most is {MAX_FRAME_BYTES}",
                text.len()
            ),
        )));
    }
    let value: Value = serde_json::from_str(text)
        .map_err(|error| Box::new(rejected(None, format!("not JSON: {error}"))))?;
    let id = value.get("id").and_then(Value::as_str).map(str::to_owned);
    let frame: ClientFrame = serde_json::from_value(value).map_err(|error| {
        Box::new(rejected(
            id.as_deref(),
            format!("not a submission or response of protocol version {PROTOCOL_VERSION}: {error}"),
        ))
    })?;
    let (id, shutdown) = match &frame {
        ClientFrame::Submission(submission) => {
            (&submission.id, matches!(submission.op, Op::Shutdown))
        }
        ClientFrame::Response(response) => (&response.id, false),
    };
    if id.is_empty() {
        return Err(Box::new(rejected(
            None,
            "a submission or response needs a non-empty id".to_owned(),
        )));
    }
    if shutdown {
        return Err(Box::new(rejected(
            Some(id),
            "shutdown is not available from the page: a session may be shared with other tabs; stop `corvid serve` instead".to_owned(),
        )));
    }
    Ok(frame)
}

/// `GET /api/agent/commands`: every command as the page lists them now (the table, the
/// project's skills and custom commands, read again when their folders changed).
pub(crate) async fn command_list(State(state): State<PageState>) -> axum::Json<Value> {
    axum::Json(serde_json::json!({
        "commands": commands::specs(&state.0.agent.commands())
    }))
}

/// The body of `POST /api/agent/command`: a line the user typed.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CommandLine {
    line: String,
}

/// `POST /api/agent/command`: the operation a typed line means, by the protocol's one command
/// parser (the project's skills included): `{"op": {...}}`, `{"op": null}` for a plain message,
/// or a 400 saying what is wrong with the command.
pub(crate) async fn command(
    State(state): State<PageState>,
    body: Result<axum::Json<CommandLine>, axum::extract::rejection::JsonRejection>,
) -> Result<axum::Json<Value>, ApiError> {
    let axum::Json(CommandLine { line }) = body.map_err(crate::rest::json_error)?;
    let project = state.0.agent.commands();
    match commands::parse(&line, &project) {
        None => Ok(axum::Json(serde_json::json!({ "op": null }))),
        Some(Ok(op)) => Ok(axum::Json(serde_json::json!({ "op": op }))),
        Some(Err(error)) => Err(ApiError::invalid_request(format!(
            "{error} (/help lists the commands)"
        ))),
    }
}

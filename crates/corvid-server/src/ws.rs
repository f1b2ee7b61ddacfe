//! `GET /api/agent/ws`: corvid-protocol frames over a WebSocket, one JSON text message each.
//!
//! Server → page: first `{"type": "protocol", "version": N, "schema": "/api/agent/schema"}`,
//! then every engine `Event` (objects with `seq` and `msg`; they have no top-level `type`).
//! A frame the server cannot take is answered `{"type": "rejected", "id": …, "message": …}`
//! and the connection stays open: nothing sent before or after it is lost. A listener that
//! fell behind gets `{"type": "lagged", "missed": n}` and should re-fetch the conversation.
//!
//! Page → server: `Submission`s. `shutdown` is refused here: the engine is shared with every
//! other tab.

use axum::extract::State;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::response::{IntoResponse, Response};
use corvid_protocol::{Op, PROTOCOL_VERSION, Submission, schema_json};
use serde_json::{Value, json};

use crate::sessions::Received;
use crate::{MAX_FRAME_BYTES, PageState};

pub(crate) async fn upgrade(State(state): State<PageState>, socket: WebSocketUpgrade) -> Response {
    // The socket's own cap is above ours, so an oversize message gets a `rejected` answer from
    // `parse` instead of a dropped connection.
    socket
        .max_message_size(2 * MAX_FRAME_BYTES)
        .max_frame_size(2 * MAX_FRAME_BYTES)
        .on_upgrade(move |socket| run(state, socket))
}

/// The protocol's JSON Schema: the contract the frames follow.
pub(crate) async fn schema() -> Response {
    (
        [(http::header::CONTENT_TYPE, "application/schema+json")],
        schema_json(),
    )
        .into_response()
}

async fn run(state: PageState, mut socket: WebSocket) {
    let sessions = state.0.sessions.clone();
    // Subscribe before the first frame, so nothing the page asks for after it is missed.
    let mut events = sessions.subscribe();
    let hello =
        json!({"type": "protocol", "version": PROTOCOL_VERSION, "schema": "/api/agent/schema"});
    if send(&mut socket, &hello).await.is_err() {
        return;
    }
    loop {
        tokio::select! {
            incoming = socket.recv() => {
                let reply = match incoming {
                    Some(Ok(Message::Text(text))) => match parse(text.as_str()) {
                        Ok(submission) => {
                            sessions.submit(submission);
                            None
                        }
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
                if let Some(reply) = reply && send(&mut socket, &reply).await.is_err() {
                    return;
                }
            }
            event = events.recv() => {
                let frame = match event {
                    Received::Event(event) => serde_json::to_value(&event).unwrap_or(Value::Null),
                    Received::Lagged(missed) => json!({"type": "lagged", "missed": missed}),
                    Received::Closed => return,
                };
                if send(&mut socket, &frame).await.is_err() {
                    return;
                }
            }
        }
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
            "shutdown is not available from the page: the agent is shared; stop `corvid serve` instead",
        ));
    }
    Ok(submission)
}

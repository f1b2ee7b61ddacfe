//! The agent's requests to the faces, and what a face sends: a [`ServerRequest`] waits for one
//! [`Response`]; a face's transport carries [`ClientFrame`]s (submissions and responses).
//!
//! An approval is a request, not an event: the agent asks, lists the decisions it accepts, and
//! waits for the first `response` carrying the request's id, from whichever face gives it. The
//! others are replied an "already answered" error, and every listener hears the request end as
//! a `proposal_closed` event. A face that subscribes while a request waits finds it in its
//! replay; a request nobody answers is closed by the session service once no face listens (an
//! approval never waits forever for a face that went away).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::envelope::{Event, Submission};
use crate::event::ProposalNotification;
use crate::op::ApprovalDecision;

/// A request from the agent to the faces: `{"type": "request", "id", ..., "approval": {...}}`.
/// Answered by a [`Response`] carrying its `id`; the first answer counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServerRequest {
    /// The request's id, unique within the session; a `response` carries it. For an approval it
    /// is the proposal's id (`proposal_closed` names it when the request ends).
    pub id: String,
    /// The turn it belongs to: the `id` of the submission that started it, as its events carry.
    pub turn_id: String,
    /// Its place in the session's stream: numbered with the events (see `Event.seq`).
    pub seq: u64,
    /// Who asks: 0 = the main agent, 1 = a subagent it started, and so on (see `Event.depth`).
    pub depth: u32,
    /// For `depth` > 0: the `task` tool call that started the subagent asking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_call_id: Option<String>,
    /// True when the request is part of a replay: it was asked before this listener subscribed
    /// and still waits.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replay: bool,
    /// What is asked: a tool call waiting for the user's approval, with the decisions the face
    /// may give (`approval.decisions`).
    pub approval: ProposalNotification,
}

/// A face's answer to a [`ServerRequest`]: `{"type": "response", "id", "decision"}`. Replied
/// like a submission, under the request's id: `done` when it was taken, an `invalid_request`
/// error when the request no longer waits (answered first by another face, ended, or unknown).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Response {
    /// The `id` of the request answered.
    pub id: String,
    /// The user's decision: one of the request's `approval.decisions`.
    pub decision: ApprovalDecision,
}

impl Response {
    /// The answer `decision` to request `id`.
    pub fn new(id: impl Into<String>, decision: ApprovalDecision) -> Self {
        Self {
            id: id.into(),
            decision,
        }
    }
}

/// One frame from a face to the engine side: `{"type": "submission" | "response", ...}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ClientFrame {
    /// An operation, replied exactly once under its id.
    Submission(Submission),
    /// The answer to one of the agent's requests.
    Response(Response),
}

/// What a session sends each listener, in one order: progress (`event`) and the agent's
/// requests (`request`). A face's transport forwards them as [`ServerFrame`]s of the same shape.
///
/// [`ServerFrame`]: crate::ServerFrame
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
#[allow(clippy::large_enum_variant)]
pub enum SessionFrame {
    /// Progress.
    Event(Event),
    /// A request that waits for a face's answer.
    Request(ServerRequest),
}

impl SessionFrame {
    /// Its place in the session's stream.
    pub fn seq(&self) -> u64 {
        match self {
            Self::Event(event) => event.seq,
            Self::Request(request) => request.seq,
        }
    }

    /// Whether it repeats what happened before the listener subscribed.
    pub fn is_replay(&self) -> bool {
        match self {
            Self::Event(event) => event.replay,
            Self::Request(request) => request.replay,
        }
    }

    /// The event, when it is one.
    pub fn event(&self) -> Option<&Event> {
        match self {
            Self::Event(event) => Some(event),
            Self::Request(_) => None,
        }
    }

    /// The request, when it is one.
    pub fn request(&self) -> Option<&ServerRequest> {
        match self {
            Self::Event(_) => None,
            Self::Request(request) => Some(request),
        }
    }
}

//! The two frames on the wire: [`Submission`] in, [`Event`] out, and the protocol version.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::event::EventMsg;
use crate::op::Op;

/// The version of this protocol, exchanged by [`Op::Hello`] and
/// [`EventMsg::Ready`](crate::EventMsg::Ready).
///
/// It is bumped when a peer at the previous version could misread a frame: a field, type or
/// variant removed or renamed, a meaning changed, or a new operation or event kind added (unknown
/// `type` values are rejected, not skipped). Adding an optional field does not bump it, because
/// unknown fields are ignored.
pub const PROTOCOL_VERSION: u32 = 7;

/// Whether a peer speaking `version` can talk to this build: the versions must be equal.
///
/// The engine answers [`Op::Hello`] with its own version whatever the front end sent; each side
/// then checks the other's with this function. A front end that is not compatible should tell its
/// user which corvid versions to pair and stop; an engine may answer its further operations with
/// an [`ErrorClass::InvalidRequest`](crate::ErrorClass::InvalidRequest) error.
pub fn is_compatible(version: u32) -> bool {
    version == PROTOCOL_VERSION
}

/// One operation from a front end to the engine.
///
/// The engine answers with exactly one `Reply` carrying this submission's `id`; the `Event`s
/// it causes carry that `id` too.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Submission {
    /// Chosen by the front end, unique within the session (a counter or a UUID). Events caused by
    /// this operation carry it, so a front end can tell one turn's events from another's.
    pub id: String,
    /// What to do.
    pub op: Op,
}

impl Submission {
    /// A submission of `op` under `id`.
    pub fn new(id: impl Into<String>, op: Op) -> Self {
        Self { id: id.into(), op }
    }
}

/// One event from the engine to the front ends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Event {
    /// The `id` of the `Submission` this event belongs to (for a turn: the `send` or `init`
    /// that started it). Events the engine emits on its own, outside any operation (a warning at
    /// start-up), carry an empty string.
    pub id: String,
    /// Increases by one with every event the engine emits in a session, across submissions, so a
    /// front end can order events and notice a gap. Replayed events (`replay`) carry the seq of
    /// the event they repeat, or for a summary the seq of the last event it covers.
    pub seq: u64,
    /// Who emitted the event: 0 = the main agent, 1 = a subagent it started, 2 = a subagent of
    /// that subagent, and so on. Front ends indent by it.
    pub depth: u32,
    /// For `depth` > 0: the id of the `task` tool call, one level up, that started the subagent
    /// emitting this event, so the events of subagents running side by side can be told apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_call_id: Option<String>,
    /// When the event was emitted, in Unix seconds.
    pub at: i64,
    /// True when the event is part of a replay: a repeat or a summary of what happened before
    /// this listener subscribed (or before it fell behind and was resynchronised), not news.
    /// A replay's `seq`s never decrease, and live events continue strictly after them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replay: bool,
    /// What happened.
    pub msg: EventMsg,
}

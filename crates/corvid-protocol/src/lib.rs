//! corvid-protocol is the contract between corvid's agent engine and its front ends (the
//! terminal, `corvid exec --json`, the web page, and the Agent Client Protocol adapter).
//!
//! The engine and a front end exchange JSON objects:
//!
//! - [`Submission`] `{ "id", "op" }`, front end → engine: an [`Op`] such as `send` or `cancel`,
//!   under an id the front end picks.
//! - [`Reply`] `{ "id", "ok" }` or `{ "id", "error" }`, engine → the front end that submitted:
//!   exactly one per submission, saying what became of the operation.
//! - [`Event`] `{ "id", "seq", "depth", "at", "msg" }`, engine → every listener: progress, an
//!   [`EventMsg`] such as `text_delta`, `tool_call` or `turn_finished`, carrying the id of the
//!   submission it belongs to.
//! - [`ServerRequest`] `{ "id", "approval" }`, engine → every listener: the agent asks (a tool
//!   call waits for approval, with the decisions the face may give), answered by a [`Response`]
//!   `{ "id", "decision" }` from any face; the first answer counts, later ones are replied an
//!   error, and every listener hears `proposal_closed`. A listener that subscribes (or is
//!   resynchronised) while a request waits finds it in its replay.
//!
//! A transport that carries more than events (the page's WebSocket, ACP's adapter) sends
//! [`ServerFrame`]s: `protocol` first ([`ProtocolHello`]: the version and the command table),
//! then `event`s, `request`s and `reply`s; the face sends [`ClientFrame`]s (`submission`s and
//! `response`s). In process, a session's listener reads [`SessionFrame`]s (events and
//! requests). On a byte stream each frame is one line of JSON (JSON lines); on
//! a WebSocket each frame is one text message. A session starts with [`Op::Hello`], replied
//! `ready` with both sides' [`PROTOCOL_VERSION`].
//!
//! A session holds one conversation for its whole life. Opening another conversation (new or
//! stored), renaming and deleting are requests to the session service, not to a session
//! ([`Op::OpenConversation`] and friends, carried by a face's transport). The slash commands
//! are one table with one parser ([`commands`]).
//!
//! Conventions, the same in every type here:
//!
//! - Unions are internally tagged: `{"type": "snake_case_name", ...fields}`.
//! - Ids are strings; timestamps (`at`, `*_at`) are Unix seconds.
//! - Paths in events are relative to the project folder (`Ready.cwd`), with `/` separators.
//! - Unknown fields are ignored (a newer peer may add optional fields); unknown `type` values are
//!   rejected, which is why adding an operation or event kind bumps [`PROTOCOL_VERSION`].
//!
//! The crate also holds the approval policy and the pure gate decision ([`decision_for`]) so that
//! every front end and the engine agree on what runs without asking, and the JSON Schema of the
//! frames ([`schema_json`], checked in as `schema/protocol.schema.json`).
//!
//! The crate is pure: serde types and functions, no IO, no async runtime, no clock.

mod approval;
pub mod commands;
mod envelope;
mod event;
mod op;
mod permissions;
mod reply;
mod request;
mod sandbox;
mod schema;

pub use approval::{
    ActionKind, ApprovalPolicy, ApprovalRule, GateDecision, UnknownApprovalPolicy,
    command_has_control_operators, decision_for, decision_with_sandbox,
};
pub use envelope::{Event, PROTOCOL_VERSION, Submission, is_compatible};
pub use event::{
    AppliedChange, ChangeKind, ConversationSummary, DecisionKind, ErrorClass, ErrorNotification,
    EventMsg, FileChange, HistoryEntry, ProposalKind, ProposalNotification, ProposalOutcome,
    ReadyNotification, SubagentKind, TodoItem, TodoStatus, TokenUsage, ToolCallKind,
    ToolCallNotification, ToolResultNotification, ToolServer, ToolServerAudience, ToolServerState,
    Truncation, TurnChanges, TurnFinishedNotification, TurnOutcome, UsageNotification,
};
pub use op::{ApprovalDecision, ImageInput, Op, SendParams};
pub use permissions::{PermissionRule, RuleAction, RuleFile, describe_rules};
pub use reply::{ProtocolHello, Reply, ReplyOk, ReplyOutcome, ServerFrame, UserMessageEntry};
pub use request::{ClientFrame, Response, ServerRequest, SessionFrame};
pub use sandbox::{Confinement, SandboxMode, SandboxNotice, SandboxState};
pub use schema::schema_json;

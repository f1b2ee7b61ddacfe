//! Events: what the engine tells the front ends.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::approval::ApprovalPolicy;
use crate::sandbox::SandboxState;

mod error;
mod servers;
mod tools;
mod turns;
mod usage;

pub use error::*;
pub use servers::*;
pub use tools::*;
pub use turns::*;
pub use usage::*;

/// An event, the `msg` of an `Event`.
///
/// On the wire: `{"type": "<name>", ...fields}`. A turn is `turn_started`, then any number of
/// deltas, tool calls, tool results, approval requests (`request` frames), todos, subagent events, usage and completed
/// messages, then exactly one `turn_finished`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventMsg {
    /// The answer to `hello`: the engine's version and the session's state.
    Ready(ReadyNotification),
    /// The model or the approval policy changed (after `set_model` or `set_approval_policy`);
    /// carries both current values.
    SettingsChanged {
        /// The session's model now.
        model: String,
        /// The approval policy now.
        approval_policy: ApprovalPolicy,
    },
    /// The conversation this listener is shown, with its history: the second event of every
    /// replay (after `ready`). A session holds one conversation for its whole life, so live
    /// listeners never see it otherwise; a face that opens another conversation
    /// (`open_conversation`) listens to that conversation's session from then on, starting with
    /// its replay.
    ConversationOpened {
        /// The session's conversation.
        conversation: ConversationSummary,
        /// Its history, oldest first, for the front end to show.
        history: Vec<HistoryEntry>,
    },
    /// A turn began (after `send` or `init`).
    TurnStarted {
        /// The conversation the turn belongs to.
        conversation_id: String,
        /// The model answering this turn.
        model: String,
        /// The user's message that started the turn, so every listener of the session can show
        /// it (absent from engines before it was added).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prompt: Option<String>,
    },
    /// A piece of the assistant's visible answer, streamed.
    TextDelta {
        /// The text to append.
        delta: String,
    },
    /// A piece of the model's reasoning (when the provider shows it), streamed.
    ReasoningDelta {
        /// The text to append.
        delta: String,
    },
    /// The model is still writing a tool call (a whole file's content can take minutes on a
    /// local model): which tool, and how many bytes of its arguments have arrived. Throttled (a
    /// few a second); the `tool_call` that follows once the call is complete replaces it.
    ToolCallProgress {
        /// The call's id, when the provider has said it yet.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        call_id: Option<String>,
        /// The tool being called.
        tool: String,
        /// Bytes of its arguments so far.
        bytes: u64,
    },
    /// The model called a tool. Followed, possibly after a proposal, by its `tool_result`.
    ToolCall(ToolCallNotification),
    /// A piece of a running command's output (stdout and stderr interleaved as the command
    /// wrote them), sent while it runs so front ends can show progress. Batched (at most about
    /// ten a second) and capped per command; the `tool_result` that follows has the output the
    /// model receives.
    ToolOutputDelta {
        /// The `bash` tool call that is running.
        call_id: String,
        /// The text to append.
        text: String,
    },
    /// A tool finished (or was refused, rejected, interrupted or stopped).
    ToolResult(ToolResultNotification),
    /// An approval request (`ServerRequest`) is no longer waiting: a face answered it, a
    /// `send` interrupted it, a `cancel` stopped the turn, or the session closed.
    ProposalClosed {
        /// The proposal.
        proposal_id: String,
        /// How it was closed.
        outcome: ProposalOutcome,
    },
    /// The agent's task list, whole, after each change.
    Todos {
        /// The items, in the agent's order.
        todos: Vec<TodoItem>,
    },
    /// The `task` tool started a subagent; its own events follow at `depth` + 1 with
    /// `parent_call_id` = `call_id`.
    SubagentStarted {
        /// The `task` tool call that started it.
        call_id: String,
        /// Which kind of subagent.
        agent: SubagentKind,
        /// The short description of its task, as the model wrote it.
        description: String,
    },
    /// A subagent finished; its summary becomes the `task` tool's result.
    SubagentFinished {
        /// The `task` tool call that started it.
        call_id: String,
        /// Whether it finished its task (false: failed, cancelled or hit its step cap).
        ok: bool,
        /// Its final report.
        summary: String,
    },
    /// Token usage after one model step, with the turn's running total.
    Usage(UsageNotification),
    /// The assistant's full visible text for one step (the concatenated `text_delta`s), sent
    /// when the step's stream ended.
    MessageCompleted {
        /// The step, counted from 1 within the turn.
        step: u32,
        /// The full text.
        text: String,
    },
    /// A classified failure. The session survives it; during a turn, the turn then either goes
    /// on (a tool failure the model can handle) or finishes as `failed`.
    Error(ErrorNotification),
    /// The turn ended; always the turn's last event.
    TurnFinished(TurnFinishedNotification),
    /// The active conversation's history was emptied.
    ConversationCleared {
        /// The cleared conversation.
        conversation_id: String,
    },
    /// Something the user should know that does not stop anything (an invalid skill skipped, an
    /// `AGENTS.md` cut at the size cap).
    Warning {
        /// One or two sentences for the user.
        message: String,
    },
    /// Files of the conversation were put back as they were before `turn` (after `undo`, from
    /// whichever face sent it), so every listener can say so.
    Undone {
        /// The turn that was undone.
        turn: u32,
        /// The files put back, with what the turn had done to each.
        files: Vec<FileChange>,
    },
    /// Older turns of the conversation were replaced by a summary (after `compact`, or by
    /// itself near the model's context window); the recent turns stay as they were.
    Compacted {
        /// The estimated size of the model's context before, in tokens.
        tokens_before: u64,
        /// The estimated size after.
        tokens_after: u64,
        /// The model's context window the engine works with, in tokens.
        context_window: u64,
        /// How many messages the summary replaced.
        messages_summarized: u32,
    },
    /// The engine saved its state and sends nothing more (after `shutdown`, or when the
    /// service closed the idle session).
    ShutdownComplete,
}

/// The payload of `ready`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReadyNotification {
    /// The engine's protocol version.
    pub version: u32,
    /// The engine's name and version (`corvid 0.1.0`), for logs and bug reports.
    pub engine: String,
    /// The project folder, absolute; the paths in events are relative to it.
    pub cwd: String,
    /// The session's conversation (one for the session's whole life).
    pub conversation_id: String,
    /// The session's model.
    pub model: String,
    /// The session's approval policy.
    pub approval_policy: ApprovalPolicy,
    /// Present when this `ready` starts a resynchronisation: the listener fell this many events
    /// behind and they were dropped. The replay that follows rebuilds the session's state; clear
    /// the view and rebuild it from there, as after a reconnect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missed: Option<u64>,
    /// The kernel sandbox commands run in, so front ends can show its layers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxState>,
}

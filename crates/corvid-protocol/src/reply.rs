//! Replies and the engine-to-face frame: every submission gets exactly one [`Reply`], and a
//! face's transport carries [`ServerFrame`]s (the hello, events, the agent's requests, replies).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::approval::ApprovalPolicy;
use crate::commands::CommandSpec;
use crate::envelope::Event;
use crate::event::{
    ConversationSummary, ErrorNotification, FileChange, ReadyNotification, ToolServer, TurnChanges,
};
use crate::request::{ServerRequest, SessionFrame};

/// The one answer to a `Submission`, carrying its `id`: `{"id", "ok": {...}}` when it was
/// carried out, `{"id", "error": {...}}` when it was not. Progress (a turn's text, tools and
/// end) comes as events; the reply only says what became of the operation itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Reply {
    /// The `id` of the submission answered.
    pub id: String,
    /// What became of it.
    #[serde(flatten)]
    pub outcome: ReplyOutcome,
}

impl Reply {
    /// A successful reply to `id`.
    pub fn ok(id: impl Into<String>, ok: ReplyOk) -> Self {
        Self {
            id: id.into(),
            outcome: ReplyOutcome::Ok(ok),
        }
    }

    /// A failed reply to `id`.
    pub fn error(id: impl Into<String>, error: ErrorNotification) -> Self {
        Self {
            id: id.into(),
            outcome: ReplyOutcome::Error(error),
        }
    }

    /// The outcome as a `Result`.
    pub fn into_result(self) -> Result<ReplyOk, ErrorNotification> {
        match self.outcome {
            ReplyOutcome::Ok(ok) => Ok(ok),
            ReplyOutcome::Error(error) => Err(error),
        }
    }
}

/// Carried out (`ok`) or not (`error`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReplyOutcome {
    /// It was carried out; what it produced.
    Ok(ReplyOk),
    /// It was not; why, classified.
    Error(ErrorNotification),
}

/// What a carried-out operation produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ReplyOk {
    /// Done; nothing to report beyond the events it caused.
    Done,
    /// There was nothing to do (a `cancel` without a turn, a `compact` with nothing old enough).
    Nothing {
        /// Why, for people.
        message: String,
    },
    /// `hello`: the engine's version and the session's state.
    Ready(ReadyNotification),
    /// `send` or `init`: the turn started (or waits behind the one it interrupted); its
    /// progress comes as events carrying the submission's id.
    Accepted,
    /// `set_model`, `set_approval_policy`: the settings now.
    Settings {
        /// The session's model.
        model: String,
        /// The approval policy.
        approval_policy: ApprovalPolicy,
    },
    /// `open_conversation`: the face listens to this conversation's session from now on.
    Opened {
        /// The conversation shown now.
        conversation: ConversationSummary,
    },
    /// `list_conversations`.
    Conversations {
        /// The project's conversations, most recently updated first.
        conversations: Vec<ConversationSummary>,
        /// The conversation of the session that answered, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        current: Option<String>,
    },
    /// `user_messages`: the user's messages a `rewind` or `fork` may start from, oldest first.
    UserMessages {
        /// Each message, numbered from 0 as `rewind` and `fork` take it.
        messages: Vec<UserMessageEntry>,
    },
    /// `rewind`: the conversation now ends before the message.
    Rewound {
        /// What the message said, to edit and send again.
        text: String,
        /// How many user messages left the conversation (the one picked and those after it).
        removed: u32,
        /// The files put back (empty unless `restore_files` was asked and the turns changed
        /// files).
        files: Vec<FileChange>,
    },
    /// `fork`: a new conversation holds the copy.
    Forked {
        /// The new conversation, to open.
        conversation_id: String,
        /// The message the copy stops before (to edit and send there); absent when all of the
        /// conversation was copied.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
    },
    /// `undo`: these files are back as they were before `turn`.
    Undone {
        /// The turn undone.
        turn: u32,
        /// The files put back.
        files: Vec<FileChange>,
    },
    /// `diff`: what the agent changed, turn by turn, oldest first.
    Diff {
        /// One entry per turn that changed files and was not undone (empty: no changes).
        turns: Vec<TurnChanges>,
    },
    /// `compact`: the older turns were summarised.
    Compacted {
        /// The estimated size of the model's context before, in tokens.
        tokens_before: u64,
        /// The estimated size after.
        tokens_after: u64,
    },
    /// `list_tool_servers`, `trust_tool_server`: the servers behind the session's tools.
    ToolServers {
        /// The servers, in the order their tools take precedence.
        servers: Vec<ToolServer>,
    },
    /// `list_permissions`, `remove_permission`: the saved permission rules, numbered.
    Permissions {
        /// Every rule of every settings file, in reading order.
        rules: Vec<crate::permissions::PermissionRule>,
        /// What was done (`removed Bash(rm:*) from .corvid/settings.json`), when something was.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
}

/// The first frame a face's transport sends (the page's socket, a stream): what it speaks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProtocolHello {
    /// The engine's `PROTOCOL_VERSION`; the face reads it instead of hard-coding one.
    pub version: u32,
    /// Where the JSON Schema of the frames is served, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// The slash commands every face offers (`commands::COMMANDS`), so a face need not copy
    /// the table.
    pub commands: Vec<CommandSpec>,
}

/// One frame from the engine side to a face, on a transport that carries more than events:
/// `{"type": "protocol" | "event" | "request" | "reply", ...}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
#[allow(clippy::large_enum_variant)]
pub enum ServerFrame {
    /// The transport's first frame.
    Protocol(ProtocolHello),
    /// A session event (progress only).
    Event(Event),
    /// The agent asks the face (an approval); answered by a `response` carrying its id.
    Request(ServerRequest),
    /// The one answer to a submission.
    Reply(Reply),
}

impl From<SessionFrame> for ServerFrame {
    fn from(frame: SessionFrame) -> Self {
        match frame {
            SessionFrame::Event(event) => Self::Event(event),
            SessionFrame::Request(request) => Self::Request(request),
        }
    }
}

/// One user message a `rewind` or `fork` may start from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct UserMessageEntry {
    /// Its number, from 0, as `rewind` and `fork` take it.
    pub index: u32,
    /// What it said.
    pub text: String,
}

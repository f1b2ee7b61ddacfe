//! Operations: what a front end asks the engine to do.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::approval::{ApprovalPolicy, ApprovalRule};

/// An operation, the `op` of a `Submission`.
///
/// On the wire: `{"type": "<name>", ...fields}`. Unknown fields are ignored; an unknown `type` is
/// rejected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Op {
    /// The first operation of a session: the front end's protocol version. The engine answers
    /// `ready` with its own; the two must be equal.
    Hello {
        /// The protocol version the front end was built with.
        version: u32,
        /// The front end's name and version (`corvid-web 0.1.0`, `zed 0.210`), for logs.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        client: Option<String>,
    },
    /// A user message in the active conversation; starts a turn. A proposal still awaiting
    /// approval is closed as interrupted first.
    Send(SendParams),
    /// The user's answer to a `proposal` event.
    Approve(ApproveParams),
    /// Stop the running turn: the model stream and any running tool are stopped, and the turn
    /// finishes with outcome `cancelled`. Without a running turn it does nothing.
    Cancel,
    /// List the project's conversations; answered by `conversation_list`.
    ListConversations,
    /// Start a new, empty conversation and make it active; answered by `conversation_switched`
    /// with an empty history.
    NewConversation,
    /// Make another conversation active; answered by `conversation_switched` with its history.
    /// Switching to the active conversation replays its history, which is how a front end that
    /// just connected fetches it.
    SwitchConversation {
        /// The conversation to switch to.
        conversation_id: String,
    },
    /// Delete a conversation; answered by `conversation_deleted`. Deleting the active one also
    /// switches to another (or a new) conversation, announced by `conversation_switched`.
    DeleteConversation {
        /// The conversation to delete.
        conversation_id: String,
    },
    /// Empty the active conversation's history; answered by `conversation_cleared`.
    ClearConversation,
    /// Run a turn that writes the project's `AGENTS.md`, or improves the one that exists, from
    /// what the project contains (the `/init` command).
    Init,
    /// Use another model from now on (an alias or `provider/model`); answered by
    /// `settings_changed`.
    SetModel {
        /// The model name, as the gateway's routing accepts it.
        model: String,
    },
    /// Change the approval policy from now on; answered by `settings_changed`.
    SetApprovalPolicy {
        /// The new policy.
        policy: ApprovalPolicy,
    },
    /// Put back the files one turn of the active conversation changed, as they were before that
    /// turn (the `/undo` command); answered by `undone`, or by an `error` that names the files
    /// when the user changed one of them after the agent did (then nothing is restored). Only the
    /// files that turn changed are touched; the conversation's messages stay.
    Undo {
        /// The turn to undo, as numbered in `diff`'s answer; the latest turn not yet undone when
        /// absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        turn: Option<u32>,
    },
    /// Show what the agent changed in the active conversation, turn by turn (the `/diff`
    /// command); answered by `diff`.
    Diff {
        /// Only this turn; every turn that changed files (and was not undone) when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        turn: Option<u32>,
    },
    /// Summarise the older part of the active conversation now, as happens by itself near the
    /// model's context window (the `/compact` command); answered by `compacted`, or by a
    /// `warning` when there is nothing old enough to summarise.
    Compact,
    /// List the servers behind the session's tools (its MCP servers) with their state and
    /// tools (the `/mcp` command); answered by `tool_servers`. Allowed during a turn.
    ListToolServers,
    /// The user trusts a project's own tool server that is held as `untrusted` (the
    /// `/mcp trust NAME` command): corvid keeps that, as `corvid mcp trust` does, and starts it;
    /// its tools join from the next model step. Answered by `tool_servers`, or by an `error`
    /// when no such server waits for trust. Only a person's front end sends this, never the
    /// model. Allowed during a turn.
    TrustToolServer {
        /// The server's configured name.
        name: String,
    },
    /// Cancel any running turn, save, and end the session; answered by `shutdown_complete`.
    Shutdown,
}

/// The payload of `send`: one user message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SendParams {
    /// What the user typed.
    pub text: String,
    /// Images attached to the message, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<ImageInput>,
    /// A model for this turn only, instead of the session's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

impl SendParams {
    /// A text-only message with the session's model.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            images: Vec::new(),
            model: None,
        }
    }
}

/// An image attached to a user message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ImageInput {
    /// The image's bytes, base64-encoded (standard alphabet, padded).
    Base64 {
        /// The media type: `image/png`, `image/jpeg`, `image/webp`, `image/gif`.
        media_type: String,
        /// The base64 data, without a `data:` prefix.
        data: String,
    },
    /// An image the model's provider fetches itself (`https://…`).
    Url {
        /// The image's URL.
        url: String,
    },
}

/// The payload of `approve`: the answer to one proposal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ApproveParams {
    /// The `proposal_id` of the `proposal` event being answered.
    pub proposal_id: String,
    /// The user's decision.
    pub decision: ApprovalDecision,
}

/// The user's decision on a proposal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ApprovalDecision {
    /// Run it this once.
    Approve,
    /// Run it, and from now on run whatever `scope` allows without asking (the rule is kept for
    /// the project).
    ApproveAlways {
        /// The rule to keep: usually the proposal's `always_scope`, possibly edited by the user.
        scope: ApprovalRule,
    },
    /// Do not run it. The model is told, with the feedback when there is some, and the turn
    /// goes on.
    Reject {
        /// What the user wants instead; it reaches the model as the tool's result.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        feedback: Option<String>,
    },
}

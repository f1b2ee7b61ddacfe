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
    /// The first operation of a session: the front end's protocol version. Replied `ready`
    /// with the engine's own (the two must be equal), or an error when they differ.
    Hello {
        /// The protocol version the front end was built with.
        version: u32,
        /// The front end's name and version (`corvid-web 0.1.0`, `zed 0.210`), for logs.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        client: Option<String>,
    },
    /// A user message; starts a turn. A proposal still awaiting approval is closed as
    /// interrupted first. Replied `accepted` once the turn is started (or queued behind the
    /// interrupted one); the turn's progress comes as events.
    Send(SendParams),
    /// Stop the running turn: the model stream and any running tool are stopped, and the turn
    /// finishes with outcome `cancelled`. Replied `done`, or `nothing` without a running turn.
    Cancel,
    /// A service request: show another conversation of the project (`conversation_id`), or a
    /// new one (absent). A session holds one conversation for its whole life, so this is the
    /// only way to switch: the face's transport asks the session service for the session of
    /// that conversation (joined when another face has it open) and listens there from then
    /// on, starting with its replay; the session it left is closed once nobody listens and no
    /// turn runs. Replied `opened`. A session's engine refuses it.
    OpenConversation {
        /// The conversation to show; a new, empty one when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        conversation_id: Option<String>,
    },
    /// List the project's conversations; replied `conversations`.
    ListConversations,
    /// A service request: give a conversation another title. Replied `done`.
    RenameConversation {
        /// The conversation to rename; the one the face shows when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        conversation_id: Option<String>,
        /// Its new title (one line).
        title: String,
    },
    /// A service request: delete a conversation of the project (its session, if open, is
    /// closed first; the faces showing it open a new one). Replied `done`.
    DeleteConversation {
        /// The conversation to delete.
        conversation_id: String,
    },
    /// Empty the session's conversation history; replied `done`, and every listener hears
    /// `conversation_cleared`.
    ClearConversation,
    /// Run a turn that writes the project's `AGENTS.md`, or improves the one that exists, from
    /// what the project contains (the `/init` command). Replied like `send`.
    Init,
    /// Use another model from now on (an alias or `provider/model`); replied `settings`, and
    /// every listener hears `settings_changed`.
    SetModel {
        /// The model name, as the gateway's routing accepts it.
        model: String,
    },
    /// Change the approval policy from now on; replied `settings`, and every listener hears
    /// `settings_changed`.
    SetApprovalPolicy {
        /// The new policy.
        policy: ApprovalPolicy,
    },
    /// Put back the files one turn of the active conversation changed, as they were before that
    /// turn (the `/undo` command); replied `undone` (and every listener hears `undone`), or an
    /// error that names the files
    /// when the user changed one of them after the agent did (then nothing is restored). Only the
    /// files that turn changed are touched; the conversation's messages stay.
    Undo {
        /// The turn to undo, as numbered in `diff`'s answer; the latest turn not yet undone when
        /// absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        turn: Option<u32>,
    },
    /// Show what the agent changed in the active conversation, turn by turn (the `/diff`
    /// command); replied `diff`.
    Diff {
        /// Only this turn; every turn that changed files (and was not undone) when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        turn: Option<u32>,
    },
    /// Summarise the older part of the active conversation now, as happens by itself near the
    /// model's context window (the `/compact` command); replied `compacted` (every listener
    /// hears `compacted` too), or `nothing` when there is nothing old enough to summarise.
    Compact,
    /// List the servers behind the session's tools (its MCP servers) with their state and
    /// tools (the `/mcp` command); replied `tool_servers`. Allowed during a turn.
    ListToolServers,
    /// The user trusts a project's own tool server that is held as `untrusted` (the
    /// `/mcp trust NAME` command): corvid keeps that, as `corvid mcp trust` does, and starts it;
    /// its tools join from the next model step. Replied `tool_servers`, or an error
    /// when no such server waits for trust. Only a person's front end sends this, never the
    /// model. Allowed during a turn.
    TrustToolServer {
        /// The server's configured name.
        name: String,
    },
    /// List the saved permission rules of every settings file, numbered (the `/permissions`
    /// command); replied `permissions`. Allowed during a turn.
    ListPermissions,
    /// Remove one saved rule from its settings file (`/permissions remove N`, `N` as
    /// `permissions` numbered it); the session's rules are read again. Replied `permissions`
    /// with what is left, or an error when there is no such rule. Allowed during a turn.
    RemovePermission {
        /// The rule's number.
        number: u32,
    },
    /// Save a rule (Claude Code's syntax, as `/permissions` lists them) to the `allow`, `ask`
    /// or `deny` list of a settings file (`/permissions add [project|user] allow|ask|deny
    /// RULE`); the session's rules are read again. Replied `permissions`, or an error when the
    /// rule cannot be read or the file written. Allowed during a turn.
    AddPermission {
        /// The list it goes to.
        action: crate::permissions::RuleAction,
        /// The rule, e.g. `Bash(rm:*)`, `Edit(src/**)`, `mcp__github`.
        rule: String,
        /// The file it is saved in.
        file: crate::permissions::RuleFile,
    },
    /// Cancel any running turn, save, and end the session; replied `done`, after which
    /// listeners hear `shutdown_complete` and the end.
    Shutdown,
    /// List the user's messages of the active conversation that a `rewind` or `fork` may start
    /// from, oldest first (the `/rewind` and `/fork` commands without a number); replied
    /// `user_messages`.
    UserMessages,
    /// Go back to an earlier user message (the `/rewind N` command): that message and
    /// everything after it leave the conversation, and with `restore_files` the files the
    /// removed turns changed are put back as they were before them (through the checkpoints; all
    /// or nothing per turn, as `undo`). Replied `rewound` with the message's text, for the face
    /// to offer it for editing and sending again; every listener hears `conversation_opened`
    /// with the shortened history.
    Rewind {
        /// The message, as `user_messages` numbers it (from 0).
        message: u32,
        /// Whether the removed turns' file changes are undone too.
        #[serde(default)]
        restore_files: bool,
    },
    /// Copy the active conversation into a new one (the `/fork` command): everything before the
    /// given user message, or all of it when absent. The original is untouched. Replied
    /// `forked`; the face then opens the new conversation (`open_conversation`).
    Fork {
        /// The message the copy stops before, as `user_messages` numbers it (from 0).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<u32>,
    },
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
    /// A skill the user invoked for this message (`/<skill> text`): the engine tells the
    /// model to load and follow it. Refused when the project has no such skill.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skill: Option<String>,
    /// A custom command the user invoked (`/<name> arguments`, a markdown or TOML file in the
    /// project's or the user's commands folder): the engine expands the file with `text` as its
    /// arguments and sends the result. Refused when no such command exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
}

impl SendParams {
    /// A text-only message with the session's model.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            images: Vec::new(),
            model: None,
            skill: None,
            command: None,
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

/// The user's decision on an approval request (a `response`'s `decision`).
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
    /// Approve the user's own version of what was proposed: for a plan, `text` replaces it and
    /// is carried out. Only where the proposal's `decisions` list `approve_edited`.
    ApproveEdited {
        /// The edited text.
        text: String,
    },
    /// `approve_always`, and the rule is also saved as an `allow` rule in a settings file
    /// (Claude Code's syntax), so later sessions run it without asking too. Only where the
    /// proposal's `decisions` list `save_always_project` / `save_always_user`.
    SaveAlways {
        /// The rule to keep: the proposal's `always_scope`.
        scope: ApprovalRule,
        /// Where to save it.
        file: crate::permissions::RuleFile,
    },
    /// "Never": do not run it, and save `scope` as a `deny` rule in a settings file (Claude
    /// Code's syntax), so this session and later ones refuse such calls without asking; a deny
    /// wins over any allow. Only where the proposal's `decisions` list `save_never_project` /
    /// `save_never_user`.
    SaveNever {
        /// The rule to deny: the proposal's `always_scope`.
        scope: ApprovalRule,
        /// Where to save it.
        file: crate::permissions::RuleFile,
    },
}

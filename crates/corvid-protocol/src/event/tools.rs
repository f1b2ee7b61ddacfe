//! Tool calls, their results, proposals, todos and subagents, as events carry them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::approval::ApprovalRule;
use crate::sandbox::SandboxNotice;

/// The payload of `tool_call`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolCallNotification {
    /// The tool call's id (the model's), shared by its proposal and its result.
    pub call_id: String,
    /// The tool's name (`read`, `edit`, `bash`, an MCP tool's `mcp__<server>__<tool>`).
    pub tool: String,
    /// What the tool does, as its source offered it (never guessed from its name).
    pub kind: ToolCallKind,
    /// The arguments the model passed, as JSON.
    pub arguments: serde_json::Value,
    /// One line for people: `Read src/main.rs`, `Run cargo test -p corvid-protocol`.
    pub summary: String,
    /// The files the call touches, relative to the project folder, when the tool says (empty
    /// until the call is prepared, and for tools that touch no file).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub locations: Vec<String>,
}

/// What a tool does, as its source offered it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToolCallKind {
    /// Reads files without changing anything.
    Read,
    /// Searches the project (file names, contents) without changing anything.
    Search,
    /// Changes files in the project.
    Edit,
    /// Runs a shell command.
    Command,
    /// Sends a request off the machine (a web fetch or a web search).
    Fetch,
    /// A tool of an MCP server.
    Mcp {
        /// The server's configured name.
        server: String,
        /// The tool's own name on that server.
        tool: String,
    },
    /// Anything else (the task list, a subagent, a custom tool).
    Other,
}

/// The payload of `tool_result`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolResultNotification {
    /// The tool call this result answers.
    pub call_id: String,
    /// Whether the tool succeeded. A failed, refused, rejected or interrupted call is not ok.
    pub ok: bool,
    /// The output the model receives, possibly truncated (see `truncation`).
    pub output: String,
    /// Present when `output` is not the whole output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncation: Option<Truncation>,
    /// The change a file tool made, from the tool's own result (what actually landed), so a
    /// face can show the diff of an edit that ran without a proposal (under `auto-edit` or
    /// `full-auto`) without reading the disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<AppliedChange>,
}

/// A file change a tool made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AppliedChange {
    /// The file, relative to the project folder.
    pub path: String,
    /// A unified diff of the change.
    pub diff: String,
}

/// How a tool's output was cut.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Truncation {
    /// The size of the whole output, in bytes.
    pub total_bytes: u64,
    /// The number of lines of the whole output.
    pub total_lines: u64,
    /// Where the whole output was saved, relative to the project folder, when it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
}

/// What an approval request asks (`ServerRequest.approval`): a tool call awaiting approval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProposalNotification {
    /// The proposal's id: the id of the request that carries it (a `response` answers it).
    pub proposal_id: String,
    /// The tool call it would run.
    pub call_id: String,
    /// One line for people naming what would happen (`Edit src/main.rs`, `Run cargo test`,
    /// `Call github's create_issue`); every face shows it as it is.
    pub title: String,
    /// What it would do.
    pub kind: ProposalKind,
    /// The decisions the face may give: `approve` and `reject` always, `approve_always` when
    /// `always_scope` is present.
    pub decisions: Vec<DecisionKind>,
    /// The rule an "always" answer would keep, for front ends that offer "always" without
    /// letting the user edit the rule. Absent when "always" should not be offered (a command
    /// with shell control operators can never match a prefix rule).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub always_scope: Option<ApprovalRule>,
    /// `always_scope` in words (`ApprovalRule::describe`), shown beside the "always" choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub always_description: Option<String>,
    /// Present when the command would run with more than the sandbox allows, or without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxNotice>,
    /// `sandbox` in words (`SandboxNotice::describe`): a safety text every face shows with the
    /// proposal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

/// A decision a face may give to an approval request (see `ApprovalDecision`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DecisionKind {
    /// Run it this once.
    Approve,
    /// Run it and keep `always_scope`.
    ApproveAlways,
    /// Do not run it.
    Reject,
    /// Approve the user's edited text instead of the proposal's (a plan), sent as
    /// `approve_edited`.
    ApproveEdited,
    /// `approve_always`, saving the rule to the project's `.corvid/settings.json` (sent as
    /// `save_always` with `file: project`).
    SaveAlwaysProject,
    /// `approve_always`, saving the rule to the user's settings file (`save_always` with
    /// `file: user`).
    SaveAlwaysUser,
    /// "Never": do not run it, and save `always_scope` as a `deny` rule in the project's
    /// `.corvid/settings.json` (sent as `save_never` with `file: project`).
    SaveNeverProject,
    /// "Never", saving the `deny` rule to the user's settings file (`save_never` with
    /// `file: user`).
    SaveNeverUser,
}

/// What a proposal would do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ProposalKind {
    /// Change part of an existing file.
    Edit {
        /// The file.
        path: String,
        /// A unified diff of the change against the file's current text.
        diff: String,
    },
    /// Create a file or replace its whole content.
    Write {
        /// The file.
        path: String,
        /// A unified diff against the current text, or against an empty file when the file
        /// does not exist yet.
        diff: String,
    },
    /// Run a shell command.
    Command {
        /// The command line, as the shell will receive it.
        command: String,
        /// The folder it runs in (`.` is the project folder).
        cwd: String,
    },
    /// Any other tool that changes something (an MCP or custom tool).
    Other {
        /// The tool's name.
        tool: String,
        /// One line for people saying what it would do.
        summary: String,
    },
    /// The plan a session in plan mode presents: approved (`approve`), it is carried out in the
    /// same conversation under the policy the session had before plan mode; edited
    /// (`approve_edited`), the user's text is carried out instead; rejected, the session stays
    /// in plan mode and the model hears the feedback.
    Plan {
        /// The plan, in Markdown, as the model wrote it.
        plan: String,
    },
}

/// How a proposal stopped waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProposalOutcome {
    /// The user approved it (once or always); the tool runs.
    Approved,
    /// The user rejected it; the model is told.
    Rejected,
    /// A new message or a cancel arrived first; the tool call is closed as interrupted.
    Interrupted,
}

/// One item of the agent's task list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TodoItem {
    /// What to do, one line.
    pub content: String,
    /// How far it is.
    pub status: TodoStatus,
}

/// The state of a `TodoItem`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
}

/// The kind of a subagent started by the `task` tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SubagentKind {
    /// Read-only: reads and searches, never writes or runs commands.
    Explore,
    /// Every tool except `task` and `todowrite`.
    General,
}

//! Events: what the engine tells the front ends.

use std::ops::{Add, AddAssign};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::approval::{ApprovalPolicy, ApprovalRule};
use crate::sandbox::{SandboxNotice, SandboxState};

/// An event, the `msg` of an `Event`.
///
/// On the wire: `{"type": "<name>", ...fields}`. A turn is `turn_started`, then any number of
/// deltas, tool calls, tool results, proposals, todos, subagent events, usage and completed
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
    /// A tool call waits for the user's approval; the turn is suspended until an `approve`
    /// answers it, a `send` interrupts it, or a `cancel` stops the turn.
    Proposal(ProposalNotification),
    /// A proposal is no longer waiting.
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
    /// The answer to `list_conversations`.
    ConversationList {
        /// The project's conversations, most recently updated first.
        conversations: Vec<ConversationSummary>,
        /// The active conversation, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        current: Option<String>,
    },
    /// Another conversation is active (after `new_conversation`, `switch_conversation`, or
    /// deleting the active one).
    ConversationSwitched {
        /// The conversation that is now active.
        conversation: ConversationSummary,
        /// Its history, oldest first, for the front end to show.
        history: Vec<HistoryEntry>,
    },
    /// A conversation was deleted.
    ConversationDeleted {
        /// The deleted conversation.
        conversation_id: String,
    },
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
    /// The answer to `undo`: these files are back as they were before `turn`.
    Undone {
        /// The turn that was undone.
        turn: u32,
        /// The files put back, with what the turn had done to each.
        files: Vec<FileChange>,
    },
    /// The answer to `diff`: what the agent changed, turn by turn, oldest first.
    Diff {
        /// One entry per turn that changed files and was not undone (empty: no changes).
        turns: Vec<TurnChanges>,
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
    /// The answer to `list_tool_servers`: every server behind the session's tools, in the
    /// order their tools take precedence (empty: none is configured).
    ToolServers {
        /// The servers.
        servers: Vec<ToolServer>,
    },
    /// The answer to `shutdown`: the engine saved its state and sends nothing more.
    ShutdownComplete,
}

/// One server behind the session's tools (an MCP server), in `tool_servers`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ToolServer {
    /// Its configured name.
    pub name: String,
    /// Where it is configured, in words (`config.toml`, `.corvid/mcp.json`, `the editor`).
    pub configured_in: String,
    /// What starting it means, in words (``runs `npx server` ``, `connects to https://…`).
    pub transport: String,
    /// How it is doing.
    pub state: ToolServerState,
    /// Why it failed, when `state` is `failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The tools the model is offered from it, by the names the model sees.
    pub tools: Vec<String>,
    /// Tools it has that its configuration (`enabled_tools`, `disabled_tools`) keeps from the
    /// model.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub withheld: Vec<String>,
}

impl ToolServer {
    /// Its state in words, with what to do when it needs a sign-in (`corvid mcp login`; the
    /// session notices a new one by itself); the front end adds how trust is given there
    /// (`trust_tool_server`).
    pub fn state_words(&self) -> String {
        let name = &self.name;
        match self.state {
            ToolServerState::Ready => match self.tools.len() {
                1 => "ready, 1 tool".to_owned(),
                count => format!("ready, {count} tools"),
            },
            ToolServerState::Starting => "starting".to_owned(),
            ToolServerState::Idle => "not started yet".to_owned(),
            ToolServerState::Disabled => "disabled (enabled = false)".to_owned(),
            ToolServerState::Untrusted => "not trusted yet, not started".to_owned(),
            ToolServerState::NeedsSignIn => format!(
                "needs sign-in: `corvid mcp login {name}` in a terminal (in the project, for its own servers); it starts at your next message"
            ),
            ToolServerState::Failed => format!(
                "failed: {}",
                self.reason.as_deref().unwrap_or("no reason given")
            ),
        }
    }

    /// Its tools by their own names (the model's names without `mcp__<server>__`).
    pub fn short_tool_names(&self) -> Vec<&str> {
        let prefix = format!("mcp__{}__", self.name);
        self.tools
            .iter()
            .map(|tool| tool.strip_prefix(&prefix).unwrap_or(tool))
            .collect()
    }
}

/// How a tool server is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ToolServerState {
    /// Turned off in its configuration (`enabled = false`).
    Disabled,
    /// Not started yet.
    Idle,
    /// A project's own server the user has not trusted: not started until `trust_tool_server`
    /// (or `corvid mcp trust NAME`).
    Untrusted,
    /// Starting; its tools join when it is ready.
    Starting,
    /// Running; its tools are offered.
    Ready,
    /// It requires a sign-in corvid does not have (`corvid mcp login NAME`).
    NeedsSignIn,
    /// It failed to start or stopped for good; `reason` says why.
    Failed,
}

/// One file a turn changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FileChange {
    /// The file, relative to the project folder.
    pub path: String,
    /// What the turn did to it.
    pub change: ChangeKind,
}

/// What a turn did to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// The turn created it.
    Added,
    /// The turn changed its content or mode.
    Modified,
    /// The turn deleted it.
    Deleted,
}

/// What one turn changed, in `diff`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TurnChanges {
    /// The turn, counted from 1 within the conversation.
    pub turn: u32,
    /// The files it changed.
    pub files: Vec<FileChange>,
    /// A unified diff (`git diff` format, paths under `a/` and `b/`) from the project before the
    /// turn to the project after it.
    pub diff: String,
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
    /// The active conversation (send `switch_conversation` with it to receive its history).
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

/// The payload of `tool_call`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolCallNotification {
    /// The tool call's id (the model's), shared by its proposal and its result.
    pub call_id: String,
    /// The tool's name (`read`, `edit`, `bash`, an MCP tool's `<server>_<tool>`).
    pub tool: String,
    /// The arguments the model passed, as JSON.
    pub arguments: serde_json::Value,
    /// One line for people: `Read src/main.rs`, `Run cargo test -p corvid-protocol`.
    pub summary: String,
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

/// The payload of `proposal`: a tool call awaiting approval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProposalNotification {
    /// The id to answer with `approve`.
    pub proposal_id: String,
    /// The tool call it would run.
    pub call_id: String,
    /// What it would do.
    pub kind: ProposalKind,
    /// The rule an "always" answer would keep, for front ends that offer "always" without
    /// letting the user edit the rule. Absent when "always" should not be offered (a command
    /// with shell control operators can never match a prefix rule).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub always_scope: Option<ApprovalRule>,
    /// Present when the command would run with more than the sandbox allows, or without one;
    /// front ends show its `describe()` text with the proposal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxNotice>,
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

/// The payload of `usage`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct UsageNotification {
    /// The step, counted from 1 within the turn.
    pub step: u32,
    /// This step's tokens.
    pub usage: TokenUsage,
    /// The turn's tokens so far, this step included.
    pub turn: TokenUsage,
}

/// Token counts, split like `corvid-wire`'s `Usage` so every provider's totals can be rebuilt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct TokenUsage {
    /// Input tokens neither read from nor written to a cache.
    pub input: u64,
    /// Input tokens read from a cache.
    pub cache_read: u64,
    /// Input tokens written to a cache.
    pub cache_write: u64,
    /// All output tokens, reasoning included.
    pub output: u64,
    /// The reasoning share of `output`.
    pub reasoning: u64,
}

impl TokenUsage {
    /// Every input token: fresh, cache read and cache written.
    pub fn total_input(&self) -> u64 {
        self.input
            .saturating_add(self.cache_read)
            .saturating_add(self.cache_write)
    }

    /// Input plus output.
    pub fn total(&self) -> u64 {
        self.total_input().saturating_add(self.output)
    }
}

impl Add for TokenUsage {
    type Output = TokenUsage;

    fn add(mut self, other: TokenUsage) -> TokenUsage {
        self += other;
        self
    }
}

impl AddAssign for TokenUsage {
    fn add_assign(&mut self, other: TokenUsage) {
        self.input = self.input.saturating_add(other.input);
        self.cache_read = self.cache_read.saturating_add(other.cache_read);
        self.cache_write = self.cache_write.saturating_add(other.cache_write);
        self.output = self.output.saturating_add(other.output);
        self.reasoning = self.reasoning.saturating_add(other.reasoning);
    }
}

/// The payload of `error`: a classified failure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorNotification {
    /// What kind of failure.
    pub class: ErrorClass,
    /// What went wrong, for people; never contains a secret.
    pub message: String,
    /// One sentence saying what the user should do (`Run corvid login xai.`).
    pub next_action: String,
    /// Whether sending the same message again may succeed without the user changing anything.
    pub retryable: bool,
}

/// The class of a failure, so front ends can react without parsing messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    /// No provider, credential or model is configured for the request.
    NotConfigured,
    /// The provider refused the credential (401/403).
    AuthenticationRejected,
    /// The provider is rate limiting (429) or the quota is used up.
    RateLimited,
    /// The provider failed (5xx).
    ServerError,
    /// The provider could not be reached, or the connection broke or went silent.
    Network,
    /// The provider answered something corvid cannot read.
    UnexpectedResponse,
    /// A tool failed in a way the turn cannot go on from.
    Tool,
    /// The user cancelled.
    Cancelled,
    /// The turn reached its step cap.
    StepLimit,
    /// The operation cannot be carried out as sent: an incompatible protocol version, an unknown
    /// conversation or proposal id, a `send` while a turn is running.
    InvalidRequest,
    /// A failure inside corvid itself (the conversation store, a bug).
    Internal,
}

/// The payload of `turn_finished`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TurnFinishedNotification {
    /// How the turn ended.
    pub outcome: TurnOutcome,
    /// How many model steps it took.
    pub steps: u32,
    /// The turn's tokens, all steps together (subagents' included).
    pub usage: TokenUsage,
}

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TurnOutcome {
    /// The model answered without calling a tool.
    Completed,
    /// The user cancelled it.
    Cancelled,
    /// A failure ended it (an `error` event said which).
    Failed,
    /// It reached the step cap; the model was told and gave its last answer.
    StepLimit,
}

/// One conversation, as listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ConversationSummary {
    /// The conversation's id.
    pub id: String,
    /// Its title (empty until the first message gives it one).
    pub title: String,
    /// When it last changed, in Unix seconds.
    pub updated_at: i64,
    /// How many messages it holds.
    pub message_count: u64,
}

/// One item of a conversation's history, replayed by `conversation_switched`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum HistoryEntry {
    /// A user message.
    User {
        /// What the user wrote.
        text: String,
    },
    /// The assistant's visible text for one step.
    Assistant {
        /// The text.
        text: String,
    },
    /// A tool call, as it was announced.
    ToolCall(ToolCallNotification),
    /// A tool result, as it was announced.
    ToolResult(ToolResultNotification),
}

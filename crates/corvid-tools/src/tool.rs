//! The shapes every tool shares, whichever source offers it (the built-ins, custom tools, MCP
//! servers): its description for the model, the proposal shown to the user, the opaque plan,
//! the output, and the cancellation signal.

use std::any::Any;
use std::fmt;
use std::path::PathBuf;

use tokio::sync::watch;

use crate::sandbox::Confinement;
use crate::todo::Todo;
use crate::{edit, process, read, search, shell, write};

/// What a tool does, so the approval gate can decide without knowing tool names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolKind {
    /// Looks only, at one file: `read`. Runs without asking.
    Read,
    /// Looks only, across the project: `glob`, `grep`. Runs without asking.
    Search,
    /// Changes files: `write`, `edit`. Shows a diff.
    Edit,
    /// Runs a command: `bash`. Shows the command line.
    Command,
    /// Changes nothing outside this session: `process` (only touches processes this session
    /// started), `todowrite`. Runs without asking.
    Other,
    /// May change anything, in ways corvid cannot show beforehand: an MCP tool, a custom tool.
    /// Asks unless the policy is `full-auto` or the user kept an "always" rule for it.
    Mutating,
    /// Sends what the model wrote off the machine (a web fetch, a web search). Changes nothing
    /// in the project, but asks like a mutating tool.
    Fetch,
}

/// What an "always" answer to one of a tool's proposals keeps allowing. A command's rule is
/// always its command prefix; this chooses for the other kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum AlwaysAllow {
    /// Every call of this tool.
    #[default]
    Tool,
    /// Every call of every tool with the same [`ToolSpec::origin`] (one MCP server's tools).
    Origin,
}

/// A tool as the model sees it, and what the agent needs to know to offer and gate it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// The name the model calls (unique among the tools on offer).
    pub name: String,
    /// What it does and how to use it well.
    pub description: String,
    /// JSON Schema of the arguments (an `object` schema).
    pub parameters: serde_json::Value,
    /// For the approval gate. The kind offered is the kind the gate sees for every call.
    pub kind: ToolKind,
    /// Where the tool comes from when that matters to the user and the gate (`mcp:github`, or
    /// `custom` for a custom tool); `None` for the built-ins. Rules kept per origin use it.
    pub origin: Option<String>,
    /// What "always" keeps allowing for this tool's proposals.
    pub always_allow: AlwaysAllow,
    /// Whether subagents are offered it too (`todowrite` belongs to the main agent's list).
    pub subagents: bool,
}

impl ToolSpec {
    /// A tool offered to every agent, with no origin and "always" meaning this tool.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: serde_json::Value,
        kind: ToolKind,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            parameters,
            kind,
            origin: None,
            always_allow: AlwaysAllow::Tool,
            subagents: true,
        }
    }

    /// The same tool, from `origin`.
    pub fn with_origin(mut self, origin: impl Into<String>) -> Self {
        self.origin = Some(origin.into());
        self
    }
}

/// A built-in tool's description, written as constants in its module.
#[derive(Debug, Clone)]
pub(crate) struct BuiltinSpec {
    pub(crate) name: &'static str,
    pub(crate) description: &'static str,
    pub(crate) parameters: serde_json::Value,
    pub(crate) kind: ToolKind,
}

impl From<BuiltinSpec> for ToolSpec {
    fn from(spec: BuiltinSpec) -> Self {
        Self::new(spec.name, spec.description, spec.parameters, spec.kind)
    }
}

/// What a call would do, for the user to approve. Reads get a proposal too (a summary only), so
/// a front end can show one line per tool activity.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Proposal {
    /// One line: "Edit src/main.rs (1 replacement at line 12)", "Run `cargo test`".
    pub summary: String,
    /// A unified diff, for `write` and `edit`.
    pub diff: Option<String>,
    /// True when the diff replaces the file's whole text (`write`), not part of it (`edit`).
    pub whole_file: bool,
    /// The command line, for `bash`.
    pub command: Option<String>,
    /// The path the call touches, relative to the project folder.
    pub path: Option<PathBuf>,
}

/// A checked call: what it would do and how to do it.
#[derive(Debug)]
pub struct Prepared {
    /// The tool's name.
    pub tool: String,
    /// Its kind.
    pub kind: ToolKind,
    /// What to show the user.
    pub proposal: Proposal,
    /// What the source's `apply` carries out.
    pub plan: Plan,
}

impl Prepared {
    /// A call prepared by a source outside this crate.
    pub fn new(tool: impl Into<String>, kind: ToolKind, proposal: Proposal, plan: Plan) -> Self {
        Self {
            tool: tool.into(),
            kind,
            proposal,
            plan,
        }
    }
}

/// The opaque plan of a prepared call. For an edit it holds the exact text found at prepare time
/// and its replacement; `apply` locates that text again in the current file. A source outside
/// this crate carries its own plan ([`Plan::external`]).
#[derive(Debug)]
pub struct Plan {
    pub(crate) action: Action,
}

impl Plan {
    /// The plan of a source outside this crate: any value it wants back at `apply`.
    pub fn external<T: Any + Send>(plan: T) -> Self {
        Self {
            action: Action::External(External(Box::new(plan))),
        }
    }

    /// The value given to [`Plan::external`], when it is a `T`; `None` for a built-in's plan
    /// or another type (a plan given to the wrong source).
    pub fn into_external<T: Any>(self) -> Option<T> {
        match self.action {
            Action::External(External(plan)) => plan.downcast::<T>().ok().map(|plan| *plan),
            _ => None,
        }
    }

    /// For a command: how the sandbox will confine it, so the gate can ask when it runs with
    /// more than the sandbox allows (or without one). `None` for every other tool.
    pub fn confinement(&self) -> Option<&Confinement> {
        match &self.action {
            Action::Bash(plan) => Some(&plan.confinement),
            _ => None,
        }
    }

    /// For a command confined by the kernel sandbox with its usual limits: run it with nothing
    /// writable (the project and the temp folders read-only too, the network off), and say
    /// `true`. `false`, changing nothing, for a command widened or outside any sandbox, and for
    /// every other tool: the read-only policy refuses those.
    pub fn confine_read_only(&mut self) -> bool {
        match &mut self.action {
            Action::Bash(plan) => plan.confine_read_only(),
            _ => false,
        }
    }
}

#[derive(Debug)]
pub(crate) enum Action {
    Read(read::ReadPlan),
    Write(write::WritePlan),
    Edit(edit::EditPlan),
    Glob(search::GlobPlan),
    Grep(search::GrepPlan),
    Bash(shell::BashPlan),
    Process(process::ProcessPlan),
    Todo(Vec<Todo>),
    External(External),
}

/// A plan made outside this crate.
pub(crate) struct External(Box<dyn Any + Send>);

impl fmt::Debug for External {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("External(..)")
    }
}

/// The result of a call, as the model will see it (`text`) plus structured detail for front
/// ends.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// The text returned to the model.
    pub text: String,
    /// True when the call ran but failed (a non-zero exit, a timeout).
    pub is_error: bool,
    /// Structured detail for front ends and the agent.
    pub detail: Option<ToolDetail>,
}

impl ToolOutput {
    /// A result that worked: `text` for the model.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            is_error: false,
            detail: None,
        }
    }

    /// A call that ran and failed: `text` tells the model why.
    pub fn failure(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            is_error: true,
            detail: None,
        }
    }
}

/// Structured detail of a [`ToolOutput`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ToolDetail {
    /// A file changed (`write`, `edit`); the diff is of what actually landed.
    Diff {
        /// Relative to the project folder.
        path: PathBuf,
        /// Unified diff.
        diff: String,
    },
    /// A foreground command finished.
    Command {
        /// The exit code; `None` when killed by a signal or the timeout.
        exit_code: Option<i32>,
        /// True when the timeout stopped it.
        timed_out: bool,
        /// The full output, when it did not fit in the result.
        log_path: Option<PathBuf>,
    },
    /// A background command started.
    Background {
        /// The handle for the `process` tool.
        id: String,
        /// The process (group) id.
        pid: u32,
        /// Where its output goes.
        log_path: PathBuf,
    },
    /// The todo list, validated (`todowrite`); the agent stores it.
    Todos(Vec<Todo>),
    /// Images the model should see with the text (an MCP tool's image content); the agent puts
    /// them in the tool result after the text.
    Images(Vec<ToolImage>),
}

/// An image in a tool's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolImage {
    /// Its media type (`image/png`).
    pub media_type: String,
    /// Its bytes, base64-encoded.
    pub data: String,
}

/// The user's cancel signal. A running command is killed (with its whole process group) when the
/// watched value becomes `true`; searches stop early.
#[derive(Debug, Clone)]
pub struct Cancellation {
    receiver: Option<watch::Receiver<bool>>,
}

impl Cancellation {
    /// A signal that never fires.
    pub fn never() -> Self {
        Self { receiver: None }
    }

    /// Fires when `receiver` sees `true`. A dropped sender means "never".
    pub fn new(receiver: watch::Receiver<bool>) -> Self {
        Self {
            receiver: Some(receiver),
        }
    }

    /// Whether the signal has fired.
    pub fn is_cancelled(&self) -> bool {
        self.receiver
            .as_ref()
            .is_some_and(|receiver| *receiver.borrow())
    }

    /// Resolves when the signal fires; never resolves otherwise.
    pub async fn cancelled(&mut self) {
        if let Some(receiver) = self.receiver.as_mut()
            && receiver.wait_for(|cancelled| *cancelled).await.is_ok()
        {
            return;
        }
        std::future::pending::<()>().await;
    }
}

impl From<watch::Receiver<bool>> for Cancellation {
    fn from(receiver: watch::Receiver<bool>) -> Self {
        Self::new(receiver)
    }
}

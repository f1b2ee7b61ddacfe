//! The shapes every tool shares: its description for the model, the proposal shown to the user,
//! the opaque plan, the output, and the cancellation signal.

use std::path::PathBuf;

use tokio::sync::watch;

use crate::sandbox::Confinement;
use crate::todo::Todo;
use crate::{edit, process, read, search, shell, write};

/// What a tool does, so the approval gate can decide without knowing tool names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolKind {
    /// Looks only: `read`, `glob`, `grep`. Runs without asking.
    Read,
    /// Changes files: `write`, `edit`. Shows a diff.
    Edit,
    /// Runs a command: `bash`. Shows the command line.
    Command,
    /// Anything else: `process` (only touches processes this session started), `todowrite`.
    Other,
}

/// A tool as the model sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// The name the model calls.
    pub name: &'static str,
    /// What it does and how to use it well.
    pub description: &'static str,
    /// JSON Schema of the arguments (an `object` schema).
    pub parameters: serde_json::Value,
    /// For the approval gate.
    pub kind: ToolKind,
}

/// What a call would do, for the user to approve. Reads get a proposal too (a summary only), so
/// a front end can show one line per tool activity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proposal {
    /// One line: "Edit src/main.rs (1 replacement at line 12)", "Run `cargo test`".
    pub summary: String,
    /// A unified diff, for `write` and `edit`.
    pub diff: Option<String>,
    /// The command line, for `bash`.
    pub command: Option<String>,
    /// The path the call touches, relative to the project folder.
    pub path: Option<PathBuf>,
}

/// A checked call: what it would do and how to do it.
#[derive(Debug)]
pub struct Prepared {
    /// The tool's name.
    pub tool: &'static str,
    /// Its kind.
    pub kind: ToolKind,
    /// What to show the user.
    pub proposal: Proposal,
    /// What [`crate::ToolRegistry::apply`] carries out.
    pub plan: Plan,
}

/// The opaque plan of a prepared call. For an edit it holds the exact text found at prepare time
/// and its replacement; `apply` locates that text again in the current file.
#[derive(Debug)]
pub struct Plan {
    pub(crate) action: Action,
}

impl Plan {
    /// For a command: how the sandbox will confine it, so the gate can ask when it runs with
    /// more than the sandbox allows (or without one). `None` for every other tool.
    pub fn confinement(&self) -> Option<&Confinement> {
        match &self.action {
            Action::Bash(plan) => Some(&plan.confinement),
            _ => None,
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
    pub(crate) fn text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            is_error: false,
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

//! corvid's built-in agent tools: `read`, `write`, `edit`, `glob`, `grep`, `bash`, `process` and
//! `todowrite`, confined to one project folder.
//!
//! Every call goes through two phases so an approval gate can sit between them:
//!
//! 1. [`ToolRegistry::prepare`] checks the arguments, resolves paths inside the [`Workspace`]
//!    and, for mutating tools, computes what would change: a [`Proposal`] (a unified diff for
//!    `write`/`edit`, the command line for `bash`) plus an opaque [`Plan`].
//! 2. [`ToolRegistry::apply`] carries the plan out. An edit is located again in the file's
//!    *current* text, so typing during review cannot misplace it; a target that vanished or
//!    became ambiguous is refused.
//!
//! Reads run the same way; the gate simply does not ask (see [`ToolKind`]).
//! `task` and `skill` are not here: they belong to the agent.

mod args;
mod edit;
mod error;
mod matcher;
mod process;
mod read;
mod registry;
pub mod sandbox;
mod search;
mod shell;
mod stream;
mod text;
mod todo;
mod tool;
mod workspace;
mod write;

pub use args::parse_call_arguments;
pub use error::ToolError;
pub use process::ProcessTable;
pub use registry::{ToolContext, ToolLimits, ToolRegistry, builtin_tools};
pub use sandbox::{Confinement, Sandbox, SandboxProbe, Widening};
pub use stream::OutputSink;
pub use todo::{Todo, TodoStatus};
pub use tool::{
    Cancellation, Plan, Prepared, Proposal, ToolDetail, ToolKind, ToolOutput, ToolSpec,
};
pub use workspace::{PathError, Workspace};

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
//!
//! The built-ins are one [`ToolSource`] among others: custom tools ([`CustomTools`],
//! `.corvid/tools/<name>/tool.json`), MCP servers and whatever
//! the binary plugs in ([`ToolPlugin`]) implement the same trait, and a [`ToolBox`] makes each
//! turn's [`Offer`] from all of them, routing every call to the source that offered its name.

mod args;
mod context;
mod custom;
mod edit;
mod error;
mod files;
mod matcher;
mod process;
mod read;
mod registry;
mod runner;
pub mod sandbox;
mod search;
mod shell;
mod source;
mod stream;
mod summary;
mod text;
mod todo;
mod tool;
mod toolbox;
mod workspace;
mod write;

pub use args::{NotJson, parse_call_arguments};
pub use context::{ToolContext, ToolLimits};
pub use custom::{CustomTools, MANIFEST as CUSTOM_MANIFEST, TOOLS_DIR as CUSTOM_TOOLS_DIR};
pub use error::ToolError;
pub use files::{Disk, Files};
pub use process::ProcessTable;
pub use registry::{ToolRegistry, builtin_tools};
pub use sandbox::{Confinement, Sandbox, SandboxProbe, Widening};
pub use source::{
    Listing, Run, ServerHealth, ServerReport, ToolFuture, ToolPlugin, ToolSource, TrustServerError,
};
pub use stream::OutputSink;
pub use summary::builtin_summary;
pub use todo::{Todo, TodoStatus};
pub use tool::{
    AlwaysAllow, Cancellation, Plan, Prepared, Proposal, ToolDetail, ToolImage, ToolKind,
    ToolOutput, ToolSpec,
};
pub use toolbox::{MAX_TOOL_NAME, Offer, Offered, ToolBox};
pub use workspace::{PathError, Workspace};

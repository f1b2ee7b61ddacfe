//! The one seam every source of tools plugs into: the built-ins, custom tools, MCP servers and
//! whatever the binary adds. A [`ToolSource`] lists its tools (the list may change between
//! turns), prepares a call (checks the arguments, builds the proposal the approval gate shows)
//! and applies a prepared call. The agent gates every call the same way whichever source made
//! it; it decides from the [`ToolKind`](crate::ToolKind) the tool was offered with, the
//! proposal and the tool's name and origin, never from which source it is.
//!
//! Sources are made per session by [`ToolPlugin`]s, which the composition root hands the agent
//! (as it hands it the model client), so the agent never needs to know MCP or custom tools.

use std::fmt::Debug;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;

use crate::context::ToolContext;
use crate::error::ToolError;
use crate::stream::OutputSink;
use crate::tool::{Cancellation, Plan, Prepared, ToolOutput, ToolSpec};

/// The future a [`ToolSource`] method returns (boxed, so the trait stays object-safe).
pub type ToolFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a source offers right now.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Listing {
    /// The tools on offer; their names must be unique within the source.
    pub tools: Vec<ToolSpec>,
    /// What the user should hear about the source's tools while this is so: a manifest that
    /// was skipped, a server that failed to start. The agent shows each notice once, when it
    /// first appears in a listing (again if it disappears and comes back).
    pub notices: Vec<String>,
}

/// How a prepared call runs: the user's cancel signal, and where a running tool may stream its
/// output while it works (the agent turns it into `tool_output_delta` events).
#[derive(Debug, Clone)]
pub struct Run {
    /// Fires when the user cancels: stop, and return what there is.
    pub cancel: Cancellation,
    /// Where to stream output; `None` when nobody shows progress.
    pub sink: Option<OutputSink>,
}

impl Run {
    /// A run nobody cancels or watches (tests, calls the gate lets through in one go).
    pub fn unattended() -> Self {
        Self {
            cancel: Cancellation::never(),
            sink: None,
        }
    }
}

/// How a server behind a source is doing (an MCP server), for `/mcp`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerHealth {
    /// Turned off in its configuration.
    Disabled,
    /// Not started yet.
    Idle,
    /// A project's own server the user has not trusted: never started.
    Untrusted,
    Starting,
    Ready,
    /// The server requires a sign-in corvid does not have (or no longer has).
    NeedsSignIn,
    /// It failed, and why.
    Failed(String),
}

/// One server behind a source, as a person sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerReport {
    /// The configured name.
    pub name: String,
    /// Where it is configured, in words (`config.toml`, `.corvid/mcp.json`, `the editor`).
    pub configured_in: String,
    /// What starting it means (`runs `npx server``, `connects to https://…`).
    pub transport: String,
    pub health: ServerHealth,
    /// The names the model is offered, as of the last listing.
    pub tools: Vec<String>,
    /// Tools the server has that its configuration keeps from the model.
    pub withheld: Vec<String>,
}

/// A source of tools. Every method may be called from any task, concurrently.
pub trait ToolSource: Send + Sync {
    /// A few words naming the source for people ("built-in", "custom tools", "MCP").
    fn name(&self) -> &str;

    /// The tools on offer now, asked once per turn. Must not wait long (a slow server's tools
    /// are left out, with a notice, rather than holding the turn up).
    fn list(&self) -> ToolFuture<'_, Listing>;

    /// Checks a call of `tool` (one of the listed names) and says what it would do. Nothing may
    /// change yet: the user may still refuse.
    fn prepare<'a>(
        &'a self,
        tool: &'a str,
        arguments: Value,
    ) -> ToolFuture<'a, Result<Prepared, ToolError>>;

    /// Carries out a plan this source prepared for `tool`, after the gate let it through.
    fn apply<'a>(
        &'a self,
        tool: &'a str,
        plan: Plan,
        run: Run,
    ) -> ToolFuture<'a, Result<ToolOutput, ToolError>>;

    /// One line for front ends describing a call (`$ cargo test`, `read src/main.rs`); `None`
    /// shows the tool's name.
    fn summary(&self, tool: &str, arguments: &Value) -> Option<String> {
        let _ = (tool, arguments);
        None
    }

    /// The servers behind the source and their state (MCP servers); none for most sources.
    fn servers(&self) -> Vec<ServerReport> {
        Vec::new()
    }

    /// The user trusts the server `name`, held as [`ServerHealth::Untrusted`]: keep that and
    /// start it. `None` when the source has no server of that name.
    fn trust_server(&self, name: &str) -> Option<Result<(), TrustServerError>> {
        let _ = name;
        None
    }
}

/// Why the user's trust in a held server was not kept (`/mcp trust NAME`).
#[derive(Debug, thiserror::Error)]
pub enum TrustServerError {
    /// No source of the session has a server of that name.
    #[error("there is no MCP server `{name}` in this session")]
    NoServer { name: String },
    /// The server runs already, or never needed trust.
    #[error(
        "the MCP server `{name}` is not waiting for trust (only a project's own servers do, until trusted)"
    )]
    NotWaiting { name: String },
    /// The session was opened without a place to keep trust (an editor's servers).
    #[error("this session keeps no trust in a project's servers")]
    NoTrustStore,
    /// Keeping the trust failed (the trust file could not be written).
    #[error(transparent)]
    Keep(Box<dyn std::error::Error + Send + Sync>),
}

/// Opens one session's [`ToolSource`]: registered by the composition root, opened once per
/// session with that session's tool context (its project folder, sandbox, limits and output
/// folder), so a source can run commands through the same runner and sandbox as `bash`.
/// The source lives as long as the session (an MCP server started for it stops with it).
pub trait ToolPlugin: Send + Sync + Debug {
    /// The session's source.
    fn open(&self, context: &Arc<ToolContext>) -> Arc<dyn ToolSource>;
}

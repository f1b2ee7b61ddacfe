//! corvid's MCP client, on the official `rmcp` SDK: the servers a session is configured with
//! (`.corvid/mcp.json`, `[mcp_servers.*]` in `config.toml`; see `corvid_config::McpServer`),
//! started once per session and reused across turns, their tools offered to the model as
//! `mcp__<server>__<tool>`, and their results turned into what the model reads.
//!
//! - [`McpManager`] owns the servers of one session (start, restart, `tools/list_changed`,
//!   startup and tool timeouts, notices).
//! - [`names`] makes tool names every provider accepts, and maps them back.
//! - [`content`] maps text, image, resource and error results.
//! - [`trust`] keeps which of a project's own servers the user trusts (only those start).
//! - [`oauth`] signs in to HTTP servers that ask for it (`corvid mcp login`) and connects
//!   with the stored tokens.
//!
//! Stdio servers start through `corvid_tools::Sandbox::command`, the spawn point `bash` uses.

mod connection;
pub mod content;
mod error;
mod handler;
mod launch;
mod manager;
pub mod names;
pub mod oauth;
mod source;
pub mod trust;

pub use content::{McpImage, McpOutput};
pub use error::{SignInReadError, StartError};
pub use launch::{Lookup, McpEnvironment};
pub use manager::{MAX_RESTARTS, McpManager, McpTool, ServerState, ServerStatus, sign_in_hint};
pub use oauth::OAuthStore;
pub use source::{McpPlugin, McpSource};
pub use trust::{TrustStore, TrustStoreError};

//! corvid's agent over the Agent Client Protocol (Zed's agent panel and any ACP client), on
//! stdin/stdout. A transport and nothing more: it maps ACP methods onto corvid's operations and
//! corvid's events onto ACP updates; the agent itself is behind the [`Sessions`] seam.
//!
//! stdout carries only protocol frames; the binary sends its logs to stderr.

mod client_mcp;
mod files;
mod options;
mod server;
mod sessions;
mod updates;

pub use client_mcp::ClientMcp;
pub use server::serve;
pub use sessions::{
    BoxFuture, Listed, OpenRequest, Opened, ServiceSessions, SessionLink, Sessions, SessionsError,
};

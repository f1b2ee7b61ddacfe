//! corvid's side of an MCP session: how it introduces itself, what it answers the server, and
//! what it does with the server's notifications.
//!
//! - `notifications/tools/list_changed` only raises a flag; the manager lists the tools again
//!   before the next model step, so a turn never waits on a server.
//! - `roots/list` is answered with the project folder, the one folder the agent works in
//!   (server-filesystem, for one, then limits itself to it).

// Roots are deprecated by the 2026-07-28 protocol (SEP-2577), but servers speaking the earlier
// versions rmcp negotiates down to (server-filesystem, server-everything) still ask for them.
#![allow(deprecated)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::model::{
    ClientCapabilities, ClientConfig, ErrorData, Implementation, ListRootsResult, Root,
    RootsCapabilities,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ClientHandler, RoleClient};

/// The client half of one connection.
#[derive(Debug, Clone)]
pub(crate) struct Handler {
    /// Set when the server says its tool list changed; cleared by whoever lists again.
    pub(crate) tools_changed: Arc<AtomicBool>,
    /// The project folder as a `file://` URI.
    root: String,
}

impl Handler {
    pub(crate) fn new(project: &std::path::Path) -> Self {
        Self {
            tools_changed: Arc::new(AtomicBool::new(false)),
            root: format!("file://{}", project.display()),
        }
    }
}

impl ClientHandler for Handler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.store(true, Ordering::SeqCst);
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let mut root = Root::new(self.root.clone());
        root.name = Some("project".to_owned());
        Ok(ListRootsResult::new(vec![root]))
    }

    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.roots = Some(RootsCapabilities::default());
        ClientConfig::new(
            capabilities,
            Implementation::new("corvid", env!("CARGO_PKG_VERSION")),
        )
    }
}

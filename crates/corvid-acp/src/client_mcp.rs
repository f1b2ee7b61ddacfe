//! The MCP servers an editor passes in `session/new`, `session/load` and `session/resume`
//! (stdio `{name, command, args, env}` and HTTP `{name, url, headers}`), read into corvid's own
//! server definitions so they join that session's tools like the configured ones. The MCP client
//! itself is injected by the binary ([`ClientMcp`]); this crate only translates.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use agent_client_protocol::v1::schema::McpServer;
use corvid_config::{
    DEFAULT_STARTUP_TIMEOUT, DEFAULT_TOOL_TIMEOUT, McpOrigin, McpSandbox, McpScope,
    McpServer as Server, McpTransport,
};

/// Makes the tool source of one session's editor-given MCP servers.
pub type ClientMcp = Arc<dyn Fn(Vec<Server>) -> Arc<dyn corvid_tools::ToolPlugin> + Send + Sync>;

/// The servers corvid can reach; SSE servers (not advertised in `initialize`) are skipped.
pub(crate) fn servers(given: &[McpServer]) -> Vec<Server> {
    given
        .iter()
        .filter_map(|server| {
            let (name, transport) = match server {
                McpServer::Stdio(stdio) => (
                    stdio.name.clone(),
                    McpTransport::Stdio {
                        command: stdio.command.display().to_string(),
                        args: stdio.args.clone(),
                        env: stdio
                            .env
                            .iter()
                            .map(|variable| (variable.name.clone(), variable.value.clone()))
                            .collect(),
                        env_vars: Vec::new(),
                        cwd: None,
                    },
                ),
                McpServer::Http(http) => (
                    http.name.clone(),
                    McpTransport::Http {
                        url: http.url.clone(),
                        headers: http
                            .headers
                            .iter()
                            .map(|header| (header.name.clone(), header.value.clone()))
                            .collect(),
                        env_headers: BTreeMap::new(),
                        bearer_token_env_var: None,
                    },
                ),
                other => {
                    tracing::warn!(?other, "an MCP server over SSE from the editor is skipped");
                    return None;
                }
            };
            Some(Server {
                name,
                transport,
                enabled: true,
                startup_timeout: DEFAULT_STARTUP_TIMEOUT,
                tool_timeout: DEFAULT_TOOL_TIMEOUT,
                enabled_tools: None,
                disabled_tools: Vec::new(),
                sandbox: McpSandbox::default_for(McpScope::Editor),
                always_allow_server: false,
                oauth: corvid_config::McpOAuth::default(),
                origin: McpOrigin {
                    scope: McpScope::Editor,
                    file: PathBuf::from("(the editor's session/new)"),
                },
            })
        })
        .collect()
}

//! Finding the test servers, and a manager over them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use corvid_config::{McpScope, McpServer, parse_mcp_json};
use corvid_mcp::{McpEnvironment, McpManager, McpTool};
use corvid_tools::Sandbox;

/// The `node_modules` folder holding the npm MCP servers.
pub(super) fn node_modules() -> Option<PathBuf> {
    corvid_test_support::installed::mcp_servers()
}

/// A Python with the `mcp` SDK.
pub(super) fn python() -> Option<PathBuf> {
    corvid_test_support::installed::mcp_python()
}

/// The misbehaving fixture server.
pub(super) fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp/fixture_server.py")
}

/// The entry script of an npm server package.
pub(super) fn npm_server(node_modules: &Path, package: &str) -> PathBuf {
    node_modules
        .join("@modelcontextprotocol")
        .join(package)
        .join("dist/index.js")
}

/// Servers from a `.corvid/mcp.json` text, read by corvid's own parser.
pub(super) fn servers(json: &serde_json::Value) -> Vec<McpServer> {
    let file = parse_mcp_json(
        &json.to_string(),
        Path::new("/test/.corvid/mcp.json"),
        McpScope::Project,
    )
    .unwrap();
    assert!(file.warnings.is_empty(), "{:?}", file.warnings);
    file.servers
}

/// A manager for `servers` in `project`, commands unconfined (the sandbox has its own tests),
/// variables from `variables` only.
pub(super) fn manager(
    servers: Vec<McpServer>,
    project: &Path,
    variables: &[(&str, &str)],
) -> McpManager {
    manager_with(servers, project, variables, 100)
}

pub(super) fn manager_with(
    servers: Vec<McpServer>,
    project: &Path,
    variables: &[(&str, &str)],
    max_tools: usize,
) -> McpManager {
    let variables: HashMap<String, String> = variables
        .iter()
        .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
        .collect();
    let environment = McpEnvironment {
        project: project.to_path_buf(),
        sandbox: Sandbox::off(),
        lookup: Arc::new(move |name| variables.get(name).cloned()),
        protected: Arc::new(vec!["PROVIDER_KEY".to_owned()]),
        oauth: None,
    };
    McpManager::new(servers, max_tools, environment)
}

/// The tools offered, no built-ins taken.
pub(super) async fn tools(manager: &McpManager) -> Vec<McpTool> {
    tokio::time::timeout(Duration::from_secs(60), manager.tools(&|_| false))
        .await
        .expect("listing tools took over a minute")
}

pub(super) fn names(tools: &[McpTool]) -> Vec<String> {
    tools.iter().map(|tool| tool.name.clone()).collect()
}

/// A free loopback port.
pub(super) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

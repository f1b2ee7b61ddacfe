//! MCP server definitions, read the way the tools people already use write them, so a server
//! configured for Claude Code, Cursor or Codex works in corvid unchanged:
//!
//! - per project, `.corvid/mcp.json` with the `mcpServers` key (Claude Code's `.mcp.json`,
//!   Cursor's `.cursor/mcp.json`; VS Code's `servers` key too);
//! - globally, `[mcp_servers.<name>]` tables in `config.toml`, with Codex's keys.
//!
//! Values are kept as written: `${VAR}` references are expanded when a server starts (see
//! [`expand`]), against the process environment and the env file, so a key never sits in the
//! resolved configuration. A project server overrides a global one of the same name.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value as Json;

use crate::ConfigError;

mod entry;
mod expand;
mod oauth;
mod project_file;

use entry::read_servers;
pub use expand::{ExpandError, expand};
pub use oauth::McpOAuth;
pub(crate) use project_file::check_server_name;
pub use project_file::{McpEntry, ProjectFile};

/// Where a project's MCP servers are defined, relative to its root.
pub const PROJECT_MCP_FILE: &str = ".corvid/mcp.json";
/// How long a server may take to start and list its tools (Codex's default).
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one tool call may take (Codex's default).
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(300);
/// How many MCP tools are offered to the model at most, over all servers.
pub const DEFAULT_MAX_TOOLS: usize = 100;

/// Every MCP setting: the servers, the cap on their tools, the sign-in callback port.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct McpSettings {
    /// The servers of `config.toml`, in file order.
    pub servers: Vec<McpServer>,
    /// `mcp_max_tools`: the most MCP tools offered to the model; `None` means the default.
    pub max_tools: Option<usize>,
    /// `mcp_oauth_callback_port` (Codex's key; `CORVID_MCP_OAUTH_CALLBACK_PORT`): the port on
    /// 127.0.0.1 that `corvid mcp login` listens on for the browser's return, for servers that
    /// name none of their own (`oauth.callback_port`); `None` means any free port.
    pub oauth_callback_port: Option<u16>,
}

impl McpSettings {
    /// The cap on MCP tools offered to the model.
    pub fn max_tools(&self) -> usize {
        self.max_tools.unwrap_or(DEFAULT_MAX_TOOLS)
    }
}

/// One configured MCP server.
#[derive(Debug, Clone, PartialEq)]
pub struct McpServer {
    /// The name under which its tools appear (`mcp__<name>__<tool>`).
    pub name: String,
    /// How to reach it.
    pub transport: McpTransport,
    /// `enabled` (Codex; default true) or `disabled` (Cline, opencode).
    pub enabled: bool,
    /// `startup_timeout_sec` / `startup_timeout_ms`.
    pub startup_timeout: Duration,
    /// `tool_timeout_sec`.
    pub tool_timeout: Duration,
    /// `enabled_tools`: only these are offered, when given.
    pub enabled_tools: Option<Vec<String>>,
    /// `disabled_tools`: never offered.
    pub disabled_tools: Vec<String>,
    /// How a stdio server's process is confined (corvid's own key, `sandbox`).
    pub sandbox: McpSandbox,
    /// What "always" allows for this server's tools (corvid's own key, `always_allow`:
    /// `"tool"`, the default, or `"server"`).
    pub always_allow_server: bool,
    /// How `corvid mcp login` signs in to an HTTP server that asks for it (`oauth`, `scopes`).
    pub oauth: McpOAuth,
    /// Which file defined it.
    pub origin: McpOrigin,
}

impl McpServer {
    /// Whether the tool called `tool` (the server's own name for it) is offered.
    pub fn offers(&self, tool: &str) -> bool {
        self.enabled_tools
            .as_ref()
            .is_none_or(|allowed| allowed.iter().any(|name| name == tool))
            && !self.disabled_tools.iter().any(|name| name == tool)
    }
}

/// How to reach a server.
#[derive(Debug, Clone, PartialEq)]
pub enum McpTransport {
    /// A child process speaking MCP on its stdin and stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        /// Variables set for it (values may hold `${VAR}` references).
        env: BTreeMap<String, String>,
        /// Codex's `env_vars`: variables passed through from corvid's environment by name.
        env_vars: Vec<String>,
        /// The folder it starts in; the project folder when not given.
        cwd: Option<PathBuf>,
    },
    /// Streamable HTTP.
    Http {
        url: String,
        /// Headers sent with every request (values may hold `${VAR}` references).
        headers: BTreeMap<String, String>,
        /// Codex's `env_http_headers`: header name → the variable holding its value.
        env_headers: BTreeMap<String, String>,
        /// Codex's `bearer_token_env_var`: the variable holding a bearer token.
        bearer_token_env_var: Option<String>,
    },
}

/// How far a stdio server's process may reach beyond the sandbox of `bash`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct McpSandbox {
    /// May use the network (most servers wrap an online API).
    pub network: bool,
    /// May write outside the project and temp folders (package caches such as `~/.npm`).
    pub write_outside: bool,
}

impl McpSandbox {
    /// The default for a server of `scope`: the user's own configuration (and the editor's)
    /// may write anywhere (`npx` fills `~/.npm`); a project's file, which may come with a
    /// cloned repository, may write only inside the project and the temp folders. All may use
    /// the network.
    pub fn default_for(scope: McpScope) -> Self {
        Self {
            network: true,
            write_outside: scope != McpScope::Project,
        }
    }
}

/// Which configuration a server came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpOrigin {
    pub scope: McpScope,
    pub file: PathBuf,
}

/// Global (`config.toml`), per project (`.corvid/mcp.json`), or given by the editor for one
/// session (ACP's `session/new`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpScope {
    Global,
    Project,
    Editor,
}

/// What a project's MCP file held: its servers and what was ignored in it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct McpFile {
    pub servers: Vec<McpServer>,
    pub warnings: Vec<String>,
}

/// Reads `[mcp_servers.<name>]` from `config.toml` (`servers` is the `mcp_servers` item),
/// `mcp_max_tools` and `mcp_oauth_callback_port` (each as its text and where it came from:
/// `config.toml` or `CORVID_MCP_*`). Unknown keys inside a server become warnings.
pub(crate) fn read_global(
    servers: Option<&toml::Value>,
    max_tools: Option<(String, String)>,
    callback_port: Option<(String, String)>,
    file: &Path,
    warnings: &mut Vec<String>,
) -> Result<McpSettings, ConfigError> {
    let source = file.display().to_string();
    let mut settings = McpSettings::default();
    if let Some((value, source_name)) = max_tools {
        let count = value
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|count| (1..=1000).contains(count));
        settings.max_tools = Some(count.ok_or_else(|| ConfigError::Invalid {
            key: "mcp_max_tools".to_owned(),
            source_name,
            message: format!("expected a whole number from 1 to 1000, got {value:?}"),
        })?);
    }
    if let Some((value, source_name)) = callback_port {
        let port = value.trim().parse::<u16>().ok().filter(|port| *port > 0);
        settings.oauth_callback_port = Some(port.ok_or_else(|| ConfigError::Invalid {
            key: "mcp_oauth_callback_port".to_owned(),
            source_name,
            message: format!("expected a port from 1 to 65535, got {value:?}"),
        })?);
    }
    let Some(servers) = servers else {
        return Ok(settings);
    };
    // Through JSON, so both files share one reader; TOML datetimes become strings.
    let json = serde_json::to_value(servers).map_err(|err| ConfigError::Invalid {
        key: "mcp_servers".to_owned(),
        source_name: source.clone(),
        message: err.to_string(),
    })?;
    let origin = McpOrigin {
        scope: McpScope::Global,
        file: file.to_path_buf(),
    };
    settings.servers = read_servers(&json, "mcp_servers", &origin, warnings)?;
    Ok(settings)
}

/// Reads a project's `.corvid/mcp.json` under `project`; a missing file means no servers.
pub fn read_project_mcp(project: &Path) -> Result<McpFile, ConfigError> {
    let file = project.join(PROJECT_MCP_FILE);
    let text = match std::fs::read_to_string(&file) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(McpFile::default()),
        Err(err) => return Err(ConfigError::io("cannot read", &file, err)),
    };
    parse_mcp_json(&text, &file, McpScope::Project)
}

/// Reads the text of an `mcp.json` file (`file` names it in errors): `{"mcpServers": {...}}`
/// as Claude Code and Cursor write it, or `{"servers": {...}}` as VS Code does.
pub fn parse_mcp_json(text: &str, file: &Path, scope: McpScope) -> Result<McpFile, ConfigError> {
    let json: Json = serde_json::from_str(text).map_err(|err| ConfigError::Toml {
        path: file.to_path_buf(),
        message: format!("not valid JSON: {err}"),
    })?;
    let source = file.display().to_string();
    let Some(top) = json.as_object() else {
        return Err(ConfigError::Invalid {
            key: "mcpServers".to_owned(),
            source_name: source,
            message: "expected an object like {\"mcpServers\": {\"name\": {\"command\": …}}}"
                .to_owned(),
        });
    };
    let mut warnings = Vec::new();
    let (key, servers) = match (top.get("mcpServers"), top.get("servers")) {
        (Some(servers), _) => ("mcpServers", servers),
        (None, Some(servers)) => ("servers", servers),
        (None, None) => {
            warnings.push(format!("{source} has no `mcpServers` key: no servers read"));
            return Ok(McpFile {
                servers: Vec::new(),
                warnings,
            });
        }
    };
    let origin = McpOrigin {
        scope,
        file: file.to_path_buf(),
    };
    let servers = read_servers(servers, key, &origin, &mut warnings)?;
    Ok(McpFile { servers, warnings })
}

/// The servers of both scopes: the project's replace global ones of the same name.
pub fn merge_servers(global: &[McpServer], project: &[McpServer]) -> Vec<McpServer> {
    let mut merged: Vec<McpServer> = global
        .iter()
        .filter(|server| !project.iter().any(|own| own.name == server.name))
        .cloned()
        .collect();
    merged.extend(project.iter().cloned());
    merged
}

#[cfg(test)]
mod tests;

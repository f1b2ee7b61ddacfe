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

mod expand;
mod oauth;
mod project_file;

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

/// Keys a server entry may have that corvid reads.
const SHARED_KEYS: &[&str] = &[
    "type",
    "transport",
    "enabled",
    "disabled",
    "startup_timeout_sec",
    "startup_timeout_ms",
    "tool_timeout_sec",
    "enabled_tools",
    "disabled_tools",
    "sandbox",
    "always_allow",
];
const STDIO_KEYS: &[&str] = &["command", "args", "env", "env_vars", "cwd"];
const HTTP_KEYS: &[&str] = &[
    "url",
    "headers",
    "http_headers",
    "env_http_headers",
    "bearer_token_env_var",
    "oauth",
    "scopes",
];

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

fn read_servers(
    value: &Json,
    key: &str,
    origin: &McpOrigin,
    warnings: &mut Vec<String>,
) -> Result<Vec<McpServer>, ConfigError> {
    let source = origin.file.display().to_string();
    let table = value.as_object().ok_or_else(|| ConfigError::Invalid {
        key: key.to_owned(),
        source_name: source.clone(),
        message: "expected a table of servers by name".to_owned(),
    })?;
    table
        .iter()
        .map(|(name, entry)| {
            let reader = Entry {
                key: format!("{key}.{name}"),
                source: source.clone(),
            };
            reader.server(name, entry, origin, warnings)
        })
        .collect()
}

/// One server entry being read; `key` is its full name for errors (`mcp_servers.docs`).
struct Entry {
    key: String,
    source: String,
}

impl Entry {
    fn invalid(&self, field: &str, message: impl Into<String>) -> ConfigError {
        let key = if field.is_empty() {
            self.key.clone()
        } else {
            format!("{}.{field}", self.key)
        };
        ConfigError::Invalid {
            key,
            source_name: self.source.clone(),
            message: message.into(),
        }
    }

    fn server(
        &self,
        name: &str,
        entry: &Json,
        origin: &McpOrigin,
        warnings: &mut Vec<String>,
    ) -> Result<McpServer, ConfigError> {
        if name.trim().is_empty() {
            return Err(self.invalid("", "a server needs a non-empty name"));
        }
        let fields = entry
            .as_object()
            .ok_or_else(|| self.invalid("", "expected a table with `command` or `url`"))?;
        for field in fields.keys() {
            let known = [SHARED_KEYS, STDIO_KEYS, HTTP_KEYS]
                .iter()
                .any(|keys| keys.contains(&field.as_str()));
            if !known {
                warnings.push(format!(
                    "unknown key `{}.{field}` in {} (ignored)",
                    self.key, self.source
                ));
            }
        }
        let kind = match fields.get("type").or_else(|| fields.get("transport")) {
            None => None,
            Some(kind) => Some(
                kind.as_str()
                    .ok_or_else(|| self.invalid("type", "expected a string"))?
                    .to_ascii_lowercase(),
            ),
        };
        let has = |keys: &'static [&'static str]| {
            keys.iter().find(|key| fields.contains_key(**key)).copied()
        };
        let transport = match kind.as_deref() {
            Some("sse") => {
                return Err(self.invalid(
                    "type",
                    "\"sse\" (the legacy HTTP+SSE transport) is not supported; corvid speaks Streamable HTTP: use the server's Streamable HTTP URL (often ending in /mcp) with \"type\": \"http\"",
                ));
            }
            Some("stdio" | "local") => self.stdio(fields)?,
            Some("http" | "streamable-http" | "streamable_http" | "streamablehttp" | "remote") => {
                self.http(fields)?
            }
            Some(other) => {
                return Err(self.invalid(
                    "type",
                    format!("expected \"stdio\" or \"http\", got {other:?}"),
                ));
            }
            None => match (has(STDIO_KEYS), has(HTTP_KEYS)) {
                (Some(_), None) => self.stdio(fields)?,
                (None, Some(_)) => self.http(fields)?,
                (None, None) => {
                    return Err(self.invalid(
                        "",
                        "needs `command` (a local server) or `url` (a Streamable HTTP server)",
                    ));
                }
                (Some(stdio), Some(http)) => {
                    return Err(self.invalid(
                        "",
                        format!("has both `{stdio}` (local servers) and `{http}` (HTTP servers); keep one kind"),
                    ));
                }
            },
        };
        match &transport {
            McpTransport::Stdio { .. } => {
                if let Some(http) = has(HTTP_KEYS) {
                    return Err(self.invalid(http, "is for HTTP servers, and this one is local"));
                }
            }
            McpTransport::Http { .. } => {
                if let Some(stdio) = has(STDIO_KEYS) {
                    return Err(self.invalid(stdio, "is for local servers, and this one is HTTP"));
                }
            }
        }
        let enabled = match (fields.get("enabled"), fields.get("disabled")) {
            (Some(enabled), _) => self.boolean("enabled", enabled)?,
            (None, Some(disabled)) => !self.boolean("disabled", disabled)?,
            (None, None) => true,
        };
        let startup_timeout = match (
            fields.get("startup_timeout_sec"),
            fields.get("startup_timeout_ms"),
        ) {
            (Some(seconds), _) => self.seconds("startup_timeout_sec", seconds, 1.0)?,
            (None, Some(millis)) => self.seconds("startup_timeout_ms", millis, 0.001)?,
            (None, None) => DEFAULT_STARTUP_TIMEOUT,
        };
        let tool_timeout = match fields.get("tool_timeout_sec") {
            Some(seconds) => self.seconds("tool_timeout_sec", seconds, 1.0)?,
            None => DEFAULT_TOOL_TIMEOUT,
        };
        let enabled_tools = fields
            .get("enabled_tools")
            .map(|value| self.strings("enabled_tools", value))
            .transpose()?;
        let disabled_tools = fields
            .get("disabled_tools")
            .map(|value| self.strings("disabled_tools", value))
            .transpose()?
            .unwrap_or_default();
        let always_allow_server = match fields.get("always_allow") {
            None => false,
            Some(Json::String(scope)) if scope == "tool" => false,
            Some(Json::String(scope)) if scope == "server" => true,
            Some(other) => {
                return Err(self.invalid(
                    "always_allow",
                    format!("expected \"tool\" or \"server\", got {other}"),
                ));
            }
        };
        let sandbox = match fields.get("sandbox") {
            Some(value) => self.sandbox(value, origin.scope)?,
            None => McpSandbox::default_for(origin.scope),
        };
        let oauth = self.oauth(fields, warnings)?;
        Ok(McpServer {
            name: name.to_owned(),
            transport,
            enabled,
            startup_timeout,
            tool_timeout,
            enabled_tools,
            disabled_tools,
            sandbox,
            always_allow_server,
            oauth,
            origin: origin.clone(),
        })
    }

    fn stdio(&self, fields: &serde_json::Map<String, Json>) -> Result<McpTransport, ConfigError> {
        // opencode writes `command` as an array: the program, then its arguments.
        let (command, mut args) = match fields.get("command") {
            Some(Json::String(command)) if !command.trim().is_empty() => {
                (command.clone(), Vec::new())
            }
            Some(Json::Array(_)) => {
                let mut parts = self.strings("command", &fields["command"])?;
                if parts.is_empty() {
                    return Err(self.invalid("command", "expected a program to run"));
                }
                let command = parts.remove(0);
                (command, parts)
            }
            Some(_) => return Err(self.invalid("command", "expected a program to run")),
            None => return Err(self.invalid("command", "a local server needs `command`")),
        };
        if let Some(value) = fields.get("args") {
            args.extend(self.strings("args", value)?);
        }
        let env = match fields.get("env") {
            Some(value) => self.string_map("env", value)?,
            None => BTreeMap::new(),
        };
        let env_vars = match fields.get("env_vars") {
            Some(Json::Array(items)) => items
                .iter()
                .map(|item| match item {
                    Json::String(name) => Ok(name.clone()),
                    // Codex's `{ name = "X", source = "local" }`.
                    Json::Object(entry) => entry
                        .get("name")
                        .and_then(Json::as_str)
                        .map(str::to_owned)
                        .ok_or_else(|| self.invalid("env_vars", "each entry needs a `name`")),
                    _ => Err(self.invalid("env_vars", "expected variable names")),
                })
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(self.invalid("env_vars", "expected a list of variable names")),
            None => Vec::new(),
        };
        let cwd = match fields.get("cwd") {
            Some(Json::String(cwd)) if !cwd.trim().is_empty() => Some(PathBuf::from(cwd)),
            Some(_) => return Err(self.invalid("cwd", "expected a folder")),
            None => None,
        };
        Ok(McpTransport::Stdio {
            command,
            args,
            env,
            env_vars,
            cwd,
        })
    }

    fn http(&self, fields: &serde_json::Map<String, Json>) -> Result<McpTransport, ConfigError> {
        let url = match fields.get("url") {
            Some(Json::String(url)) => url.trim().to_owned(),
            Some(_) => return Err(self.invalid("url", "expected a URL string")),
            None => return Err(self.invalid("url", "an HTTP server needs `url`")),
        };
        // `${VAR}` may stand for the whole URL; otherwise it must be http(s).
        if !(url.starts_with("http://") || url.starts_with("https://") || url.starts_with("${")) {
            return Err(self.invalid(
                "url",
                format!("expected an http:// or https:// URL, got {url:?}"),
            ));
        }
        let mut headers = BTreeMap::new();
        for key in ["headers", "http_headers"] {
            if let Some(value) = fields.get(key) {
                headers.extend(self.string_map(key, value)?);
            }
        }
        let env_headers = match fields.get("env_http_headers") {
            Some(value) => self.string_map("env_http_headers", value)?,
            None => BTreeMap::new(),
        };
        let bearer_token_env_var = match fields.get("bearer_token_env_var") {
            Some(Json::String(name)) if !name.trim().is_empty() => Some(name.trim().to_owned()),
            Some(_) => {
                return Err(self.invalid("bearer_token_env_var", "expected a variable name"));
            }
            None => None,
        };
        Ok(McpTransport::Http {
            url,
            headers,
            env_headers,
            bearer_token_env_var,
        })
    }

    fn boolean(&self, field: &str, value: &Json) -> Result<bool, ConfigError> {
        value
            .as_bool()
            .ok_or_else(|| self.invalid(field, format!("expected true or false, got {value}")))
    }

    /// A positive number times `unit` seconds.
    fn seconds(&self, field: &str, value: &Json, unit: f64) -> Result<Duration, ConfigError> {
        value
            .as_f64()
            .map(|number| number * unit)
            .filter(|seconds| seconds.is_finite() && *seconds > 0.0 && *seconds <= 86_400.0)
            .map(Duration::from_secs_f64)
            .ok_or_else(|| {
                self.invalid(
                    field,
                    format!("expected a positive number (at most a day), got {value}"),
                )
            })
    }

    fn strings(&self, field: &str, value: &Json) -> Result<Vec<String>, ConfigError> {
        let items = value
            .as_array()
            .ok_or_else(|| self.invalid(field, "expected a list of strings"))?;
        items
            .iter()
            .map(|item| match item {
                Json::String(text) => Ok(text.clone()),
                // A number or a flag written bare in `args` is meant as its text.
                Json::Number(number) => Ok(number.to_string()),
                Json::Bool(flag) => Ok(flag.to_string()),
                other => Err(self.invalid(field, format!("expected a string, got {other}"))),
            })
            .collect()
    }

    fn string_map(
        &self,
        field: &str,
        value: &Json,
    ) -> Result<BTreeMap<String, String>, ConfigError> {
        let map = value
            .as_object()
            .ok_or_else(|| self.invalid(field, "expected a table of name = \"value\" pairs"))?;
        map.iter()
            .map(|(name, value)| match value {
                Json::String(text) => Ok((name.clone(), text.clone())),
                Json::Number(number) => Ok((name.clone(), number.to_string())),
                Json::Bool(flag) => Ok((name.clone(), flag.to_string())),
                other => Err(self.invalid(
                    &format!("{field}.{name}"),
                    format!("expected a string, got {other}"),
                )),
            })
            .collect()
    }

    fn sandbox(&self, value: &Json, scope: McpScope) -> Result<McpSandbox, ConfigError> {
        let fields = value.as_object().ok_or_else(|| {
            self.invalid(
                "sandbox",
                "expected a table like { network = true, write_outside = false }",
            )
        })?;
        let mut sandbox = McpSandbox::default_for(scope);
        for (field, flag) in fields {
            let flag = self.boolean(&format!("sandbox.{field}"), flag)?;
            match field.as_str() {
                "network" => sandbox.network = flag,
                "write_outside" => sandbox.write_outside = flag,
                other => {
                    return Err(self.invalid(
                        &format!("sandbox.{other}"),
                        "expected `network` or `write_outside`",
                    ));
                }
            }
        }
        Ok(sandbox)
    }
}

#[cfg(test)]
mod tests;

//! One server entry of an MCP file or of `[mcp_servers]`, read into an [`McpServer`]: the keys
//! corvid understands, their types, and a warning for each key it ignores.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value as Json;

use super::{
    DEFAULT_STARTUP_TIMEOUT, DEFAULT_TOOL_TIMEOUT, McpOrigin, McpSandbox, McpScope, McpServer,
    McpTransport,
};
use crate::ConfigError;

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

pub(super) fn read_servers(
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
pub(super) struct Entry {
    pub(super) key: String,
    pub(super) source: String,
}

impl Entry {
    pub(super) fn invalid(&self, field: &str, message: impl Into<String>) -> ConfigError {
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

    pub(super) fn server(
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

    pub(super) fn stdio(
        &self,
        fields: &serde_json::Map<String, Json>,
    ) -> Result<McpTransport, ConfigError> {
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

    pub(super) fn http(
        &self,
        fields: &serde_json::Map<String, Json>,
    ) -> Result<McpTransport, ConfigError> {
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

    pub(super) fn boolean(&self, field: &str, value: &Json) -> Result<bool, ConfigError> {
        value
            .as_bool()
            .ok_or_else(|| self.invalid(field, format!("expected true or false, got {value}")))
    }

    /// A positive number times `unit` seconds.
    pub(super) fn seconds(
        &self,
        field: &str,
        value: &Json,
        unit: f64,
    ) -> Result<Duration, ConfigError> {
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

    pub(super) fn strings(&self, field: &str, value: &Json) -> Result<Vec<String>, ConfigError> {
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

    pub(super) fn string_map(
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

    pub(super) fn sandbox(&self, value: &Json, scope: McpScope) -> Result<McpSandbox, ConfigError> {
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

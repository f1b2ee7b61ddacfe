//! Adding and removing servers: the definition a user gives (`corvid mcp add`), and a project's
//! `.corvid/mcp.json` as a file to change. The rest of the file (other servers, other keys, key
//! order) stays as it was; the file is replaced atomically.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value as Json, json};

use super::PROJECT_MCP_FILE;
use crate::ConfigError;
use crate::atomic::{FileMode, write_atomic};

/// A server as the user adds it: a local command, or a Streamable HTTP URL. Values may hold
/// `${VAR}` references; they are kept as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpEntry {
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
    },
    Http {
        url: String,
        headers: BTreeMap<String, String>,
    },
}

impl McpEntry {
    /// The entry as an `mcpServers` value, as Claude Code and Cursor write it.
    pub fn to_json(&self) -> Json {
        match self {
            Self::Stdio { command, args, env } => {
                let mut entry = json!({"command": command, "args": args});
                if !env.is_empty() {
                    entry["env"] = json!(env);
                }
                entry
            }
            Self::Http { url, headers } => {
                let mut entry = json!({"type": "http", "url": url});
                if !headers.is_empty() {
                    entry["headers"] = json!(headers);
                }
                entry
            }
        }
    }
}

/// Refuses a name that could not be a tool-name prefix (`mcp__<name>__<tool>`) or a bare TOML
/// key: only letters, digits, `_` and `-`.
pub(crate) fn check_server_name(name: &str, path: &Path) -> Result<(), ConfigError> {
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if valid {
        return Ok(());
    }
    Err(ConfigError::Invalid {
        key: "name".to_owned(),
        source_name: path.display().to_string(),
        message: format!("a server name may hold only letters, digits, `_` and `-`; got {name:?}"),
    })
}

/// A project's `.corvid/mcp.json`, read to be changed.
#[derive(Debug, Clone, PartialEq)]
pub struct ProjectFile {
    path: PathBuf,
    document: Json,
}

impl ProjectFile {
    /// The file of `project`; a missing file is one with no servers.
    pub fn open(project: &Path) -> Result<Self, ConfigError> {
        let path = project.join(PROJECT_MCP_FILE);
        let document = match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text).map_err(|err| ConfigError::Toml {
                path: path.clone(),
                message: format!("not valid JSON: {err}"),
            })?,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => json!({"mcpServers": {}}),
            Err(err) => return Err(ConfigError::io("cannot read", &path, err)),
        };
        Ok(Self { path, document })
    }

    /// Where the file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Adds the server `name`; one of that name already there is refused.
    pub fn add(&mut self, name: &str, entry: &McpEntry) -> Result<(), ConfigError> {
        check_server_name(name, &self.path)?;
        let path = self.path.clone();
        let servers = self.servers_mut()?;
        if servers.contains_key(name) {
            return Err(ConfigError::AlreadyDefined {
                name: name.to_owned(),
                path,
            });
        }
        servers.insert(name.to_owned(), entry.to_json());
        Ok(())
    }

    /// Removes the server `name`; a name that is not there is refused.
    pub fn remove(&mut self, name: &str) -> Result<(), ConfigError> {
        let path = self.path.clone();
        if self.servers_mut()?.shift_remove(name).is_none() {
            return Err(ConfigError::NotDefined {
                name: name.to_owned(),
                path,
            });
        }
        Ok(())
    }

    /// The file's text: pretty JSON with a final newline.
    pub fn render(&self) -> String {
        let mut text = serde_json::to_string_pretty(&self.document).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Replaces the file atomically (0644 when new; an existing file keeps its mode).
    pub fn save(&self) -> Result<(), ConfigError> {
        write_atomic(&self.path, self.render().as_bytes(), FileMode::Shared)
    }

    /// The servers' object: `mcpServers`, or VS Code's `servers` when only that is there
    /// (read the same way by [`super::parse_mcp_json`]); created when neither is.
    fn servers_mut(&mut self) -> Result<&mut Map<String, Json>, ConfigError> {
        let path = self.path.clone();
        let not_a_table = |key: &str| ConfigError::NotATable {
            key: key.to_owned(),
            path: path.clone(),
        };
        let top = self
            .document
            .as_object_mut()
            .ok_or_else(|| not_a_table("(the top level)"))?;
        let key = if !top.contains_key("mcpServers") && top.contains_key("servers") {
            "servers"
        } else {
            "mcpServers"
        };
        top.entry(key)
            .or_insert_with(|| json!({}))
            .as_object_mut()
            .ok_or_else(|| not_a_table(key))
    }
}

#[cfg(test)]
mod tests;

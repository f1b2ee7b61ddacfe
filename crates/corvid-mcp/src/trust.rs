//! Which of a project's own MCP servers the user trusts. A `.corvid/mcp.json` may come with a
//! cloned repository, and a server it defines runs a program of the repository's choosing (with
//! the network, and reads of most of the home folder), so such a server starts only once the
//! user said yes to it. config.toml's servers (the user's own) and an editor's (ACP) need no such
//! answer.
//!
//! A "yes" is kept per project folder and per server definition: the key is a SHA-256 of the
//! definition (its name, how it is reached, its sandbox), so a changed command asks again. The
//! answers live in corvid's data folder (`mcp-trust.json`), never in the project, where the
//! repository could write its own.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use corvid_config::{ConfigError, FileMode, McpScope, McpServer, McpTransport, write_atomic};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The file, in corvid's data folder, that holds the trusted definitions.
pub const TRUST_FILE: &str = "mcp-trust.json";

/// Whether `server` needs the user's trust before it starts: only a project's own servers do.
pub fn needs_trust(server: &McpServer) -> bool {
    server.origin.scope == McpScope::Project
}

/// The fingerprint of a server definition: SHA-256 (hex) of everything that decides what runs
/// and what it may reach. Values are hashed as written (before `${VAR}` expansion), so a
/// changed variable does not ask again, and a changed reference does.
pub fn fingerprint(server: &McpServer) -> String {
    let transport = match &server.transport {
        McpTransport::Stdio {
            command,
            args,
            env,
            env_vars,
            cwd,
        } => json!({
            "command": command,
            "args": args,
            "env": env,
            "env_vars": env_vars,
            "cwd": cwd.as_ref().map(|cwd| cwd.display().to_string()),
        }),
        McpTransport::Http {
            url,
            headers,
            env_headers,
            bearer_token_env_var,
        } => json!({
            "url": url,
            "headers": headers,
            "env_http_headers": env_headers,
            "bearer_token_env_var": bearer_token_env_var,
        }),
    };
    let definition = json!({
        "name": server.name,
        "transport": transport,
        "sandbox": {
            "network": server.sandbox.network,
            "write_outside": server.sandbox.write_outside,
        },
    });
    let digest = Sha256::digest(definition.to_string().as_bytes());
    digest.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// What a server runs or where it connects, in one line, for the trust question.
pub fn describe(server: &McpServer) -> String {
    match &server.transport {
        McpTransport::Stdio { command, args, .. } => {
            let mut line = command.clone();
            for arg in args {
                line.push(' ');
                line.push_str(arg);
            }
            format!("runs `{line}`")
        }
        McpTransport::Http { url, .. } => format!("connects to {url}"),
    }
}

/// Why the kept answers could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum TrustStoreError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} is not valid JSON: {source}", path.display())]
    NotJson {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    /// Written beside and renamed (corvid-config's one file writer).
    #[error(transparent)]
    Write(#[from] ConfigError),
}

/// The kept answers, in one file under corvid's data folder.
#[derive(Debug, Clone)]
pub struct TrustStore {
    file: PathBuf,
}

impl TrustStore {
    /// The store in `data_dir` (corvid's data folder).
    pub fn in_data_dir(data_dir: &Path) -> Self {
        Self {
            file: data_dir.join(TRUST_FILE),
        }
    }

    /// The file it reads and writes.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// Whether `server`, as defined now, was trusted in `project`. An unreadable file trusts
    /// nothing.
    pub fn is_trusted(&self, project: &Path, server: &McpServer) -> bool {
        if !needs_trust(server) {
            return true;
        }
        let projects = self.read().unwrap_or_default();
        projects
            .get(&project_key(project))
            .and_then(|servers| servers.get(&server.name))
            .is_some_and(|kept| *kept == fingerprint(server))
    }

    /// Keeps `server`'s current definition as trusted in `project` (replacing an older one).
    pub fn trust(&self, project: &Path, server: &McpServer) -> Result<(), TrustStoreError> {
        let mut projects = self.read()?;
        projects
            .entry(project_key(project))
            .or_default()
            .insert(server.name.clone(), fingerprint(server));
        self.write(&projects)
    }

    fn read(&self) -> Result<Projects, TrustStoreError> {
        let text = match std::fs::read_to_string(&self.file) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Projects::new());
            }
            Err(source) => {
                return Err(TrustStoreError::Read {
                    path: self.file.clone(),
                    source,
                });
            }
        };
        let value: Value =
            serde_json::from_str(&text).map_err(|source| TrustStoreError::NotJson {
                path: self.file.clone(),
                source,
            })?;
        let mut projects = Projects::new();
        if let Some(table) = value.get("projects").and_then(Value::as_object) {
            for (project, servers) in table {
                let servers = servers
                    .as_object()
                    .map(|servers| {
                        servers
                            .iter()
                            .filter_map(|(name, hash)| {
                                Some((name.clone(), hash.as_str()?.to_owned()))
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                projects.insert(project.clone(), servers);
            }
        }
        Ok(projects)
    }

    fn write(&self, projects: &Projects) -> Result<(), TrustStoreError> {
        // `{:#}`: pretty, as a person may read it.
        let text = format!("{:#}\n", json!({"version": 1, "projects": projects}));
        // Written beside, then renamed: a crash never leaves half a file.
        write_atomic(&self.file, text.as_bytes(), FileMode::Shared)?;
        Ok(())
    }
}

/// Project folder → server name → fingerprint.
type Projects = BTreeMap<String, BTreeMap<String, String>>;

/// The project as one key: its canonical path where it exists.
fn project_key(project: &Path) -> String {
    project
        .canonicalize()
        .unwrap_or_else(|_| project.to_path_buf())
        .display()
        .to_string()
}

#[cfg(test)]
mod tests;

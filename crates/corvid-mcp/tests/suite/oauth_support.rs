//! The OAuth fixture (`tests/mcp/oauth_server.py`: the Python SDK's authorization server and a
//! bearer-protected MCP server) and the pieces the sign-in tests share.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use corvid_auth::McpSignInStore;
use corvid_config::{McpScope, McpServer, parse_mcp_json};
use corvid_mcp::oauth::LoginOptions;
use corvid_mcp::{McpEnvironment, McpManager, OAuthStore, ServerState};
use corvid_tools::{Cancellation, Sandbox};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use super::support::tools;

/// The SDK's servers, in one child process.
pub(crate) struct Fixture {
    _child: tokio::process::Child,
    pub(crate) rs: u16,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Fixture {
    pub(crate) async fn start(python: &Path, args: &[&str]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("events.jsonl");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp/oauth_server.py");
        let mut child = tokio::process::Command::new(python)
            .arg(script)
            .arg("--log")
            .arg(&log)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
            .await
            .expect("the OAuth fixture did not start within a minute")
            .unwrap()
            .expect("the OAuth fixture ended before it listened");
        let ports: Value = serde_json::from_str(&line).unwrap();
        Self {
            _child: child,
            rs: u16::try_from(ports["rs"].as_u64().unwrap()).unwrap(),
            log,
            _dir: dir,
        }
    }

    pub(crate) fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.rs)
    }

    /// The authorization server's events so far.
    pub(crate) fn events(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    pub(crate) fn count(&self, event: &str, grant: Option<&str>) -> usize {
        self.events()
            .iter()
            .filter(|found| found["event"] == event)
            .filter(|found| grant.is_none_or(|grant| found["grant"] == grant))
            .count()
    }
}

/// A config.toml server `docs` at `url` with `extra` keys.
pub(crate) fn global_server(url: &str, extra: Value) -> McpServer {
    let mut entry = json!({"type": "http", "url": url});
    for (key, value) in extra.as_object().unwrap() {
        entry[key] = value.clone();
    }
    parse_mcp_json(
        &json!({"mcpServers": {"docs": entry}}).to_string(),
        Path::new("/home/u/.config/corvid/config.toml"),
        McpScope::Global,
    )
    .unwrap()
    .servers
    .remove(0)
}

pub(crate) fn project_server(url: &str) -> McpServer {
    parse_mcp_json(
        &json!({"mcpServers": {"docs": {"type": "http", "url": url}}}).to_string(),
        Path::new("/p/.corvid/mcp.json"),
        McpScope::Project,
    )
    .unwrap()
    .servers
    .remove(0)
}

/// A sign-in store in `home` and the environment of sessions in `project`.
pub(crate) fn environment(home: &Path, project: &Path) -> McpEnvironment {
    McpEnvironment {
        project: project.to_path_buf(),
        sandbox: Sandbox::off(),
        lookup: Arc::new(|_| None),
        protected: Arc::new(Vec::new()),
        oauth: Some(store(home)),
    }
}

pub(crate) fn store(home: &Path) -> OAuthStore {
    OAuthStore::new(McpSignInStore::file_only(home.join("env")))
}

/// Options whose "browser" GETs the authorization URL (following its redirect to corvid's
/// callback) and sends the URL it was given to `seen`.
pub(crate) fn browser(seen: Option<tokio::sync::oneshot::Sender<String>>) -> LoginOptions {
    LoginOptions {
        callback_port: None,
        timeout: Duration::from_secs(60),
        open: Box::new(move |url: &str| {
            let url = url.to_owned();
            if let Some(seen) = seen {
                let _ = seen.send(url.clone());
            }
            tokio::spawn(async move {
                let client = reqwest::Client::builder().no_proxy().build().unwrap();
                let _ = client.get(url).send().await;
            });
        }),
    }
}

pub(crate) async fn state_of(manager: &McpManager) -> ServerState {
    tools(manager).await;
    manager.statuses().remove(0).state
}

pub(crate) async fn call(
    manager: &McpManager,
    tool: &str,
    arguments: Value,
) -> corvid_mcp::McpOutput {
    manager.call(tool, arguments, Cancellation::never()).await
}

pub(crate) fn env_text(home: &Path) -> String {
    std::fs::read_to_string(home.join("env")).unwrap_or_default()
}

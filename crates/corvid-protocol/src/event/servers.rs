//! Tool servers and what a turn changed, as events carry them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One server behind the session's tools (an MCP server), in `tool_servers`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ToolServer {
    /// Its configured name.
    pub name: String,
    /// Where it is configured, in words (`config.toml`, `.corvid/mcp.json`, `the editor`).
    pub configured_in: String,
    /// What starting it means, in words (``runs `npx server` ``, `connects to https://…`).
    pub transport: String,
    /// How it is doing.
    pub state: ToolServerState,
    /// Why it failed, when `state` is `failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The tools the model is offered from it, by the names the model sees.
    pub tools: Vec<String>,
    /// Tools it has that its configuration (`enabled_tools`, `disabled_tools`) keeps from the
    /// model.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub withheld: Vec<String>,
    /// Its state in words (`describe()`), as the engine wrote it: what every face shows, so
    /// a face that cannot call `describe` (the page) shows the same words.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
}

/// Where the person reading a server's state acts on it: in a chat face (its `/mcp` command)
/// or on the command line (`corvid mcp …`). Only the action named differs; the state's words
/// are the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolServerAudience {
    Chat,
    CommandLine,
}

impl ToolServer {
    /// Its state in words, with what to do about it: the sign-in (`corvid mcp login`; the
    /// session notices a new one by itself) or the trust (`/mcp trust NAME`, the command every
    /// chat face offers). The one wording of a server's state; every face shows it as it is.
    pub fn describe(&self) -> String {
        self.describe_for(ToolServerAudience::Chat)
    }

    /// [`Self::describe`] for `audience`: `corvid mcp list` names `corvid mcp trust` where a
    /// chat face names `/mcp trust`.
    pub fn describe_for(&self, audience: ToolServerAudience) -> String {
        let name = &self.name;
        match (self.state, audience) {
            (ToolServerState::Untrusted, ToolServerAudience::Chat) => format!(
                "{}: `/mcp trust {name}` starts it (it runs what the project's file says: trust it only if you would run that yourself)",
                self.state_words(),
            ),
            (ToolServerState::Untrusted, ToolServerAudience::CommandLine) => format!(
                "{}: `corvid mcp trust {name}` trusts it (it runs what the project's file says: trust it only if you would run that yourself)",
                self.state_words(),
            ),
            (ToolServerState::NeedsSignIn, ToolServerAudience::CommandLine) => {
                format!(
                    "needs sign-in: `corvid mcp login {name}` (in the project, for its own servers)"
                )
            }
            _ => self.state_words(),
        }
    }

    /// Its state in words alone, without what to do about trust.
    pub fn state_words(&self) -> String {
        let name = &self.name;
        match self.state {
            ToolServerState::Ready => match self.tools.len() {
                1 => "ready, 1 tool".to_owned(),
                count => format!("ready, {count} tools"),
            },
            ToolServerState::Starting => "starting".to_owned(),
            ToolServerState::Idle => "not started yet".to_owned(),
            ToolServerState::Disabled => "disabled (enabled = false)".to_owned(),
            ToolServerState::Untrusted => "not trusted yet, not started".to_owned(),
            ToolServerState::NeedsSignIn => format!(
                "needs sign-in: `corvid mcp login {name}` in a terminal (in the project, for its own servers); it starts at your next message"
            ),
            ToolServerState::Failed => format!(
                "failed: {}",
                self.reason.as_deref().unwrap_or("no reason given")
            ),
        }
    }

    /// Its tools by their own names (the model's names without `mcp__<server>__`).
    pub fn short_tool_names(&self) -> Vec<&str> {
        let prefix = format!("mcp__{}__", self.name);
        self.tools
            .iter()
            .map(|tool| tool.strip_prefix(&prefix).unwrap_or(tool))
            .collect()
    }
}

/// How a tool server is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ToolServerState {
    /// Turned off in its configuration (`enabled = false`).
    Disabled,
    /// Not started yet.
    Idle,
    /// A project's own server the user has not trusted: not started until `trust_tool_server`
    /// (or `corvid mcp trust NAME`).
    Untrusted,
    /// Starting; its tools join when it is ready.
    Starting,
    /// Running; its tools are offered.
    Ready,
    /// It requires a sign-in corvid does not have (`corvid mcp login NAME`).
    NeedsSignIn,
    /// It failed to start or stopped for good; `reason` says why.
    Failed,
}

/// One file a turn changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FileChange {
    /// The file, relative to the project folder.
    pub path: String,
    /// What the turn did to it.
    pub change: ChangeKind,
}

/// What a turn did to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// The turn created it.
    Added,
    /// The turn changed its content or mode.
    Modified,
    /// The turn deleted it.
    Deleted,
}

/// What one turn changed, in `diff`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TurnChanges {
    /// The turn, counted from 1 within the conversation.
    pub turn: u32,
    /// The files it changed.
    pub files: Vec<FileChange>,
    /// A unified diff (`git diff` format, paths under `a/` and `b/`) from the project before the
    /// turn to the project after it.
    pub diff: String,
}

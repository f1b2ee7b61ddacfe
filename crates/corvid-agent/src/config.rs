//! How a session is set up (`AgentConfig`) and why one could not start (`AgentError`).

use std::path::PathBuf;
use std::sync::Arc;

use corvid_protocol::ApprovalPolicy;

/// How an agent is set up.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    /// The project folder; tools never leave it.
    pub project: PathBuf,
    /// The working folder inside the project (for AGENTS.md discovery).
    pub cwd: PathBuf,
    pub model: String,
    pub approval: ApprovalPolicy,
    /// Model steps that may call tools in one turn; past them, one last call without tools
    /// gives the model's final answer.
    pub max_steps: u32,
    /// Where long command output is spilled.
    pub output_dir: PathBuf,
    /// The most bytes of AGENTS.md text put in the prompt.
    pub instructions_cap: usize,
    /// The front end this agent serves (`chat`, `exec`, `web`, `acp`): the usage ledger tags
    /// each model call with it.
    pub front_end: String,
    /// Where the shadow repositories of checkpoints live (one per project); `None` turns
    /// checkpoints, `/undo` and `/diff` off.
    pub checkpoint_dir: Option<PathBuf>,
    /// The context window in tokens for every model (`--context-window`); `None` asks the
    /// `ModelClient` for the model's own, else uses the default (128,000).
    pub context_window: Option<u64>,
    /// The kernel sandbox commands run in. The default is [`corvid_tools::Sandbox::off`]: only
    /// the composition root knows where the sandbox helper is, so it must set this.
    pub sandbox: corvid_tools::Sandbox,
    /// Where the file tools read and write contents (an editor's buffers over ACP); `None`:
    /// the disk.
    pub files: Option<Arc<dyn corvid_tools::Files>>,
    /// Tool sources beside the built-ins and the skills (custom tools, MCP servers), opened
    /// once per session; a built-in wins a name clash, then the earlier plugin.
    pub tool_plugins: Vec<Arc<dyn corvid_tools::ToolPlugin>>,
    /// The user's `settings.json` (hooks and permission rules in Claude Code's format), in
    /// corvid's configuration folder; `None`: only the project's settings files are read.
    pub user_settings: Option<PathBuf>,
    /// Whether a project settings file's hooks may run (see `crate::hooks`); `None`: they never
    /// do.
    pub project_trust: Option<Arc<dyn crate::hooks::ProjectTrust>>,
    /// `[prices]` of config.toml: a `usage` event's cost is priced with them as the usage
    /// ledger prices its rows (`corvid_store::priced`); empty: no cost is reported.
    pub prices: std::collections::BTreeMap<String, corvid_store::Price>,
}

impl AgentConfig {
    /// Defaults for a project: `ask` approvals, 50 steps, 64 KiB of instructions.
    pub fn new(project: PathBuf, model: impl Into<String>) -> Self {
        Self {
            cwd: project.clone(),
            output_dir: std::env::temp_dir().join("corvid-output"),
            project,
            model: model.into(),
            approval: ApprovalPolicy::Ask,
            max_steps: 50,
            instructions_cap: 64 * 1024,
            front_end: "agent".to_owned(),
            checkpoint_dir: None,
            context_window: None,
            sandbox: corvid_tools::Sandbox::off(),
            files: None,
            tool_plugins: Vec::new(),
            user_settings: None,
            project_trust: None,
            prices: std::collections::BTreeMap::new(),
        }
    }
}

/// Why an agent could not start.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error("the project folder {path} cannot be used: {message}")]
    Project { path: PathBuf, message: String },
    #[error("no conversation `{conversation_id}` in the project {project}")]
    UnknownConversation {
        project: PathBuf,
        conversation_id: String,
    },
    #[error(transparent)]
    Store(#[from] corvid_store::StoreError),
}

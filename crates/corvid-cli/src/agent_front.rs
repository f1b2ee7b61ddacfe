//! The agent's terminal front ends: the start-up they share (the process's composition, the
//! agent's settings), `corvid chat` (the terminal UI in `corvid-tui`) here, and `corvid exec`
//! in `exec.rs`. Both are clients of the engine's protocol only.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use corvid_agent::{AgentConfig, Agents, Link, OpenConversation, Session, Subscription};
use corvid_config::{ApprovalSetting, Loaded};
use corvid_protocol::ApprovalPolicy;

use crate::compose::Composition;

/// Options shared by `exec` and `chat`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct AgentArgs {
    /// The model (alias, provider/model, or a bare name); default: default_model.
    #[arg(long)]
    model: Option<String>,
    /// ask (reads run; writes and commands ask), auto-edit (edits run; commands ask), full-auto,
    /// read-only (nothing changes; commands run read-only in the sandbox) or plan (read-only,
    /// then a plan to approve); overrides `approval` in config.toml (default: ask).
    #[arg(long, value_name = "POLICY")]
    approval: Option<ApprovalPolicy>,
    /// The project folder (default: the nearest folder at or above the current one, below the
    /// home folder, holding `.git`; else the current directory).
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// Model steps that may call tools in one turn (then one last step answers without tools).
    #[arg(long, default_value_t = 50)]
    max_steps: u32,
    /// The context window in tokens for every model; older turns are summarised near it
    /// (default: context_windows / context_window in config.toml, else the catalog, else
    /// 128000).
    #[arg(long, value_name = "TOKENS")]
    context_window: Option<u64>,
    /// on (default: commands run in the kernel sandbox) or off (they run with your full rights);
    /// overrides `sandbox` in config.toml.
    #[arg(long, value_name = "on|off", value_parser = crate::sandbox_setup::parse_setting)]
    sandbox: Option<corvid_config::SandboxSetting>,
}

impl AgentArgs {
    /// The policy the session starts with: the flag, else `approval` in config.toml.
    pub(crate) fn approval(&self, loaded: &Loaded) -> ApprovalPolicy {
        self.approval.unwrap_or_else(|| default_approval(loaded))
    }
}

/// The approval policy every front end's sessions start with when no flag says otherwise:
/// `approval` in config.toml (or `CORVID_APPROVAL`), else `ask`.
pub(crate) fn default_approval(loaded: &Loaded) -> ApprovalPolicy {
    match loaded.config.approval {
        ApprovalSetting::Ask => ApprovalPolicy::Ask,
        ApprovalSetting::AutoEdit => ApprovalPolicy::AutoEdit,
        ApprovalSetting::FullAuto => ApprovalPolicy::FullAuto,
    }
}

/// Opens the session of `which` with a listener that hears it from its first event (start-up
/// warnings, `ready`), or from its replay when another face has it open.
pub(crate) async fn start(
    loaded: &Loaded,
    args: &AgentArgs,
    front_end: &str,
    which: OpenConversation,
) -> anyhow::Result<(Session, Subscription)> {
    let (agents, config) = configure(loaded, args, front_end).await?;
    Ok(agents.open_listening(config, which).await?)
}

/// The service and the settings this terminal's sessions start with.
async fn configure(
    loaded: &Loaded,
    args: &AgentArgs,
    front_end: &str,
) -> anyhow::Result<(Agents, AgentConfig)> {
    let here = std::env::current_dir().context("cannot read the current directory")?;
    let folders = corvid_agent::project_folders(&here, args.project.as_deref());
    let composition = Composition::build(loaded).await?;
    let model = args
        .model
        .clone()
        .unwrap_or_else(|| loaded.config.default_model.clone());
    let mut config = crate::compose::agent_config(loaded, folders, model, front_end);
    config.approval = args.approval(loaded);
    config.max_steps = args.max_steps;
    config.context_window = args.context_window;
    config.sandbox = crate::sandbox_setup::sandbox(loaded, args.sandbox);
    Ok((composition.agents, config))
}

/// `names` split into those a provider can answer now and those whose provider has no key or
/// sign-in yet (a name that does not resolve stays with the first: its request says why).
fn split_by_credential(
    registry: &corvid_providers::Registry,
    names: Vec<String>,
) -> (Vec<String>, Vec<String>) {
    names.into_iter().partition(|name| {
        registry.resolve(name).map_or(true, |route| {
            route.provider.upstream().credential().is_available()
        })
    })
}

/// `corvid chat`: the terminal UI (plain lines when stdin or stdout is not a terminal). It
/// opens the project's current conversation, as the page does, and shows what it resumed
/// (`/new` starts another); `corvid exec` starts a new one unless told `--continue`.
pub(crate) async fn chat(loaded: &Loaded, args: &AgentArgs) -> anyhow::Result<()> {
    // The chat's link: `/new`, `/open` and `/resume` ask the service for another conversation's
    // session; the one left is closed by the service once idle.
    let (agents, config) = configure(loaded, args, "chat").await?;
    let (session, events) = agents
        .open_listening(config.clone(), OpenConversation::Current)
        .await?;
    // The conversation the chat resumed, when it has messages: said and shown on screen.
    let resumed = agents
        .conversation(session.project(), &session.conversation_id())
        .await
        .context("cannot read the conversation being resumed")?
        .filter(|detail| !detail.history.is_empty())
        .map(|detail| (detail.summary, detail.history));
    let (link, frames) = Link::over(agents, Arc::new(move || config.clone()), session, events);
    let here = std::env::current_dir().context("cannot read the current directory")?;
    let project = corvid_agent::project_folders(&here, args.project.as_deref()).root;
    let mut names: Vec<String> = loaded.config.aliases.keys().cloned().collect();
    if !names.contains(&loaded.config.default_model) {
        names.insert(0, loaded.config.default_model.clone());
    }
    let (catalog, without_key) = split_by_credential(&crate::compose::registry(loaded)?, names);
    let settings = corvid_tui::Settings {
        // The session's live list (skills and custom commands) comes through the link.
        commands: Vec::new(),
        history_file: Some(corvid_tui::history::file_for(
            &loaded.paths.data_dir,
            &project,
        )),
        project,
        catalog,
        without_key,
        resumed,
    };
    corvid_tui::run(Arc::new(link), frames, settings)
        .await
        .context("the terminal failed")
}

#[cfg(test)]
mod tests;

//! `corvid hooks`: the hooks sessions in a project run (Claude Code's format, from corvid's
//! `settings.json` and the project's `.corvid/` and `.claude/` settings files), and
//! `corvid hooks trust`, which lets the project's own hooks run (and its `allow` rules apply)
//! as they are now. The answers
//! are kept with the trusted MCP servers (`corvid_mcp::TrustStore`, in corvid's data folder),
//! never in the project.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use corvid_agent::hooks::{Hooks, ProjectTrust};
use corvid_agent::permissions::Rules;
use corvid_agent::settings_files::SettingsPaths;
use corvid_config::Loaded;
use corvid_mcp::TrustStore;

#[derive(Debug, clap::Subcommand)]
pub(crate) enum HooksCommand {
    /// Trust the project's hooks as they are now, so its sessions run them (a changed `hooks`
    /// object asks again).
    Trust {
        /// The project (default: the nearest folder holding .git at or above this one).
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
    },
}

/// The key a project settings file's hooks are trusted under.
fn key(file: &str) -> String {
    format!("hooks:{file}")
}

/// A project's hooks trusted through corvid's trust store.
#[derive(Debug, Clone)]
pub(crate) struct StoreTrust(TrustStore);

impl ProjectTrust for StoreTrust {
    fn is_trusted(&self, project: &Path, file: &str, fingerprint: &str) -> bool {
        self.0.is_trusted_entry(project, &key(file), fingerprint)
    }

    fn trust(&self, project: &Path, file: &str, fingerprint: &str) {
        if let Err(error) = self.0.trust_entry(project, &key(file), fingerprint) {
            tracing::warn!(%error, file, "could not keep the trust of a changed settings file");
        }
    }
}

/// What sessions consult for a project's hooks.
pub(crate) fn project_trust(loaded: &Loaded) -> Arc<dyn ProjectTrust> {
    Arc::new(StoreTrust(TrustStore::in_data_dir(&loaded.paths.data_dir)))
}

/// The user's settings file: `settings.json` in corvid's configuration folder.
pub(crate) fn user_settings(loaded: &Loaded) -> PathBuf {
    loaded
        .paths
        .dir
        .join(corvid_agent::settings_files::SETTINGS_FILE)
}

/// `corvid hooks [trust]`; what to print.
pub(crate) fn run(
    loaded: &Loaded,
    command: Option<HooksCommand>,
    project: Option<PathBuf>,
) -> anyhow::Result<String> {
    let explicit = match &command {
        Some(HooksCommand::Trust { project }) => project.clone(),
        None => project,
    };
    let cwd = std::env::current_dir().context("cannot read the current folder")?;
    let root = corvid_agent::project_folders(&cwd, explicit.as_deref()).root;
    let paths = SettingsPaths {
        user: Some(user_settings(loaded)),
        project: root.clone(),
    };
    let (files, mut warnings) = paths.read();
    let trust = StoreTrust(TrustStore::in_data_dir(&loaded.paths.data_dir));
    let mut hooks = Hooks::from_settings(&files, &root, Some(&trust), &mut warnings);
    // A project's `allow` rules wait for the same trust.
    let rules = Rules::from_settings(&files, &root, Some(&trust), &mut Vec::new());
    hooks.untrusted.extend(rules.untrusted);
    let mut text = String::new();
    for warning in &warnings {
        text.push_str(&format!("warning: {warning}\n"));
    }
    match command {
        Some(HooksCommand::Trust { .. }) => {
            if hooks.untrusted.is_empty() {
                text.push_str(&format!(
                    "No project hooks wait for trust in {}.\n",
                    root.display()
                ));
            }
            for untrusted in &hooks.untrusted {
                trust
                    .0
                    .trust_entry(&root, &key(&untrusted.file), &untrusted.fingerprint)
                    .map_err(|error| anyhow::anyhow!("{error}"))?;
                text.push_str(&format!(
                    "Trusted {} ({} item(s)) for {}; a change asks again.\n",
                    untrusted.file,
                    untrusted.commands,
                    root.display()
                ));
            }
        }
        None => {
            if hooks.commands().is_empty() && hooks.untrusted.is_empty() {
                text.push_str("No hooks.\n");
            }
            for hook in hooks.commands() {
                let matcher = if hook.matcher.is_empty() {
                    "*"
                } else {
                    &hook.matcher
                };
                let kind = match &hook.kind {
                    corvid_agent::hooks::HookKind::Command => "command",
                    corvid_agent::hooks::HookKind::Prompt { .. } => "prompt",
                };
                text.push_str(&format!(
                    "{} [{matcher}] {kind} `{}` (timeout {} s) from {}\n",
                    hook.event.name(),
                    hook.command,
                    hook.timeout.as_secs(),
                    hook.source
                ));
            }
            for untrusted in &hooks.untrusted {
                text.push_str(&format!(
                    "waiting for trust: {} ({} item(s)); `corvid hooks trust` lets it apply\n",
                    untrusted.file, untrusted.commands
                ));
            }
        }
    }
    Ok(text)
}

//! A session's commands as they are on disk now: the custom commands and the skills, read
//! again when their folders changed (each file's path, size and modification time), so a
//! command written during a session is offered at once.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;
use std::time::SystemTime;

use corvid_protocol::commands::ProjectCommand;
use serde_json::json;

use super::load::folders;
use super::{CommandSet, CustomCommand, load_commands};
use crate::skills::LiveSkills;

/// Every file under some folders: its path, size and modification time.
pub(crate) type Fingerprint = Vec<(PathBuf, u64, Option<SystemTime>)>;

/// The custom commands and skills of one project, loaded again when their files change.
pub struct LiveCommands {
    project: PathBuf,
    user_dir: Option<PathBuf>,
    skills: Arc<LiveSkills>,
    state: Mutex<State>,
}

struct State {
    fingerprint: Fingerprint,
    commands: Arc<CommandSet>,
}

impl LiveCommands {
    /// Loads the commands of `project` and of `user_dir` (the user's commands folder) now.
    pub fn load(project: &Path, user_dir: Option<&Path>) -> Self {
        let project = project
            .canonicalize()
            .unwrap_or_else(|_| project.to_path_buf());
        let skills = Arc::new(LiveSkills::load(&project));
        Self::with_skills(&project, user_dir, skills)
    }

    /// Over a session's own live skills.
    pub(crate) fn with_skills(
        project: &Path,
        user_dir: Option<&Path>,
        skills: Arc<LiveSkills>,
    ) -> Self {
        Self {
            state: Mutex::new(State {
                fingerprint: fingerprint(project, user_dir),
                commands: Arc::new(load_commands(project, user_dir)),
            }),
            project: project.to_path_buf(),
            user_dir: user_dir.map(Path::to_path_buf),
            skills,
        }
    }

    /// The custom commands as they are on disk now, and the warnings a reload found that the
    /// previous load had not.
    pub fn refresh(&self) -> (Arc<CommandSet>, Vec<String>) {
        let now = fingerprint(&self.project, self.user_dir.as_deref());
        let mut state = self.state.lock();
        if now == state.fingerprint {
            return (Arc::clone(&state.commands), Vec::new());
        }
        let commands = load_commands(&self.project, self.user_dir.as_deref());
        let fresh = commands
            .warnings
            .iter()
            .filter(|warning| !state.commands.warnings.contains(warning))
            .cloned()
            .collect();
        state.fingerprint = now;
        state.commands = Arc::new(commands);
        (Arc::clone(&state.commands), fresh)
    }

    /// The custom commands as last loaded (with the warnings of that load).
    pub fn current(&self) -> Arc<CommandSet> {
        Arc::clone(&self.state.lock().commands)
    }

    /// What faces offer beside the table, as it is on disk now: the custom commands, then the
    /// skills (a skill whose name a command has is left out: the command wins).
    pub fn project_commands(&self) -> Vec<ProjectCommand> {
        let (custom, _) = self.refresh();
        let (skills, _) = self.skills.refresh();
        let mut list: Vec<ProjectCommand> = custom
            .commands
            .iter()
            .map(|command| {
                ProjectCommand::custom(&command.name, &command.description, &command.argument_hint)
            })
            .collect();
        for skill in &skills.skills {
            if custom.get(&skill.name).is_none() {
                list.push(ProjectCommand::skill(&skill.name, &skill.description));
            }
        }
        list
    }
}

/// Every command file's path, size and modification time, sorted.
fn fingerprint(project: &Path, user_dir: Option<&Path>) -> Fingerprint {
    let dirs: Vec<PathBuf> = folders(project, user_dir)
        .into_iter()
        .map(|folder| folder.path)
        .collect();
    files_fingerprint(&dirs)
}

/// Every file's path, size and modification time under `dirs` (four folders deep), sorted:
/// what decides whether files read earlier must be read again.
pub(crate) fn files_fingerprint(dirs: &[PathBuf]) -> Fingerprint {
    let mut seen = Fingerprint::new();
    for dir in dirs {
        collect(dir, 0, &mut seen);
    }
    seen.sort();
    seen
}

fn collect(dir: &Path, depth: usize, seen: &mut Fingerprint) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        let Ok(meta) = entry.metadata() else { continue };
        if meta.is_dir() {
            if depth < 4 {
                collect(&path, depth + 1, seen);
            }
        } else {
            seen.push((path, meta.len(), meta.modified().ok()));
        }
    }
}

/// The rules a `!` command line must pass when `command` names its tools (`allowed-tools`):
/// its entries as `allow` rules; `None` when it names none (then the session decides alone).
pub(super) fn allowed_rules(
    command: &CustomCommand,
    project: &Path,
) -> Option<crate::permissions::Rules> {
    if command.allowed_tools.is_empty() {
        return None;
    }
    let file = crate::settings_files::SettingsFile {
        path: PathBuf::from(&command.source),
        shown: command.source.clone(),
        // The command's own list: it only narrows (a `!` line it does not admit is not run),
        // so it needs no trust.
        scope: crate::settings_files::SettingsScope::User,
        value: json!({ "permissions": { "allow": command.allowed_tools } }),
    };
    Some(crate::permissions::Rules::from_settings(
        &[file],
        project,
        None,
        &mut Vec::new(),
    ))
}

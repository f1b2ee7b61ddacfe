//! Custom subagents: markdown files in the project's `.corvid/agents/` and `.claude/agents/`
//! (Claude Code's format) and in `agents/` of corvid's configuration folder. The frontmatter
//! gives `name` (lowercase letters, digits, hyphens; the file's name when left out),
//! `description` (required: the main agent reads it to choose), `tools` (a comma list or a YAML
//! list, in Claude Code's names or corvid's; left out: every tool a subagent may have) and
//! `model` (`inherit`, or a model name); the body is the subagent's own instructions.
//!
//! The set is read again at each turn's start when a file changed, so an agent written during a
//! session is offered on the next turn.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::commands::{files_fingerprint, nested_list, split_tools};
use crate::instructions::{read_confined, slash_path};
use crate::skills::frontmatter::{self, Value};

/// The project's agents folders, relative to its root, in the order they are read.
pub(crate) const PROJECT_AGENT_DIRS: [&str; 2] = [".corvid/agents", ".claude/agents"];
/// The user's agents folder, inside corvid's configuration folder.
pub(crate) const USER_AGENT_DIR: &str = "agents";
/// The largest agent file read.
const MAX_AGENT_BYTES: usize = 256 * 1024;
/// Claude Code's model families: a `.claude/agents` file naming one means "a Claude model",
/// which corvid cannot pick for the user, so the session's model answers.
const CLAUDE_FAMILIES: [&str; 3] = ["sonnet", "opus", "haiku"];
/// The built-in subagents' names, which a file may not take.
pub(crate) const BUILTIN: [&str; 2] = ["explore", "general"];

/// One custom subagent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CustomAgent {
    pub(crate) name: String,
    pub(crate) description: String,
    /// The tools it may use, as the file names them; `None`: every tool a subagent may have.
    pub(crate) tools: Option<Vec<String>>,
    /// Its model; `None`: the session's.
    pub(crate) model: Option<String>,
    /// Its instructions (the file's body).
    pub(crate) prompt: String,
    /// Where it was read, as the user knows it.
    pub(crate) source: String,
}

/// The custom subagents found, sorted by name, and what went wrong finding them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct AgentSet {
    pub(crate) agents: Vec<CustomAgent>,
    pub(crate) warnings: Vec<String>,
}

impl AgentSet {
    pub(crate) fn get(&self, name: &str) -> Option<&CustomAgent> {
        self.agents.iter().find(|agent| agent.name == name)
    }
}

/// The folders, in precedence order: (path, as shown, the project root for a project's).
fn folders(project: &Path, user_dir: Option<&Path>) -> Vec<(PathBuf, String, Option<PathBuf>)> {
    let mut folders: Vec<_> = PROJECT_AGENT_DIRS
        .iter()
        .map(|dir| {
            (
                project.join(dir),
                (*dir).to_owned(),
                Some(project.to_path_buf()),
            )
        })
        .collect();
    if let Some(user) = user_dir {
        folders.push((user.to_path_buf(), user.display().to_string(), None));
    }
    folders
}

/// The user's agents folder, given corvid's configuration folder.
pub(crate) fn user_dir(config_dir: &Path) -> PathBuf {
    config_dir.join(USER_AGENT_DIR)
}

/// Every custom subagent of the project and of the user's folder. Never fails: a file that
/// cannot be used is skipped with a warning; of two agents of one name the first read wins.
pub(crate) fn load_agents(project: &Path, user_dir: Option<&Path>) -> AgentSet {
    let project = project
        .canonicalize()
        .unwrap_or_else(|_| project.to_path_buf());
    let mut set = AgentSet::default();
    for (dir, shown_dir, root) in folders(&project, user_dir) {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut files: Vec<String> = entries
            .filter_map(Result::ok)
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".md") && !name.starts_with('.'))
            .collect();
        files.sort();
        for file in files {
            let shown = format!("{shown_dir}/{file}");
            let text = match &root {
                Some(root) => {
                    let relative = dir.strip_prefix(root).unwrap_or(&dir).join(&file);
                    read_confined(root, &relative, MAX_AGENT_BYTES)
                        .map_err(AgentFileError::NotConfined)
                        .and_then(|read| read.ok_or(AgentFileError::Disappeared))
                        .map(|read| read.text)
                }
                None => {
                    std::fs::read_to_string(dir.join(&file)).map_err(AgentFileError::Unreadable)
                }
            };
            let stem = file.trim_end_matches(".md");
            let from_claude = shown_dir.starts_with(".claude");
            match text.and_then(|text| parse(stem, &text, from_claude)) {
                Ok(mut agent) => {
                    agent.source = slash_path(Path::new(&shown));
                    match set.get(&agent.name) {
                        Some(first) => set.warnings.push(format!(
                            "the agent {shown} is not used: `{}` is already {}",
                            agent.name, first.source
                        )),
                        None => set.agents.push(agent),
                    }
                }
                Err(reason) => set
                    .warnings
                    .push(format!("skipped the agent {shown}: {reason}")),
            }
        }
    }
    set.agents.sort_by(|a, b| a.name.cmp(&b.name));
    set
}

/// Why an agent file is skipped; the warning that names the file says it.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AgentFileError {
    #[error("it cannot be read ({0})")]
    Unreadable(std::io::Error),
    /// A project file outside the project, or one that cannot be read there.
    #[error(transparent)]
    NotConfined(crate::instructions::ConfinedReadError),
    #[error("it disappeared")]
    Disappeared,
    #[error("{0}")]
    Frontmatter(frontmatter::FrontmatterError),
    #[error("line {line}: `{key}` must be text")]
    NotText { line: usize, key: String },
    #[error("its name `{0}` must be lowercase letters, digits and hyphens")]
    BadName(String),
    #[error("`{0}` is a built-in subagent's name")]
    Builtin(String),
    #[error("the frontmatter has no `description` (say when the agent should be used)")]
    NoDescription,
}

/// An agent file: frontmatter, then its instructions.
pub(crate) fn parse(
    stem: &str,
    text: &str,
    from_claude: bool,
) -> Result<CustomAgent, AgentFileError> {
    let document = frontmatter::parse(text).map_err(AgentFileError::Frontmatter)?;
    let field = |key: &str| -> Result<Option<String>, AgentFileError> {
        match document.get(key) {
            None => Ok(None),
            Some(entry) => match &entry.value {
                Value::Text(text) => Ok(Some(text.trim().to_owned()).filter(|t| !t.is_empty())),
                Value::Nested => Err(AgentFileError::NotText {
                    line: entry.line,
                    key: key.to_owned(),
                }),
            },
        }
    };
    let name = field("name")?.unwrap_or_else(|| stem.to_owned());
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !valid {
        return Err(AgentFileError::BadName(name));
    }
    if BUILTIN.contains(&name.as_str()) {
        return Err(AgentFileError::Builtin(name));
    }
    let description = field("description")?.ok_or(AgentFileError::NoDescription)?;
    let tools = match document.get("tools") {
        None => None,
        Some(entry) => match &entry.value {
            Value::Text(list) if list.trim().is_empty() || list.trim() == "*" => None,
            Value::Text(list) => Some(split_tools(list)),
            Value::Nested => Some(nested_list(text, entry.line)),
        },
    };
    let model = field("model")?.filter(|model| {
        model != "inherit" && !(from_claude && CLAUDE_FAMILIES.contains(&model.as_str()))
    });
    Ok(CustomAgent {
        name,
        description,
        tools,
        model,
        prompt: document.body.trim().to_owned(),
        source: String::new(),
    })
}

/// A session's custom subagents, read again when their files changed.
pub(crate) struct LiveAgents {
    project: PathBuf,
    user_dir: Option<PathBuf>,
    state: Mutex<(crate::commands::Fingerprint, Arc<AgentSet>)>,
}

impl LiveAgents {
    pub(crate) fn load(project: &Path, user_dir: Option<&Path>) -> Self {
        let dirs = dirs(project, user_dir);
        Self {
            state: Mutex::new((
                files_fingerprint(&dirs),
                Arc::new(load_agents(project, user_dir)),
            )),
            project: project.to_path_buf(),
            user_dir: user_dir.map(Path::to_path_buf),
        }
    }

    /// The agents as last loaded.
    pub(crate) fn current(&self) -> Arc<AgentSet> {
        Arc::clone(&self.state.lock().1)
    }

    /// The agents as on disk now, and the warnings the previous load had not.
    pub(crate) fn refresh(&self) -> (Arc<AgentSet>, Vec<String>) {
        let now = files_fingerprint(&dirs(&self.project, self.user_dir.as_deref()));
        let mut state = self.state.lock();
        if now == state.0 {
            return (Arc::clone(&state.1), Vec::new());
        }
        let agents = load_agents(&self.project, self.user_dir.as_deref());
        let fresh = agents
            .warnings
            .iter()
            .filter(|warning| !state.1.warnings.contains(warning))
            .cloned()
            .collect();
        *state = (now, Arc::new(agents));
        (Arc::clone(&state.1), fresh)
    }
}

fn dirs(project: &Path, user_dir: Option<&Path>) -> Vec<PathBuf> {
    folders(project, user_dir)
        .into_iter()
        .map(|(path, _, _)| path)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_code_files_read_as_written() {
        let agent = parse(
            "x",
            "---\nname: api-tester\ndescription: Tests APIs.\ntools:\n  - Read\n  - Bash\nmodel: haiku\n---\nTest.",
            true,
        )
        .unwrap();
        assert_eq!(
            agent.tools,
            Some(vec!["Read".to_owned(), "Bash".to_owned()])
        );
        // A Claude model family in a `.claude/agents` file: the session's model answers.
        assert_eq!(agent.model, None);
        let ours = parse("tester", "---\ndescription: d\nmodel: haiku\n---\n", false).unwrap();
        assert_eq!(
            (ours.name.as_str(), ours.model.as_deref()),
            ("tester", Some("haiku"))
        );
        assert_eq!(ours.tools, None);
        let inherit = parse(
            "t",
            "---\ndescription: d\nmodel: inherit\ntools: \"*\"\n---\n",
            false,
        )
        .unwrap();
        assert_eq!((inherit.model, inherit.tools), (None, None));
        assert!(parse("explore", "---\ndescription: d\n---\n", false).is_err());
        assert!(parse("Bad_Name", "---\ndescription: d\n---\n", false).is_err());
    }
}

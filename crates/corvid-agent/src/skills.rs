//! Skills: reusable instructions for a kind of task, disclosed progressively.
//!
//! Only each skill's name and description enter the system prompt ([`SkillSet::index`]); the
//! model loads one skill's body with the `skill` tool ([`SkillSet::load_tool`]) when a task
//! matches. Skills come from two places:
//!
//! - built-ins shipped with corvid (`code-review`, `write-tests`, and `authoring-skills`,
//!   `authoring-tools`, `authoring-mcp`, which teach the agent to extend itself);
//! - the project: `.corvid/skills/<name>/SKILL.md`, a YAML frontmatter with `name` (equal to the
//!   folder's name) and a non-empty `description`, then a markdown body. The folder may hold
//!   other files the body refers to.
//!
//! The set is read again at the start of each turn when the skills folder changed
//! ([`LiveSkills`]), so a skill written during a session is offered on the next turn.
//!
//! An invalid project skill is skipped with a warning naming the file and the reason; it never
//! stops a turn. A project skill with a built-in's name replaces the built-in, with a warning.

pub(crate) mod frontmatter;
mod live;
mod source;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use corvid_wire::model::Tool;
use serde_json::json;

use crate::instructions::{read_confined, slash_path};
use frontmatter::{FrontmatterError, Value};
pub(crate) use live::LiveSkills;
pub(crate) use source::{SkillSource, summary as skill_summary};

/// The name of the tool that loads a skill (offered by the skills tool source).
pub const SKILL_TOOL: &str = "skill";

/// The instruction that starts a message whose user invoked a skill (`/<skill> text`).
pub(crate) fn invocation(skill: &str) -> String {
    format!(
        "[The user invoked the skill `{skill}`: load it with the `{SKILL_TOOL}` tool and follow it for the request below (for the project as a whole when the request is empty).]"
    )
}
/// Where project skills live, relative to the project root.
pub const SKILLS_DIR: &str = ".corvid/skills";
/// The file that defines a skill, inside its folder.
pub const SKILL_FILE: &str = "SKILL.md";
/// The longest name allowed.
pub const MAX_NAME_CHARS: usize = 64;
/// The longest description allowed.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// The largest `SKILL.md` read.
pub const MAX_SKILL_BYTES: usize = 256 * 1024;

/// The built-in skills: (name, `SKILL.md` text).
const BUILTINS: [(&str, &str); 5] = [
    (
        "authoring-mcp",
        include_str!("skills/builtin/authoring-mcp.md"),
    ),
    (
        "authoring-skills",
        include_str!("skills/builtin/authoring-skills.md"),
    ),
    (
        "authoring-tools",
        include_str!("skills/builtin/authoring-tools.md"),
    ),
    ("code-review", include_str!("skills/builtin/code-review.md")),
    ("write-tests", include_str!("skills/builtin/write-tests.md")),
];

/// One skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// Its name: lowercase letters, digits and hyphens; for a project skill, its folder's name.
    pub name: String,
    /// When to use it, as written in the frontmatter (trimmed).
    pub description: String,
    /// The instructions, loaded on demand by the `skill` tool.
    pub body: String,
    /// The `SKILL.md`, relative to the project root; `None` for a built-in.
    pub path: Option<PathBuf>,
    /// Whether it ships with corvid.
    pub builtin: bool,
}

impl Skill {
    /// The skill's folder, relative to the project root; `None` for a built-in.
    pub fn folder(&self) -> Option<&Path> {
        self.path.as_deref().and_then(Path::parent)
    }
}

/// The skills available in a project, sorted by name, and what went wrong finding them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillSet {
    /// Sorted by name; names are unique.
    pub skills: Vec<Skill>,
    /// One sentence per skipped or overridden skill, for the user.
    pub warnings: Vec<String>,
}

/// Loads the built-in skills and the project's `.corvid/skills/<name>/SKILL.md`.
///
/// Never fails: a project skill that cannot be read or is invalid is skipped with a warning, and
/// so is one whose `SKILL.md` is a symbolic link leaving the project folder.
pub fn load_skills(root: &Path) -> SkillSet {
    let mut set = SkillSet::builtin();
    let root = match root.canonicalize() {
        Ok(root) => root,
        Err(error) => {
            set.warnings.push(format!(
                "project skills not loaded: the project folder {} cannot be opened ({error})",
                root.display()
            ));
            return set;
        }
    };
    let skills_dir = root.join(SKILLS_DIR);
    let entries = match fs::read_dir(&skills_dir) {
        Ok(entries) => entries,
        Err(error)
            if matches!(
                error.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            return set;
        }
        Err(error) => {
            set.warnings.push(format!(
                "project skills not loaded: {SKILLS_DIR} cannot be read ({error})"
            ));
            return set;
        }
    };
    let mut names: Vec<String> = Vec::new();
    for entry in entries {
        match entry {
            Ok(entry) => names.push(entry.file_name().to_string_lossy().into_owned()),
            Err(error) => set.warnings.push(format!(
                "a project skill was skipped: {SKILLS_DIR} cannot be listed ({error})"
            )),
        }
    }
    names.sort();
    for folder in names {
        if folder.starts_with('.') {
            continue;
        }
        let relative_folder = Path::new(SKILLS_DIR).join(&folder);
        if !root.join(&relative_folder).is_dir() {
            if folder.ends_with(".md") {
                set.warnings.push(format!(
                    "skipped {}: a skill is a folder holding a {SKILL_FILE} ({SKILLS_DIR}/<name>/{SKILL_FILE})",
                    slash_path(&relative_folder)
                ));
            }
            continue;
        }
        let path = relative_folder.join(SKILL_FILE);
        match load_project_skill(&root, &folder, &path) {
            Ok(skill) => set.insert(skill),
            Err(reason) => set
                .warnings
                .push(format!("skipped the skill {}: {reason}", slash_path(&path))),
        }
    }
    set
}

/// Why a project skill was skipped (each reads as the end of "skipped the skill X: …").
#[derive(Debug, thiserror::Error)]
enum SkillFileError {
    #[error(transparent)]
    NotConfined(crate::instructions::ConfinedReadError),
    #[error("the folder has no {SKILL_FILE}")]
    NoSkillFile,
    #[error("it is larger than {} KiB", MAX_SKILL_BYTES / 1024)]
    TooLarge,
    #[error(transparent)]
    Frontmatter(FrontmatterError),
    #[error("line {line}: `{key}` must be text, not a list or mapping")]
    NotText { line: usize, key: String },
    #[error("the frontmatter has no `name`")]
    NoName,
    #[error("its name `{name}` does not match its folder `{folder}`")]
    NameNotFolder { name: String, folder: String },
    #[error("its name `{0}` must be lowercase letters, digits and hyphens (not at either end)")]
    BadName(String),
    #[error("its name is longer than {MAX_NAME_CHARS} characters")]
    NameTooLong,
    #[error("the frontmatter has no `description` (say what the skill does and when to use it)")]
    NoDescription,
    #[error("its description is {0} characters long; the limit is {MAX_DESCRIPTION_CHARS}")]
    DescriptionTooLong(usize),
}

/// Why the `skill` tool loaded nothing; the text lists the skills that are available.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SkillLoadError {
    #[error("`name` is required: the skill to load, as a string. {available}")]
    NoName { available: String },
    #[error("There is no skill named `{name}`. {available}")]
    Unknown { name: String, available: String },
}

fn load_project_skill(root: &Path, folder: &str, path: &Path) -> Result<Skill, SkillFileError> {
    let read = read_confined(root, path, MAX_SKILL_BYTES)
        .map_err(SkillFileError::NotConfined)?
        .ok_or(SkillFileError::NoSkillFile)?;
    if read.size > MAX_SKILL_BYTES as u64 {
        return Err(SkillFileError::TooLarge);
    }
    let mut skill = parse_skill(folder, &read.text)?;
    skill.path = Some(path.to_path_buf());
    Ok(skill)
}

/// Parses a `SKILL.md` that must be named `folder`. The skill has no path and is not built in.
fn parse_skill(folder: &str, text: &str) -> Result<Skill, SkillFileError> {
    let document = frontmatter::parse(text).map_err(SkillFileError::Frontmatter)?;
    let text_field = |key: &str| -> Result<Option<String>, SkillFileError> {
        match document.get(key) {
            None => Ok(None),
            Some(entry) => match &entry.value {
                Value::Text(text) => Ok(Some(text.trim().to_owned())),
                Value::Nested => Err(SkillFileError::NotText {
                    line: entry.line,
                    key: key.to_owned(),
                }),
            },
        }
    };
    let name = text_field("name")?
        .filter(|name| !name.is_empty())
        .ok_or(SkillFileError::NoName)?;
    if name != folder {
        return Err(SkillFileError::NameNotFolder {
            name,
            folder: folder.to_owned(),
        });
    }
    check_name(&name)?;
    let description = text_field("description")?.unwrap_or_default();
    if description.is_empty() {
        return Err(SkillFileError::NoDescription);
    }
    let length = description.chars().count();
    if length > MAX_DESCRIPTION_CHARS {
        return Err(SkillFileError::DescriptionTooLong(length));
    }
    Ok(Skill {
        name,
        description,
        body: document.body.trim().to_owned(),
        path: None,
        builtin: false,
    })
}

fn check_name(name: &str) -> Result<(), SkillFileError> {
    let valid = name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    if !valid {
        return Err(SkillFileError::BadName(name.to_owned()));
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(SkillFileError::NameTooLong);
    }
    Ok(())
}

impl SkillSet {
    /// The built-in skills only.
    pub fn builtin() -> Self {
        let mut set = Self::default();
        for (name, text) in BUILTINS {
            match parse_skill(name, text) {
                Ok(mut skill) => {
                    skill.builtin = true;
                    set.insert(skill);
                }
                // Only a broken build could get here; a test parses every built-in.
                Err(reason) => set
                    .warnings
                    .push(format!("skipped the built-in skill `{name}`: {reason}")),
            }
        }
        set
    }

    /// Adds a skill, keeping the list sorted; a project skill replaces a built-in of that name.
    fn insert(&mut self, skill: Skill) {
        match self
            .skills
            .binary_search_by(|existing| existing.name.as_str().cmp(&skill.name))
        {
            Ok(at) => {
                if let Some(path) = &skill.path {
                    self.warnings.push(format!(
                        "the project skill {} replaces the built-in skill `{}`",
                        slash_path(path),
                        skill.name
                    ));
                }
                self.skills[at] = skill;
            }
            Err(at) => self.skills.insert(at, skill),
        }
    }

    /// The skill named `name`.
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|skill| skill.name == name)
    }

    /// The skills' names, sorted.
    pub fn names(&self) -> Vec<String> {
        self.skills.iter().map(|skill| skill.name.clone()).collect()
    }

    /// Whether there are no skills at all.
    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// The list for the system prompt: one `- name: description` line per skill (the description
    /// on one line), no bodies. Empty when there are no skills.
    pub fn index(&self) -> String {
        let lines: Vec<String> = self
            .skills
            .iter()
            .map(|skill| {
                let description: Vec<&str> = skill.description.split_whitespace().collect();
                format!("- {}: {}", skill.name, description.join(" "))
            })
            .collect();
        lines.join("\n")
    }

    /// The `skill` tool as the model sees it: `{name}` in, the skill's instructions out.
    pub fn tool(&self) -> Tool {
        let available = if self.skills.is_empty() {
            "none".to_owned()
        } else {
            self.names().join(", ")
        };
        Tool {
            name: SKILL_TOOL.to_owned(),
            description: Some(format!(
                "Load a skill: the full instructions for one kind of task. The system prompt lists each \
                 skill's name and description; when a task matches one, load it before starting the task \
                 and follow it. Available: {available}."
            )),
            parameters: json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "The skill's name, exactly as listed"}
                },
                "required": ["name"],
                "additionalProperties": false
            })
            .into(),
            strict: None,
        }
    }

    /// Runs the `skill` tool: the named skill's body, introduced by where it comes from (a
    /// project skill's folder, so the files it mentions can be opened with `read`). An unknown or
    /// missing name is an error listing the available skills.
    pub fn load_tool(&self, arguments: serde_json::Value) -> Result<String, SkillLoadError> {
        let name = match &arguments {
            serde_json::Value::Object(map) => map.get("name").and_then(serde_json::Value::as_str),
            serde_json::Value::String(name) => Some(name.as_str()),
            _ => None,
        };
        let Some(name) = name.map(str::trim).filter(|name| !name.is_empty()) else {
            return Err(SkillLoadError::NoName {
                available: self.available(),
            });
        };
        let Some(skill) = self.get(name) else {
            return Err(SkillLoadError::Unknown {
                name: name.to_owned(),
                available: self.available(),
            });
        };
        let source = match (skill.folder(), &skill.path) {
            (Some(folder), Some(path)) => format!(
                "Skill `{}` from {}. Paths it mentions are relative to its folder {}/; open those files with \
                 the `read` tool (for example `{}/<file>`).",
                skill.name,
                slash_path(path),
                slash_path(folder),
                slash_path(folder)
            ),
            _ => format!("Skill `{}` (built in).", skill.name),
        };
        Ok(format!("{source}\n\n{}", skill.body))
    }

    fn available(&self) -> String {
        if self.skills.is_empty() {
            "No skills are available.".to_owned()
        } else {
            format!("Available skills: {}.", self.names().join(", "))
        }
    }
}

#[cfg(test)]
mod tests;

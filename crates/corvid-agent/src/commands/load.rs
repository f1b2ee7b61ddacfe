//! Finding and reading command files: markdown with an optional frontmatter (Claude Code's and
//! corvid's) and TOML (Gemini CLI's).

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{CommandSet, CustomCommand, MAX_COMMAND_BYTES, PROJECT_COMMAND_DIRS, Syntax};
use crate::instructions::{read_confined, slash_path};
use crate::skills::frontmatter::{self, FrontmatterError, Value};

/// Why a command file is skipped; the warning that names the file says it.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CommandFileError {
    #[error("a command's file and folder names may hold only letters, digits, `-`, `_` and `.`")]
    BadName,
    #[error("it is larger than {} KiB", MAX_COMMAND_BYTES / 1024)]
    TooLarge,
    #[error("it cannot be read ({0})")]
    Unreadable(std::io::Error),
    /// A project file outside the project, or one that cannot be read there.
    #[error(transparent)]
    NotConfined(crate::instructions::ConfinedReadError),
    #[error("it disappeared while being read")]
    Disappeared,
    #[error("it is not UTF-8 text")]
    NotUtf8,
    #[error("{0}")]
    Frontmatter(FrontmatterError),
    #[error("line {line}: `{key}` must be text, not a list or mapping")]
    NotText { line: usize, key: String },
    #[error("it is not a Gemini command (TOML with a `prompt`): {}", .0.message())]
    NotGemini(toml::de::Error),
    #[error("its `prompt` is empty")]
    EmptyPrompt,
}

/// How deep subfolders (namespaces) are followed.
const MAX_DEPTH: usize = 4;
/// The longest description shown.
const MAX_DESCRIPTION_CHARS: usize = 200;

/// One folder to read: where it is, and whose.
pub(super) struct Folder {
    pub(super) path: PathBuf,
    /// Relative to the project for the project's (`.claude/commands`), else the full path.
    pub(super) shown: String,
    /// The project root for a project's folder (its files must stay inside it); `None` for the
    /// user's.
    pub(super) confined_to: Option<PathBuf>,
    /// Whether markdown files are commands here (not in `.gemini/commands`).
    pub(super) markdown: bool,
    /// Whether TOML files are commands here (not in `.claude/commands`).
    pub(super) toml: bool,
}

/// The folders commands are read from, in precedence order.
pub(super) fn folders(project: &Path, user_dir: Option<&Path>) -> Vec<Folder> {
    let mut folders: Vec<Folder> = PROJECT_COMMAND_DIRS
        .iter()
        .map(|dir| Folder {
            path: project.join(dir),
            shown: (*dir).to_owned(),
            confined_to: Some(project.to_path_buf()),
            markdown: !dir.starts_with(".gemini"),
            toml: !dir.starts_with(".claude"),
        })
        .collect();
    if let Some(user) = user_dir {
        folders.push(Folder {
            path: user.to_path_buf(),
            shown: user.display().to_string(),
            confined_to: None,
            markdown: true,
            toml: true,
        });
    }
    folders
}

/// Every custom command of the project (`project` canonical or not) and of the user's folder.
/// Never fails: a file that cannot be read or is invalid is skipped with a warning; of two
/// commands of one name the first read wins, with a warning.
pub fn load_commands(project: &Path, user_dir: Option<&Path>) -> CommandSet {
    let project = project
        .canonicalize()
        .unwrap_or_else(|_| project.to_path_buf());
    let mut set = CommandSet::default();
    for folder in folders(&project, user_dir) {
        let mut files = Vec::new();
        walk(&folder.path, &mut Vec::new(), &mut files, &mut set.warnings);
        files.sort();
        for (relative, syntax) in files
            .into_iter()
            .filter_map(|relative| syntax_of(&relative, &folder).map(|syntax| (relative, syntax)))
        {
            let shown = format!("{}/{}", folder.shown, slash_path(&relative));
            match read(&folder, &relative, syntax, &shown) {
                Ok(command) => match set.get(&command.name) {
                    Some(first) => set.warnings.push(format!(
                        "the command {shown} is not used: /{} is already {}",
                        command.name, first.source
                    )),
                    None => set.commands.push(command),
                },
                Err(reason) => set
                    .warnings
                    .push(format!("skipped the command {shown}: {reason}")),
            }
        }
    }
    set.commands.sort_by(|a, b| a.name.cmp(&b.name));
    set
}

/// The files under `dir` (relative to it), following subfolders but no hidden entry.
fn walk(
    dir: &Path,
    prefix: &mut Vec<String>,
    files: &mut Vec<PathBuf>,
    warnings: &mut Vec<String>,
) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let mut relative: PathBuf = prefix.iter().collect();
        relative.push(&name);
        if kind.is_dir() {
            if prefix.len() + 1 >= MAX_DEPTH {
                warnings.push(format!(
                    "commands deeper than {MAX_DEPTH} folders are not read ({})",
                    slash_path(&relative)
                ));
                continue;
            }
            prefix.push(name);
            walk(&entry.path(), prefix, files, warnings);
            prefix.pop();
        } else {
            files.push(relative);
        }
    }
}

fn syntax_of(relative: &Path, folder: &Folder) -> Option<Syntax> {
    match relative.extension().and_then(|ext| ext.to_str()) {
        Some("md") if folder.markdown => Some(Syntax::Markdown),
        Some("toml") if folder.toml => Some(Syntax::Gemini),
        _ => None,
    }
}

/// `frontend/component.md` → `frontend:component`, or why it cannot be a command's name.
fn name_of(relative: &Path) -> Result<String, CommandFileError> {
    let stem = relative.with_extension("");
    let parts: Vec<String> = stem
        .components()
        .map(|part| part.as_os_str().to_string_lossy().into_owned())
        .collect();
    let valid = |part: &String| {
        !part.is_empty()
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
    };
    if parts.is_empty() || !parts.iter().all(valid) {
        return Err(CommandFileError::BadName);
    }
    Ok(parts.join(":"))
}

fn read(
    folder: &Folder,
    relative: &Path,
    syntax: Syntax,
    shown: &str,
) -> Result<CustomCommand, CommandFileError> {
    let name = name_of(relative)?;
    let text = match &folder.confined_to {
        Some(root) => {
            let within = folder
                .path
                .strip_prefix(root)
                .map_or_else(|_| relative.to_path_buf(), |dir| dir.join(relative));
            let read = read_confined(root, &within, MAX_COMMAND_BYTES)
                .map_err(CommandFileError::NotConfined)?
                .ok_or(CommandFileError::Disappeared)?;
            if read.size > MAX_COMMAND_BYTES as u64 {
                return Err(CommandFileError::TooLarge);
            }
            read.text
        }
        None => read_user_file(&folder.path.join(relative))?,
    };
    let mut command = match syntax {
        Syntax::Markdown => markdown(&name, &text)?,
        Syntax::Gemini => gemini(&name, &text)?,
    };
    command.source = shown.to_owned();
    Ok(command)
}

fn read_user_file(path: &Path) -> Result<String, CommandFileError> {
    let mut bytes = Vec::new();
    fs::File::open(path)
        .and_then(|file| {
            file.take(MAX_COMMAND_BYTES as u64 + 1)
                .read_to_end(&mut bytes)
        })
        .map_err(CommandFileError::Unreadable)?;
    if bytes.len() > MAX_COMMAND_BYTES {
        return Err(CommandFileError::TooLarge);
    }
    String::from_utf8(bytes).map_err(|_| CommandFileError::NotUtf8)
}

/// A markdown command: an optional frontmatter, then the prompt.
pub(super) fn markdown(name: &str, text: &str) -> Result<CustomCommand, CommandFileError> {
    let (entries, body) = match frontmatter::parse(text) {
        Ok(document) => (Some(document.entries), document.body),
        Err(FrontmatterError::Missing) => (None, text),
        Err(error) => return Err(CommandFileError::Frontmatter(error)),
    };
    let entries = entries.unwrap_or_default();
    let field = |key: &str| -> Result<Option<String>, CommandFileError> {
        match entries.iter().find(|entry| entry.key == key) {
            None => Ok(None),
            Some(entry) => match &entry.value {
                Value::Text(text) => Ok(Some(text.trim().to_owned()).filter(|t| !t.is_empty())),
                Value::Nested => Err(CommandFileError::NotText {
                    line: entry.line,
                    key: key.to_owned(),
                }),
            },
        }
    };
    let allowed_tools = match entries.iter().find(|entry| entry.key == "allowed-tools") {
        None => Vec::new(),
        Some(entry) => match &entry.value {
            Value::Text(list) => split_tools(list),
            // A YAML list (`[Read, Grep]` or `- Read` lines): read from the file's lines.
            Value::Nested => nested_list(text, entry.line),
        },
    };
    let template = body.trim().to_owned();
    let description = match field("description")? {
        Some(description) => description,
        None => first_line(&template),
    };
    Ok(CustomCommand {
        name: name.to_owned(),
        description,
        argument_hint: match entries.iter().find(|entry| entry.key == "argument-hint") {
            // `[message]` reads as a YAML list; it is meant as text.
            Some(entry) if entry.value == Value::Nested => raw_value(text, entry.line),
            _ => field("argument-hint")?.unwrap_or_default(),
        },
        allowed_tools,
        model: field("model")?,
        template,
        syntax: Syntax::Markdown,
        source: String::new(),
    })
}

#[derive(Deserialize)]
struct GeminiFile {
    prompt: String,
    #[serde(default)]
    description: Option<String>,
}

/// A Gemini CLI command: `prompt` (required) and `description`.
pub(super) fn gemini(name: &str, text: &str) -> Result<CustomCommand, CommandFileError> {
    let file: GeminiFile = toml::from_str(text).map_err(CommandFileError::NotGemini)?;
    let template = file.prompt.trim().to_owned();
    if template.is_empty() {
        return Err(CommandFileError::EmptyPrompt);
    }
    let description = file
        .description
        .map(|text| text.trim().to_owned())
        .filter(|text| !text.is_empty())
        .unwrap_or_else(|| first_line(&template));
    Ok(CustomCommand {
        name: name.to_owned(),
        description,
        argument_hint: String::new(),
        allowed_tools: Vec::new(),
        model: None,
        template,
        syntax: Syntax::Gemini,
        source: String::new(),
    })
}

/// The prompt's first line that says something, for a command without a description.
fn first_line(template: &str) -> String {
    let line = template
        .lines()
        .map(|line| line.trim().trim_start_matches('#').trim())
        .find(|line| !line.is_empty())
        .unwrap_or("custom command");
    let mut shown: String = line.chars().take(MAX_DESCRIPTION_CHARS).collect();
    if line.chars().count() > MAX_DESCRIPTION_CHARS {
        shown.push('…');
    }
    shown
}

/// `Bash(git add:*), Bash(git status:*), Read`: split at commas outside parentheses.
pub(crate) fn split_tools(list: &str) -> Vec<String> {
    let mut tools = Vec::new();
    let mut depth = 0usize;
    let mut current = String::new();
    for c in list.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                tools.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    tools.push(current);
    tools
        .into_iter()
        .map(|tool| tool.trim().trim_matches(['"', '\'']).to_owned())
        .filter(|tool| !tool.is_empty())
        .collect()
}

/// The text after the key on (1-based) `line` of the file, as written.
fn raw_value(text: &str, line: usize) -> String {
    text.lines()
        .nth(line.saturating_sub(1))
        .and_then(|line| line.split_once(':'))
        .map(|(_, value)| value.trim().to_owned())
        .unwrap_or_default()
}

/// A YAML list value starting on (1-based) `line` of the file: a flow list on that line, or
/// the `- item` lines below it.
pub(crate) fn nested_list(text: &str, line: usize) -> Vec<String> {
    let mut lines = text.lines().skip(line.saturating_sub(1));
    let Some(first) = lines.next() else {
        return Vec::new();
    };
    let value = first.split_once(':').map_or("", |(_, value)| value.trim());
    if let Some(flow) = value.strip_prefix('[') {
        return split_tools(flow.trim_end().trim_end_matches(']'));
    }
    lines
        .map(str::trim)
        .take_while(|item| item.starts_with('-'))
        .map(|item| {
            item.trim_start_matches('-')
                .trim()
                .trim_matches(['"', '\''])
                .to_owned()
        })
        .filter(|item| !item.is_empty())
        .collect()
}

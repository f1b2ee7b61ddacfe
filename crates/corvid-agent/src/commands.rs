//! Custom slash commands: prompt files the user invokes as `/<name> arguments`.
//!
//! They are read, in this order (the first of a name wins), from the project's
//! `.corvid/commands/`, `.claude/commands/` (Claude Code's) and `.gemini/commands/` (Gemini CLI's
//! `*.toml`), then from `commands/` in corvid's configuration folder (the user's own). A file in
//! a subfolder is namespaced as Claude Code does: `frontend/component.md` is
//! `/frontend:component`.
//!
//! A markdown command may start with a frontmatter (`description`, `argument-hint`,
//! `allowed-tools`, `model`); its body is the prompt, where `$ARGUMENTS` is what the user typed
//! after the name, `$1`…`$9` its words, `@path` a project file's content, and `` !`command` ``
//! the output of a command run in the session's sandbox through the approval gate. A Gemini
//! command is a TOML file with `prompt` and `description`, where `{{args}}` is the arguments,
//! `@{path}` a file and `!{command}` a command's output.
//!
//! `allowed-tools` narrows what the command's turn may use: only the tools it names are offered,
//! and a `!` command runs only when a `Bash(...)` entry admits it. It never skips an approval.
//!
//! The set is read again when a commands folder changed ([`LiveCommands`]), as skills are, so
//! a command written during a session is offered at once.

mod expand;
mod live;
mod load;
mod run;

use std::path::{Path, PathBuf};

pub use live::LiveCommands;
pub(crate) use live::{Fingerprint, files_fingerprint};
pub use load::load_commands;
pub(crate) use load::{nested_list, split_tools};
pub(crate) use run::{expand_in_turn, narrowed};

/// The project's commands folders, relative to its root, in the order they are read.
pub const PROJECT_COMMAND_DIRS: [&str; 3] =
    [".corvid/commands", ".claude/commands", ".gemini/commands"];
/// The user's commands folder, inside corvid's configuration folder.
pub const USER_COMMAND_DIR: &str = "commands";
/// The largest command file read.
pub const MAX_COMMAND_BYTES: usize = 256 * 1024;

/// How a command's prompt is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// Claude Code's markdown: `$ARGUMENTS`, `$1`…`$9`, `@path`, `` !`command` ``.
    Markdown,
    /// Gemini CLI's TOML: `{{args}}`, `@{path}`, `!{command}`.
    Gemini,
}

/// One custom command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomCommand {
    /// What follows `/`: the file's name without its extension, after its subfolders joined
    /// with `:`.
    pub name: String,
    /// One line for completion: the frontmatter's, else the prompt's first line.
    pub description: String,
    /// What the arguments are (`argument-hint`), empty when the file does not say.
    pub argument_hint: String,
    /// The tools the command's turn may use (`allowed-tools`), Claude Code's names or corvid's;
    /// empty: the session's.
    pub allowed_tools: Vec<String>,
    /// A model for the command's turn.
    pub model: Option<String>,
    /// The prompt, before expansion.
    pub template: String,
    pub syntax: Syntax,
    /// Where it was read, as the user knows it (relative to the project for a project's).
    pub source: String,
}

/// The custom commands found, sorted by name, and what went wrong finding them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandSet {
    pub commands: Vec<CustomCommand>,
    /// One sentence per skipped or shadowed file, for the user.
    pub warnings: Vec<String>,
}

impl CommandSet {
    /// The command named `name`.
    pub fn get(&self, name: &str) -> Option<&CustomCommand> {
        self.commands.iter().find(|command| command.name == name)
    }
}

/// The user's commands folder, given corvid's configuration folder.
pub fn user_dir(config_dir: &Path) -> PathBuf {
    config_dir.join(USER_COMMAND_DIR)
}

/// The user's commands folder of a session set up by `config`: beside its user settings file
/// (both live in corvid's configuration folder); `None` without one.
pub fn user_dir_of(config: &crate::AgentConfig) -> Option<PathBuf> {
    config
        .user_settings
        .as_deref()
        .and_then(Path::parent)
        .map(user_dir)
}

#[cfg(test)]
mod tests;

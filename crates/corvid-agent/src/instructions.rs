//! Project instructions and the system prompt that carries them.
//!
//! [`load_instructions`] collects the `AGENTS.md` files from the project root down to the working
//! folder (codex's hierarchy): root first, deeper files later, so the more specific rules come
//! last and take precedence. A folder without `AGENTS.md` may have `CLAUDE.md` instead (an
//! alias; the two never stack within one folder). Nothing outside the project root is read: the
//! working folder must lie inside it, and a file that is a symbolic link leaving the root is
//! skipped with a warning.
//!
//! [`system_prompt`] is pure: every fact it needs (date, OS, shell, …) arrives in
//! [`PromptParts`], so the prompt can be rebuilt every step without touching the clock or the
//! file system.

use std::fs;
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};

/// The instruction file looked for in every folder.
pub const AGENTS_FILE: &str = "AGENTS.md";
/// Read instead when a folder has no `AGENTS.md`.
pub const ALIAS_FILE: &str = "CLAUDE.md";
/// A sensible cap on the instructions' total size (codex's).
pub const DEFAULT_CAP_BYTES: usize = 32 * 1024;

/// The project's instructions, ready for the system prompt.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Instructions {
    /// Every file's text, each introduced by a header naming its path; empty when there is none.
    /// At most the cap's size.
    pub text: String,
    /// The files included (wholly or in part), relative to the project root, root first.
    pub files: Vec<PathBuf>,
    /// Whether something was cut or left out to respect the cap (the text says so too).
    pub truncated: bool,
    /// Things the user should know: a skipped symbolic link, an unreadable file, a working folder
    /// outside the project, a file cut at the cap.
    pub warnings: Vec<String>,
}

/// Loads `AGENTS.md` (or `CLAUDE.md`) from `root` down to `cwd`, at most `cap_bytes` in all.
///
/// `cwd` may be relative (to `root`). A `cwd` outside `root` is refused: only the root's own
/// file is read, and a warning says why. When the files exceed the cap, the smaller files are
/// kept whole and the larger ones share the rest equally, each cut at a line end with a note
/// saying how much is shown and that the `read` tool has the rest.
pub fn load_instructions(root: &Path, cwd: &Path, cap_bytes: usize) -> Instructions {
    let mut warnings = Vec::new();
    let root = match root.canonicalize() {
        Ok(root) => root,
        Err(error) => {
            warnings.push(format!(
                "project instructions not loaded: the project folder {} cannot be opened ({error})",
                root.display()
            ));
            return Instructions {
                warnings,
                ..Instructions::default()
            };
        }
    };
    let folders = folders_from_root(&root, cwd, &mut warnings);

    let mut found = Vec::new();
    for folder in folders {
        if let Some(file) = find_in_folder(&root, &folder, cap_bytes, &mut warnings) {
            found.push(file);
        }
    }
    assemble(found, cap_bytes, warnings)
}

/// The folders from the root down to `cwd`, relative to the root (the root is the empty path).
fn folders_from_root(root: &Path, cwd: &Path, warnings: &mut Vec<String>) -> Vec<PathBuf> {
    let cwd = if cwd.is_absolute() {
        cwd.to_path_buf()
    } else {
        root.join(cwd)
    };
    let relative = match cwd.canonicalize() {
        Ok(cwd) => match cwd.strip_prefix(root) {
            Ok(relative) => relative.to_path_buf(),
            Err(_) => {
                warnings.push(format!(
                    "the working folder {} is outside the project folder {}; only the project root's instructions were loaded",
                    cwd.display(),
                    root.display()
                ));
                PathBuf::new()
            }
        },
        Err(error) => {
            warnings.push(format!(
                "the working folder {} cannot be opened ({error}); only the project root's instructions were loaded",
                cwd.display()
            ));
            PathBuf::new()
        }
    };
    let mut folders = vec![PathBuf::new()];
    let mut current = PathBuf::new();
    for component in relative.components() {
        if let Component::Normal(name) = component {
            current.push(name);
            folders.push(current.clone());
        }
    }
    folders
}

/// One instruction file found.
struct Found {
    /// Relative to the root.
    path: PathBuf,
    /// Its text (at most the cap's size), BOM removed, trailing whitespace trimmed.
    text: String,
    /// The file's size in bytes.
    size: u64,
    /// Whether `text` holds the whole file (it was not cut at the read limit).
    complete: bool,
}

fn find_in_folder(
    root: &Path,
    folder: &Path,
    cap_bytes: usize,
    warnings: &mut Vec<String>,
) -> Option<Found> {
    for name in [AGENTS_FILE, ALIAS_FILE] {
        let relative = folder.join(name);
        match read_confined(root, &relative, cap_bytes) {
            Ok(None) => continue,
            Ok(Some(read)) => {
                let text = read.text.trim_end().to_owned();
                // An empty file says nothing; it still shadows the alias, as it is there.
                return (!text.trim().is_empty()).then_some(Found {
                    path: relative,
                    text,
                    size: read.size,
                    complete: read.complete,
                });
            }
            Err(reason) => {
                warnings.push(format!("skipped {}: {reason}", slash_path(&relative)));
                return None;
            }
        }
    }
    None
}

/// A text file read from inside the project.
#[derive(Debug)]
pub(crate) struct ConfinedRead {
    /// The text, BOM removed, cut at `limit` bytes (never inside a character).
    pub(crate) text: String,
    /// The whole file's size in bytes.
    pub(crate) size: u64,
    /// Whether the whole file was read (it was not longer than the limit).
    pub(crate) complete: bool,
}

/// Why a file inside the project could not be read (each reads as the end of "skipped X: …").
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConfinedReadError {
    #[error("it cannot be read ({0})")]
    Unreadable(io::Error),
    #[error("it is a symbolic link to nothing")]
    DanglingLink,
    #[error("it is a symbolic link to a file outside the project folder")]
    OutsideProject,
    #[error("it is not a regular file")]
    NotAFile,
}

/// Reads `relative` under the canonical `root`, at most `limit` bytes. `Ok(None)` when there is
/// no such entry; an error when it exists but may not or cannot be read: a symbolic link whose
/// target lies outside the root, something that is not a regular file, an I/O error.
pub(crate) fn read_confined(
    root: &Path,
    relative: &Path,
    limit: usize,
) -> Result<Option<ConfinedRead>, ConfinedReadError> {
    let path = root.join(relative);
    match fs::symlink_metadata(&path) {
        Ok(_) => {}
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(ConfinedReadError::Unreadable(error)),
    }
    let real = path.canonicalize().map_err(|error| match error.kind() {
        io::ErrorKind::NotFound => ConfinedReadError::DanglingLink,
        _ => ConfinedReadError::Unreadable(error),
    })?;
    if !real.starts_with(root) {
        return Err(ConfinedReadError::OutsideProject);
    }
    let metadata = fs::metadata(&real).map_err(ConfinedReadError::Unreadable)?;
    if !metadata.is_file() {
        return Err(ConfinedReadError::NotAFile);
    }
    let mut bytes = Vec::new();
    let limit = u64::try_from(limit).unwrap_or(u64::MAX);
    fs::File::open(&real)
        .and_then(|file| file.take(limit).read_to_end(&mut bytes))
        .map_err(ConfinedReadError::Unreadable)?;
    let complete = bytes.len() as u64 >= metadata.len();
    Ok(Some(ConfinedRead {
        text: decode(bytes),
        size: metadata.len(),
        complete,
    }))
}

/// UTF-8 text from bytes that may end inside a character (a read cut at a limit) or hold a
/// stray invalid byte (shown as U+FFFD). A leading byte order mark is dropped.
fn decode(bytes: Vec<u8>) -> String {
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(error) => {
            let utf8 = error.utf8_error();
            let mut bytes = error.into_bytes();
            if utf8.error_len().is_none() {
                // Only the last character is incomplete: drop it.
                bytes.truncate(utf8.valid_up_to());
            }
            String::from_utf8_lossy(&bytes).into_owned()
        }
    };
    match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_owned(),
        None => text,
    }
}

/// A path relative to the root, with `/` between components on every OS (the root's own file
/// is just its name).
pub(crate) fn slash_path(path: &Path) -> String {
    let parts: Vec<String> = path
        .components()
        .map(|part| part.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.join("/")
}

fn header(path: &Path) -> String {
    match path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
    {
        Some(folder) => format!(
            "Instructions from {} (for work under {}/; they take precedence over the files above):\n\n",
            slash_path(path),
            slash_path(folder)
        ),
        None => format!(
            "Instructions from {} (the whole project):\n\n",
            slash_path(path)
        ),
    }
}

fn cut_note(path: &Path, shown: usize, size: u64) -> String {
    format!(
        "\n\n[{} was cut to fit the instructions' size cap: {shown} of {size} bytes shown. Read the file for the rest.]",
        slash_path(path)
    )
}

const SEPARATOR: &str = "\n\n";

/// Joins the files under their headers, within `cap_bytes`.
fn assemble(mut found: Vec<Found>, cap_bytes: usize, mut warnings: Vec<String>) -> Instructions {
    // What the text costs besides the files' own text, were every file cut (an upper bound: a
    // note never shows more than the whole text).
    let overhead = |found: &[Found]| -> usize {
        let headers: usize = found.iter().map(|file| header(&file.path).len()).sum();
        let notes: usize = found
            .iter()
            .map(|file| cut_note(&file.path, file.text.len(), file.size).len())
            .sum();
        headers + notes + SEPARATOR.len() * found.len().saturating_sub(1)
    };
    let whole: usize = found
        .iter()
        .map(|file| header(&file.path).len() + file.text.len())
        .sum::<usize>()
        + SEPARATOR.len() * found.len().saturating_sub(1);
    let fits_whole = whole <= cap_bytes && found.iter().all(|file| file.complete);
    let truncated = !fits_whole;

    if truncated {
        // With a cap too small even for the headers, the shallowest files go first: the deeper
        // ones are the more specific.
        while !found.is_empty() && overhead(&found) > cap_bytes {
            let dropped = found.remove(0);
            warnings.push(format!(
                "{} was left out: the instructions' size cap ({cap_bytes} bytes) is too small for it",
                slash_path(&dropped.path)
            ));
        }
    }

    let mut sections = Vec::with_capacity(found.len());
    if fits_whole {
        for file in &found {
            sections.push(format!("{}{}", header(&file.path), file.text));
        }
    } else {
        let budget = cap_bytes.saturating_sub(overhead(&found));
        let lengths: Vec<usize> = found.iter().map(|file| file.text.len()).collect();
        let shares = fair_shares(&lengths, budget);
        for (file, share) in found.iter().zip(shares) {
            if share >= file.text.len() && file.complete {
                sections.push(format!("{}{}", header(&file.path), file.text));
                continue;
            }
            let shown = cut_at_line(&file.text, share).trim_end();
            warnings.push(format!(
                "{} was cut to fit the instructions' size cap ({cap_bytes} bytes): {} of {} bytes are used",
                slash_path(&file.path),
                shown.len(),
                file.size
            ));
            sections.push(format!(
                "{}{}{}",
                header(&file.path),
                shown,
                cut_note(&file.path, shown.len(), file.size)
            ));
        }
    }

    Instructions {
        text: sections.join(SEPARATOR),
        files: found.into_iter().map(|file| file.path).collect(),
        truncated,
        warnings,
    }
}

/// Splits `budget` among texts of the given lengths (max-min fairness): texts shorter than an
/// equal share get all they need, the longer ones share what is left equally. The rounding
/// remainder goes to the later (deeper) texts.
fn fair_shares(lengths: &[usize], budget: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..lengths.len()).collect();
    order.sort_by_key(|&index| (lengths[index], index));
    let mut shares = vec![0; lengths.len()];
    let mut remaining = budget;
    for (position, &index) in order.iter().enumerate() {
        let left = order.len() - position;
        let share = lengths[index].min(remaining / left);
        shares[index] = share;
        remaining -= share;
    }
    shares
}

/// The longest prefix of `text` within `limit` bytes, ending at a line end when one lies in the
/// second half of the prefix, and never inside a character.
fn cut_at_line(text: &str, limit: usize) -> &str {
    if text.len() <= limit {
        return text;
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let prefix = &text[..end];
    match prefix.rfind('\n') {
        Some(newline) if newline >= end / 2 => &prefix[..newline],
        _ => prefix,
    }
}

/// Everything the system prompt is built from. The caller gathers the facts (the date from the
/// clock, the OS, the shell), so [`system_prompt`] stays pure.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PromptParts {
    /// The project root, as shown to the model.
    pub project_root: String,
    /// The working folder, as shown to the model (the root or a folder inside it).
    pub working_folder: String,
    /// The operating system (`std::env::consts::OS`).
    pub os: String,
    /// The shell `bash` commands run in.
    pub shell: String,
    /// Today's date, `YYYY-MM-DD`.
    pub date: String,
    /// Whether the project is a git repository.
    pub is_git_repo: bool,
    /// [`Instructions::text`]; empty when the project has none.
    pub instructions: String,
    /// [`crate::skills::SkillSet::index`]; empty when there are no skills.
    pub skill_index: String,
    /// The current todo list, one item a line (`[ ] …`, `[~] …`, `[x] …`); empty when there is none.
    pub todos: String,
    /// The names of the tools this agent is offered: the prompt describes these and no others
    /// (a subagent has fewer than the main agent).
    pub tools: Vec<String>,
}

const INTRODUCTION: &str = "\
You are corvid, a coding agent. You work in the user's project through tools: you read and search \
the code, make changes, run commands, and report back. Be concise and direct; the user reads your \
replies in a terminal.";

/// How to use each built-in tool, in the order the prompt lists them. A line is shown only when
/// its tool is offered; tools from elsewhere (MCP, custom) are described by their own specs.
const TOOL_LINES: &[(&str, &str)] = &[
    (
        "read",
        "- `read` shows a file with line numbers; use offset and limit for long files. Read a file before you edit it.",
    ),
    (
        "glob",
        "- `glob` finds files by name pattern; it skips ignored files. Search instead of guessing paths.",
    ),
    (
        "grep",
        "- `grep` searches file contents; it skips ignored files. Search instead of guessing names.",
    ),
    (
        "edit",
        "- `edit` replaces an exact passage of a file: copy it from what you read, with enough surrounding lines to make it unique, and keep each edit small.",
    ),
    (
        "write",
        "- `write` creates a file or replaces a whole file.",
    ),
    (
        "bash",
        "- `bash` runs a command in the project folder, with a timeout. Start servers and watchers with `background: true`.",
    ),
    (
        "process",
        "- `process` reads the output of a background command or stops it.",
    ),
    (
        "todowrite",
        "- `todowrite` keeps a task list for work with several steps: one item in progress at a time, each marked done as you finish it.",
    ),
    (
        "task",
        "- `task` gives a self-contained job to a subagent (`explore` to research the code read-only, `general` for a separate piece of work). It sees none of this conversation and returns only a summary, so tell it everything it needs.",
    ),
    (
        "skill",
        "- `skill` loads a skill's full instructions by name (see Skills below, when there are any).",
    ),
];

const GUIDANCE: &str = "\
# How to work
- Understand first: read the relevant code and follow the project's instructions, style, libraries and patterns.
- Make the smallest change that does the job. Do not reformat, rename or rewrite code you were not asked to touch.
- Verify: build and run the tests or linters that cover your change, and fix what you broke. If you cannot run them, say so.
- Ask before acting when a request is ambiguous, or when a step is risky or hard to undo (deleting data, rewriting git history, a large refactor).
- Never invent APIs, commands, files or results. Say what you did not check.
- Finish with a short summary: what changed, how you checked it, and anything left open.

# Approvals
The user may be asked to approve edits and commands before they run. A rejected call comes back \
with the user's feedback: follow it, and do not repeat the same call unchanged.";

/// The system prompt: the introduction, the offered tools, how to work and approvals, the
/// environment, then the project's instructions, the skill index and the todos, each only when
/// there is something.
pub fn system_prompt(parts: &PromptParts) -> String {
    let mut prompt = String::from(INTRODUCTION);
    prompt.push_str("\n\n# Tools\n");
    for (tool, line) in TOOL_LINES {
        if parts.tools.iter().any(|offered| offered == tool) {
            prompt.push_str(line);
            prompt.push('\n');
        }
    }
    prompt.push_str(
        "Paths are relative to the project root, and the file tools never leave it (what commands may do is under Sandbox, when commands are offered). Use only the tools you are given.\n\n",
    );
    prompt.push_str(GUIDANCE);

    prompt.push_str("\n\n# Environment\n");
    prompt.push_str(&format!("- Project root: {}\n", parts.project_root));
    if parts.working_folder.is_empty() || parts.working_folder == parts.project_root {
        prompt.push_str("- Working folder: the project root\n");
    } else {
        prompt.push_str(&format!("- Working folder: {}\n", parts.working_folder));
    }
    prompt.push_str(&format!("- Operating system: {}\n", parts.os));
    prompt.push_str(&format!("- Shell: {}\n", parts.shell));
    prompt.push_str(&format!("- Today's date: {}\n", parts.date));
    prompt.push_str(&format!(
        "- Git repository: {}",
        if parts.is_git_repo { "yes" } else { "no" }
    ));

    if !parts.instructions.trim().is_empty() {
        prompt.push_str(
            "\n\n# Project instructions\n\
             The project's AGENTS.md files. Follow them. A file deeper in the tree takes precedence over \
             the ones above it for work in its folder; the user's direct requests take precedence over all of them.\n\n",
        );
        prompt.push_str(parts.instructions.trim_end());
    }

    if !parts.skill_index.trim().is_empty() {
        prompt.push_str(
            "\n\n# Skills\n\
             Skills are instructions for particular kinds of tasks. When a task matches a skill's \
             description, load it with the `skill` tool before you start. Project skills live in \
             `.corvid/skills/<name>/SKILL.md`.\n\n",
        );
        prompt.push_str(parts.skill_index.trim_end());
    }

    if !parts.todos.trim().is_empty() {
        prompt.push_str("\n\n# Current todos\n");
        prompt.push_str(parts.todos.trim_end());
    }

    prompt.push('\n');
    prompt
}

#[cfg(test)]
mod tests;

//! `/init`: the turn that writes the project's `AGENTS.md`, or improves the one there is.
//!
//! [`project_facts`] gathers cheap facts (a directory listing and a few small files, no
//! commands run) and [`init_prompt`] turns them into the user message of an ordinary turn: the
//! model looks at the project with its tools and writes the file through the normal approval
//! gate.

use std::path::Path;

use crate::instructions::{AGENTS_FILE, read_confined};

mod ecosystems;

/// The most top-level entries listed.
const MAX_ENTRIES: usize = 60;
/// The most CI files listed.
const MAX_CI_FILES: usize = 10;
/// The most bytes of a manifest or README read.
const MAX_READ: usize = 256 * 1024;
/// The most bytes of an existing `AGENTS.md` quoted in the prompt.
const MAX_EXISTING: usize = 24 * 1024;

/// What a quick look at the project root found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProjectFacts {
    /// The top-level entries, sorted, gitignored ones left out; folders end with `/`.
    pub entries: Vec<String>,
    /// How many more top-level entries there are beyond `entries`.
    pub more_entries: usize,
    /// The build systems and languages found, with their usual commands.
    pub ecosystems: Vec<Ecosystem>,
    /// The README, relative to the root.
    pub readme: Option<String>,
    /// Its first heading.
    pub readme_heading: Option<String>,
    /// CI configuration files, relative to the root.
    pub ci: Vec<String>,
    /// Other files with guidance for contributors or agents (`CLAUDE.md`, `CONTRIBUTING.md`,
    /// `.cursorrules`, …), relative to the root.
    pub guidance: Vec<String>,
    /// Whether the root is a git repository.
    pub is_git_repo: bool,
}

/// A build system or language found in the project root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ecosystem {
    /// "Rust", "Node.js", "Python", …
    pub name: &'static str,
    /// The file that revealed it, relative to the root.
    pub manifest: String,
    /// Commands it usually takes, to be confirmed against the project.
    pub commands: Vec<String>,
}

/// Gathers [`ProjectFacts`] about `root`. Reads only the root listing and a few small files
/// inside the root; never fails (what cannot be read is left out).
pub fn project_facts(root: &Path) -> ProjectFacts {
    let Ok(root) = root.canonicalize() else {
        return ProjectFacts::default();
    };
    let listing = Listing {
        root: &root,
        entries: list_top_level(&root),
    };
    let mut facts = ProjectFacts {
        is_git_repo: root.join(".git").exists(),
        ..ProjectFacts::default()
    };
    let shown: Vec<String> = listing
        .entries
        .iter()
        .filter(|entry| entry.name != ".git")
        .map(|entry| {
            if entry.is_dir {
                format!("{}/", entry.name)
            } else {
                entry.name.clone()
            }
        })
        .collect();
    facts.more_entries = shown.len().saturating_sub(MAX_ENTRIES);
    facts.entries = shown.into_iter().take(MAX_ENTRIES).collect();

    facts.ecosystems = ecosystems::detect(&listing);

    let readme = [
        "README.md",
        "README.markdown",
        "README.rst",
        "README.txt",
        "README",
        "readme.md",
        "Readme.md",
    ]
    .into_iter()
    .find(|name| listing.has(name));
    if let Some(name) = readme {
        facts.readme = Some(name.to_owned());
        facts.readme_heading = listing.read(name).and_then(|text| first_heading(&text));
    }

    if listing.has_dir(".github") {
        facts.ci = workflow_files(&root);
    }
    for name in [
        ".gitlab-ci.yml",
        ".circleci/config.yml",
        "azure-pipelines.yml",
        "Jenkinsfile",
        ".travis.yml",
    ] {
        if root.join(name).is_file() && facts.ci.len() < MAX_CI_FILES {
            facts.ci.push(name.to_owned());
        }
    }

    for name in [
        "CLAUDE.md",
        "GEMINI.md",
        "CONTRIBUTING.md",
        ".cursorrules",
        ".cursor/rules",
        ".windsurfrules",
        ".github/copilot-instructions.md",
        "docs/CONTRIBUTING.md",
    ] {
        if root.join(name).exists() {
            facts.guidance.push(name.to_owned());
        }
    }
    facts
}

/// Reads the project's root `AGENTS.md` for [`init_prompt`], refusing a symbolic link that
/// leaves the project. `None` when there is none (or it cannot be read).
pub fn existing_agents_md(root: &Path) -> Option<String> {
    let root = root.canonicalize().ok()?;
    read_confined(&root, Path::new(AGENTS_FILE), MAX_READ)
        .ok()
        .flatten()
        .map(|read| read.text)
}

/// One entry of the project root.
struct TopLevel {
    name: String,
    is_dir: bool,
}

/// The project root's listing, and small reads inside it.
struct Listing<'a> {
    root: &'a Path,
    entries: Vec<TopLevel>,
}

impl Listing<'_> {
    fn has(&self, name: &str) -> bool {
        self.entries.iter().any(|entry| entry.name == name)
    }

    fn has_dir(&self, name: &str) -> bool {
        self.entries
            .iter()
            .any(|entry| entry.name == name && entry.is_dir)
    }

    /// A small text file at the top level (a manifest, the README), if it can be read.
    fn read(&self, name: &str) -> Option<String> {
        read_confined(self.root, Path::new(name), MAX_READ)
            .ok()
            .flatten()
            .map(|read| read.text)
    }
}

/// The root's entries, sorted by name, skipping what `.gitignore` (or `.ignore`) excludes.
fn list_top_level(root: &Path) -> Vec<TopLevel> {
    let walker = ignore::WalkBuilder::new(root)
        .max_depth(Some(1))
        .hidden(false)
        .parents(false)
        .git_global(false)
        .require_git(false)
        .build();
    let mut entries: Vec<TopLevel> = walker
        .filter_map(Result::ok)
        .filter(|entry| entry.depth() == 1)
        .map(|entry| TopLevel {
            name: entry.file_name().to_string_lossy().into_owned(),
            is_dir: entry.path().is_dir(),
        })
        .collect();
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    entries
}

fn workflow_files(root: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(root.join(".github/workflows")) else {
        return Vec::new();
    };
    let mut files: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".yml") || name.ends_with(".yaml"))
        .map(|name| format!(".github/workflows/{name}"))
        .collect();
    files.sort();
    files.truncate(MAX_CI_FILES);
    files
}

/// The first Markdown (ATX or setext) or reStructuredText heading.
fn first_heading(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().take(200).collect();
    let mut in_fence = false;
    for (index, line) in lines.iter().enumerate() {
        let trimmed = line.trim();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence || trimmed.is_empty() {
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix('#') {
            let heading = rest
                .trim_start_matches('#')
                .trim()
                .trim_end_matches('#')
                .trim();
            if !heading.is_empty() && (rest.starts_with([' ', '#']) || rest.is_empty()) {
                return Some(heading.to_owned());
            }
            continue;
        }
        let underline = lines
            .get(index + 1)
            .map(|next| next.trim())
            .unwrap_or_default();
        let is_underline = underline.len() >= 3
            && (underline.chars().all(|c| c == '=') || underline.chars().all(|c| c == '-'));
        if is_underline && !trimmed.starts_with('<') {
            return Some(trimmed.to_owned());
        }
    }
    None
}

/// The user message of an `/init` turn: write `AGENTS.md`, or improve `existing` (the current
/// file's text), from what the project contains.
pub fn init_prompt(existing: Option<&str>, facts: &ProjectFacts) -> String {
    let existing = existing.filter(|text| !text.trim().is_empty());
    let mut prompt = String::new();
    match existing {
        None => prompt.push_str(
            "Create AGENTS.md at the project root: a short, correct guide for coding agents (and people) \
             working in this repository. It will be added to your instructions in every later session.\n",
        ),
        Some(_) => prompt.push_str(
            "Improve the project's AGENTS.md (at the project root; its current text is below): a short, \
             correct guide for coding agents (and people) working in this repository. It is added to your \
             instructions in every session. Keep what is still right, fix what is wrong or out of date, add \
             what is missing and cut what is filler; keep rules that look deliberate even if you cannot check \
             them.\n",
        ),
    }
    prompt.push_str(
        "\nLook before you write. Use glob, grep and read on the sources that matter: the README, the build \
         manifests, CI workflows, lint and format settings, and any existing contributor or agent notes. Check \
         that every command you write really exists (script names, make targets, workspace flags); run one only \
         to confirm it, and prefer quick ones.\n\
         \nCover, where the project gives you something real:\n\
         - Build, test, lint and format commands, including how to run a single test.\n\
         - Layout: the main folders (crates, packages, apps) and what each holds.\n\
         - Conventions the code does not make obvious: style, naming, error handling, how tests are written, \
         commit and review rules.\n\
         - Gotchas: required services or environment, generated files not to edit by hand, slow or flaky steps.\n\
         \nKeep it short (well under 150 lines), in plain Markdown with exact commands in backticks. Do not invent \
         anything. Leave out generic advice that fits every project, a file-by-file listing, and secrets.\n",
    );
    if !facts.guidance.is_empty() {
        prompt.push_str(&format!(
            "\nThe project also has {}: read them and carry over what belongs in AGENTS.md.\n",
            facts.guidance.join(", ")
        ));
    }
    prompt.push_str(&format!(
        "\nWrite the file with the `{}` tool (or `edit` for small changes); the user reviews and approves it. \
         Then reply with two or three lines on what you wrote or changed.\n",
        if existing.is_some() { "edit" } else { "write" }
    ));

    prompt.push_str("\n## What corvid noticed (quick checks; confirm before relying on them)\n");
    prompt.push_str(&facts_block(facts));

    if let Some(text) = existing {
        let (shown, cut) = cut_text(text, MAX_EXISTING);
        let fence = fence_for(shown);
        prompt.push_str(&format!(
            "\n## The current AGENTS.md\n\n{fence}markdown\n{}\n{fence}\n",
            shown.trim_end()
        ));
        if cut {
            prompt.push_str(&format!(
                "(cut after {} of {} bytes; read AGENTS.md for the rest)\n",
                shown.len(),
                text.len()
            ));
        }
    }
    prompt
}

fn facts_block(facts: &ProjectFacts) -> String {
    let mut block = String::new();
    if facts.entries.is_empty() {
        block.push_str("- Top level: empty\n");
    } else {
        let more = if facts.more_entries > 0 {
            format!(" … and {} more", facts.more_entries)
        } else {
            String::new()
        };
        block.push_str(&format!(
            "- Top level: {}{more}\n",
            facts.entries.join(", ")
        ));
    }
    block.push_str(&format!(
        "- Git repository: {}\n",
        if facts.is_git_repo { "yes" } else { "no" }
    ));
    if facts.ecosystems.is_empty() {
        block.push_str("- No build manifest recognised at the top level.\n");
    }
    for ecosystem in &facts.ecosystems {
        let commands: Vec<String> = ecosystem
            .commands
            .iter()
            .map(|command| format!("`{command}`"))
            .collect();
        block.push_str(&format!(
            "- {} ({}): {}\n",
            ecosystem.name,
            ecosystem.manifest,
            commands.join(", ")
        ));
    }
    match (&facts.readme, &facts.readme_heading) {
        (Some(readme), Some(heading)) => {
            block.push_str(&format!("- README: {readme}, titled \"{heading}\"\n"))
        }
        (Some(readme), None) => block.push_str(&format!("- README: {readme}\n")),
        _ => block.push_str("- No README.\n"),
    }
    if !facts.ci.is_empty() {
        block.push_str(&format!("- CI: {}\n", facts.ci.join(", ")));
    }
    block
}

/// At most `limit` bytes of `text`, not inside a character; and whether it was cut.
fn cut_text(text: &str, limit: usize) -> (&str, bool) {
    if text.len() <= limit {
        return (text, false);
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (&text[..end], true)
}

/// A backtick fence longer than any run of backticks in `text`.
fn fence_for(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat(longest.max(2) + 1)
}

#[cfg(test)]
mod tests;

//! `glob` and `grep`, on ripgrep's crates: `.gitignore` (and `.ignore`) respected even outside a
//! git repository, hidden files included, `.git` skipped, symbolic links not followed (a
//! symbolic link to a file is searched only when it resolves inside the project).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::SystemTime;

use globset::{GlobBuilder, GlobMatcher};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::args;
use crate::context::ToolContext;
use crate::error::ToolError;
use crate::text;
use crate::tool::{
    Action, BuiltinSpec, Cancellation, Plan, Prepared, Proposal, ToolKind, ToolOutput,
};

pub(crate) const GLOB: &str = "glob";
pub(crate) const GREP: &str = "grep";

/// Files looked at by one `glob` before it gives up counting.
const GLOB_SCAN_LIMIT: usize = 100_000;
/// The most context lines `grep` shows around a match.
const MAX_CONTEXT: u64 = 10;

pub(crate) fn glob_spec() -> BuiltinSpec {
    BuiltinSpec {
        name: GLOB,
        description: "Find files by name pattern, most recently modified first (capped at 200). \
            `*` stays within a folder, `**` crosses folders: `src/**/*.rs`. A pattern without `/` matches \
            file names at any depth (`*.toml`, `Cargo.*`). Respects .gitignore.",
        parameters: json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Glob pattern, relative to `path`"},
                "path": {"type": "string", "description": "Folder to search in, relative to the project folder (default: the whole project)"}
            },
            "required": ["pattern"],
            "additionalProperties": false
        }),
        kind: ToolKind::Read,
    }
}

pub(crate) fn grep_spec() -> BuiltinSpec {
    BuiltinSpec {
        name: GREP,
        description: "Search file contents with a regular expression (Rust regex syntax, like ripgrep). \
            Prints `path:line: text` for each matching line (context lines as `path-line- text`), files in \
            path order, capped at 200 matches. Respects .gitignore; binary files are skipped.",
        parameters: json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Regular expression"},
                "path": {"type": "string", "description": "File or folder to search, relative to the project folder (default: the whole project)"},
                "glob": {"type": "string", "description": "Only files matching this glob, e.g. `*.rs` or `src/**/*.ts`"},
                "case_insensitive": {"type": "boolean", "description": "Ignore case (default false)"},
                "context": {"type": "integer", "minimum": 0, "maximum": 10, "description": "Lines of context before and after each match (default 0)"}
            },
            "required": ["pattern"],
            "additionalProperties": false
        }),
        kind: ToolKind::Read,
    }
}

#[derive(Debug, Deserialize)]
struct GlobArgs {
    pattern: String,
    #[serde(default)]
    path: Option<String>,
}

#[derive(Debug, Deserialize)]
struct GrepArgs {
    pattern: String,
    #[serde(default)]
    path: Option<String>,
    #[serde(default, alias = "include")]
    glob: Option<String>,
    #[serde(
        default,
        alias = "ignore_case",
        alias = "-i",
        deserialize_with = "args::opt_bool"
    )]
    case_insensitive: Option<bool>,
    #[serde(
        default,
        alias = "context_lines",
        alias = "-C",
        deserialize_with = "args::opt_u64"
    )]
    context: Option<u64>,
}

/// A glob, matched against the path relative to the search folder, or against the file name
/// alone when the pattern has no `/` (gitignore's rule, and ripgrep's `--glob`).
#[derive(Debug)]
struct NameFilter {
    matcher: GlobMatcher,
    name_only: bool,
}

impl NameFilter {
    fn new(tool: &'static str, pattern: &str) -> Result<Self, ToolError> {
        let pattern = pattern.trim();
        let pattern = pattern.strip_prefix("./").unwrap_or(pattern);
        if pattern.is_empty() {
            return Err(ToolError::invalid(tool, "the glob pattern is empty"));
        }
        if pattern.starts_with('/') {
            return Err(ToolError::invalid(
                tool,
                "the glob pattern must be relative (use `path` to choose the folder)",
            ));
        }
        let matcher = GlobBuilder::new(pattern)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|error| ToolError::invalid(tool, format!("bad glob pattern: {error}")))?
            .compile_matcher();
        Ok(Self {
            matcher,
            name_only: !pattern.contains('/'),
        })
    }

    /// `path` is under `base`, or is `base` itself (a single file searched).
    fn matches(&self, base: &Path, path: &Path) -> bool {
        let relative = match path.strip_prefix(base) {
            Ok(relative) if !relative.as_os_str().is_empty() => relative,
            _ => Path::new(path.file_name().unwrap_or_default()),
        };
        if self.name_only {
            relative
                .file_name()
                .is_some_and(|name| self.matcher.is_match(name))
        } else {
            self.matcher.is_match(relative)
        }
    }
}

#[derive(Debug)]
pub(crate) struct GlobPlan {
    base: PathBuf,
    pattern: String,
    filter: NameFilter,
}

#[derive(Debug)]
pub(crate) struct GrepPlan {
    base: PathBuf,
    pattern: String,
    matcher: RegexMatcher,
    filter: Option<NameFilter>,
    context: u64,
}

fn search_base(context: &ToolContext, path: Option<&str>) -> Result<PathBuf, ToolError> {
    match path.map(str::trim).filter(|path| !path.is_empty()) {
        None => Ok(context.workspace.root().to_path_buf()),
        Some(path) => {
            let base = context.workspace.resolve(path)?;
            if !base.exists() {
                return Err(ToolError::NotFound {
                    path: context.workspace.display(&base),
                });
            }
            Ok(base)
        }
    }
}

/// A search ready to run: read-only, proposed as `summary` over `base`, its plan made by `action`
/// from `base`.
fn prepared_search(
    context: &ToolContext,
    tool: &str,
    summary: String,
    base: PathBuf,
    action: impl FnOnce(PathBuf) -> Action,
) -> Prepared {
    Prepared {
        tool: tool.to_owned(),
        kind: ToolKind::Read,
        proposal: Proposal {
            summary,
            diff: None,
            whole_file: false,
            command: None,
            path: Some(context.workspace.relative(&base)),
        },
        plan: Plan {
            action: action(base),
        },
    }
}

pub(crate) fn prepare_glob(context: &ToolContext, arguments: Value) -> Result<Prepared, ToolError> {
    let arguments: GlobArgs = args::parse(GLOB, arguments)?;
    let base = search_base(context, arguments.path.as_deref())?;
    let filter = NameFilter::new(GLOB, &arguments.pattern)?;
    let summary = format!(
        "Find files matching `{}` in {}",
        arguments.pattern,
        context.workspace.display(&base)
    );
    Ok(prepared_search(context, GLOB, summary, base, |base| {
        Action::Glob(GlobPlan {
            base,
            pattern: arguments.pattern,
            filter,
        })
    }))
}

pub(crate) fn prepare_grep(context: &ToolContext, arguments: Value) -> Result<Prepared, ToolError> {
    let arguments: GrepArgs = args::parse(GREP, arguments)?;
    let base = search_base(context, arguments.path.as_deref())?;
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(arguments.case_insensitive.unwrap_or(false))
        .line_terminator(Some(b'\n'))
        .build(&arguments.pattern)
        .map_err(|error| ToolError::invalid(GREP, format!("bad regular expression: {error}")))?;
    let filter = arguments
        .glob
        .as_deref()
        .filter(|glob| !glob.trim().is_empty())
        .map(|glob| NameFilter::new(GREP, glob))
        .transpose()?;
    let summary = format!(
        "Search for `{}` in {}",
        arguments.pattern,
        context.workspace.display(&base)
    );
    Ok(prepared_search(context, GREP, summary, base, |base| {
        Action::Grep(GrepPlan {
            base,
            pattern: arguments.pattern,
            matcher,
            filter,
            context: arguments.context.unwrap_or(0).min(MAX_CONTEXT),
        })
    }))
}

/// The gitignore-aware walk both tools share, in file-name order.
fn walk(base: &Path) -> ignore::Walk {
    ignore::WalkBuilder::new(base)
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|entry| entry.file_name() != ".git")
        .sort_by_file_name(|left, right| left.cmp(right))
        .build()
}

/// The files of a walk: regular files, and symbolic links that resolve to a file inside.
fn files<'a>(
    context: &'a ToolContext,
    base: &'a Path,
    stop: &'a AtomicBool,
) -> impl Iterator<Item = PathBuf> + 'a {
    walk(base)
        .take_while(|_| !stop.load(Ordering::Relaxed))
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let kind = entry.file_type()?;
            if kind.is_file() {
                return Some(entry.into_path());
            }
            if kind.is_symlink() {
                let target = context.workspace.resolve(entry.path()).ok()?;
                return target.is_file().then(|| entry.into_path());
            }
            None
        })
}

/// Where a search looked, for messages.
fn place(context: &ToolContext, base: &Path) -> String {
    if base == context.workspace.root() {
        "the project folder".to_owned()
    } else {
        context.workspace.display(base)
    }
}

async fn run_blocking<F>(
    context: Arc<ToolContext>,
    mut cancel: Cancellation,
    work: F,
) -> Result<ToolOutput, ToolError>
where
    F: FnOnce(&ToolContext, &AtomicBool) -> ToolOutput + Send + 'static,
{
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let task = tokio::task::spawn_blocking(move || work(&context, &flag));
    tokio::select! {
        result = task => result.map_err(|error| ToolError::Internal(error.to_string())),
        () = cancel.cancelled() => {
            // The walk notices the flag at its next file and ends on its own.
            stop.store(true, Ordering::Relaxed);
            Err(ToolError::Cancelled { output: String::new() })
        }
    }
}

pub(crate) async fn glob(
    context: Arc<ToolContext>,
    plan: GlobPlan,
    cancel: Cancellation,
) -> Result<ToolOutput, ToolError> {
    run_blocking(context, cancel, move |context, stop| {
        run_glob(context, &plan, stop)
    })
    .await
}

fn run_glob(context: &ToolContext, plan: &GlobPlan, stop: &AtomicBool) -> ToolOutput {
    let mut found: Vec<(SystemTime, PathBuf)> = Vec::new();
    let mut scan_capped = false;
    for path in files(context, &plan.base, stop) {
        if !plan.filter.matches(&plan.base, &path) {
            continue;
        }
        if found.len() >= GLOB_SCAN_LIMIT {
            scan_capped = true;
            break;
        }
        let modified = std::fs::metadata(&path)
            .and_then(|meta| meta.modified())
            .unwrap_or(SystemTime::UNIX_EPOCH);
        found.push((modified, path));
    }
    if found.is_empty() {
        return ToolOutput::text(format!(
            "No files match `{}` in {}.",
            plan.pattern,
            place(context, &plan.base)
        ));
    }
    // Newest first; equal times in path order.
    found.sort_by(|left, right| right.0.cmp(&left.0).then_with(|| left.1.cmp(&right.1)));
    let limit = context.limits.search_results;
    let mut out = String::new();
    for (_, path) in found.iter().take(limit) {
        out.push_str(&context.workspace.display(path));
        out.push('\n');
    }
    if found.len() > limit || scan_capped {
        let total = if scan_capped {
            format!("more than {}", found.len())
        } else {
            found.len().to_string()
        };
        out.push_str(&format!(
            "\n(Truncated: showing {limit} of {total} files, most recently modified first. Use a narrower pattern or path.)\n"
        ));
    }
    ToolOutput::text(out)
}

pub(crate) async fn grep(
    context: Arc<ToolContext>,
    plan: GrepPlan,
    cancel: Cancellation,
) -> Result<ToolOutput, ToolError> {
    run_blocking(context, cancel, move |context, stop| {
        run_grep(context, &plan, stop)
    })
    .await
}

fn run_grep(context: &ToolContext, plan: &GrepPlan, stop: &AtomicBool) -> ToolOutput {
    let limits = &context.limits;
    let mut searcher = SearcherBuilder::new()
        .line_number(true)
        .before_context(plan.context as usize)
        .after_context(plan.context as usize)
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .build();
    let mut collected = Collected {
        out: String::new(),
        matches: 0,
        truncated: false,
    };
    for path in files(context, &plan.base, stop) {
        if let Some(filter) = &plan.filter
            && !filter.matches(&plan.base, &path)
        {
            continue;
        }
        let shown = context.workspace.display(&path);
        let mut sink = FileSink {
            shown: &shown,
            collected: &mut collected,
            separate: plan.context > 0,
            first: true,
            max_matches: limits.search_results,
            max_bytes: limits.grep_bytes,
            line_chars: limits.grep_line_chars,
        };
        // Unreadable files (permissions, vanished) are skipped, as ripgrep does.
        let _ = searcher.search_path(&plan.matcher, &path, &mut sink);
        if collected.truncated {
            break;
        }
    }
    if collected.matches == 0 {
        return ToolOutput::text(format!(
            "No matches for `{}` in {}.",
            plan.pattern,
            place(context, &plan.base)
        ));
    }
    let mut out = collected.out;
    if collected.truncated {
        out.push_str(&format!(
            "\n(Truncated after {} matches; there are more. Narrow the pattern, path or glob.)\n",
            collected.matches
        ));
    }
    ToolOutput::text(out)
}

struct Collected {
    out: String,
    matches: usize,
    truncated: bool,
}

struct FileSink<'a> {
    shown: &'a str,
    collected: &'a mut Collected,
    separate: bool,
    first: bool,
    max_matches: usize,
    max_bytes: usize,
    line_chars: usize,
}

impl FileSink<'_> {
    fn push(&mut self, number: Option<u64>, mark: char, bytes: &[u8]) {
        if self.first {
            self.first = false;
            if self.separate && !self.collected.out.is_empty() {
                self.collected.out.push_str("--\n");
            }
        }
        let line = String::from_utf8_lossy(bytes);
        let line = line.trim_end_matches('\n').trim_end_matches('\r');
        let line = text::cut_line(line, self.line_chars);
        let number = number.unwrap_or(0);
        self.collected
            .out
            .push_str(&format!("{}{mark}{number}{mark} {line}\n", self.shown));
    }

    fn full(&mut self) -> bool {
        if self.collected.matches >= self.max_matches || self.collected.out.len() >= self.max_bytes
        {
            self.collected.truncated = true;
        }
        self.collected.truncated
    }
}

impl Sink for FileSink<'_> {
    type Error = std::io::Error;

    fn matched(
        &mut self,
        _searcher: &Searcher,
        found: &SinkMatch<'_>,
    ) -> Result<bool, Self::Error> {
        if self.full() {
            return Ok(false);
        }
        self.push(found.line_number(), ':', found.bytes());
        self.collected.matches += 1;
        Ok(true)
    }

    fn context(
        &mut self,
        _searcher: &Searcher,
        context: &SinkContext<'_>,
    ) -> Result<bool, Self::Error> {
        if self.collected.truncated {
            return Ok(false);
        }
        self.push(context.line_number(), '-', context.bytes());
        Ok(true)
    }

    fn context_break(&mut self, _searcher: &Searcher) -> Result<bool, Self::Error> {
        self.collected.out.push_str("--\n");
        Ok(true)
    }
}

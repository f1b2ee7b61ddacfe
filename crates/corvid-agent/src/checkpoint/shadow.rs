//! The shadow repository: a git directory outside the project (under corvid's data folder,
//! one per project path) whose work tree is the project. Snapshots are trees written from its
//! own index, so the project's `.git` (if it has one) is never read or written, and folders that
//! are not git repositories work the same way.
//!
//! What a snapshot holds: every file git would add (`.gitignore` files and the project's
//! `.git/info/exclude` are respected), except files larger than [`MAX_FILE_BYTES`], which are
//! left out so a stray build artefact or data file cannot bloat the shadow repository. The user's
//! global and system git configuration is not read (no hooks, filters or diff settings of theirs
//! run), so snapshots and diffs are the same on every machine.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use corvid_protocol::{ChangeKind, FileChange};
use tokio::io::AsyncWriteExt;

/// Files above this size are not snapshotted (and so cannot be undone).
pub(crate) const MAX_FILE_BYTES: u64 = 2 * 1024 * 1024;
/// Projects with more files than this (outside `.gitignore`) are not snapshotted: copying
/// them all on every turn would cost more than undo is worth (an unignored `node_modules`).
pub(crate) const MAX_FILES: usize = 50_000;
/// An index lock older than this was left by a git that died.
const STALE_LOCK: std::time::Duration = std::time::Duration::from_secs(600);

/// Why a checkpoint operation failed.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum ShadowError {
    #[error("checkpoints need the `git` program, which was not found on PATH")]
    GitMissing,
    #[error("`git {command}` failed: {message}")]
    Git { command: String, message: String },
    #[error(
        "the project has more than {0} files outside .gitignore, too many to snapshot on every turn; add the generated folders to .gitignore"
    )]
    TooManyFiles(usize),
    #[error("{0}")]
    Io(String),
}

/// One path a turn changed, with its exact bytes (paths need not be UTF-8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Changed {
    pub(crate) path: Vec<u8>,
    pub(crate) change: ChangeKind,
}

impl Changed {
    pub(crate) fn to_protocol(&self) -> FileChange {
        FileChange {
            path: String::from_utf8_lossy(&self.path).into_owned(),
            change: self.change,
        }
    }
}

/// Why an undo did not happen.
#[derive(Debug, Clone)]
pub(crate) enum RestoreError {
    /// These files differ from what the turn left: someone changed them since.
    Conflicts(Vec<String>),
    Failed(ShadowError),
}

impl From<ShadowError> for RestoreError {
    fn from(error: ShadowError) -> Self {
        Self::Failed(error)
    }
}

/// A project's shadow repository.
#[derive(Debug, Clone)]
pub(crate) struct ShadowRepo {
    git_dir: PathBuf,
    work_tree: PathBuf,
    /// The git program (`git`, found on PATH).
    program: PathBuf,
    /// The most files a snapshot takes ([`MAX_FILES`]).
    max_files: usize,
}

impl ShadowRepo {
    /// The shadow repository for `project` under `root` (created on first use).
    pub(crate) fn new(root: &Path, project: &Path) -> Self {
        Self {
            git_dir: root.join(folder_name(project)),
            work_tree: project.to_owned(),
            program: PathBuf::from("git"),
            max_files: MAX_FILES,
        }
    }

    /// The same repository, run with another git program (tests use a missing one).
    #[cfg(test)]
    pub(crate) fn with_program(mut self, program: &Path) -> Self {
        self.program = program.to_owned();
        self
    }

    /// The same repository with another file limit.
    #[cfg(test)]
    pub(crate) fn with_max_files(mut self, max_files: usize) -> Self {
        self.max_files = max_files;
        self
    }

    /// Snapshots the project now; returns the tree's id.
    pub(crate) async fn snapshot(&self) -> Result<String, ShadowError> {
        self.ensure().await?;
        self.clear_stale_lock().await;
        let large = self.exclude_large_files().await?;
        if !large.is_empty() {
            // Excludes only keep untracked files out; these may be in the index from an
            // earlier snapshot, when they were small.
            self.git_input(
                &[
                    "rm",
                    "--cached",
                    // Only the shadow index changes: the files stay in the project.
                    "--force",
                    "-r",
                    "-q",
                    "--ignore-unmatch",
                    "--pathspec-from-file=-",
                    "--pathspec-file-nul",
                ],
                nul_joined(large.iter().map(|path| path.as_bytes())),
            )
            .await?;
        }
        // `--ignore-errors`: an unreadable file is left out instead of failing the snapshot;
        // git still exits non-zero then, so a failure here is only logged.
        if let Err(error) = self.git(&["add", "-A", "--ignore-errors"]).await {
            tracing::warn!(%error, "the snapshot left some files out");
        }
        let tree = self.git(&["write-tree"]).await?;
        Ok(String::from_utf8_lossy(&tree).trim().to_owned())
    }

    /// The files that differ between two snapshots.
    pub(crate) async fn changes(
        &self,
        before: &str,
        after: &str,
    ) -> Result<Vec<Changed>, ShadowError> {
        let output = self
            .git(&[
                "diff-tree",
                "-r",
                "-z",
                "--no-renames",
                "--name-status",
                before,
                after,
            ])
            .await?;
        let mut fields = output.split(|byte| *byte == 0).filter(|f| !f.is_empty());
        let mut changes = Vec::new();
        while let (Some(status), Some(path)) = (fields.next(), fields.next()) {
            let change = match status.first() {
                Some(b'A') => ChangeKind::Added,
                Some(b'D') => ChangeKind::Deleted,
                _ => ChangeKind::Modified,
            };
            changes.push(Changed {
                path: path.to_vec(),
                change,
            });
        }
        Ok(changes)
    }

    /// A unified diff between two snapshots (`a/` and `b/` prefixes, binary files named only).
    pub(crate) async fn diff(&self, before: &str, after: &str) -> Result<String, ShadowError> {
        let output = self
            .git(&[
                "diff",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                "--no-renames",
                "--src-prefix=a/",
                "--dst-prefix=b/",
                before,
                after,
            ])
            .await?;
        Ok(String::from_utf8_lossy(&output).into_owned())
    }

    /// Puts the files the turn `before` → `after` changed back as they were in `before`.
    ///
    /// All or nothing: when any of those files is no longer as `after` left it (the user or a
    /// later turn changed it), nothing is touched and the files are named.
    pub(crate) async fn restore(
        &self,
        before: &str,
        after: &str,
    ) -> Result<Vec<Changed>, RestoreError> {
        let changed = self.changes(before, after).await?;
        if changed.is_empty() {
            return Ok(changed);
        }
        let now = self.snapshot().await?;
        let moved: HashSet<Vec<u8>> = self
            .changes(after, &now)
            .await?
            .into_iter()
            .map(|change| change.path)
            .collect();
        let conflicts: Vec<String> = changed
            .iter()
            .filter(|change| moved.contains(&change.path))
            .map(|change| String::from_utf8_lossy(&change.path).into_owned())
            .collect();
        if !conflicts.is_empty() {
            return Err(RestoreError::Conflicts(conflicts));
        }
        let existed: Vec<&[u8]> = changed
            .iter()
            .filter(|change| change.change != ChangeKind::Added)
            .map(|change| change.path.as_slice())
            .collect();
        if !existed.is_empty() {
            self.git_input(
                &[
                    "checkout",
                    before,
                    "--pathspec-from-file=-",
                    "--pathspec-file-nul",
                ],
                nul_joined(existed.into_iter()),
            )
            .await?;
        }
        let added: Vec<PathBuf> = changed
            .iter()
            .filter(|change| change.change == ChangeKind::Added)
            .map(|change| self.work_tree.join(fs_path(&change.path)))
            .collect();
        let root = self.work_tree.clone();
        blocking(move || remove_added(&root, &added)).await?;
        Ok(changed)
    }

    /// Removes an index lock left by a git that was killed (kill -9, power loss): one older
    /// than [`STALE_LOCK`] belongs to no running snapshot, which takes seconds at most.
    async fn clear_stale_lock(&self) {
        let lock = self.git_dir.join("index.lock");
        let stale = blocking(move || {
            let old = std::fs::metadata(&lock)
                .and_then(|metadata| metadata.modified())
                .ok()
                .and_then(|modified| modified.elapsed().ok())
                .is_some_and(|age| age > STALE_LOCK);
            if old {
                tracing::warn!(path = %lock.display(), "removing a stale checkpoint index lock");
                std::fs::remove_file(&lock).map_err(|error| ShadowError::Io(error.to_string()))?;
            }
            Ok(old)
        })
        .await;
        if let Err(error) = stale {
            tracing::warn!(%error, "could not remove a stale checkpoint index lock");
        }
    }

    /// Creates the shadow repository when it does not exist yet.
    async fn ensure(&self) -> Result<(), ShadowError> {
        if self.git_dir.join("HEAD").is_file() {
            return Ok(());
        }
        let git_dir = self.git_dir.clone();
        blocking(move || {
            std::fs::create_dir_all(&git_dir)
                .map_err(|error| ShadowError::Io(format!("{}: {error}", git_dir.display())))
        })
        .await?;
        self.git(&["init", "-q"]).await?;
        let (git_dir, note) = (
            self.git_dir.clone(),
            format!("corvid's checkpoints of {}\n", self.work_tree.display()),
        );
        blocking(move || {
            std::fs::write(git_dir.join("description"), note)
                .map_err(|error| ShadowError::Io(error.to_string()))
        })
        .await
    }

    /// Writes the shadow's exclude file: the project's own excludes, then every file over the
    /// size limit; returns those files (relative, `/`-separated).
    async fn exclude_large_files(&self) -> Result<Vec<String>, ShadowError> {
        let (project, git_dir, max_files) =
            (self.work_tree.clone(), self.git_dir.clone(), self.max_files);
        blocking(move || {
            let large = large_files(&project, max_files)?;
            let mut exclude = String::from("# written by corvid before each snapshot\n");
            if let Ok(own) = std::fs::read_to_string(project.join(".git/info/exclude")) {
                exclude.push_str(&own);
                exclude.push('\n');
            }
            for path in &large {
                exclude.push('/');
                exclude.push_str(&escape_pattern(path));
                exclude.push('\n');
            }
            let info = git_dir.join("info");
            std::fs::create_dir_all(&info)
                .and_then(|()| std::fs::write(info.join("exclude"), exclude))
                .map_err(|error| ShadowError::Io(format!("{}: {error}", info.display())))?;
            Ok(large)
        })
        .await
    }

    async fn git(&self, args: &[&str]) -> Result<Vec<u8>, ShadowError> {
        self.run(args, None).await
    }

    async fn git_input(&self, args: &[&str], input: Vec<u8>) -> Result<Vec<u8>, ShadowError> {
        self.run(args, Some(input)).await
    }

    /// Runs git on the shadow repository, with the caller's environment stripped of anything
    /// that would point git at another repository or configuration.
    async fn run(&self, args: &[&str], input: Option<Vec<u8>>) -> Result<Vec<u8>, ShadowError> {
        let mut command = tokio::process::Command::new(&self.program);
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("GIT_") {
                command.env_remove(key);
            }
        }
        command
            .env("GIT_DIR", &self.git_dir)
            .env("GIT_WORK_TREE", &self.work_tree)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", null_device())
            .env("GIT_TERMINAL_PROMPT", "0")
            .args([
                "-c",
                "core.autocrlf=false",
                "-c",
                "core.safecrlf=false",
                "-c",
                "core.fsmonitor=false",
                "-c",
                "core.quotepath=false",
                "-c",
                "gc.auto=0",
                "-c",
                "maintenance.auto=false",
                "-c",
                "advice.addEmbeddedRepo=false",
                "--literal-pathspecs",
            ])
            .args(args)
            .current_dir(&self.work_tree)
            .stdin(if input.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // Its own process group: a Ctrl-C meant for corvid (which cancels the turn) must not
        // interrupt a snapshot half-way. Git is not killed when its future is dropped either,
        // so it never leaves a half-written index behind.
        #[cfg(unix)]
        command.process_group(0);
        let mut child = command.spawn().map_err(|error| {
            if error.kind() == std::io::ErrorKind::NotFound {
                ShadowError::GitMissing
            } else {
                ShadowError::Io(format!("cannot run git: {error}"))
            }
        })?;
        if let (Some(input), Some(mut stdin)) = (input, child.stdin.take()) {
            stdin
                .write_all(&input)
                .await
                .map_err(|error| ShadowError::Io(format!("cannot write to git: {error}")))?;
        }
        let output = child
            .wait_with_output()
            .await
            .map_err(|error| ShadowError::Io(format!("git did not finish: {error}")))?;
        if !output.status.success() {
            return Err(ShadowError::Git {
                command: args.first().copied().unwrap_or_default().to_owned(),
                message: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
            });
        }
        Ok(output.stdout)
    }
}

/// Runs file-system work off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ShadowError> + Send + 'static,
) -> Result<T, ShadowError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|join| ShadowError::Io(join.to_string()))?
}

/// The shadow folder's name: readable, and unique per project path (a stable FNV-1a hash, so
/// the same project finds its repository again after an upgrade).
fn folder_name(project: &Path) -> String {
    let text = project.to_string_lossy();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.as_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    let base: String = project
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .take(40)
        .collect();
    format!("{base}-{hash:016x}")
}

/// Files git would consider that are over the size limit, relative to the project; fails
/// when there are more than `max_files` files to consider.
fn large_files(project: &Path, max_files: usize) -> Result<Vec<String>, ShadowError> {
    let walk = ignore::WalkBuilder::new(project)
        .hidden(false)
        .parents(false)
        .ignore(false)
        .git_global(false)
        .require_git(false)
        .filter_entry(|entry| entry.file_name() != ".git")
        .build();
    let mut count = 0;
    let mut large = Vec::new();
    for entry in walk.filter_map(Result::ok) {
        if !entry.file_type().is_some_and(|kind| kind.is_file()) {
            continue;
        }
        count += 1;
        if count > max_files {
            return Err(ShadowError::TooManyFiles(max_files));
        }
        let too_big = entry
            .metadata()
            .is_ok_and(|metadata| metadata.len() > MAX_FILE_BYTES);
        if let (true, Ok(relative)) = (too_big, entry.path().strip_prefix(project)) {
            large.push(
                relative
                    .components()
                    .map(|part| part.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/"),
            );
        }
    }
    Ok(large)
}

/// A path as a literal gitignore pattern.
fn escape_pattern(path: &str) -> String {
    let mut escaped = String::with_capacity(path.len());
    for (index, c) in path.chars().enumerate() {
        let leading = index == 0 && matches!(c, '#' | '!');
        if leading || matches!(c, '*' | '?' | '[' | '\\') || c == ' ' && index + 1 == path.len() {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

fn nul_joined<'a>(paths: impl Iterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut joined = Vec::new();
    for path in paths {
        joined.extend_from_slice(path);
        joined.push(0);
    }
    joined
}

#[cfg(unix)]
fn fs_path(bytes: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(bytes))
}

#[cfg(not(unix))]
fn fs_path(bytes: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(bytes).into_owned())
}

fn null_device() -> &'static str {
    if cfg!(windows) { "NUL" } else { "/dev/null" }
}

/// Deletes files a turn created, then the folders that are left empty by it (up to the project).
fn remove_added(root: &Path, added: &[PathBuf]) -> Result<(), ShadowError> {
    for path in added {
        match std::fs::remove_file(path) {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => return Err(ShadowError::Io(format!("{}: {error}", path.display()))),
        }
        let mut folder = path.parent();
        while let Some(dir) = folder.filter(|dir| dir.starts_with(root) && *dir != root) {
            // Fails (and stops) at the first folder that still holds something.
            if std::fs::remove_dir(dir).is_err() {
                break;
            }
            folder = dir.parent();
        }
    }
    Ok(())
}

//! What every built-in tool works in: the project folder, the output folder, the limits, the
//! background processes, the file contents (the disk or an editor's buffers), the sandbox and
//! the per-file locks. Tools and tool sources import it from here, not from the registry that
//! lists the tools.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::OwnedMutexGuard;

use crate::error::ToolError;
use crate::files::{Disk, Files};
use crate::process::ProcessTable;
use crate::sandbox::Sandbox;
use crate::workspace::Workspace;

/// Caps and timeouts. The defaults follow what the best agents settled on (opencode's 2000 lines
/// and 50 KB for `read`, a 2-minute command timeout).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolLimits {
    /// `read`: lines shown when no `limit` is given (also the most a `limit` may ask for).
    pub read_lines: u64,
    /// `read`: longer lines are cut.
    pub line_chars: usize,
    /// `read`: the most text returned at once.
    pub read_bytes: usize,
    /// `read` of a directory: the most entries listed.
    pub list_entries: usize,
    /// `glob` files and `grep` matching lines returned.
    pub search_results: usize,
    /// `grep`: longer lines are cut.
    pub grep_line_chars: usize,
    /// `grep`: the most text returned.
    pub grep_bytes: usize,
    /// `bash`: output kept in the result (head and tail); the rest is in the log file.
    pub output_bytes: usize,
    /// `bash`: the most output written to a log file; beyond it output is counted, not kept.
    pub log_bytes: u64,
    /// `bash`: timeout when none is given.
    pub default_timeout: Duration,
    /// `bash`: the longest timeout a call may ask for.
    pub max_timeout: Duration,
    /// How long a stopped command gets between SIGTERM and SIGKILL.
    pub kill_grace: Duration,
    /// Background processes running at once.
    pub max_background: usize,
    /// The largest diff put in a proposal.
    pub diff_bytes: usize,
}

impl Default for ToolLimits {
    fn default() -> Self {
        Self {
            read_lines: 2000,
            line_chars: 2000,
            read_bytes: 50 * 1024,
            list_entries: 500,
            search_results: 200,
            grep_line_chars: 1000,
            grep_bytes: 50 * 1024,
            output_bytes: 30 * 1024,
            log_bytes: 64 * 1024 * 1024,
            default_timeout: Duration::from_secs(120),
            max_timeout: Duration::from_secs(600),
            kill_grace: Duration::from_secs(1),
            max_background: 16,
            diff_bytes: 100 * 1024,
        }
    }
}

/// What the tools share: the project folder, where command output is spilled, the limits and the
/// background processes.
#[derive(Debug)]
pub struct ToolContext {
    pub(crate) workspace: Workspace,
    pub(crate) output_dir: PathBuf,
    pub(crate) limits: ToolLimits,
    pub(crate) processes: ProcessTable,
    pub(crate) files: Arc<dyn Files>,
    pub(crate) sandbox: Sandbox,
    pub(crate) locks: FileLocks,
}

impl ToolContext {
    /// Tools working in `workspace`. Command output that does not fit in a result, and the logs
    /// of background processes, go to files in `output_dir` (created on first use, files 0600);
    /// the agent passes a folder under corvid's data directory.
    /// The output folder is readable (not writable) by the file tools, so the model can open a
    /// log named in a result.
    pub fn new(workspace: Workspace, output_dir: impl Into<PathBuf>) -> Self {
        let output_dir = output_dir.into();
        Self {
            workspace: workspace.allow_reads_in(&output_dir),
            output_dir,
            limits: ToolLimits::default(),
            processes: ProcessTable::default(),
            files: Arc::new(Disk),
            sandbox: Sandbox::off(),
            locks: FileLocks::default(),
        }
    }

    /// Reads and writes file contents through `files` instead of the disk (an editor's
    /// buffers); paths are still resolved and confined against the disk.
    pub fn with_files(mut self, files: Arc<dyn Files>) -> Self {
        self.files = files;
        self
    }

    /// Runs every command under `sandbox`. Without this call commands run unconfined
    /// ([`Sandbox::off`]): the composition root decides, because only it knows where the sandbox
    /// helper is and what the user asked for.
    pub fn with_sandbox(mut self, sandbox: Sandbox) -> Self {
        self.sandbox = sandbox;
        self
    }

    /// The sandbox commands run under.
    pub fn sandbox(&self) -> &Sandbox {
        &self.sandbox
    }

    /// Replaces the default limits.
    pub fn with_limits(mut self, limits: ToolLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The project folder.
    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// The limits in force.
    pub fn limits(&self) -> &ToolLimits {
        &self.limits
    }

    /// The background processes started by `bash` with `background: true`.
    pub fn processes(&self) -> &ProcessTable {
        &self.processes
    }

    /// Where command output that does not fit in a result is spilled.
    pub fn output_dir(&self) -> &Path {
        &self.output_dir
    }
}

/// One async lock per file, so two approved edits of the same file never interleave their
/// read-modify-write.
#[derive(Debug, Default)]
pub(crate) struct FileLocks {
    locks: Mutex<HashMap<PathBuf, Arc<tokio::sync::Mutex<()>>>>,
}

impl FileLocks {
    pub(crate) async fn lock(&self, path: &Path) -> OwnedMutexGuard<()> {
        let lock = self
            .locks
            .lock()
            .entry(path.to_path_buf())
            .or_default()
            .clone();
        lock.lock_owned().await
    }
}

/// Runs file work off the async threads.
pub(crate) async fn blocking<T, F>(context: &Arc<ToolContext>, work: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce(&ToolContext) -> Result<T, ToolError> + Send + 'static,
{
    let context = Arc::clone(context);
    tokio::task::spawn_blocking(move || work(&context))
        .await
        .map_err(|error| ToolError::Internal(error.to_string()))?
}

//! The built-in tools: which of them an agent is offered, and the two-phase entry point that
//! runs them. The registry is the built-in [`ToolSource`]; other sources sit beside it in the
//! agent's [`ToolBox`](crate::ToolBox).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::OwnedMutexGuard;

use crate::error::ToolError;
use crate::files::{Disk, Files};
use crate::process::ProcessTable;
use crate::sandbox::Sandbox;
use crate::source::{Listing, Run, ToolFuture, ToolSource};
use crate::stream::OutputSink;
use crate::tool::{Action, Cancellation, Plan, Prepared, ToolOutput, ToolSpec};
use crate::workspace::Workspace;
use crate::{edit, process, read, search, shell, todo, write};

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
    locks: FileLocks,
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
struct FileLocks {
    locks: Mutex<HashMap<PathBuf, Arc<tokio::sync::Mutex<()>>>>,
}

impl FileLocks {
    async fn lock(&self, path: &Path) -> OwnedMutexGuard<()> {
        let lock = {
            let mut locks = match self.locks.lock() {
                Ok(locks) => locks,
                Err(poisoned) => poisoned.into_inner(),
            };
            locks.entry(path.to_path_buf()).or_default().clone()
        };
        lock.lock_owned().await
    }
}

/// The built-in tools as the model sees them: `read`, `write`, `edit`, `glob`, `grep`, `bash`,
/// `process`, `todowrite`.
/// `todowrite` is the main agent's only: subagents keep no todo list.
pub fn builtin_tools() -> Vec<ToolSpec> {
    let todos = ToolSpec {
        subagents: false,
        ..todo::spec().into()
    };
    vec![
        read::spec().into(),
        write::spec().into(),
        edit::spec().into(),
        search::glob_spec().into(),
        search::grep_spec().into(),
        shell::spec().into(),
        process::spec().into(),
        todos,
    ]
}

/// The tools on offer to one agent, and the entry point that runs them. Cloning is cheap;
/// [`ToolRegistry::retain`] makes a narrower registry (for a read-only subagent) that shares the
/// context and its background processes.
#[derive(Debug, Clone)]
pub struct ToolRegistry {
    context: Arc<ToolContext>,
    specs: Arc<[ToolSpec]>,
}

impl ToolRegistry {
    /// Every built-in tool, working in `context`.
    pub fn new(context: ToolContext) -> Self {
        Self {
            context: Arc::new(context),
            specs: builtin_tools().into(),
        }
    }

    /// The tools on offer, for the model's request.
    pub fn specs(&self) -> &[ToolSpec] {
        &self.specs
    }

    /// One tool's description.
    pub fn spec(&self, name: &str) -> Option<&ToolSpec> {
        self.specs.iter().find(|spec| spec.name == name)
    }

    /// A registry offering only the tools `keep` accepts; calls to the others are refused.
    pub fn retain(&self, keep: impl Fn(&ToolSpec) -> bool) -> Self {
        Self {
            context: Arc::clone(&self.context),
            specs: self
                .specs
                .iter()
                .filter(|spec| keep(spec))
                .cloned()
                .collect(),
        }
    }

    /// The shared context.
    pub fn context(&self) -> &ToolContext {
        &self.context
    }

    /// The shared context, for a [`crate::ToolPlugin`] opening a source over it.
    pub fn shared_context(&self) -> &Arc<ToolContext> {
        &self.context
    }

    /// Phase one: checks the arguments, resolves paths and computes the proposal. Nothing
    /// changes on disk.
    pub async fn prepare(&self, name: &str, arguments: Value) -> Result<Prepared, ToolError> {
        let Some(spec) = self.spec(name) else {
            return Err(ToolError::UnknownTool {
                name: name.to_owned(),
                available: self
                    .specs
                    .iter()
                    .map(|spec| spec.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        };
        let name = spec.name.clone();
        blocking(&self.context, move |context| match name.as_str() {
            read::NAME => read::prepare(context, arguments),
            write::NAME => write::prepare(context, arguments),
            edit::NAME => edit::prepare(context, arguments),
            search::GLOB => search::prepare_glob(context, arguments),
            search::GREP => search::prepare_grep(context, arguments),
            shell::NAME => shell::prepare(context, arguments),
            process::NAME => process::prepare(context, arguments),
            todo::NAME => todo::prepare(arguments),
            other => Err(ToolError::Internal(format!(
                "no implementation for `{other}`"
            ))),
        })
        .await
    }

    /// Phase two: carries a prepared call out. An edit is located again in the file's current
    /// text; a command is killed (with its process group) when `cancel` fires.
    pub async fn apply(&self, plan: Plan, cancel: Cancellation) -> Result<ToolOutput, ToolError> {
        self.apply_streaming(plan, cancel, None).await
    }

    /// [`ToolRegistry::apply`], with a foreground command's output also streamed to `sink`
    /// while it runs (other tools ignore it).
    pub async fn apply_streaming(
        &self,
        plan: Plan,
        cancel: Cancellation,
        sink: Option<OutputSink>,
    ) -> Result<ToolOutput, ToolError> {
        if cancel.is_cancelled() {
            return Err(ToolError::Cancelled {
                output: String::new(),
            });
        }
        let context = &self.context;
        match plan.action {
            Action::Read(plan) => {
                blocking(context, move |context| read::apply(context, &plan)).await
            }
            Action::Write(plan) => {
                let _guard = context.locks.lock(&plan.path).await;
                blocking(context, move |context| write::apply(context, &plan)).await
            }
            Action::Edit(plan) => {
                let _guard = context.locks.lock(&plan.path).await;
                blocking(context, move |context| edit::apply(context, &plan)).await
            }
            Action::Glob(plan) => search::glob(Arc::clone(context), plan, cancel).await,
            Action::Grep(plan) => search::grep(Arc::clone(context), plan, cancel).await,
            Action::Bash(plan) => shell::run(context, plan, cancel, sink).await,
            Action::Process(plan) => process::apply(context, plan).await,
            Action::Todo(todos) => Ok(todo::output(todos)),
            Action::External(_) => Err(ToolError::Internal(
                "a plan made by another tool source was given to the built-ins".to_owned(),
            )),
        }
    }

    /// Both phases at once, for calls the gate lets through without asking.
    pub async fn execute(
        &self,
        name: &str,
        arguments: Value,
        cancel: Cancellation,
    ) -> Result<ToolOutput, ToolError> {
        let prepared = self.prepare(name, arguments).await?;
        self.apply(prepared.plan, cancel).await
    }
}

impl ToolSource for ToolRegistry {
    fn name(&self) -> &str {
        "built-in"
    }

    fn list(&self) -> ToolFuture<'_, Listing> {
        Box::pin(async move {
            Listing {
                tools: self.specs.to_vec(),
                notices: Vec::new(),
            }
        })
    }

    fn prepare<'a>(
        &'a self,
        tool: &'a str,
        arguments: Value,
    ) -> ToolFuture<'a, Result<Prepared, ToolError>> {
        Box::pin(ToolRegistry::prepare(self, tool, arguments))
    }

    fn apply<'a>(
        &'a self,
        _tool: &'a str,
        plan: Plan,
        run: Run,
    ) -> ToolFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(self.apply_streaming(plan, run.cancel, run.sink))
    }

    fn summary(&self, tool: &str, arguments: &Value) -> Option<String> {
        crate::summary::builtin_summary(self.context.workspace.root(), tool, arguments)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_specs_are_object_schemas_with_unique_names() {
        let specs = builtin_tools();
        let mut names: Vec<&str> = specs.iter().map(|spec| spec.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "read",
                "write",
                "edit",
                "glob",
                "grep",
                "bash",
                "process",
                "todowrite"
            ]
        );
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), specs.len());
        for spec in &specs {
            assert_eq!(spec.parameters["type"], "object", "{}", spec.name);
            assert!(spec.parameters["properties"].is_object(), "{}", spec.name);
            assert!(!spec.description.is_empty());
            for required in spec.parameters["required"].as_array().into_iter().flatten() {
                let required = required.as_str().unwrap_or_default();
                assert!(
                    spec.parameters["properties"].get(required).is_some(),
                    "{}: required `{required}` is not a property",
                    spec.name
                );
            }
        }
    }
}

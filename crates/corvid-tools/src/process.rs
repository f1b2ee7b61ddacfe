//! Background commands (`bash` with `background: true`) and the `process` tool that looks after
//! them.
//!
//! The table owns each process. Dropping the table (the last clone) kills every process group
//! still running, so a session never leaves servers behind. When a background shell is seen to
//! have exited, what it left in its group is killed at once (later, its process-group id could
//! belong to someone else).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read as _, Seek as _, SeekFrom};
use std::os::unix::process::ExitStatusExt as _;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Mutex, MutexGuard};
use rustix::process::{Pid, Signal};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::process::Child;

use crate::args;
use crate::context::ToolContext;
use crate::error::ToolError;
use crate::runner::{self, Spawned, signal_group};
use crate::sandbox::Widening;
use crate::text;
use crate::tool::{
    Action, BuiltinSpec, Plan, Prepared, Proposal, ToolDetail, ToolKind, ToolOutput,
};

pub(crate) const NAME: &str = "process";

/// `tail` without `lines`.
const DEFAULT_TAIL_LINES: u64 = 50;
/// The most lines `tail` returns.
const MAX_TAIL_LINES: u64 = 500;
/// `tail` reads at most this much from the end of the log.
const TAIL_BYTES: u64 = 256 * 1024;
/// After SIGKILL, how long `stop` waits to see the exit.
const KILL_WAIT: Duration = Duration::from_secs(2);
/// How often `stop` looks.
const POLL: Duration = Duration::from_millis(25);

pub(crate) fn spec() -> BuiltinSpec {
    BuiltinSpec {
        name: NAME,
        description: "Look after commands started with bash background: true. \
            `status` (without id: all of them), `tail` (the last lines of its output; `lines`, default 50), \
            `stop` (SIGTERM to its whole process group, then SIGKILL).",
        parameters: json!({
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["status", "tail", "stop"]},
                "id": {"type": "string", "description": "The id bash returned, such as `p1`"},
                "lines": {"type": "integer", "minimum": 1, "maximum": 500, "description": "For tail: how many lines (default 50)"}
            },
            "required": ["action"],
            "additionalProperties": false
        }),
        kind: ToolKind::Other,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum ProcessAction {
    #[serde(alias = "list", alias = "poll")]
    Status,
    #[serde(alias = "log", alias = "logs")]
    Tail,
    #[serde(alias = "kill")]
    Stop,
}

#[derive(Debug, Deserialize)]
struct ProcessArgs {
    action: ProcessAction,
    #[serde(default, alias = "process_id", alias = "handle")]
    id: Option<String>,
    #[serde(default, deserialize_with = "args::opt_u64")]
    lines: Option<u64>,
}

#[derive(Debug)]
pub(crate) struct ProcessPlan {
    action: ProcessAction,
    id: Option<String>,
    lines: u64,
}

pub(crate) fn prepare(_context: &ToolContext, arguments: Value) -> Result<Prepared, ToolError> {
    let arguments: ProcessArgs = args::parse(NAME, arguments)?;
    let id = arguments
        .id
        .map(|id| id.trim().to_owned())
        .filter(|id| !id.is_empty());
    if id.is_none() && arguments.action != ProcessAction::Status {
        return Err(ToolError::invalid(
            NAME,
            "`id` is required for tail and stop",
        ));
    }
    let summary = match (arguments.action, &id) {
        (ProcessAction::Status, None) => "List background processes".to_owned(),
        (ProcessAction::Status, Some(id)) => format!("Status of background process {id}"),
        (ProcessAction::Tail, Some(id)) => format!("Output of background process {id}"),
        (ProcessAction::Stop, Some(id)) => format!("Stop background process {id}"),
        (_, None) => String::new(),
    };
    Ok(Prepared {
        tool: NAME.to_owned(),
        kind: ToolKind::Other,
        proposal: Proposal {
            summary,
            diff: None,
            whole_file: false,
            command: None,
            path: None,
        },
        plan: Plan {
            action: Action::Process(ProcessPlan {
                action: arguments.action,
                id,
                lines: arguments
                    .lines
                    .unwrap_or(DEFAULT_TAIL_LINES)
                    .clamp(1, MAX_TAIL_LINES),
            }),
        },
    })
}

pub(crate) async fn apply(
    context: &ToolContext,
    plan: ProcessPlan,
) -> Result<ToolOutput, ToolError> {
    let table = &context.processes;
    match (plan.action, plan.id) {
        (ProcessAction::Status, None) => Ok(ToolOutput::text(table.describe_all())),
        (ProcessAction::Status, Some(id)) => table
            .with(&id, |entry| entry.describe())
            .map(ToolOutput::text),
        (ProcessAction::Tail, Some(id)) => {
            let (status, log_path) =
                table.with(&id, |entry| (entry.describe(), entry.log_path.clone()))?;
            let tail = tail_lines(&log_path, plan.lines, context.limits.line_chars);
            Ok(ToolOutput::text(format!("{status}\n{tail}")))
        }
        (ProcessAction::Stop, Some(id)) => table
            .stop(&id, context.limits.kill_grace)
            .await
            .map(ToolOutput::text),
        (_, None) => Err(ToolError::invalid(
            NAME,
            "`id` is required for tail and stop",
        )),
    }
}

/// The background processes of one session. Clones share the table; when the last clone is
/// dropped, every process group still running is killed.
#[derive(Debug, Clone, Default)]
pub struct ProcessTable {
    inner: Arc<Mutex<Table>>,
}

#[derive(Debug, Default)]
struct Table {
    next: u64,
    entries: BTreeMap<u64, Entry>,
}

#[derive(Debug)]
struct Entry {
    id: String,
    command: String,
    child: Child,
    group: Option<Pid>,
    log_path: PathBuf,
    started: Instant,
    exit: Option<ExitStatus>,
    stopped: bool,
}

impl Entry {
    /// Notices an exit; kills what the shell left in its group right away.
    fn refresh(&mut self) {
        if self.exit.is_none()
            && let Ok(Some(status)) = self.child.try_wait()
        {
            self.exit = Some(status);
            signal_group(self.group, Signal::KILL);
        }
    }

    fn describe(&mut self) -> String {
        self.refresh();
        let state = match self.exit {
            None => format!("running for {} s", self.started.elapsed().as_secs()),
            Some(status) => match (status.code(), status.signal()) {
                (Some(code), _) => format!("exited with code {code}"),
                (None, Some(signal)) if self.stopped => format!("stopped (signal {signal})"),
                (None, Some(signal)) => format!("killed by signal {signal}"),
                (None, None) => "exited".to_owned(),
            },
        };
        format!(
            "{}: {state} — `{}` (log: {})",
            self.id,
            self.command,
            self.log_path.display()
        )
    }
}

impl Drop for Entry {
    fn drop(&mut self) {
        if self.exit.is_none() {
            signal_group(self.group, Signal::KILL);
        }
    }
}

impl ProcessTable {
    /// How many background processes are still running.
    pub fn running(&self) -> usize {
        let mut table = self.lock();
        table
            .entries
            .values_mut()
            .map(|entry| {
                entry.refresh();
                usize::from(entry.exit.is_none())
            })
            .sum()
    }

    /// Kills every running process group now (SIGKILL), for the end of a session.
    pub fn stop_all(&self) {
        let mut table = self.lock();
        for entry in table.entries.values_mut() {
            entry.refresh();
            if entry.exit.is_none() {
                entry.stopped = true;
                signal_group(entry.group, Signal::KILL);
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, Table> {
        self.inner.lock()
    }

    /// Starts `command` in the background and returns its id at once.
    pub(crate) fn start(
        &self,
        context: &ToolContext,
        command: &str,
        widening: Widening,
        read_only: bool,
    ) -> Result<ToolOutput, ToolError> {
        let running = self.running();
        if running >= context.limits.max_background {
            return Err(ToolError::TooManyProcesses { running });
        }
        let Spawned {
            child,
            group,
            log_path,
            pump: _,
        } = runner::spawn(context, command, "background-", widening, read_only, None)?;
        let pid = child.id().unwrap_or_default();
        let mut table = self.lock();
        table.next += 1;
        let number = table.next;
        let id = format!("p{number}");
        table.entries.insert(
            number,
            Entry {
                id: id.clone(),
                command: command.to_owned(),
                child,
                group,
                log_path: log_path.clone(),
                started: Instant::now(),
                exit: None,
                stopped: false,
            },
        );
        Ok(ToolOutput {
            text: format!(
                "Started in the background as {id} (pid {pid}); its output goes to {}. \
                 Use the process tool with id \"{id}\": action \"status\", \"tail\" or \"stop\".",
                log_path.display()
            ),
            is_error: false,
            detail: Some(ToolDetail::Background { id, pid, log_path }),
        })
    }

    fn with<T>(&self, id: &str, work: impl FnOnce(&mut Entry) -> T) -> Result<T, ToolError> {
        let mut table = self.lock();
        let known = table
            .entries
            .values()
            .map(|entry| entry.id.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        match table.entries.values_mut().find(|entry| entry.id == id) {
            Some(entry) => Ok(work(entry)),
            None => Err(ToolError::UnknownProcess {
                id: id.to_owned(),
                known: if known.is_empty() {
                    "none".to_owned()
                } else {
                    known
                },
            }),
        }
    }

    fn describe_all(&self) -> String {
        let mut table = self.lock();
        if table.entries.is_empty() {
            return "No background processes.".to_owned();
        }
        table
            .entries
            .values_mut()
            .map(Entry::describe)
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// SIGTERM to the group, up to `grace` to exit, then SIGKILL. The lock is never held while
    /// waiting.
    async fn stop(&self, id: &str, grace: Duration) -> Result<String, ToolError> {
        let (group, already) = self.with(id, |entry| {
            entry.refresh();
            (entry.group, entry.exit.is_some())
        })?;
        if already {
            return self.with(id, |entry| {
                format!("Already finished. {}", entry.describe())
            });
        }
        self.with(id, |entry| entry.stopped = true)?;
        signal_group(group, Signal::TERM);
        if !self.wait_exit(id, grace).await? {
            signal_group(group, Signal::KILL);
            self.wait_exit(id, KILL_WAIT).await?;
        }
        self.with(id, Entry::describe)
    }

    async fn wait_exit(&self, id: &str, limit: Duration) -> Result<bool, ToolError> {
        let deadline = Instant::now() + limit;
        loop {
            let exited = self.with(id, |entry| {
                entry.refresh();
                entry.exit.is_some()
            })?;
            if exited || Instant::now() >= deadline {
                return Ok(exited);
            }
            tokio::time::sleep(POLL).await;
        }
    }
}

/// The last `lines` lines of a log.
fn tail_lines(path: &std::path::Path, lines: u64, line_chars: usize) -> String {
    let read = || -> std::io::Result<String> {
        let mut file = File::open(path)?;
        let size = file.metadata()?.len();
        let start = size.saturating_sub(TAIL_BYTES);
        file.seek(SeekFrom::Start(start))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        if start > 0
            && let Some(newline) = bytes.iter().position(|byte| *byte == b'\n')
        {
            bytes.drain(..=newline);
        }
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    };
    match read() {
        Ok(log) if log.is_empty() => "(no output yet)".to_owned(),
        Ok(log) => {
            let all: Vec<&str> = log.lines().collect();
            let skip = all.len().saturating_sub(lines as usize);
            let mut out = String::new();
            if skip > 0 {
                out.push_str(&format!("… (last {} lines)\n", all.len() - skip));
            }
            for line in &all[skip..] {
                out.push_str(&text::cut_line(line, line_chars));
                out.push('\n');
            }
            out
        }
        Err(error) => format!("(the log could not be read: {error})"),
    }
}

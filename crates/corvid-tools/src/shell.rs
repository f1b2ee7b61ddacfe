//! `bash`: one command through `bash -c` in the project folder.
//!
//! How a command runs, and why:
//! - **Inside the kernel sandbox** (see [`crate::sandbox`]): the runner starts the sandbox helper,
//!   which confines itself and then becomes `bash -c …`. This is the one place that starts
//!   processes, so everything started later (background commands, custom tools, MCP servers)
//!   gets the same confinement. A command the sandbox stopped gets a note saying so and how to
//!   ask for more (`sandbox: {write_outside, network}`, always approved by the user).
//! - **Its own process group** (`setpgid(0, 0)` at spawn). A timeout, a cancel or `process stop`
//!   signals the whole group, so `sleep` children and test runners' workers die with the shell.
//!   Whatever is still in the group when the shell itself exits is killed too: long-lived
//!   servers belong in `background: true`. (Processes that start their own session, daemons,
//!   escape any group; that is what they are for.) The helper also arms the parent-death
//!   signal, so the shell dies with corvid even when corvid is killed outright. (The kernel
//!   sends it when the *thread* that started the command ends; commands are started from async
//!   tasks, whose runtime threads live as long as the runtime.)
//! - **stdin is /dev/null**, so a command that waits for input fails instead of hanging.
//! - **stdout and stderr share one pipe**, so they interleave as in a terminal. A thread copies
//!   the pipe into a log file (mode 0600) up to a cap and counts the rest; while the command
//!   runs it also streams the output to an [`OutputSink`] (throttled and capped, see
//!   [`stream`](crate::stream)). The result keeps the head and the tail of the output; when it
//!   had to cut, it names the log file. A log that fit whole in the result is deleted.
//! - **Stopping** is SIGTERM to the group, a grace period, then SIGKILL.

use std::fs::File;
use std::io::{self, Read as _, Seek as _, SeekFrom, Write as _};
use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use rustix::process::{Pid, Signal};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::process::Child;
use tokio::sync::oneshot;

use crate::args;
use crate::error::ToolError;
use crate::registry::ToolContext;
use crate::sandbox::{Confinement, Widening};
use crate::stream::{OutputSink, Streamer};
use crate::text;
use crate::tool::{
    Action, BuiltinSpec, Cancellation, Plan, Prepared, Proposal, ToolDetail, ToolKind, ToolOutput,
};

pub(crate) const NAME: &str = "bash";

/// After the shell is gone, how long to wait for the output pipe to close (something outside
/// the group may still hold it).
const DRAIN_WAIT: Duration = Duration::from_secs(2);

pub(crate) fn spec() -> BuiltinSpec {
    BuiltinSpec {
        name: NAME,
        description: "Run a shell command with `bash -c` in the project folder and return its combined stdout and stderr \
            and its exit code. stdin is empty. Default timeout 120 s (timeout_ms, at most 600000); on timeout the command \
            and everything it started are stopped. Long output keeps its head and tail and names a log file with the \
            rest. Processes still running when the command exits are stopped: for servers and watchers set \
            background: true, which returns an id for the `process` tool (status, tail, stop). \
            Prefer read, grep and glob over cat, grep and find. The user may be asked to approve the command. \
            Commands run in a sandbox: they may write only inside the project and the temp folders, cannot read \
            corvid's configuration or secret stores such as ~/.ssh, and have no network. When a command needs more \
            (installing packages, downloading, writing outside the project), call it again with \
            sandbox: {\"network\": true} and/or {\"write_outside\": true}; that one command then runs with more, after the \
            user approves exactly that.",
        parameters: json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The command line"},
                "timeout_ms": {"type": "integer", "minimum": 1, "maximum": 600000, "description": "Timeout in milliseconds (default 120000)"},
                "background": {"type": "boolean", "description": "Start it and return at once with a process id (default false)"},
                "description": {"type": "string", "description": "A few words on what the command does, shown to the user"},
                "sandbox": {
                    "type": "object",
                    "description": "Only when the sandbox stopped the command or it clearly needs more: widen the sandbox for this one command. The user is always asked.",
                    "properties": {
                        "write_outside": {"type": "boolean", "description": "May write outside the project and temp folders"},
                        "network": {"type": "boolean", "description": "May use the network"}
                    },
                    "additionalProperties": false
                }
            },
            "required": ["command"],
            "additionalProperties": false
        }),
        kind: ToolKind::Command,
    }
}

#[derive(Debug, Deserialize)]
struct BashArgs {
    #[serde(alias = "cmd")]
    command: String,
    #[serde(default, alias = "timeout", deserialize_with = "args::opt_u64")]
    timeout_ms: Option<u64>,
    #[serde(
        default,
        alias = "run_in_background",
        deserialize_with = "args::opt_bool"
    )]
    background: Option<bool>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    sandbox: Option<Widening>,
}

#[derive(Debug)]
pub(crate) struct BashPlan {
    command: String,
    timeout: Duration,
    /// The timeout asked for was above the maximum and was lowered.
    capped: bool,
    background: bool,
    /// What the model asked for beyond the sandbox's usual limits.
    widening: Widening,
    /// How the command will be confined, decided at prepare time for the approval gate.
    pub(crate) confinement: Confinement,
    /// Where it runs, when not in the project folder (a custom tool's own folder).
    cwd: Option<PathBuf>,
    /// What it reads on stdin (a custom tool's arguments); `None`: /dev/null.
    stdin: Option<Vec<u8>>,
    /// Whether the model may widen the sandbox for it (`bash` may; a custom tool may not).
    widenable: bool,
}

impl BashPlan {
    /// A foreground command that is not `bash`'s own: `command` runs through `bash -c` in `cwd`
    /// (inside the project) with `stdin` as its input, under the sandbox as configured, the
    /// default timeout, and everything else as for `bash`.
    pub(crate) fn fixed(
        context: &ToolContext,
        command: &str,
        cwd: PathBuf,
        stdin: Vec<u8>,
    ) -> Self {
        Self {
            command: command.to_owned(),
            timeout: context.limits.default_timeout,
            capped: false,
            background: false,
            widening: Widening::default(),
            confinement: context.sandbox.confinement(Widening::default()),
            cwd: Some(cwd),
            stdin: Some(stdin),
            widenable: false,
        }
    }
}

pub(crate) fn prepare(context: &ToolContext, arguments: Value) -> Result<Prepared, ToolError> {
    let arguments: BashArgs = args::parse(NAME, arguments)?;
    if arguments.command.trim().is_empty() {
        return Err(ToolError::invalid(NAME, "the command is empty"));
    }
    let limits = &context.limits;
    let asked = arguments.timeout_ms.map_or(limits.default_timeout, |ms| {
        Duration::from_millis(ms.max(1))
    });
    let capped = asked > limits.max_timeout;
    let background = arguments.background.unwrap_or(false);
    let what = arguments
        .description
        .as_deref()
        .map(str::trim)
        .filter(|description| !description.is_empty())
        .map(|description| format!(" ({description})"))
        .unwrap_or_default();
    let widening = arguments.sandbox.unwrap_or_default();
    let confinement = context.sandbox.confinement(widening);
    let widened = match &confinement {
        Confinement::Widened(widening) => format!(
            " — with more than the sandbox allows: {}",
            describe_widening(*widening)
        ),
        Confinement::Unavailable(_) => " — without a sandbox (the kernel offers none)".to_owned(),
        Confinement::Sandboxed | Confinement::Off => String::new(),
    };
    let summary = if background {
        format!(
            "Start in the background: `{}`{what}{widened}",
            arguments.command
        )
    } else {
        format!("Run `{}`{what}{widened}", arguments.command)
    };
    Ok(Prepared {
        tool: NAME.to_owned(),
        kind: ToolKind::Command,
        proposal: Proposal {
            summary,
            diff: None,
            whole_file: false,
            command: Some(arguments.command.clone()),
            path: None,
        },
        plan: Plan {
            action: Action::Bash(BashPlan {
                command: arguments.command,
                timeout: asked.min(limits.max_timeout),
                capped,
                background,
                widening,
                confinement,
                cwd: None,
                stdin: None,
                widenable: true,
            }),
        },
    })
}

/// What widening does, in words for the user and the model.
pub(crate) fn describe_widening(widening: Widening) -> String {
    let mut parts = Vec::new();
    if widening.write_outside {
        parts.push("may write outside the project and temp folders");
    }
    if widening.network {
        parts.push("may use the network");
    }
    parts.join(" and ")
}

pub(crate) async fn run(
    context: &Arc<ToolContext>,
    plan: BashPlan,
    cancel: Cancellation,
    sink: Option<OutputSink>,
) -> Result<ToolOutput, ToolError> {
    if plan.background {
        return context
            .processes
            .start(context, &plan.command, plan.widening);
    }
    foreground(context, &plan, cancel, sink).await
}

/// How a foreground command ended.
enum Ended {
    Exited(Option<ExitStatus>),
    TimedOut,
    Cancelled,
}

async fn foreground(
    context: &ToolContext,
    plan: &BashPlan,
    mut cancel: Cancellation,
    sink: Option<OutputSink>,
) -> Result<ToolOutput, ToolError> {
    let limits = &context.limits;
    let Spawned {
        mut child,
        group,
        log_path,
        pump,
    } = spawn_in(
        context,
        Start {
            command: &plan.command,
            cwd: plan.cwd.as_deref(),
            stdin: plan.stdin.clone(),
            prefix: "bash-",
            widening: plan.widening,
        },
        sink,
    )?;
    // If this future is dropped instead of cancelled (the caller gave up on it), the guard
    // still kills the whole group; `kill_on_drop` alone would only reach the shell.
    let guard = GroupGuard(group);

    // The three ways out. Whichever comes first wins; the losing futures are dropped, which is
    // harmless (`wait` and `sleep` hold no resources of their own).
    let ended = tokio::select! {
        status = child.wait() => Ended::Exited(status.ok()),
        () = tokio::time::sleep(plan.timeout) => Ended::TimedOut,
        () = cancel.cancelled() => Ended::Cancelled,
    };
    let status = match ended {
        Ended::Exited(status) => status,
        Ended::TimedOut | Ended::Cancelled => stop(&mut child, group, limits.kill_grace).await,
    };
    // The shell is gone; stop what it left behind in its group.
    signal_group(group, Signal::KILL);
    guard.disarm();
    let pumped = tokio::time::timeout(DRAIN_WAIT, pump)
        .await
        .ok()
        .and_then(Result::ok);
    let (body, kept_log) = summarize_log(&log_path, pumped, limits.output_bytes, limits.log_bytes);
    let mut text = if body.is_empty() {
        "(no output)\n".to_owned()
    } else {
        body
    };
    if !text.ends_with('\n') {
        text.push('\n');
    }

    let timed_out = matches!(ended, Ended::TimedOut);
    let (is_error, exit_code, ending) = match ended {
        Ended::Cancelled => return Err(ToolError::Cancelled { output: text }),
        Ended::TimedOut => (
            true,
            None,
            format!(
                "Timed out after {}; the command and everything it started were stopped.",
                seconds(plan.timeout)
            ),
        ),
        Ended::Exited(_) => match (
            status.and_then(|status| status.code()),
            status.and_then(|status| status.signal()),
        ) {
            (Some(code), _) => (code != 0, Some(code), format!("Exit code: {code}")),
            (None, Some(signal)) => (true, None, format!("Killed by signal {signal}")),
            (None, None) => (true, None, "The exit status could not be read.".to_owned()),
        },
    };
    text.push('\n');
    text.push_str(&ending);
    if is_error
        && matches!(
            plan.confinement,
            Confinement::Sandboxed | Confinement::Widened(_)
        )
        && looks_refused(&text)
    {
        text.push_str(&sandbox_note(context, plan.widenable));
    }
    if plan.capped {
        text.push_str(&format!(
            "\n(The timeout asked for was above the maximum, {}.)",
            seconds(limits.max_timeout)
        ));
    }
    Ok(ToolOutput {
        text,
        is_error,
        detail: Some(ToolDetail::Command {
            exit_code,
            timed_out,
            log_path: kept_log,
        }),
    })
}

/// Whether a failed command's output looks like the sandbox refused something.
fn looks_refused(text: &str) -> bool {
    [
        "Permission denied",
        "Operation not permitted",
        // Landlock refuses linking a file into a folder with more rights than its own as EXDEV.
        "Invalid cross-device link",
        // The read-only .git/hooks and .git/config.
        "Read-only file system",
        "Device or resource busy",
        "EACCES",
        "EPERM",
        "corvid sandbox:",
    ]
    .iter()
    .any(|sign| text.contains(sign))
}

/// The note added to a result the sandbox probably caused.
fn sandbox_note(context: &ToolContext, widenable: bool) -> String {
    if !widenable {
        return format!(
            "\n\n[corvid sandbox] This command ran in corvid's sandbox, which refuses writing outside the project \
             ({}) and the temp folders, reading corvid's configuration and secret stores, and all network access; \
             \"Permission denied\" or \"Operation not permitted\" above is most likely the sandbox. A custom tool \
             always runs inside it: if the work really needs more, do it with bash, asking for more there.",
            context.workspace.root().display()
        );
    }
    format!(
        "\n\n[corvid sandbox] This command ran in corvid's sandbox, which refuses writing outside the project \
         ({}) and the temp folders, writing .git/hooks and .git/config, reading corvid's configuration and secret \
         stores (~/.ssh, ~/.aws, …), and all network access. \"Permission denied\", \"Operation not permitted\" or \"Invalid cross-device link\" above is most likely the sandbox. \
         If the command really needs more, call bash again with the same command and \
         \"sandbox\": {{\"write_outside\": true}} and/or {{\"network\": true}}; the user will be asked to approve exactly that.",
        context.workspace.root().display()
    )
}

/// A started command.
pub(crate) struct Spawned {
    pub(crate) child: Child,
    /// Its process group (= the shell's pid).
    pub(crate) group: Option<Pid>,
    pub(crate) log_path: PathBuf,
    /// Resolves when the output pipe closes.
    pub(crate) pump: oneshot::Receiver<Pumped>,
}

/// What the output thread saw.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pumped {
    pub(crate) total: u64,
    pub(crate) kept: u64,
}

/// Starts `bash -c command` in the project folder, in its own process group, its output going
/// to a new log file in the output folder.
pub(crate) fn spawn(
    context: &ToolContext,
    command: &str,
    prefix: &str,
    widening: Widening,
    sink: Option<OutputSink>,
) -> Result<Spawned, ToolError> {
    let start = Start {
        command,
        cwd: None,
        stdin: None,
        prefix,
        widening,
    };
    spawn_in(context, start, sink)
}

/// What to start, and how.
pub(crate) struct Start<'a> {
    pub(crate) command: &'a str,
    /// The folder it runs in; `None`: the project folder.
    pub(crate) cwd: Option<&'a Path>,
    /// Its input; `None`: /dev/null.
    pub(crate) stdin: Option<Vec<u8>>,
    /// The log file's name starts with this.
    pub(crate) prefix: &'a str,
    pub(crate) widening: Widening,
}

/// [`spawn`], in `start.cwd` with `start.stdin` as input. The input is written from its own
/// task and closed, so the command sees its end; a command that never reads it is not held up.
pub(crate) fn spawn_in(
    context: &ToolContext,
    start: Start<'_>,
    sink: Option<OutputSink>,
) -> Result<Spawned, ToolError> {
    let Start {
        command,
        cwd,
        stdin,
        prefix,
        widening,
    } = start;
    let (log, log_path) = create_log(&context.output_dir, prefix)?;
    let (reader, writer) = io::pipe().map_err(|source| ToolError::Spawn { source })?;
    let error_writer = writer
        .try_clone()
        .map_err(|source| ToolError::Spawn { source })?;
    let bash = ["-c".into(), command.into()];
    let mut builder = context
        .sandbox
        .command(context.workspace.root(), "bash", &bash, widening);
    if let Some(cwd) = cwd {
        builder.current_dir(cwd);
    }
    builder
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(writer)
        .stderr(error_writer)
        .env("PAGER", "cat")
        .env("GIT_PAGER", "cat")
        .env("GIT_TERMINAL_PROMPT", "0");
    let spawned = builder.spawn();
    // The builder holds our copies of the pipe's write end; until they close, the reader would
    // never see end-of-file.
    drop(builder);
    let mut child = spawned.map_err(|source| {
        let _ = std::fs::remove_file(&log_path);
        ToolError::Spawn { source }
    })?;
    if let (Some(input), Some(mut pipe)) = (stdin, child.stdin.take()) {
        tokio::spawn(async move {
            // A command that exits without reading all of it closes the pipe: nothing to do.
            let _ = tokio::io::AsyncWriteExt::write_all(&mut pipe, &input).await;
        });
    }
    let group = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .and_then(Pid::from_raw);
    let cap = context.limits.log_bytes;
    let (sender, pump) = oneshot::channel();
    let thread = std::thread::Builder::new()
        .name("corvid-command-output".to_owned())
        .spawn(move || {
            let streamer = sink.map(Streamer::new);
            let _ = sender.send(copy_output(reader, log, cap, streamer));
        });
    if let Err(source) = thread {
        signal_group(group, Signal::KILL);
        return Err(ToolError::Spawn { source });
    }
    Ok(Spawned {
        child,
        group,
        log_path,
        pump,
    })
}

/// Copies the command's output into the log, keeping at most `cap` bytes and counting the rest,
/// and streams it to `streamer` when there is one.
fn copy_output(
    mut reader: io::PipeReader,
    mut log: File,
    cap: u64,
    mut streamer: Option<Streamer>,
) -> Pumped {
    let mut buffer = vec![0u8; 64 * 1024];
    let mut pumped = Pumped { total: 0, kept: 0 };
    loop {
        if let Some(streamer) = streamer.as_mut()
            && let Some(wait) = streamer.due_in()
            && !output_within(&reader, wait)
        {
            streamer.flush_due();
            continue;
        }
        let read = match reader.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        pumped.total += read as u64;
        if let Some(streamer) = streamer.as_mut() {
            streamer.push(&buffer[..read]);
        }
        let room = cap.saturating_sub(pumped.kept).min(read as u64) as usize;
        if room > 0 && log.write_all(&buffer[..room]).is_ok() {
            pumped.kept += room as u64;
        }
    }
    if let Some(streamer) = streamer.as_mut() {
        streamer.finish();
    }
    pumped
}

/// Whether the pipe has output (or was closed) within `wait`. An error counts as yes, so the
/// caller goes on to a plain blocking read.
fn output_within(reader: &io::PipeReader, wait: Duration) -> bool {
    use rustix::event::{PollFd, PollFlags, Timespec};
    let timeout = Timespec {
        tv_sec: wait.as_secs() as i64,
        tv_nsec: i64::from(wait.subsec_nanos()),
    };
    let mut fds = [PollFd::new(reader, PollFlags::IN)];
    !matches!(rustix::event::poll(&mut fds, Some(&timeout)), Ok(0))
}

fn create_log(dir: &Path, prefix: &str) -> Result<(File, PathBuf), ToolError> {
    let io_error = |source: io::Error| {
        ToolError::io(
            dir.to_string_lossy(),
            io::Error::new(
                source.kind(),
                format!("cannot create the command log folder or file: {source}"),
            ),
        )
    };
    {
        use std::os::unix::fs::DirBuilderExt as _;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(io_error)?;
    }
    let file = tempfile::Builder::new()
        .prefix(prefix)
        .suffix(".log")
        .tempfile_in(dir)
        .map_err(io_error)?;
    file.keep().map_err(|error| io_error(error.error))
}

/// Sends `signal` to a process group; a group that is already gone is fine.
pub(crate) fn signal_group(group: Option<Pid>, signal: Signal) {
    if let Some(group) = group {
        let _ = rustix::process::kill_process_group(group, signal);
    }
}

/// Kills a process group when dropped.
struct GroupGuard(Option<Pid>);

impl GroupGuard {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        signal_group(self.0, Signal::KILL);
    }
}

/// SIGTERM to the group, up to `grace` for the shell to exit, then SIGKILL.
async fn stop(child: &mut Child, group: Option<Pid>, grace: Duration) -> Option<ExitStatus> {
    if group.is_none() {
        let _ = child.start_kill();
    }
    signal_group(group, Signal::TERM);
    if let Ok(Ok(status)) = tokio::time::timeout(grace, child.wait()).await {
        return Some(status);
    }
    signal_group(group, Signal::KILL);
    let _ = child.start_kill();
    child.wait().await.ok()
}

/// The text of a log for the result: all of it when it fits (and the log is deleted), else its
/// head and tail around a note naming the log.
fn summarize_log(
    log_path: &Path,
    pumped: Option<Pumped>,
    cap: usize,
    log_cap: u64,
) -> (String, Option<PathBuf>) {
    let size = std::fs::metadata(log_path)
        .map(|meta| meta.len())
        .unwrap_or(0);
    let overflow = pumped.filter(|pumped| pumped.total > pumped.kept);
    if size <= cap as u64 && overflow.is_none() {
        let text = std::fs::read(log_path)
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .unwrap_or_default();
        let _ = std::fs::remove_file(log_path);
        return (text, None);
    }
    let head_bytes = cap / 4;
    let tail_bytes = cap - head_bytes;
    let (head, tail) = match head_and_tail(log_path, head_bytes, tail_bytes) {
        Ok(parts) => parts,
        Err(error) => (
            format!("(the log could not be read: {error})\n"),
            String::new(),
        ),
    };
    let omitted = size.saturating_sub((head.len() + tail.len()) as u64);
    let mut text = head;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&format!(
        "\n[… {omitted} bytes omitted; the full output ({size} bytes) is in {} …]\n\n",
        log_path.display()
    ));
    text.push_str(&tail);
    if let Some(pumped) = overflow {
        text.push_str(&format!(
            "\n[the output went past {}; the log keeps the first {} of {} bytes]\n",
            text::size(log_cap),
            text::size(log_cap),
            pumped.total
        ));
    }
    (text, Some(log_path.to_path_buf()))
}

/// The first `head` and last `tail` bytes of a file, cut at line breaks where there are any.
fn head_and_tail(path: &Path, head: usize, tail: usize) -> io::Result<(String, String)> {
    let mut file = File::open(path)?;
    let size = file.metadata()?.len();
    let mut first = vec![0u8; head.min(size as usize)];
    file.read_exact(&mut first)?;
    if let Some(newline) = first.iter().rposition(|byte| *byte == b'\n')
        && newline >= first.len() / 2
    {
        first.truncate(newline + 1);
    }
    let tail_start = size.saturating_sub(tail as u64).max(first.len() as u64);
    file.seek(SeekFrom::Start(tail_start))?;
    let mut last = Vec::new();
    file.read_to_end(&mut last)?;
    if let Some(newline) = last.iter().position(|byte| *byte == b'\n')
        && newline < last.len() / 2
    {
        last.drain(..=newline);
    }
    Ok((
        String::from_utf8_lossy(&first).into_owned(),
        String::from_utf8_lossy(&last).into_owned(),
    ))
}

fn seconds(duration: Duration) -> String {
    let seconds = duration.as_secs_f64();
    if seconds.fract() == 0.0 {
        format!("{seconds:.0} s")
    } else {
        format!("{seconds:.1} s")
    }
}

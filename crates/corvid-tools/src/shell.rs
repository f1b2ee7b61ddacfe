//! `bash`: one command through `bash -c` in the project folder: its arguments, its proposal,
//! the foreground wait (exit, timeout or cancel) and the result's wording. Starting, logging and
//! stopping processes is [`crate::runner`]'s.
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

use std::os::unix::process::ExitStatusExt as _;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use rustix::process::Signal;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::args;
use crate::context::ToolContext;
use crate::error::ToolError;
use crate::runner::{GroupGuard, Spawned, Start, signal_group, spawn_in, stop, summarize_log};
use crate::sandbox::{Confinement, Widening};
use crate::stream::OutputSink;
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
    /// Runs with nothing writable ([`crate::Plan::confine_read_only`]).
    read_only: bool,
}

impl BashPlan {
    /// Makes the command read-only, when the kernel sandbox will enforce it and the command
    /// asked for nothing more; says whether it did.
    pub(crate) fn confine_read_only(&mut self) -> bool {
        if self.confinement != Confinement::Sandboxed {
            return false;
        }
        self.read_only = true;
        true
    }
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
            read_only: false,
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
                read_only: false,
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
            .start(context, &plan.command, plan.widening, plan.read_only);
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
            read_only: plan.read_only,
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
        let note = if plan.read_only {
            READ_ONLY_NOTE.to_owned()
        } else {
            sandbox_note(context, plan.widenable)
        };
        text.push_str(&note);
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

/// The note added to a failed read-only command's result: no widening can help.
const READ_ONLY_NOTE: &str = "\n\n[corvid sandbox] The session is read-only (plan mode or the read-only policy), so this \
     command ran with nothing writable: not the project, not the temp folders, and no network. \
     \"Permission denied\", \"Operation not permitted\" or \"Read-only file system\" above is that. \
     Do not retry it or ask for more: read, search and plan; changes wait for the user's approval.";

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

fn seconds(duration: Duration) -> String {
    let seconds = duration.as_secs_f64();
    if seconds.fract() == 0.0 {
        format!("{seconds:.0} s")
    } else {
        format!("{seconds:.1} s")
    }
}

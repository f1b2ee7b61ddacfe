//! The one process runner: every command corvid starts (`bash`, background processes, custom
//! tools, MCP servers through the sandbox) is spawned here.
//!
//! - **Inside the kernel sandbox** (see [`crate::sandbox`]): the sandbox helper confines itself
//!   and then becomes `bash -c …`.
//! - **Its own process group** (`setpgid(0, 0)` at spawn), so a stop reaches everything the
//!   command started ([`signal_group`], [`GroupGuard`], [`stop`]: SIGTERM, a grace period,
//!   then SIGKILL).
//! - **stdin is /dev/null** unless the caller gives input, so a command that waits for input
//!   fails instead of hanging.
//! - **stdout and stderr share one pipe**, copied by a thread into a log file (mode 0600) up to
//!   a cap, and streamed to an [`OutputSink`] while the command runs; [`summarize_log`] turns
//!   the log into a result's head and tail.

use std::fs::File;
use std::io::{self, Read as _, Seek as _, SeekFrom, Write as _};
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use rustix::process::{Pid, Signal};
use tokio::process::Child;
use tokio::sync::oneshot;

use crate::context::ToolContext;
use crate::error::ToolError;
use crate::sandbox::Widening;
use crate::stream::{OutputSink, Streamer};
use crate::text;

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
    read_only: bool,
    sink: Option<OutputSink>,
) -> Result<Spawned, ToolError> {
    let start = Start {
        command,
        cwd: None,
        stdin: None,
        prefix,
        widening,
        read_only,
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
    /// Nothing may be written (the read-only policy): [`crate::Sandbox::read_only_command`].
    pub(crate) read_only: bool,
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
        read_only,
    } = start;
    let (log, log_path) = create_log(&context.output_dir, prefix)?;
    let (reader, writer) = io::pipe().map_err(|source| ToolError::Spawn { source })?;
    let error_writer = writer
        .try_clone()
        .map_err(|source| ToolError::Spawn { source })?;
    let bash = ["-c".into(), command.into()];
    let root = context.workspace.root();
    let mut builder = if read_only {
        context.sandbox.read_only_command(root, "bash", &bash)
    } else {
        context.sandbox.command(root, "bash", &bash, widening)
    };
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
pub(crate) struct GroupGuard(pub(crate) Option<Pid>);

impl GroupGuard {
    pub(crate) fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        signal_group(self.0, Signal::KILL);
    }
}

/// SIGTERM to the group, up to `grace` for the shell to exit, then SIGKILL.
pub(crate) async fn stop(
    child: &mut Child,
    group: Option<Pid>,
    grace: Duration,
) -> Option<ExitStatus> {
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
pub(crate) fn summarize_log(
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

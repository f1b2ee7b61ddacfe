//! Running one hook command: `bash -c <command>` in the project folder, under the session's
//! sandbox (as `bash` runs), with the event's JSON on stdin and a timeout; its exit code,
//! stdout and stderr are what it answers.

use std::ffi::OsString;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The most of a hook's stdout or stderr kept.
const MAX_OUTPUT: usize = 64 * 1024;

/// What a hook command did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ran {
    /// `None` when it was killed (by a signal, or at its timeout).
    pub(crate) code: Option<i32>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) timed_out: bool,
}

/// Runs `command` with `input` on stdin; a command that cannot start is reported as one that
/// failed (exit code 127), so a broken hook never stops the session.
pub(crate) async fn run(
    sandbox: &corvid_tools::Sandbox,
    project: &Path,
    command: &str,
    input: &str,
    timeout: Duration,
) -> Ran {
    let arguments: [OsString; 2] = ["-c".into(), command.into()];
    let mut builder = sandbox.command(project, "bash", &arguments, Default::default());
    builder
        .env("CLAUDE_PROJECT_DIR", project)
        .env("CORVID_PROJECT_DIR", project)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = match builder.spawn() {
        Ok(child) => child,
        Err(error) => {
            return Ran {
                code: Some(127),
                stdout: String::new(),
                stderr: format!("the hook could not start: {error}"),
                timed_out: false,
            };
        }
    };
    let stdin = child.stdin.take();
    let input = input.as_bytes().to_vec();
    // Written from its own task and closed, so the hook sees the end; one that never reads
    // its input does not hold anything up.
    let writer = tokio::spawn(async move {
        if let Some(mut stdin) = stdin {
            let _ = stdin.write_all(&input).await;
        }
    });
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let collect = async {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let read_out = async {
            if let Some(pipe) = stdout.as_mut() {
                let _ = pipe.take(MAX_OUTPUT as u64).read_to_end(&mut out).await;
            }
        };
        let read_err = async {
            if let Some(pipe) = stderr.as_mut() {
                let _ = pipe.take(MAX_OUTPUT as u64).read_to_end(&mut err).await;
            }
        };
        tokio::join!(read_out, read_err);
        let status = child.wait().await;
        (status, out, err)
    };
    let outcome = tokio::time::timeout(timeout, collect).await;
    writer.abort();
    if outcome.is_err() {
        let _ = child.start_kill();
    }
    match outcome {
        Ok((status, out, err)) => Ran {
            code: status.ok().and_then(|status| status.code()),
            stdout: String::from_utf8_lossy(&out).into_owned(),
            stderr: String::from_utf8_lossy(&err).into_owned(),
            timed_out: false,
        },
        Err(_) => Ran {
            code: None,
            stdout: String::new(),
            stderr: format!("the hook did not finish within {} s", timeout.as_secs()),
            timed_out: true,
        },
    }
}

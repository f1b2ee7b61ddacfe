//! Restarting in place, for what cannot change live (the host and port the socket is bound
//! to): the page asks (`POST /api/restart`), the server stops as on SIGTERM (streams finish
//! within the grace, the ledger is committed, the port is freed), and the process replaces
//! itself with the same program and arguments (but `--host` and `--port`, which would beat
//! the settings being applied) — same PID, terminal and service — which loads the settings
//! files again. The page's token carries over through the page-URL file the
//! stopped server leaves in place (readable by the user only; no secret in the environment),
//! so an open page can move to the new address.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use corvid_server::Token;

/// Set in the restarted process's environment: take the page's token from the page-URL file.
const RESTARTED: &str = "CORVID_RESTARTED";

/// Whether the running server was asked to restart (it is stopping, or has stopped, for that).
static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Notes that the server stops to start again.
pub(crate) fn requested() {
    REQUESTED.store(true, Ordering::SeqCst);
}

/// Whether the server stopped to start again (then the caller calls [`start_again`]).
pub(crate) fn was_requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// The page's token: the previous run's, from the page-URL file at `url_file`, when this
/// process is a restart; a fresh one otherwise.
pub(crate) fn page_token(url_file: &Path) -> Token {
    let inherited = std::env::var_os(RESTARTED)
        .is_some()
        .then(|| std::fs::read_to_string(url_file).ok())
        .flatten()
        .and_then(|url| token_of(&url));
    inherited.unwrap_or_else(Token::generate)
}

fn token_of(url: &str) -> Option<Token> {
    let (_, token) = url.trim().rsplit_once("token=")?;
    (!token.is_empty() && token.bytes().all(|byte| byte.is_ascii_hexdigit()))
        .then(|| Token::from_text(token))
}

/// Replaces this process with the same program and arguments, marked as a restart. Returns
/// only when that failed, with why.
pub(crate) fn start_again() -> anyhow::Error {
    let program = match std::env::current_exe() {
        Ok(program) => program,
        Err(error) => return anyhow::anyhow!("cannot restart: {error}"),
    };
    let mut command = std::process::Command::new(&program);
    command
        .args(without_socket_flags(std::env::args_os().skip(1)))
        .env(RESTARTED, "1");
    tracing::info!(program = %program.display(), "starting again");
    // What was printed must not be lost with this process's buffers.
    let _ = std::io::Write::flush(&mut std::io::stdout());
    replace_with(command)
}

/// The arguments without `--host` and `--port`: the restart is asked for to apply the host
/// and port saved in the settings, which those flags would override.
fn without_socket_flags(args: impl Iterator<Item = std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let mut kept = Vec::new();
    let mut skip_value = false;
    for arg in args {
        if std::mem::take(&mut skip_value) {
            continue;
        }
        match arg.to_str() {
            Some("--host" | "--port") => skip_value = true,
            Some(text) if text.starts_with("--host=") || text.starts_with("--port=") => {}
            _ => kept.push(arg),
        }
    }
    kept
}

#[cfg(unix)]
fn replace_with(mut command: std::process::Command) -> anyhow::Error {
    use std::os::unix::process::CommandExt;
    let error = command.exec();
    anyhow::anyhow!("cannot restart: {error}")
}

#[cfg(not(unix))]
fn replace_with(mut command: std::process::Command) -> anyhow::Error {
    // No exec: a new process takes over and this one ends.
    match command.spawn() {
        Ok(_) => std::process::exit(0),
        Err(error) => anyhow::anyhow!("cannot restart: {error}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_restart_drops_the_socket_flags_and_keeps_the_rest() {
        let args = [
            "serve",
            "--port",
            "0",
            "--host=127.0.0.1",
            "--config",
            "c.toml",
            "--port=9",
            "--project",
            "p",
        ]
        .map(std::ffi::OsString::from);
        let kept = without_socket_flags(args.into_iter());
        assert_eq!(kept, ["serve", "--config", "c.toml", "--project", "p"]);
    }

    #[test]
    fn the_token_is_read_from_a_page_url_only_when_it_is_one() {
        let token = "0123456789abcdef".repeat(4);
        let url = format!("http://127.0.0.1:8787/?token={token}\n");
        assert_eq!(token_of(&url).map(|t| t.as_str().to_owned()), Some(token));
        assert!(token_of("http://127.0.0.1:8787/").is_none());
        assert!(token_of("http://127.0.0.1:8787/?token=").is_none());
        assert!(token_of("http://127.0.0.1:8787/?token=<script>").is_none());
    }
}

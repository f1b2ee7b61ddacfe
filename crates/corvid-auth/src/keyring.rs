//! The OS keyring as an extra copy of the OAuth sign-in, by shelling out to the platform tool.
//!
//! Linux: `secret-tool` (libsecret) over the D-Bus Secret Service, used only when the tool is on
//! `PATH`, a session bus is reachable and a probe lookup works. macOS: `security` (Keychain).
//! Anything else, or `CORVID_KEYRING=off`: no keyring, the env file alone. The crate README
//! explains why this is not the `keyring` crate.

use std::ffi::OsString;
use std::fmt;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::Secret;

/// The keyring service name of every corvid item.
pub const KEYRING_SERVICE: &str = "corvid";
/// How long a keyring tool may take before it is killed (a locked keyring may prompt).
const TOOL_TIMEOUT: Duration = Duration::from_secs(5);

/// An OS credential store holding named secrets for the `corvid` service.
pub trait KeyringBackend: Send + Sync + fmt::Debug {
    /// What `corvid status` calls it.
    fn name(&self) -> &'static str;
    /// The secret stored under `account`, if any.
    fn load(&self, account: &str) -> Result<Option<Secret>, KeyringError>;
    /// Stores (or replaces) the secret under `account`.
    fn store(&self, account: &str, label: &str, value: &Secret) -> Result<(), KeyringError>;
    /// Removes the secret under `account`; removing nothing is not an error.
    fn delete(&self, account: &str) -> Result<(), KeyringError>;
}

/// A keyring tool failed. The message is the tool's stderr, which never holds our secret
/// (secrets go to the tool on stdin).
#[derive(Debug, thiserror::Error)]
pub enum KeyringError {
    #[error("cannot run {tool}: {source}")]
    Spawn {
        tool: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("{tool} did not finish within {} s", TOOL_TIMEOUT.as_secs())]
    Timeout { tool: &'static str },
    #[error("{tool} failed: {message}")]
    Failed { tool: &'static str, message: String },
}

/// Picks the keyring for this machine; `env` reads the environment (`PATH`,
/// `DBUS_SESSION_BUS_ADDRESS`, `XDG_RUNTIME_DIR`, `CORVID_KEYRING`). `None` means the env file
/// alone: a headless box, a container, CI, or `CORVID_KEYRING=off`.
pub fn detect_keyring(env: &dyn Fn(&str) -> Option<String>) -> Option<Arc<dyn KeyringBackend>> {
    let backend = choose_keyring(env)?;
    // A probe: a lookup that finds nothing is fine, an error (no Secret Service daemon, a
    // locked keychain on an SSH session) means this backend does not work here.
    match backend.load("probe") {
        Ok(_) => Some(backend),
        Err(err) => {
            tracing::debug!(%err, "keyring unavailable; using the env file only");
            None
        }
    }
}

/// The backend this platform and environment would use, before probing it.
fn choose_keyring(env: &dyn Fn(&str) -> Option<String>) -> Option<Arc<dyn KeyringBackend>> {
    let choice = env("CORVID_KEYRING").unwrap_or_default();
    if matches!(
        choice.trim().to_ascii_lowercase().as_str(),
        "off" | "0" | "false" | "no" | "none" | "file"
    ) {
        return None;
    }
    let backend: Arc<dyn KeyringBackend> = if cfg!(target_os = "macos") {
        let program = find_on_path("security", env("PATH").as_deref())
            .unwrap_or_else(|| PathBuf::from("/usr/bin/security"));
        Arc::new(MacKeychain::new(program))
    } else {
        let program = find_on_path("secret-tool", env("PATH").as_deref())?;
        if !session_bus_reachable(env) {
            tracing::debug!("secret-tool found but no D-Bus session bus; using the env file only");
            return None;
        }
        Arc::new(SecretTool::new(program))
    };
    Some(backend)
}

fn session_bus_reachable(env: &dyn Fn(&str) -> Option<String>) -> bool {
    env("DBUS_SESSION_BUS_ADDRESS").is_some_and(|address| !address.trim().is_empty())
        || env("XDG_RUNTIME_DIR").is_some_and(|dir| Path::new(&dir).join("bus").exists())
}

fn find_on_path(tool: &str, path: Option<&str>) -> Option<PathBuf> {
    std::env::split_paths(path?)
        .map(|dir| dir.join(tool))
        .find(|candidate| candidate.is_file())
}

/// libsecret's `secret-tool`: items with attributes `service=corvid account=<name>`.
#[derive(Debug)]
pub struct SecretTool {
    command: Vec<OsString>,
}

impl SecretTool {
    /// `program` is the path of `secret-tool`.
    pub fn new(program: PathBuf) -> Self {
        Self {
            command: vec![program.into_os_string()],
        }
    }

    /// A command with leading arguments (`sh fake-secret-tool.sh` in tests).
    #[cfg(test)]
    pub(crate) fn with_command(command: Vec<OsString>) -> Self {
        Self { command }
    }

    fn run(&self, args: &[&str], stdin: Option<&str>) -> Result<ToolOutput, KeyringError> {
        run_tool("secret-tool", &self.command, args, stdin)
    }
}

impl KeyringBackend for SecretTool {
    fn name(&self) -> &'static str {
        "Secret Service (secret-tool)"
    }

    fn load(&self, account: &str) -> Result<Option<Secret>, KeyringError> {
        let output = self.run(
            &["lookup", "service", KEYRING_SERVICE, "account", account],
            None,
        )?;
        match output {
            ToolOutput {
                success: true,
                stdout,
                ..
            } => {
                let value = stdout.trim_end_matches(['\n', '\r']);
                Ok((!value.is_empty()).then(|| Secret::new(value)))
            }
            // secret-tool exits 1 without a message when nothing matches.
            ToolOutput { stderr, .. } if stderr.trim().is_empty() => Ok(None),
            ToolOutput { stderr, .. } => Err(failed("secret-tool", &stderr)),
        }
    }

    fn store(&self, account: &str, label: &str, value: &Secret) -> Result<(), KeyringError> {
        let label = format!("--label={label}");
        let output = self.run(
            &[
                "store",
                &label,
                "service",
                KEYRING_SERVICE,
                "account",
                account,
            ],
            Some(value.expose()),
        )?;
        output.ok_or_fail("secret-tool")
    }

    fn delete(&self, account: &str) -> Result<(), KeyringError> {
        let output = self.run(
            &["clear", "service", KEYRING_SERVICE, "account", account],
            None,
        )?;
        match output {
            ToolOutput { success: true, .. } => Ok(()),
            ToolOutput { stderr, .. } if stderr.trim().is_empty() => Ok(()),
            ToolOutput { stderr, .. } => Err(failed("secret-tool", &stderr)),
        }
    }
}

/// macOS `security` and the login Keychain: generic passwords with service `corvid`.
///
/// The value reaches `security` on stdin through its interactive mode (`security -i`), never on
/// the command line, hex-encoded so that the interactive parser needs no quoting.
#[derive(Debug)]
pub struct MacKeychain {
    program: PathBuf,
}

/// `security`'s exit status for "the item could not be found".
const MAC_NOT_FOUND: i32 = 44;

impl MacKeychain {
    /// `program` is the path of `security`.
    pub fn new(program: PathBuf) -> Self {
        Self { program }
    }

    fn run(&self, args: &[&str], stdin: Option<&str>) -> Result<ToolOutput, KeyringError> {
        run_tool(
            "security",
            &[self.program.clone().into_os_string()],
            args,
            stdin,
        )
    }
}

impl KeyringBackend for MacKeychain {
    fn name(&self) -> &'static str {
        "macOS Keychain (security)"
    }

    fn load(&self, account: &str) -> Result<Option<Secret>, KeyringError> {
        let output = self.run(
            &[
                "find-generic-password",
                "-s",
                KEYRING_SERVICE,
                "-a",
                account,
                "-w",
            ],
            None,
        )?;
        match output {
            ToolOutput {
                success: true,
                stdout,
                ..
            } => Ok(from_hex(stdout.trim()).map(Secret::new)),
            ToolOutput {
                code: Some(MAC_NOT_FOUND),
                ..
            } => Ok(None),
            ToolOutput { stderr, .. } => Err(failed("security", &stderr)),
        }
    }

    fn store(&self, account: &str, label: &str, value: &Secret) -> Result<(), KeyringError> {
        let label: String = label.chars().filter(char::is_ascii_alphanumeric).collect();
        let script = format!(
            "add-generic-password -U -s {KEYRING_SERVICE} -a {account} -l {label} -w {}\n",
            to_hex(value.expose())
        );
        self.run(&["-i"], Some(&script))?.ok_or_fail("security")
    }

    fn delete(&self, account: &str) -> Result<(), KeyringError> {
        let output = self.run(
            &[
                "delete-generic-password",
                "-s",
                KEYRING_SERVICE,
                "-a",
                account,
            ],
            None,
        )?;
        match output {
            ToolOutput { success: true, .. }
            | ToolOutput {
                code: Some(MAC_NOT_FOUND),
                ..
            } => Ok(()),
            ToolOutput { stderr, .. } => Err(failed("security", &stderr)),
        }
    }
}

fn to_hex(text: &str) -> String {
    text.bytes().map(|byte| format!("{byte:02x}")).collect()
}

fn from_hex(text: &str) -> Option<String> {
    let bytes = (0..text.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(text.get(at..at + 2)?, 16).ok())
        .collect::<Option<Vec<u8>>>()?;
    String::from_utf8(bytes)
        .ok()
        .filter(|value| !value.is_empty())
}

struct ToolOutput {
    success: bool,
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl ToolOutput {
    fn ok_or_fail(self, tool: &'static str) -> Result<(), KeyringError> {
        if self.success {
            Ok(())
        } else {
            Err(failed(tool, &self.stderr))
        }
    }
}

fn failed(tool: &'static str, stderr: &str) -> KeyringError {
    let message = stderr.trim();
    KeyringError::Failed {
        tool,
        message: if message.is_empty() {
            "exited with an error".to_owned()
        } else {
            crate::token_endpoint::truncate(message)
        },
    }
}

/// Runs `command args`, feeding `stdin`, killing it after [`TOOL_TIMEOUT`]. Blocking, but short:
/// the outputs are a few hundred bytes, well under a pipe buffer.
fn run_tool(
    tool: &'static str,
    command: &[OsString],
    args: &[&str],
    stdin: Option<&str>,
) -> Result<ToolOutput, KeyringError> {
    let spawn_error = |source| KeyringError::Spawn { tool, source };
    let Some((program, leading)) = command.split_first() else {
        return Err(spawn_error(std::io::ErrorKind::NotFound.into()));
    };
    let mut child = Command::new(program)
        .args(leading)
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(spawn_error)?;
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        // A tool that exits early closes the pipe; its exit status tells the rest.
        let _ = pipe.write_all(text.as_bytes());
    }
    let started = Instant::now();
    let status = loop {
        match child.try_wait().map_err(spawn_error)? {
            Some(status) => break status,
            None if started.elapsed() > TOOL_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(KeyringError::Timeout { tool });
            }
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    };
    let mut stdout = String::new();
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stdout.take() {
        let _ = pipe.read_to_string(&mut stdout);
    }
    if let Some(mut pipe) = child.stderr.take() {
        let _ = pipe.read_to_string(&mut stderr);
    }
    Ok(ToolOutput {
        success: status.success(),
        code: status.code(),
        stdout,
        stderr,
    })
}

#[cfg(test)]
pub(crate) mod tests;

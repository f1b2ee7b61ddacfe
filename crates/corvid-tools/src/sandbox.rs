//! The kernel sandbox around every process the runner starts: what a sandboxed command may
//! touch, what the kernel offers, and how a command is wrapped.
//!
//! A sandboxed command is not started directly. The runner starts the sandbox helper (the
//! `corvid` binary's hidden `sandbox-exec` subcommand, or this crate's `corvid-sandbox` binary in
//! tests) as `<helper> --policy <json> -- bash -c <command>`; the helper sets the parent-death
//! signal, restricts itself with Landlock and seccomp, and then becomes the command (`exec`).
//! Doing it in a helper rather than between `fork` and `exec` keeps the crate free of `unsafe`.
//!
//! The policy ([`SandboxPolicy`]):
//! - **Reads** everywhere, except corvid's own configuration folder (the env file holds secrets)
//!   and the secret stores of [`SECRET_STORES`]. Landlock only grants, so "everywhere except"
//!   is built by granting read on every sibling along the way down to each hidden path (see
//!   `rules`). Folder listings stay possible on the way down (a hidden folder's file names can
//!   be listed, never its files read).
//! - **Writes** only inside the project and the temp folders (`$TMPDIR` and `/tmp`), plus the
//!   usual devices (`/dev/null`, terminals, `/dev/shm`); never in a hidden path, even one inside
//!   a writable folder.
//! - **Read-only commands** (the `read-only` approval policy and plan mode,
//!   [`Sandbox::read_only_command`]) may write nowhere: not the project, not the temp folders,
//!   only the character devices (`/dev/null`, terminals); the network is off.
//! - **Network** off unless widened: Landlock refuses TCP bind and connect (ABI ≥ 4, loopback
//!   included), abstract UNIX sockets outside the sandbox are out of reach (ABI ≥ 6), and seccomp
//!   refuses creating any socket but a UNIX one.
//! - **seccomp** also refuses `ptrace`, mounts, namespaces, `io_uring`, `bpf`, kernel modules
//!   and keyrings, so nothing can climb out of the Landlock domain.
//! - **Secrets in the environment** (`CORVID_*`, `*_API_KEY`, `*TOKEN*`, …, see
//!   [`is_secret_variable`]) are removed from a sandboxed command's environment.
//! - Signals to processes outside the sandbox are refused (ABI ≥ 6), so a command cannot stop
//!   corvid itself.
//! - **`.git/hooks` and `.git/config` stay read-only** inside the writable project, where user
//!   namespaces are available: Landlock cannot take a right away beneath a folder it granted, so
//!   the helper first re-executes itself through `unshare --user --map-current-user --mount`
//!   and bind-mounts those two read-only in its private mount namespace (the `mount` layer).
//!   Without user namespaces they are not protected, and the state says so.

//!
//! On **macOS** the same policy becomes a Seatbelt profile: the helper becomes
//! `/usr/bin/sandbox-exec` with a generated profile (`seatbelt`): reads everywhere but the
//! hidden paths, writes only in the project and temp folders, network off unless widened. There
//! is no seccomp, mount namespace or parent-death signal there. Elsewhere the sandbox says it is
//! unavailable.

// The helper's side: Landlock + seccomp (Linux), Seatbelt (macOS), nothing (elsewhere).
#[cfg(target_os = "linux")]
mod enforce;
#[cfg(target_os = "macos")]
#[path = "sandbox/enforce_macos.rs"]
mod enforce;
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
#[path = "sandbox/enforce_none.rs"]
mod enforce;
// The helper's command line, read the same way on every platform.
mod helper_args;
#[cfg(target_os = "linux")]
mod rules;
#[cfg(any(target_os = "macos", test))]
mod seatbelt;
#[cfg(target_os = "linux")]
mod setup_error;
// What a command may touch, and the policy the helper is given.
mod policy;

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use enforce::helper_main;
pub use policy::{MASKED_SOCKETS, SECRET_STORES, SandboxPolicy, is_secret_variable};
use policy::{
    Writes, default_masked, existing_sockets, find_unshare, protected_git, read_only_writable,
    unshare_works, writable_roots,
};

/// The name of the `corvid` binary's hidden subcommand that runs [`helper_main`].
pub const HELPER_SUBCOMMAND: &str = "sandbox-exec";

/// What the kernel offers, found once at start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SandboxProbe {
    /// The Landlock ABI version, `None` when the kernel has no (enabled) Landlock.
    pub landlock_abi: Option<u32>,
    /// Whether seccomp filters can be installed on this kernel and architecture.
    pub seccomp: bool,
    /// Whether `unshare --user --map-current-user --mount` works here (for read-only
    /// `.git/hooks` and `.git/config`).
    pub namespaces: bool,
}

impl SandboxProbe {
    /// Asks the running kernel. Nothing is restricted: the Landlock version is read with the
    /// `landlock` crate (no securityfs needed), seccomp from `/proc/self/status`.
    pub fn detect() -> Self {
        Self {
            landlock_abi: enforce::landlock_abi(),
            seccomp: enforce::seccomp_available(),
            namespaces: find_unshare().is_some_and(|program| unshare_works(&program)),
        }
    }

    /// Whether Landlock can restrict TCP (ABI 4 and later).
    pub fn landlock_network(&self) -> bool {
        self.landlock_abi.is_some_and(|abi| abi >= 4)
    }
}

/// How commands are run, as the composition root configured it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandbox {
    mode: Mode,
    probe: SandboxProbe,
    hidden: Vec<PathBuf>,
    home: Option<PathBuf>,
    /// The `unshare` program, when the probe found namespaces usable.
    unshare: Option<PathBuf>,
    /// Sockets covered with `/dev/null` (see [`MASKED_SOCKETS`]).
    masked: Vec<PathBuf>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Mode {
    /// Every command goes through the helper with Landlock (and seccomp when available).
    Enforced { helper: PathBuf },
    /// The sandbox is wanted but cannot be had; commands run without it (after asking), through
    /// the helper when there is one so they still die with corvid.
    Unavailable {
        helper: Option<PathBuf>,
        reason: String,
    },
    /// The user turned it off; commands still go through the helper, when there is one, for the
    /// parent-death signal alone.
    Off { helper: Option<PathBuf> },
}

/// How one command will be confined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confinement {
    /// Inside the sandbox, as configured.
    Sandboxed,
    /// Inside the sandbox, but with more than usual, as the model asked for this command.
    Widened(Widening),
    /// Outside any sandbox, because the kernel offers none (the reason says why).
    Unavailable(String),
    /// Outside any sandbox, because the user turned it off.
    Off,
}

/// What a command asked for beyond the usual limits (`bash`'s `sandbox` argument).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Widening {
    /// May write anywhere the user can (corvid's configuration folder still excepted).
    #[serde(default)]
    pub write_outside: bool,
    /// May use the network.
    #[serde(default)]
    pub network: bool,
}

impl Widening {
    /// Whether anything is widened.
    pub fn any(&self) -> bool {
        self.write_outside || self.network
    }
}

impl Sandbox {
    /// The user turned the sandbox off (`--sandbox off`, `sandbox = "off"`): commands run with
    /// the user's full rights, under the approval policy alone. Also the default of
    /// [`crate::ToolContext::new`], so a library user must choose a sandbox explicitly.
    pub fn off() -> Self {
        Self {
            mode: Mode::Off { helper: None },
            probe: SandboxProbe {
                landlock_abi: None,
                seccomp: false,
                namespaces: false,
            },
            hidden: Vec::new(),
            home: None,
            unshare: None,
            masked: Vec::new(),
        }
    }

    /// [`Sandbox::off`], with commands still started through `helper` so they die with corvid
    /// (the parent-death signal); nothing else is restricted.
    pub fn off_with_helper(helper: impl Into<PathBuf>) -> Self {
        Self {
            mode: Mode::Off {
                helper: Some(helper.into()),
            },
            ..Self::off()
        }
    }

    /// The sandbox with `helper` (the program that runs [`helper_main`]) on this kernel.
    /// `hidden` are corvid's own folders and files (configuration, env file, database): never
    /// read nor written by a command. The secret stores under `home` are added to them.
    pub fn new(helper: impl Into<PathBuf>, hidden: Vec<PathBuf>, home: Option<PathBuf>) -> Self {
        Self::with_probe(helper, hidden, home, SandboxProbe::detect())
    }

    /// [`Sandbox::new`] with a given probe result (tests simulate a kernel without Landlock).
    pub fn with_probe(
        helper: impl Into<PathBuf>,
        hidden: Vec<PathBuf>,
        home: Option<PathBuf>,
        probe: SandboxProbe,
    ) -> Self {
        let helper = helper.into();
        let mode = match kernel_sandbox(&probe) {
            Ok(()) => Mode::Enforced { helper },
            Err(reason) => Mode::Unavailable {
                helper: Some(helper),
                reason: reason.to_owned(),
            },
        };
        Self {
            mode,
            probe,
            hidden,
            home,
            unshare: if probe.namespaces {
                find_unshare()
            } else {
                None
            },
            masked: default_masked(),
        }
    }

    /// The sandbox is wanted but its helper cannot be found (`reason` says why): commands run
    /// without it, and every one asks first.
    pub fn without_helper(reason: impl Into<String>) -> Self {
        Self {
            mode: Mode::Unavailable {
                helper: None,
                reason: reason.into(),
            },
            probe: SandboxProbe::detect(),
            hidden: Vec::new(),
            home: None,
            unshare: None,
            masked: Vec::new(),
        }
    }

    /// Also covers the UNIX socket at `path` with `/dev/null` for every command (where the mount
    /// namespace is available), like the daemon sockets of [`MASKED_SOCKETS`].
    pub fn mask_socket(mut self, path: impl Into<PathBuf>) -> Self {
        self.masked.push(path.into());
        self
    }

    /// What the kernel offers.
    pub fn probe(&self) -> SandboxProbe {
        self.probe
    }

    /// Whether commands are confined by the kernel.
    pub fn is_enforced(&self) -> bool {
        matches!(self.mode, Mode::Enforced { .. })
    }

    /// Whether the user turned the sandbox off.
    pub fn is_off(&self) -> bool {
        matches!(self.mode, Mode::Off { .. })
    }

    /// Why the sandbox is not in force, when it is wanted but unavailable.
    pub fn unavailable_reason(&self) -> Option<&str> {
        match &self.mode {
            Mode::Unavailable { reason, .. } => Some(reason),
            _ => None,
        }
    }

    /// One line for people: `landlock ABI 7 + seccomp; network off`,
    /// `unavailable: this kernel has no Landlock …; every command asks`, `off`.
    pub fn describe(&self) -> String {
        match &self.mode {
            Mode::Off { .. } => {
                "off (turned off by the user): commands run with your full rights".to_owned()
            }
            Mode::Unavailable { reason, .. } => {
                format!("unavailable: {reason}; every command asks before it runs")
            }
            Mode::Enforced { .. } if cfg!(target_os = "macos") => {
                "seatbelt (sandbox-exec); writes only in the project and temp folders; network off"
                    .to_owned()
            }
            Mode::Enforced { .. } => {
                let mut layers = vec![format!(
                    "landlock ABI {}",
                    self.probe.landlock_abi.unwrap_or_default()
                )];
                if self.probe.seccomp {
                    layers.push("seccomp".to_owned());
                }
                let git = if self.probe.namespaces {
                    layers.push("mount namespace".to_owned());
                    "; .git/hooks and .git/config read-only"
                } else {
                    "; .git/hooks and .git/config NOT protected (no user namespaces)"
                };
                format!(
                    "{}; writes only in the project and temp folders{git}; network off",
                    layers.join(" + ")
                )
            }
        }
    }

    /// How a command with `widening` will be confined.
    pub fn confinement(&self, widening: Widening) -> Confinement {
        match &self.mode {
            Mode::Off { .. } => Confinement::Off,
            Mode::Unavailable { reason, .. } => Confinement::Unavailable(reason.clone()),
            Mode::Enforced { .. } if widening.any() => Confinement::Widened(widening),
            Mode::Enforced { .. } => Confinement::Sandboxed,
        }
    }

    /// The paths no command may read or write: corvid's own, and the secret stores.
    pub fn hidden_paths(&self) -> Vec<PathBuf> {
        let mut hidden = self.hidden.clone();
        if let Some(home) = &self.home {
            hidden.extend(SECRET_STORES.iter().map(|store| home.join(store)));
        }
        hidden
    }

    /// A command that runs `program` with `arguments` in `project` under this sandbox (widened
    /// by `widening`): the one way corvid starts a process for the agent, so custom tools and
    /// stdio MCP servers get the same confinement as `bash`. It is its own process group, is
    /// killed when dropped, and has no credential-like variables in its environment (unless the
    /// sandbox is off). The caller adds stdin, stdout, stderr and any environment of its own.
    pub fn command(
        &self,
        project: &Path,
        program: impl AsRef<OsStr>,
        arguments: &[OsString],
        widening: Widening,
    ) -> tokio::process::Command {
        self.confined_command(
            project,
            program.as_ref(),
            arguments,
            Writes::Usual(widening),
        )
    }

    /// [`Sandbox::command`] with nothing writable: the project, the temp folders and everything
    /// else read-only (only the character devices of [`read_only_writable`] take writes, which
    /// keep nothing), the network off. For the `read-only` approval policy and plan mode, which
    /// run a command only where the kernel enforces this ([`Sandbox::is_enforced`]); elsewhere
    /// the gate refuses the command before it gets here.
    pub fn read_only_command(
        &self,
        project: &Path,
        program: impl AsRef<OsStr>,
        arguments: &[OsString],
    ) -> tokio::process::Command {
        self.confined_command(project, program.as_ref(), arguments, Writes::Nothing)
    }

    fn confined_command(
        &self,
        project: &Path,
        program: &OsStr,
        arguments: &[OsString],
        writes: Writes,
    ) -> tokio::process::Command {
        let (program, arguments) = self.command_line(project, program, arguments, writes);
        let mut command = tokio::process::Command::new(program);
        command
            .args(arguments)
            .current_dir(project)
            .process_group(0)
            .kill_on_drop(true);
        if !self.is_off() {
            for (name, _) in std::env::vars_os() {
                if is_secret_variable(&name) {
                    command.env_remove(name);
                }
            }
        }
        command
    }

    /// The program and arguments that run `program arguments…` under this sandbox in `project`.
    fn command_line(
        &self,
        project: &Path,
        program: &OsStr,
        arguments: &[OsString],
        writes: Writes,
    ) -> (OsString, Vec<OsString>) {
        let (helper, landlock, seccomp) = match &self.mode {
            Mode::Off { helper: None } | Mode::Unavailable { helper: None, .. } => {
                return (program.to_owned(), arguments.to_vec());
            }
            Mode::Off {
                helper: Some(helper),
            } => (helper, false, false),
            Mode::Unavailable {
                helper: Some(helper),
                ..
            } => (helper, false, self.probe.seccomp),
            Mode::Enforced { helper } => (helper, true, self.probe.seccomp),
        };
        let namespaced = landlock && self.unshare.is_some();
        let (writable, widening) = match writes {
            Writes::Nothing => (read_only_writable(), Widening::default()),
            Writes::Usual(widening) if widening.write_outside => {
                (vec![PathBuf::from("/")], widening)
            }
            Writes::Usual(widening) => (writable_roots(project), widening),
        };
        // With nothing writable there is no `.git` to protect or pin inside the project.
        let project_writable = matches!(writes, Writes::Usual(_));
        let policy = SandboxPolicy {
            landlock,
            seccomp,
            read_hidden: self.hidden_paths(),
            writable,
            // Without Landlock the command runs with the user's rights (after asking), network
            // included; seccomp then only keeps ptrace, mounts and the like out.
            network: widening.network || !landlock,
            parent: Some(std::process::id()),
            read_only: if namespaced && project_writable {
                protected_git(project)
            } else {
                Vec::new()
            },
            pinned: if namespaced && project_writable && project.join(".git").is_dir() {
                vec![project.join(".git")]
            } else {
                Vec::new()
            },
            masked: if namespaced {
                existing_sockets(&self.masked)
            } else {
                Vec::new()
            },
            unshare: if namespaced {
                self.unshare.clone()
            } else {
                None
            },
            namespaced: false,
        };
        let mut line: Vec<OsString> = vec![
            HELPER_SUBCOMMAND.into(),
            "--policy".into(),
            // A policy of paths and flags always serializes.
            serde_json::to_string(&policy).unwrap_or_default().into(),
            "--".into(),
            program.to_owned(),
        ];
        line.extend(arguments.iter().cloned());
        (helper.clone().into_os_string(), line)
    }
}

/// Whether this machine can confine commands, or why not.
#[cfg(target_os = "macos")]
fn kernel_sandbox(_probe: &SandboxProbe) -> Result<(), &'static str> {
    if enforce::seatbelt_available() {
        Ok(())
    } else {
        Err("/usr/bin/sandbox-exec (Seatbelt) is missing")
    }
}

/// Whether this machine can confine commands, or why not.
#[cfg(not(target_os = "macos"))]
fn kernel_sandbox(probe: &SandboxProbe) -> Result<(), &'static str> {
    match probe.landlock_abi {
        Some(_) => Ok(()),
        None if cfg!(target_os = "linux") => {
            Err("this kernel has no Landlock (Linux 5.13 or later with Landlock enabled is needed)")
        }
        None => Err("corvid has no command sandbox for this platform (only Linux and macOS)"),
    }
}

#[cfg(test)]
mod tests;

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
// The helper's command line, read the same way on macOS and elsewhere (Linux reads it in
// `enforce`, with its own typed errors).
#[cfg(not(target_os = "linux"))]
mod helper_args;
#[cfg(target_os = "linux")]
mod rules;
#[cfg(any(target_os = "macos", test))]
mod seatbelt;
#[cfg(target_os = "linux")]
mod setup_error;

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use enforce::helper_main;

/// The name of the `corvid` binary's hidden subcommand that runs [`helper_main`].
pub const HELPER_SUBCOMMAND: &str = "sandbox-exec";

/// The secret stores a sandboxed command may not read, relative to the home folder. One list,
/// documented in the README's Sandbox section.
pub const SECRET_STORES: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker/config.json",
    ".config/gcloud",
    ".config/gh",
    ".config/hub",
    ".config/op",
    ".netrc",
    ".git-credentials",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".password-store",
    ".local/share/keyrings",
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
];

/// Whether an environment variable of corvid's must not reach a sandboxed command: corvid's own
/// settings (`CORVID_*`, `SUPERGROK_ZED_*`, which may carry credentials) and anything named like
/// a credential (`*KEY*`, `*TOKEN*`, `*SECRET*`, `*PASSWORD*`, `*CREDENTIAL*`, any case). Hiding
/// the env file would mean little if its keys were in the command's environment.
pub fn is_secret_variable(name: &std::ffi::OsStr) -> bool {
    let name = name.to_string_lossy().to_ascii_uppercase();
    name.starts_with("CORVID_")
        || name.starts_with("SUPERGROK_ZED_")
        || ["KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"]
            .iter()
            .any(|word| name.contains(word))
}

/// Daemon sockets that hand out more than the user's own rights (a container engine can start a
/// privileged container). Landlock before ABI 9 does not govern connecting to a UNIX socket by
/// path, so inside the mount namespace each is covered with `/dev/null`. `$XDG_RUNTIME_DIR`'s
/// are added at run time.
pub const MASKED_SOCKETS: &[&str] = &[
    "/run/docker.sock",
    "/var/run/docker.sock",
    "/run/containerd/containerd.sock",
    "/run/podman/podman.sock",
    "/run/buildkit/buildkitd.sock",
    "/var/run/libvirt/libvirt-sock",
];

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
        let (program, arguments) =
            self.command_line(project, program.as_ref(), arguments, widening);
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
        widening: Widening,
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
        let policy = SandboxPolicy {
            landlock,
            seccomp,
            read_hidden: self.hidden_paths(),
            writable: if widening.write_outside {
                vec![PathBuf::from("/")]
            } else {
                writable_roots(project)
            },
            // Without Landlock the command runs with the user's rights (after asking), network
            // included; seccomp then only keeps ptrace, mounts and the like out.
            network: widening.network || !landlock,
            parent: Some(std::process::id()),
            read_only: if namespaced {
                protected_git(project)
            } else {
                Vec::new()
            },
            pinned: if namespaced && project.join(".git").is_dir() {
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

/// The folders a sandboxed command may write in: the project, the temp folders, the devices
/// every program expects.
fn writable_roots(project: &Path) -> Vec<PathBuf> {
    let mut roots = vec![
        project.to_path_buf(),
        std::env::temp_dir(),
        PathBuf::from("/tmp"),
    ];
    roots.extend(
        [
            "/dev/null",
            "/dev/zero",
            "/dev/full",
            "/dev/random",
            "/dev/urandom",
            "/dev/tty",
            "/dev/ptmx",
            "/dev/pts",
            "/dev/shm",
        ]
        .map(PathBuf::from),
    );
    roots
}

/// The project's git files that run code when git runs (hooks) or decide what runs (config):
/// read-only for commands. A missing `.git/hooks` in an existing `.git` folder is created
/// (empty, as `git init` would), so there is something to protect.
fn protected_git(project: &Path) -> Vec<PathBuf> {
    let git = project.join(".git");
    if !std::fs::symlink_metadata(&git).is_ok_and(|meta| meta.is_dir()) {
        return Vec::new();
    }
    let hooks = git.join("hooks");
    if !hooks.exists() {
        let _ = std::fs::create_dir(&hooks);
    }
    [hooks, git.join("config")]
        .into_iter()
        .filter(|path| path.exists())
        .collect()
}

/// [`MASKED_SOCKETS`] plus the user's own container-engine sockets.
fn default_masked() -> Vec<PathBuf> {
    let mut masked: Vec<PathBuf> = MASKED_SOCKETS.iter().map(PathBuf::from).collect();
    if let Some(runtime) = std::env::var_os("XDG_RUNTIME_DIR").filter(|dir| !dir.is_empty()) {
        let runtime = PathBuf::from(runtime);
        masked.extend(["docker.sock", "podman/podman.sock"].map(|socket| runtime.join(socket)));
    }
    masked
}

/// The paths among `paths` that are UNIX sockets now, canonical and each once.
fn existing_sockets(paths: &[PathBuf]) -> Vec<PathBuf> {
    use std::os::unix::fs::FileTypeExt as _;
    let mut sockets: Vec<PathBuf> = paths
        .iter()
        .filter(|path| std::fs::metadata(path).is_ok_and(|meta| meta.file_type().is_socket()))
        .filter_map(|path| std::fs::canonicalize(path).ok())
        .collect();
    sockets.sort();
    sockets.dedup();
    sockets
}

/// The `unshare` program on `PATH`.
fn find_unshare() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|folder| folder.join("unshare"))
        .find(|candidate| candidate.is_file())
}

/// Whether `program` can make a user and mount namespace here.
fn unshare_works(program: &Path) -> bool {
    std::process::Command::new(program)
        .args(["--user", "--map-current-user", "--mount", "true"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// What the helper enforces, passed to it as JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxPolicy {
    /// Restrict the file system (and TCP, when `network` is false) with Landlock — on macOS,
    /// with the Seatbelt profile.
    pub landlock: bool,
    /// Install the seccomp filter.
    pub seccomp: bool,
    /// Never read nor written.
    pub read_hidden: Vec<PathBuf>,
    /// Writable, with everything beneath (minus `read_hidden`).
    pub writable: Vec<PathBuf>,
    /// Network allowed.
    pub network: bool,
    /// The process that started the helper: if it is already gone when the parent-death
    /// signal is armed, the helper stops instead of running an orphan.
    pub parent: Option<u32>,
    /// Made read-only in a private mount namespace (inside writable folders).
    #[serde(default)]
    pub read_only: Vec<PathBuf>,
    /// Covered with `/dev/null` in that namespace (daemon sockets).
    #[serde(default)]
    pub masked: Vec<PathBuf>,
    /// Bind-mounted onto themselves (still writable) in that namespace first, so they cannot be
    /// renamed or removed: `.git`, which could otherwise be moved aside with its read-only parts
    /// and recreated without them.
    #[serde(default)]
    pub pinned: Vec<PathBuf>,
    /// The `unshare` program that makes that namespace.
    #[serde(default)]
    pub unshare: Option<PathBuf>,
    /// Set by the helper on itself once it runs inside that namespace.
    #[serde(default)]
    pub namespaced: bool,
}

#[cfg(test)]
mod tests;

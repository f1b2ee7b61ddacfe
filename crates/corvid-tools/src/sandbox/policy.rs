//! What a sandboxed command may touch: the secret stores and daemon sockets kept out of reach,
//! the folders it may write in (none but the character devices for a read-only command), the
//! project's git files kept read-only, and the policy the helper is given as JSON.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Widening;

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

/// What one command may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Writes {
    /// The project and the temp folders, widened as the model asked.
    Usual(Widening),
    /// Nothing that keeps what is written ([`read_only_writable`]).
    Nothing,
}

/// The character devices every program expects to write to (output thrown away, terminals).
/// None of them keeps what is written.
const DEVICES: [&str; 8] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];

/// The folders a sandboxed command may write in: the project, the temp folders, the devices
/// every program expects, and `/dev/shm`.
pub(super) fn writable_roots(project: &Path) -> Vec<PathBuf> {
    let mut roots = vec![
        project.to_path_buf(),
        std::env::temp_dir(),
        PathBuf::from("/tmp"),
        PathBuf::from("/dev/shm"),
    ];
    roots.extend(DEVICES.map(PathBuf::from));
    roots
}

/// What a read-only command may write: the character devices only. Not the temp folders: they
/// are shared with every other program of the user and outlive the command, so a file left
/// there is a change (a script another tool picks up, a planted `$TMPDIR` config), and a
/// read-only command promises none. Not `/dev/shm` either (a shared, writable tmpfs). Programs
/// that need scratch space (`sort` on large input, compilers) fail visibly instead; reading,
/// listing, searching and `git status`/`git log`/`git diff` need none.
pub(super) fn read_only_writable() -> Vec<PathBuf> {
    DEVICES.map(PathBuf::from).to_vec()
}

/// The project's git files that run code when git runs (hooks) or decide what runs (config):
/// read-only for commands. A missing `.git/hooks` in an existing `.git` folder is created
/// (empty, as `git init` would), so there is something to protect.
pub(super) fn protected_git(project: &Path) -> Vec<PathBuf> {
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
pub(super) fn default_masked() -> Vec<PathBuf> {
    let mut masked: Vec<PathBuf> = MASKED_SOCKETS.iter().map(PathBuf::from).collect();
    if let Some(runtime) = std::env::var_os("XDG_RUNTIME_DIR").filter(|dir| !dir.is_empty()) {
        let runtime = PathBuf::from(runtime);
        masked.extend(["docker.sock", "podman/podman.sock"].map(|socket| runtime.join(socket)));
    }
    masked
}

/// The paths among `paths` that are UNIX sockets now, canonical and each once.
pub(super) fn existing_sockets(paths: &[PathBuf]) -> Vec<PathBuf> {
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
pub(super) fn find_unshare() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|folder| folder.join("unshare"))
        .find(|candidate| candidate.is_file())
}

/// Whether `program` can make a user and mount namespace here.
pub(super) fn unshare_works(program: &Path) -> bool {
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

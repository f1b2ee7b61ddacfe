//! The helper's side: arm the parent-death signal, restrict this process with Landlock and
//! seccomp, then become the command. Also the kernel probes.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::process::CommandExt as _;
use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, LandlockStatus, PathBeneath, PathFd,
    RestrictSelf, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope,
};
use rustix::process::Signal;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use super::SandboxPolicy;
use super::rules::{self, Grant};
use super::setup_error::SetupError;

/// The Landlock ABI this code was written and tested against; newer kernels get these rights.
const TESTED_ABI: ABI = ABI::V6;

/// The exit status when the helper cannot set the sandbox up (the command never ran).
const SETUP_FAILED: u8 = 125;
/// The exit status when the command cannot be started.
const EXEC_FAILED: u8 = 127;

/// The helper's entry point: `args` are what follows the subcommand name,
/// `--policy <json> -- <program> [arguments…]`. Returns only on failure (after printing why on
/// stderr); on success the process has become the command.
pub fn helper_main(args: impl IntoIterator<Item = OsString>) -> std::process::ExitCode {
    let fail = |message: String, code: u8| {
        eprintln!("corvid sandbox: {message}");
        std::process::ExitCode::from(code)
    };
    let (policy, program) = match super::helper_args::parse(args) {
        Ok(parsed) => parsed,
        Err(error) => return fail(error.to_string(), SETUP_FAILED),
    };
    if program.is_empty() {
        return fail("no command after `--`".to_owned(), SETUP_FAILED);
    }
    if let Err(error) = confine(&policy, &program) {
        return fail(error.to_string(), SETUP_FAILED);
    }
    let Some((program, arguments)) = program.split_first() else {
        return fail("no command after `--`".to_owned(), SETUP_FAILED);
    };
    let error = std::process::Command::new(program).args(arguments).exec();
    fail(
        format!("cannot start {}: {error}", program.to_string_lossy()),
        EXEC_FAILED,
    )
}

/// Applies the whole policy to this process (first re-executing it inside a user and mount
/// namespace when some paths must be read-only; that exec only returns on failure).
fn confine(policy: &SandboxPolicy, program: &[OsString]) -> Result<(), SetupError> {
    // Die with the process that started us; armed first, then the parent checked, so a parent
    // that died before the signal was armed is noticed too.
    rustix::process::set_parent_process_death_signal(Some(Signal::KILL))
        .map_err(SetupError::ParentDeathSignal)?;
    if let Some(parent) = policy.parent {
        let now = rustix::process::getppid().map(|pid| pid.as_raw_nonzero().get() as u32);
        if now != Some(parent) {
            return Err(SetupError::ParentGone);
        }
    }
    if (!policy.read_only.is_empty() || !policy.masked.is_empty())
        && !policy.namespaced
        && let Some(unshare) = &policy.unshare
    {
        return Err(reexec_in_namespace(unshare, policy, program));
    }
    if policy.namespaced {
        for path in &policy.pinned {
            rustix::mount::mount_bind(path, path).map_err(|source| SetupError::Pin {
                path: path.clone(),
                source,
            })?;
        }
        read_only_mounts(&policy.read_only)?;
        for socket in &policy.masked {
            rustix::mount::mount_bind("/dev/null", socket).map_err(|source| SetupError::Cover {
                path: socket.clone(),
                source,
            })?;
        }
    }
    if policy.landlock {
        landlock(policy)?;
    }
    if policy.seccomp {
        seccomp(policy.network)?;
    }
    Ok(())
}

/// Runs this helper again through `unshare`, in a new user namespace (mapping the current user
/// to itself) with a private mount namespace; returns why that failed.
fn reexec_in_namespace(
    unshare: &std::path::Path,
    policy: &SandboxPolicy,
    program: &[OsString],
) -> SetupError {
    let myself = match std::env::current_exe() {
        Ok(myself) => myself,
        Err(error) => return SetupError::HelperPath(error),
    };
    let inside = SandboxPolicy {
        namespaced: true,
        ..policy.clone()
    };
    let Ok(json) = serde_json::to_string(&inside) else {
        return SetupError::EncodePolicy;
    };
    let error = std::process::Command::new(unshare)
        .args([
            "--user",
            "--map-current-user",
            "--mount",
            "--propagation",
            "private",
            "--",
        ])
        .arg(myself)
        .arg(super::HELPER_SUBCOMMAND)
        .arg("--policy")
        .arg(json)
        .arg("--")
        .args(program)
        .exec();
    SetupError::Unshare {
        unshare: unshare.to_path_buf(),
        source: error,
    }
}

/// Bind-mounts each path onto itself, read-only, in this process's private mount namespace. The
/// flags the kernel locked on the original mount (nosuid, nodev, …) are kept, as a user
/// namespace may not drop them.
fn read_only_mounts(paths: &[PathBuf]) -> Result<(), SetupError> {
    use rustix::fs::StatVfsMountFlags as Vfs;
    use rustix::mount::MountFlags as Mount;
    for path in paths {
        let error = |source: rustix::io::Errno| SetupError::ReadOnly {
            path: path.clone(),
            source,
        };
        let Ok(vfs) = rustix::fs::statvfs(path) else {
            // Gone since the policy was made: nothing to protect.
            continue;
        };
        rustix::mount::mount_bind(path, path).map_err(error)?;
        let mut flags = Mount::BIND | Mount::RDONLY;
        for (locked, flag) in [
            (Vfs::NOSUID, Mount::NOSUID),
            (Vfs::NODEV, Mount::NODEV),
            (Vfs::NOEXEC, Mount::NOEXEC),
            (Vfs::NOATIME, Mount::NOATIME),
            (Vfs::NODIRATIME, Mount::NODIRATIME),
            (Vfs::RELATIME, Mount::RELATIME),
        ] {
            if vfs.f_flag.contains(locked) {
                flags |= flag;
            }
        }
        rustix::mount::mount_remount(path, flags, "").map_err(error)?;
    }
    Ok(())
}

fn landlock(policy: &SandboxPolicy) -> Result<(), SetupError> {
    let hidden = rules::canonical_hidden(&policy.read_hidden);
    let mut grants = Vec::new();
    rules::split(&PathBuf::from("/"), Grant::Read, &hidden, &mut grants);
    for root in &policy.writable {
        if let Ok(root) = std::fs::canonicalize(root) {
            rules::split(&root, Grant::Write, &hidden, &mut grants);
        }
    }
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(TESTED_ABI))?
        .scope(Scope::Signal)?;
    if !policy.network {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(TESTED_ABI))?
            .scope(Scope::AbstractUnixSocket)?;
    }
    let mut created = ruleset.create()?;
    let file_rights = AccessFs::from_file(TESTED_ABI);
    for (path, grant) in grants {
        let access = match grant {
            Grant::Read => AccessFs::from_read(TESTED_ABI),
            Grant::List => AccessFs::ReadDir.into(),
            Grant::Write => AccessFs::from_all(TESTED_ABI),
        };
        let is_dir = std::fs::metadata(&path).is_ok_and(|meta| meta.is_dir());
        let access = if is_dir { access } else { access & file_rights };
        if access.is_empty() {
            continue;
        }
        // A path that vanished since it was listed has nothing left to grant.
        let Ok(fd) = PathFd::new(&path) else { continue };
        created = created.add_rule(PathBeneath::new(fd, access))?;
    }
    let status = created.restrict_self()?;
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err(SetupError::LandlockNotEnforced);
    }
    Ok(())
}

fn seccomp(network: bool) -> Result<(), SetupError> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)?;
    let mut denied: BTreeMap<i64, Vec<SeccompRule>> = [
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_fsopen,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_fsconfig,
        libc::SYS_move_mount,
        libc::SYS_open_tree,
        libc::SYS_mount_setattr,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_userfaultfd,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_keyctl,
        libc::SYS_open_by_handle_at,
    ]
    .into_iter()
    .map(|call| (call, Vec::new()))
    .collect();
    // New namespaces through clone's flags (unshare is denied above).
    let namespaces = [libc::CLONE_NEWUSER, libc::CLONE_NEWNS, libc::CLONE_NEWNET]
        .into_iter()
        .map(|flag| {
            let flag = flag as u64;
            SeccompCondition::new(
                0,
                SeccompCmpArgLen::Qword,
                SeccompCmpOp::MaskedEq(flag),
                flag,
            )
            .and_then(|condition| SeccompRule::new(vec![condition]))
        })
        .collect::<Result<Vec<_>, _>>()?;
    denied.insert(libc::SYS_clone, namespaces);
    if !network {
        let not_unix = SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Ne,
            libc::AF_UNIX as u64,
        )
        .and_then(|condition| SeccompRule::new(vec![condition]))?;
        denied.insert(libc::SYS_socket, vec![not_unix]);
    }
    let refuse = SeccompFilter::new(
        denied,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )?;
    // clone3 hides its flags in memory a filter cannot read: report it missing, and the C
    // library falls back to clone, whose flags the filter above checks.
    let no_clone3 = SeccompFilter::new(
        [(libc::SYS_clone3, Vec::new())].into_iter().collect(),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )?;
    for filter in [refuse, no_clone3] {
        let program: BpfProgram = filter.try_into()?;
        seccompiler::apply_filter(&program)?;
    }
    Ok(())
}

/// The Landlock ABI of the running kernel, read without restricting anything.
pub(super) fn landlock_abi() -> Option<u32> {
    let status = RestrictSelf::default().no_new_privs(false).apply().ok()?;
    match status.landlock {
        LandlockStatus::Available {
            effective_abi,
            kernel_abi,
        } => kernel_abi
            .and_then(|abi| u32::try_from(abi).ok())
            .or(Some(effective_abi as u32)),
        LandlockStatus::NotEnabled | LandlockStatus::NotImplemented => None,
        #[allow(unreachable_patterns)] // the enum may grow
        _ => None,
    }
}

/// Whether this kernel filters system calls for this architecture.
pub(super) fn seccomp_available() -> bool {
    TargetArch::try_from(std::env::consts::ARCH).is_ok()
        && std::fs::read_to_string("/proc/self/status")
            .is_ok_and(|status| status.lines().any(|line| line.starts_with("Seccomp:")))
}

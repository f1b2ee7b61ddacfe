//! The helper's side on macOS: the policy becomes a Seatbelt profile and the helper becomes
//! `/usr/bin/sandbox-exec` running the command under it (see `seatbelt`). macOS has no
//! parent-death signal: a command outlives a corvid that was killed outright (the runner's
//! process group and kill-on-drop still end it on every normal stop). Landlock, seccomp and
//! the mount namespace are Linux's: the probes say they are absent.
//!
//! Written for macOS and compiled for it (`cargo check --target x86_64-apple-darwin`); not run
//! here.

use std::ffi::OsString;
use std::os::unix::process::CommandExt as _;
use std::path::Path;

use super::seatbelt::{Profile, SANDBOX_EXEC};

const SETUP_FAILED: u8 = 125;
const EXEC_FAILED: u8 = 127;

/// The helper's entry point (see the Linux one): returns only on failure.
pub fn helper_main(args: impl IntoIterator<Item = OsString>) -> std::process::ExitCode {
    let fail = |message: String, code: u8| {
        eprintln!("corvid sandbox: {message}");
        std::process::ExitCode::from(code)
    };
    let (policy, program) = match super::helper_args::parse(args) {
        Ok(parsed) => parsed,
        Err(error) => return fail(error.to_string(), SETUP_FAILED),
    };
    let Some((first, rest)) = program.split_first() else {
        return fail("no command after `--`".to_owned(), SETUP_FAILED);
    };
    // `landlock` is the policy's "confine the file system" switch, whatever the platform.
    let error = if policy.landlock {
        let profile = Profile::for_policy(&policy);
        std::process::Command::new(SANDBOX_EXEC)
            .args(profile.command_line(&program))
            .exec()
    } else {
        std::process::Command::new(first).args(rest).exec()
    };
    fail(
        format!("cannot start {}: {error}", first.to_string_lossy()),
        EXEC_FAILED,
    )
}

/// Seatbelt is there when `sandbox-exec` is.
pub(super) fn seatbelt_available() -> bool {
    Path::new(SANDBOX_EXEC).is_file()
}

pub(super) fn landlock_abi() -> Option<u32> {
    None
}

pub(super) fn seccomp_available() -> bool {
    false
}

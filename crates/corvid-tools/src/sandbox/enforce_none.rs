//! Platforms with no command sandbox corvid knows (neither Landlock nor Seatbelt): the helper
//! runs the command as it is, and the sandbox reports itself unavailable, so every command asks.

use std::ffi::OsString;
use std::os::unix::process::CommandExt as _;

pub fn helper_main(args: impl IntoIterator<Item = OsString>) -> std::process::ExitCode {
    let program = match super::helper_args::parse(args) {
        Ok((_, program)) => program,
        Err(message) => {
            eprintln!("corvid sandbox: {message}");
            return std::process::ExitCode::from(125);
        }
    };
    let Some((first, rest)) = program.split_first() else {
        eprintln!("corvid sandbox: no command after `--`");
        return std::process::ExitCode::from(125);
    };
    let error = std::process::Command::new(first).args(rest).exec();
    eprintln!(
        "corvid sandbox: cannot start {}: {error}",
        first.to_string_lossy()
    );
    std::process::ExitCode::from(127)
}

pub(super) fn landlock_abi() -> Option<u32> {
    None
}

pub(super) fn seccomp_available() -> bool {
    false
}

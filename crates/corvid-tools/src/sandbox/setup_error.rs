//! Why the sandbox helper could not confine itself or start the command. The helper prints it
//! as `corvid sandbox: …` (a prefix `bash`'s sandbox note looks for) and exits.

use std::path::PathBuf;

/// A failure of the helper before the command runs.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SetupError {
    #[error("cannot set the parent-death signal: {0}")]
    ParentDeathSignal(#[source] rustix::io::Errno),
    #[error("corvid is gone; not starting the command")]
    ParentGone,
    #[error("cannot find the sandbox helper itself: {0}")]
    HelperPath(#[source] std::io::Error),
    #[error("cannot encode the policy")]
    EncodePolicy,
    /// Re-executing inside a user and mount namespace failed.
    #[error("cannot start {}: {source}", unshare.display())]
    Unshare {
        unshare: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot pin {}: {source}", path.display())]
    Pin {
        path: PathBuf,
        #[source]
        source: rustix::io::Errno,
    },
    #[error("cannot make {} read-only: {source}", path.display())]
    ReadOnly {
        path: PathBuf,
        #[source]
        source: rustix::io::Errno,
    },
    #[error("cannot cover {}: {source}", path.display())]
    Cover {
        path: PathBuf,
        #[source]
        source: rustix::io::Errno,
    },
    #[error("landlock: {0}")]
    Landlock(#[from] landlock::RulesetError),
    #[error("the kernel did not enforce the Landlock rules")]
    LandlockNotEnforced,
    #[error("seccomp: {0}")]
    Seccomp(#[from] seccompiler::BackendError),
    #[error("seccomp: {0}")]
    SeccompApply(#[from] seccompiler::Error),
}

//! The tools' sandbox in the protocol's words: the state front ends show, and how a command's
//! confinement feeds the approval gate and its proposal.

use corvid_protocol::{Confinement, SandboxMode, SandboxNotice, SandboxState};
use corvid_tools::Sandbox;

/// What `ready` says about the sandbox.
pub(crate) fn state(sandbox: &Sandbox) -> SandboxState {
    let probe = sandbox.probe();
    let mode = if sandbox.is_enforced() {
        SandboxMode::Enforced
    } else if sandbox.is_off() {
        SandboxMode::Off
    } else {
        SandboxMode::Unavailable
    };
    SandboxState {
        mode,
        landlock_abi: probe.landlock_abi,
        seccomp: probe.seccomp && !sandbox.is_off(),
        network: !sandbox.is_enforced(),
        summary: sandbox.describe(),
    }
}

/// The gate's view of how a command will be confined.
pub(crate) fn confinement(confinement: &corvid_tools::Confinement) -> Confinement {
    match confinement {
        corvid_tools::Confinement::Sandboxed => Confinement::Sandboxed,
        corvid_tools::Confinement::Widened(_) => Confinement::Widened,
        corvid_tools::Confinement::Unavailable(_) => Confinement::Unsandboxed,
        corvid_tools::Confinement::Off => Confinement::SandboxOff,
    }
}

/// What a proposal says about the sandbox, when the command runs with more than it allows.
pub(crate) fn notice(confinement: &corvid_tools::Confinement) -> Option<SandboxNotice> {
    match confinement {
        corvid_tools::Confinement::Widened(widening) => Some(SandboxNotice::Widened {
            write_outside: widening.write_outside,
            network: widening.network,
        }),
        corvid_tools::Confinement::Unavailable(reason) => Some(SandboxNotice::Unavailable {
            reason: reason.clone(),
        }),
        corvid_tools::Confinement::Sandboxed | corvid_tools::Confinement::Off => None,
    }
}

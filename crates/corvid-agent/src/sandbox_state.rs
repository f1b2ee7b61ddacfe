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

/// What the model is told about the sandbox, so it neither claims a confinement that is not
/// there nor fights one that is.
pub(crate) fn prompt_section(sandbox: &Sandbox) -> String {
    let body = if sandbox.is_enforced() {
        "`bash` commands (and everything they start) run in a kernel sandbox: they may write only \
         inside the project and the temp folders, never .git/hooks or .git/config; they cannot read \
         corvid's configuration or secret stores such as ~/.ssh; they have no network. Reading \
         elsewhere is allowed. When a command fails with \"Permission denied\" or \"Operation not \
         permitted\" because of the sandbox and truly needs more (installing dependencies, \
         downloading), call `bash` again with `\"sandbox\": {\"network\": true}` and/or \
         `{\"write_outside\": true}`: the user is asked to approve exactly that. Do not try to get \
         around the sandbox any other way."
            .to_owned()
    } else if sandbox.is_off() {
        "The user turned the sandbox off: `bash` commands run with the user's full rights. Stay \
         inside the project unless the user asks otherwise."
            .to_owned()
    } else {
        format!(
            "There is no sandbox ({}): `bash` commands run with the user's full rights, and the \
             user is asked before each one. Stay inside the project unless the user asks otherwise.",
            sandbox
                .unavailable_reason()
                .unwrap_or("the kernel offers none")
        )
    };
    format!("\n\n# Sandbox\n{body}\n")
}

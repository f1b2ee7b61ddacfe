//! The kernel sandbox as front ends see it: which layers are active (in `ready`), and what a
//! proposal runs with beyond the sandbox's usual limits. Also how a command is confined, for the
//! approval gate ([`crate::decision_with_sandbox`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The sandbox the engine runs commands in, probed when it started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SandboxState {
    /// Whether commands are confined.
    pub mode: SandboxMode,
    /// The kernel's Landlock ABI version; absent when the kernel has no Landlock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landlock_abi: Option<u32>,
    /// Whether the seccomp filter is installed (the second layer).
    pub seccomp: bool,
    /// Whether sandboxed commands may use the network (false unless one command is widened).
    pub network: bool,
    /// One line for people: `landlock ABI 7 + seccomp; writes only in the project and temp
    /// folders; network off`.
    pub summary: String,
}

/// Whether commands are confined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SandboxMode {
    /// Every command runs in the kernel sandbox.
    Enforced,
    /// The kernel offers no sandbox: every command asks before it runs, under every policy.
    Unavailable,
    /// The user turned the sandbox off (`--sandbox off`, `sandbox = "off"`).
    Off,
}

impl SandboxMode {
    /// The mode's wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Enforced => "enforced",
            Self::Unavailable => "unavailable",
            Self::Off => "off",
        }
    }
}

/// How one command will be confined, as far as the gate is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Confinement {
    /// Inside the sandbox with its usual limits.
    Sandboxed,
    /// Inside the sandbox, widened for this one command (write outside, network).
    Widened,
    /// Without a sandbox, because the kernel offers none.
    Unsandboxed,
    /// Without a sandbox, because the user turned it off.
    SandboxOff,
}

/// What a proposed command runs with beyond the sandbox's usual limits; shown with the proposal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SandboxNotice {
    /// The model asked for more for this one command.
    Widened {
        /// It may write outside the project and the temp folders (corvid's configuration
        /// folder excepted).
        write_outside: bool,
        /// It may use the network.
        network: bool,
    },
    /// The kernel offers no sandbox, so the command runs with the user's full rights.
    Unavailable {
        /// Why there is no sandbox.
        reason: String,
    },
}

impl SandboxNotice {
    /// One sentence saying exactly what the command may do beyond the sandbox.
    pub fn describe(&self) -> String {
        match self {
            Self::Widened {
                write_outside,
                network,
            } => {
                let mut parts = Vec::new();
                if *write_outside {
                    parts.push("write outside the project and temp folders");
                }
                if *network {
                    parts.push("use the network");
                }
                if parts.is_empty() {
                    return "This command runs in the sandbox as usual.".to_owned();
                }
                format!(
                    "This command asks to run with more than the sandbox allows: it may {}.",
                    parts.join(" and ")
                )
            }
            Self::Unavailable { reason } => {
                format!("This command runs without a sandbox, with your full rights: {reason}.")
            }
        }
    }
}

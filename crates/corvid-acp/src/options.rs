//! The session's config options: the mode (an approval policy, plus read-only) and the model,
//! as ACP `select` options (and the legacy mode list for clients that only know modes).

use agent_client_protocol::v1::schema::{
    SessionConfigOption, SessionConfigOptionCategory, SessionConfigSelectOption, SessionMode,
    SessionModeState,
};
use corvid_protocol::{ApprovalPolicy, SandboxMode, SandboxState};

/// The config option ids.
pub(crate) const MODE: &str = "mode";
pub(crate) const MODEL: &str = "model";

/// What the agent may do without asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Reads only: every proposal is refused without asking.
    ReadOnly,
    /// One of the engine's approval policies.
    Policy(ApprovalPolicy),
}

impl Mode {
    pub(crate) const ALL: [Mode; 5] = [
        Mode::ReadOnly,
        Mode::Policy(ApprovalPolicy::Plan),
        Mode::Policy(ApprovalPolicy::Ask),
        Mode::Policy(ApprovalPolicy::AutoEdit),
        Mode::Policy(ApprovalPolicy::FullAuto),
    ];

    pub(crate) fn id(self) -> &'static str {
        match self {
            Mode::ReadOnly => "read-only",
            Mode::Policy(policy) => policy.as_str(),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Mode::ReadOnly => "Read only",
            Mode::Policy(ApprovalPolicy::Plan) => "Plan",
            Mode::Policy(ApprovalPolicy::Ask) => "Ask",
            Mode::Policy(ApprovalPolicy::AutoEdit) => "Auto-edit",
            Mode::Policy(ApprovalPolicy::FullAuto) => "Full auto",
            Mode::Policy(ApprovalPolicy::ReadOnly) => "Read only",
        }
    }

    fn description(self) -> &'static str {
        match self {
            Mode::ReadOnly => {
                "Reads and searches; edits are refused, commands run read-only in the sandbox"
            }
            Mode::Policy(ApprovalPolicy::Plan) => {
                "Explores read-only, then presents a plan to approve before anything changes"
            }
            Mode::Policy(ApprovalPolicy::Ask) => "Reads run; edits and commands ask first",
            Mode::Policy(ApprovalPolicy::AutoEdit) => "Reads and edits run; commands ask first",
            Mode::Policy(ApprovalPolicy::FullAuto) => "Everything runs without asking",
            Mode::Policy(ApprovalPolicy::ReadOnly) => {
                "Reads and searches; edits are refused, commands run read-only in the sandbox"
            }
        }
    }

    pub(crate) fn parse(id: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|mode| mode.id() == id)
    }

    /// The engine's policy for this mode (read-only is the engine's own `read-only`: it
    /// refuses every change itself).
    pub(crate) fn policy(self) -> ApprovalPolicy {
        match self {
            Mode::ReadOnly => ApprovalPolicy::ReadOnly,
            Mode::Policy(policy) => policy,
        }
    }
}

/// Both options with their current values. The current model is listed even when the catalog
/// does not name it.
/// `sandbox` (from [`sandbox_line`]) goes in the approvals option's description: it is where the
/// user decides what commands may do, and the one place an editor shows it for the session.
pub(crate) fn config_options(
    mode: Mode,
    model: &str,
    models: &[String],
    sandbox: &str,
) -> Vec<SessionConfigOption> {
    let modes: Vec<SessionConfigSelectOption> = Mode::ALL
        .into_iter()
        .map(|mode| {
            SessionConfigSelectOption::new(mode.id(), mode.name()).description(mode.description())
        })
        .collect();
    let mut names: Vec<String> = models.to_vec();
    if !names.iter().any(|name| name == model) {
        names.insert(0, model.to_owned());
    }
    let models: Vec<SessionConfigSelectOption> = names
        .iter()
        .map(|name| SessionConfigSelectOption::new(name.clone(), name.clone()))
        .collect();
    vec![
        SessionConfigOption::select(MODE, "Approvals", mode.id(), modes)
            .category(SessionConfigOptionCategory::Mode)
            .description(format!("What the agent may do without asking. {sandbox}")),
        SessionConfigOption::select(MODEL, "Model", model.to_owned(), models)
            .category(SessionConfigOptionCategory::Model)
            .description("Any model corvid routes to"),
    ]
}

/// The session's kernel sandbox, as a sentence (from its `ready.sandbox`).
pub(crate) fn sandbox_line(sandbox: Option<&SandboxState>) -> String {
    match sandbox {
        None => "The command sandbox's state is unknown.".to_owned(),
        Some(state) => match state.mode {
            SandboxMode::Enforced => {
                format!("Commands run in the kernel sandbox: {}.", state.summary)
            }
            SandboxMode::Unavailable => format!(
                "Commands run without a sandbox (the kernel offers none), so each one asks first: {}.",
                state.summary
            ),
            SandboxMode::Off => format!(
                "Commands run without a sandbox (turned off): {}.",
                state.summary
            ),
        },
    }
}

/// The same modes in the legacy `modes` shape.
pub(crate) fn mode_state(mode: Mode) -> SessionModeState {
    SessionModeState::new(
        mode.id(),
        Mode::ALL
            .into_iter()
            .map(|mode| SessionMode::new(mode.id(), mode.name()).description(mode.description()))
            .collect(),
    )
}

#[cfg(test)]
mod tests;

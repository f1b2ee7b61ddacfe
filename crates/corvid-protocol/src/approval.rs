//! The approval gate: policies, kept rules, and the pure decision of whether an action runs or
//! asks.
//!
//! The engine calls [`decision_for`] before every tool call (subagents' and MCP or custom tools'
//! included); front ends use the same types to show and edit the policy and the rules.

use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::sandbox::Confinement;

/// How much the agent may do without asking.
///
/// Serialized as `read-only`, `plan`, `ask`, `auto-edit` or `full-auto`, the same words the
/// `--approval` flag and the configuration file accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalPolicy {
    /// Reads run; every call that may change something (edits, writes, mutating MCP or custom
    /// tools) is refused by the engine without asking, whatever rules were kept. Commands run
    /// with nothing writable in the kernel sandbox, and are refused where there is none.
    ReadOnly,
    /// Plan mode: `read-only` for every call, and the model is told to explore and then present
    /// a plan (the engine's `present_plan` tool), which the user approves, edits or rejects.
    /// An approved plan is carried out under the policy the session had before plan mode.
    Plan,
    /// Reads run; edits, writes, commands and other changing tools ask.
    #[default]
    Ask,
    /// Reads and edits run; commands and other changing tools ask.
    AutoEdit,
    /// Everything runs without asking.
    FullAuto,
}

impl ApprovalPolicy {
    /// Every policy, from the most to the least cautious.
    pub const ALL: [ApprovalPolicy; 5] = [
        Self::ReadOnly,
        Self::Plan,
        Self::Ask,
        Self::AutoEdit,
        Self::FullAuto,
    ];

    /// The policy's name on the wire and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ReadOnly => "read-only",
            Self::Plan => "plan",
            Self::Ask => "ask",
            Self::AutoEdit => "auto-edit",
            Self::FullAuto => "full-auto",
        }
    }

    /// Whether nothing may change under this policy (`read-only` and `plan`).
    pub fn is_read_only(self) -> bool {
        matches!(self, Self::ReadOnly | Self::Plan)
    }
}

impl fmt::Display for ApprovalPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ApprovalPolicy {
    type Err = UnknownApprovalPolicy;

    /// Accepts exactly the wire names: `read-only`, `plan`, `ask`, `auto-edit`, `full-auto`.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|policy| policy.as_str() == text)
            .ok_or_else(|| UnknownApprovalPolicy {
                given: text.to_owned(),
            })
    }
}

/// A name that is not an [`ApprovalPolicy`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown approval policy `{given}`: expected one of read-only, plan, ask, auto-edit, full-auto"
)]
pub struct UnknownApprovalPolicy {
    given: String,
}

impl UnknownApprovalPolicy {
    /// The text that was given.
    pub fn given(&self) -> &str {
        &self.given
    }
}

/// A rule the user kept by answering "always": what it allows runs without asking under every
/// policy.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ApprovalRule {
    /// Every call of one tool (an edit tool, or an MCP or custom tool). It never covers shell
    /// commands: allowing every command is what `full-auto` is for.
    Tool {
        /// The tool's name, exactly as the model calls it.
        tool: String,
    },
    /// Shell commands whose first words are `prefix`'s words (`cargo test` allows
    /// `cargo test -p x`, not `cargo testx`), and that contain no shell control operator: none of
    /// `;`, `&`, `|`, a backtick, `$(`, `<`, `>` or a line break, anywhere in the command.
    CommandPrefix {
        /// One or more words; an empty prefix allows nothing.
        prefix: String,
    },
    /// Every call of every tool from one origin (all the tools of one MCP server, say
    /// `mcp:github`). Like a tool rule, it never covers shell commands, nor the built-ins,
    /// which have no origin.
    Origin {
        /// The origin, exactly as the tools report it.
        origin: String,
    },
}

impl ApprovalRule {
    /// A rule allowing every call of `tool`.
    pub fn tool(tool: impl Into<String>) -> Self {
        Self::Tool { tool: tool.into() }
    }

    /// A rule allowing every tool from `origin`.
    pub fn origin(origin: impl Into<String>) -> Self {
        Self::Origin {
            origin: origin.into(),
        }
    }

    /// A rule allowing commands that start with the words of `prefix`.
    pub fn command_prefix(prefix: impl Into<String>) -> Self {
        Self::CommandPrefix {
            prefix: prefix.into(),
        }
    }

    /// What the rule allows, in one sentence for people (shown beside an "always" choice).
    pub fn describe(&self) -> String {
        match self {
            Self::Tool { tool } => format!("Always allow the `{tool}` tool in this session."),
            Self::CommandPrefix { prefix } => format!(
                "Always allow commands starting with `{prefix}` (without shell operators) in this session."
            ),
            Self::Origin { origin } => match origin.strip_prefix("mcp:") {
                Some(server) => {
                    format!("Always allow every tool of the MCP server `{server}` in this session.")
                }
                None => format!("Always allow every tool from `{origin}` in this session."),
            },
        }
    }

    /// Whether this rule lets `action` run without asking.
    pub fn allows(&self, action: &ActionKind) -> bool {
        match (self, action) {
            (Self::Tool { tool: allowed }, ActionKind::Edit { tool, .. })
            | (Self::Tool { tool: allowed }, ActionKind::Other { tool, .. }) => allowed == tool,
            (Self::CommandPrefix { prefix }, ActionKind::Command { command }) => {
                !command_has_control_operators(command) && starts_with_words(command, prefix)
            }
            (
                Self::Origin { origin: allowed },
                ActionKind::Other {
                    origin: Some(origin),
                    ..
                },
            ) => allowed == origin,
            // Reads need no rule; a tool or origin rule never covers commands, a prefix rule
            // only commands.
            (_, ActionKind::Read)
            | (Self::Tool { .. } | Self::Origin { .. }, ActionKind::Command { .. })
            | (
                Self::Origin { .. },
                ActionKind::Edit { .. } | ActionKind::Other { origin: None, .. },
            )
            | (Self::CommandPrefix { .. }, ActionKind::Edit { .. } | ActionKind::Other { .. }) => {
                false
            }
        }
    }

    /// The rule to offer when the user answers "always" to `action`, or `None` when "always"
    /// should not be offered.
    ///
    /// Edits and other tools get a rule for their tool. A command gets its program and, when the
    /// second word looks like a subcommand, that word too (`git checkout main` → `git checkout`,
    /// `ls -la` → `ls`); a command with control operators, or starting with a variable
    /// assignment, gets none, because no prefix rule could ever match it.
    pub fn suggest_for(action: &ActionKind) -> Option<Self> {
        match action {
            ActionKind::Read => None,
            ActionKind::Edit { tool, .. } | ActionKind::Other { tool, .. } => {
                Some(Self::tool(tool.clone()))
            }
            ActionKind::Command { command } => suggest_prefix(command).map(Self::command_prefix),
        }
    }
}

/// What a tool call would do, as far as the gate is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ActionKind {
    /// Reads or searches without changing anything (`read`, `glob`, `grep`, `skill`).
    Read,
    /// Changes a file in the project (`edit`, `write`).
    Edit {
        /// The tool making the change.
        tool: String,
        /// The file, relative to the project folder.
        path: String,
    },
    /// Runs a shell command (`bash`).
    Command {
        /// The command line, as the shell will receive it.
        command: String,
    },
    /// Any other tool (MCP, custom, `process`); `mutating` says whether it may change something.
    Other {
        /// The tool's name.
        tool: String,
        /// Where the tool comes from (`mcp:github`), for [`ApprovalRule::Origin`]; `None` for
        /// the built-ins.
        origin: Option<String>,
        /// Whether it may change files, processes or anything outside corvid. Tools whose
        /// effects are unknown count as mutating.
        mutating: bool,
    },
}

/// What the gate decided for one action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateDecision {
    /// Run it now.
    Run,
    /// Emit a proposal and wait for the user.
    Ask,
    /// Do not run it and do not ask: the policy is `read-only` (or `plan`) and the action may
    /// change something. The model is told.
    Refuse,
}

/// Whether `action` runs without asking under `policy` and the kept `rules`.
///
/// | action                   | `read-only`, `plan` | `ask`                 | `auto-edit`           | `full-auto` |
/// |--------------------------|---------------------|-----------------------|-----------------------|-------------|
/// | read, non-mutating other | run                 | run                   | run                   | run         |
/// | edit                     | refuse              | ask, unless tool rule | run                   | run         |
/// | mutating other           | refuse              | ask, unless tool rule | ask, unless tool rule | run         |
/// | command                  | refuse (see [`decision_with_sandbox`]) | ask, unless prefix rule | ask, unless prefix rule | run |
///
/// "tool rule": an [`ApprovalRule::Tool`] naming the action's tool; "prefix rule": an
/// [`ApprovalRule::CommandPrefix`] whose words start the command, with no control operator in it.
pub fn decision_for(
    policy: ApprovalPolicy,
    rules: &[ApprovalRule],
    action: &ActionKind,
) -> GateDecision {
    let changes = match action {
        ActionKind::Read => false,
        ActionKind::Other { mutating, .. } => *mutating,
        ActionKind::Edit { .. } | ActionKind::Command { .. } => true,
    };
    if policy.is_read_only() {
        // Kept rules never widen read-only: it is a promise that nothing changes.
        return if changes {
            GateDecision::Refuse
        } else {
            GateDecision::Run
        };
    }
    let by_policy = match (policy, action) {
        (_, ActionKind::Read)
        | (
            _,
            ActionKind::Other {
                mutating: false, ..
            },
        )
        | (ApprovalPolicy::FullAuto, _)
        | (ApprovalPolicy::AutoEdit, ActionKind::Edit { .. }) => true,
        (
            ApprovalPolicy::ReadOnly | ApprovalPolicy::Plan | ApprovalPolicy::Ask,
            ActionKind::Edit { .. },
        )
        | (
            ApprovalPolicy::ReadOnly
            | ApprovalPolicy::Plan
            | ApprovalPolicy::Ask
            | ApprovalPolicy::AutoEdit,
            ActionKind::Command { .. } | ActionKind::Other { mutating: true, .. },
        ) => false,
    };
    if by_policy || rules.iter().any(|rule| rule.allows(action)) {
        GateDecision::Run
    } else {
        GateDecision::Ask
    }
}

/// [`decision_for`] for a command, knowing how the sandbox will confine it.
///
/// Under `read-only` and `plan` a command runs only inside the kernel sandbox with its usual
/// limits ([`Confinement::Sandboxed`]), which the engine then makes read-only (nothing writable,
/// the project and the temp folders included); widened, unsandboxed or with the sandbox turned
/// off it is refused, because nothing would stop it from writing. No rule changes that.
///
/// A command that runs with more than the sandbox allows ([`Confinement::Widened`]) or without a
/// sandbox because the kernel offers none ([`Confinement::Unsandboxed`]) always asks, under every
/// policy (`full-auto` included) and whatever rules were kept: the user must see exactly what is
/// widened. A sandboxed command, or one the user explicitly runs without the sandbox
/// ([`Confinement::SandboxOff`]), is decided by [`decision_for`].
pub fn decision_with_sandbox(
    policy: ApprovalPolicy,
    rules: &[ApprovalRule],
    action: &ActionKind,
    confinement: Confinement,
) -> GateDecision {
    if policy.is_read_only() {
        return match (action, confinement) {
            (ActionKind::Command { .. }, Confinement::Sandboxed) => GateDecision::Run,
            _ => decision_for(policy, rules, action),
        };
    }
    match confinement {
        Confinement::Widened | Confinement::Unsandboxed => GateDecision::Ask,
        Confinement::Sandboxed | Confinement::SandboxOff => decision_for(policy, rules, action),
    }
}

/// Whether `command` contains anything that could make the shell run more than one program, or
/// touch files the command's words do not name: `;`, `&` (hence `&&`), `|` (hence `||`), a
/// backtick, `$(`, `<`, `>`, or a line break.
///
/// A prefix rule is a promise about the program being run: allowing `cargo test` must not allow
/// `cargo test; rm -rf ~`, `cargo test && curl … | sh`, `cargo test $(rm -rf ~)` or
/// `cargo test > ~/.bashrc`. Rather than parse shell syntax (quotes, escapes, heredocs), this
/// looks for the characters anywhere, even inside quotes: a false alarm only means the user is
/// asked, while a missed operator would run something nobody approved.
pub fn command_has_control_operators(command: &str) -> bool {
    command.contains("$(")
        || command
            .chars()
            .any(|c| matches!(c, ';' | '&' | '|' | '`' | '<' | '>' | '\n' | '\r'))
}

/// Whether the whitespace-separated words of `prefix` are the first words of `command`: a match
/// on word boundaries, so `cargo test` matches `cargo  test -p x` but not `cargo testx`. An empty
/// prefix matches nothing.
fn starts_with_words(command: &str, prefix: &str) -> bool {
    let mut command_words = command.split_whitespace();
    let mut prefix_words = prefix.split_whitespace().peekable();
    if prefix_words.peek().is_none() {
        return false;
    }
    prefix_words.all(|word| command_words.next() == Some(word))
}

/// The prefix [`ApprovalRule::suggest_for`] offers for a command.
fn suggest_prefix(command: &str) -> Option<String> {
    if command_has_control_operators(command) {
        return None;
    }
    let mut words = command.split_whitespace();
    let program = words.next()?;
    if program.contains('=') {
        return None;
    }
    let subcommand = words.next().filter(|word| {
        !word.starts_with('-')
            && word
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':'))
    });
    Some(match subcommand {
        Some(subcommand) => format!("{program} {subcommand}"),
        None => program.to_owned(),
    })
}

#[cfg(test)]
mod tests;

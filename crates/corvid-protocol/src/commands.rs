//! The slash commands, once for every face: one table ([`COMMANDS`]) with each command's name,
//! argument, description and whether it may be used while a turn runs, and one parser
//! ([`parse`]) that turns a typed line into the [`Op`] it means. The project's skills are
//! commands too (`/<skill> what for`), sent as a message naming the skill, and so are custom
//! commands (`/<name> arguments`, prompt files the engine expands). A face adds only what
//! is its own (`/quit`, `/help`, `/status`).

use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::approval::ApprovalPolicy;
use crate::op::{Op, SendParams};
use crate::permissions::{RuleAction, RuleFile};

/// One command of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Command {
    /// The name, typed after `/`.
    pub name: &'static str,
    /// What follows the name (`[turn]`, `<id>`), empty when nothing does.
    pub argument: &'static str,
    /// One line for `/help` and completion.
    pub description: &'static str,
    /// Whether it may be sent while a turn runs (the engine refuses the others then).
    pub during_turn: bool,
}

/// Every command the agent understands, in the order `/help` lists them.
pub const COMMANDS: &[Command] = &[
    Command {
        name: "new",
        argument: "",
        description: "start a new conversation",
        during_turn: false,
    },
    Command {
        name: "open",
        argument: "<id>",
        description: "show another conversation of this project",
        during_turn: false,
    },
    Command {
        name: "list",
        argument: "",
        description: "list this project's conversations",
        during_turn: true,
    },
    Command {
        name: "rename",
        argument: "<title>",
        description: "give this conversation a title",
        during_turn: true,
    },
    Command {
        name: "clear",
        argument: "",
        description: "empty this conversation",
        during_turn: false,
    },
    Command {
        name: "model",
        argument: "<name>",
        description: "change the model",
        during_turn: true,
    },
    Command {
        name: "approval",
        argument: "<read-only|plan|ask|auto-edit|full-auto>",
        description: "change the approval policy",
        during_turn: true,
    },
    Command {
        name: "init",
        argument: "",
        description: "write or improve AGENTS.md from what the project contains",
        during_turn: false,
    },
    Command {
        name: "diff",
        argument: "[turn]",
        description: "what the agent changed, turn by turn (or in one turn)",
        during_turn: false,
    },
    Command {
        name: "undo",
        argument: "[turn]",
        description: "put back the files the last (or the given) turn changed",
        during_turn: false,
    },
    Command {
        name: "compact",
        argument: "",
        description: "summarise the older part of the conversation now",
        during_turn: false,
    },
    Command {
        name: "rewind",
        argument: "[message] [files]",
        description: "go back to one of your messages (numbered by /rewind) to edit and send it again; `files` puts the files back too",
        during_turn: false,
    },
    Command {
        name: "fork",
        argument: "[message]",
        description: "copy this conversation into a new one (up to one of your messages, numbered by /rewind)",
        during_turn: false,
    },
    Command {
        name: "mcp",
        argument: "[trust <server>]",
        description: "MCP servers, their state and tools; trust starts a project's server",
        during_turn: true,
    },
    Command {
        name: "permissions",
        argument: "[remove <n> | add [project|user] allow|ask|deny <rule>]",
        description: "the saved permission rules and their files; remove deletes one, add saves one",
        during_turn: true,
    },
];

/// A command as faces receive it (in the protocol hello, or to offer in an editor): the table's
/// entries and the project's skills and custom commands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CommandSpec {
    /// The name, typed after `/`.
    pub name: String,
    /// What follows the name (`[turn]`, `<id>`), empty when nothing does.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub argument: String,
    /// One line for help and completion.
    pub description: String,
    /// Whether it may be sent while a turn runs.
    pub during_turn: bool,
}

/// What a project command is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProjectCommandKind {
    /// A skill: `/<skill> what for` sends a message naming it.
    #[default]
    Skill,
    /// A custom command (a markdown or TOML prompt file): `/<name> arguments` has the engine
    /// expand the file with the arguments.
    Custom,
}

/// A command the project (or the user) adds to the table: a skill or a custom command, with
/// its name and one line saying what it is for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ProjectCommand {
    /// The name (`/<name>`); a custom command in a subfolder is `folder:name`.
    pub name: String,
    /// Its description.
    pub description: String,
    /// A skill or a custom command.
    #[serde(default)]
    pub kind: ProjectCommandKind,
    /// What follows the name (a custom command's `argument-hint`), empty when it says nothing.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub argument: String,
}

impl ProjectCommand {
    /// A skill offered as `/<name> what for`.
    pub fn skill(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            kind: ProjectCommandKind::Skill,
            argument: String::new(),
        }
    }

    /// A custom command, with its argument hint (empty when it has none).
    pub fn custom(
        name: impl Into<String>,
        description: impl Into<String>,
        argument: impl Into<String>,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            kind: ProjectCommandKind::Custom,
            argument: argument.into(),
        }
    }
}

/// The table and the project's commands, as faces list them (a project command whose name is
/// a table command's is left out: the table wins; of two project commands of one name, the
/// first).
pub fn specs(project: &[ProjectCommand]) -> Vec<CommandSpec> {
    let mut specs: Vec<CommandSpec> = COMMANDS
        .iter()
        .map(|command| CommandSpec {
            name: command.name.to_owned(),
            argument: command.argument.to_owned(),
            description: command.description.to_owned(),
            during_turn: command.during_turn,
        })
        .collect();
    for command in project {
        if specs.iter().any(|spec| spec.name == command.name) {
            continue;
        }
        let (argument, description) = match command.kind {
            ProjectCommandKind::Skill => (
                "[what for]".to_owned(),
                format!("skill: {}", command.description),
            ),
            ProjectCommandKind::Custom => (
                if command.argument.is_empty() {
                    "[arguments]".to_owned()
                } else {
                    command.argument.clone()
                },
                command.description.clone(),
            ),
        };
        specs.push(CommandSpec {
            name: command.name.clone(),
            argument,
            description,
            during_turn: false,
        });
    }
    specs
}

/// Why a command line is not an operation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    /// `/name` is neither a command, a skill nor a custom command.
    #[error("unknown command /{0}")]
    Unknown(String),
    /// The command needs an argument, or got one it cannot read.
    #[error("/{name} {argument}: {problem}")]
    Argument {
        /// The command.
        name: &'static str,
        /// What it takes.
        argument: &'static str,
        /// What is wrong.
        problem: String,
    },
}

/// The operation a typed line means: `None` when it is not a command (no leading `/`: a
/// message to send as it is), `Some(Err)` when it is a command that cannot be read, or an
/// unknown one. `project` are the project's skills and custom commands, which `/<name> text`
/// invokes. A face handles its own commands (`/quit`, `/help`) before calling this.
pub fn parse(line: &str, project: &[ProjectCommand]) -> Option<Result<Op, CommandError>> {
    let rest = line.trim().strip_prefix('/')?;
    let (name, argument) = rest
        .split_once(char::is_whitespace)
        .map_or((rest, ""), |(name, argument)| (name, argument.trim()));
    if name.is_empty() {
        return None;
    }
    let Some(command) = COMMANDS.iter().find(|command| command.name == name) else {
        let Some(found) = project.iter().find(|command| command.name == name) else {
            return Some(Err(CommandError::Unknown(name.to_owned())));
        };
        let invoked = Some(name.to_owned());
        return Some(Ok(Op::Send(match found.kind {
            ProjectCommandKind::Skill => SendParams {
                skill: invoked,
                ..SendParams::text(argument)
            },
            ProjectCommandKind::Custom => SendParams {
                command: invoked,
                ..SendParams::text(argument)
            },
        })));
    };
    Some(op_of(command, argument))
}

fn op_of(command: &Command, argument: &str) -> Result<Op, CommandError> {
    let problem = |problem: &str| CommandError::Argument {
        name: command.name,
        argument: command.argument,
        problem: problem.to_owned(),
    };
    let required = || {
        if argument.is_empty() {
            Err(problem("needs an argument"))
        } else {
            Ok(argument.to_owned())
        }
    };
    let turn = || match argument {
        "" => Ok(None),
        number => number
            .parse::<u32>()
            .map(Some)
            .map_err(|_| problem("takes a turn number")),
    };
    let none = |op: Op| {
        if argument.is_empty() {
            Ok(op)
        } else {
            Err(problem("takes no argument"))
        }
    };
    match command.name {
        "new" => none(Op::OpenConversation {
            conversation_id: None,
        }),
        "open" => Ok(Op::OpenConversation {
            conversation_id: Some(required()?),
        }),
        "list" => none(Op::ListConversations),
        "rename" => Ok(Op::RenameConversation {
            conversation_id: None,
            title: required()?,
        }),
        "clear" => none(Op::ClearConversation),
        "model" => Ok(Op::SetModel { model: required()? }),
        "approval" => ApprovalPolicy::from_str(&required()?)
            .map(|policy| Op::SetApprovalPolicy { policy })
            .map_err(|error| problem(&error.to_string())),
        "init" => none(Op::Init),
        "diff" => Ok(Op::Diff { turn: turn()? }),
        "undo" => Ok(Op::Undo { turn: turn()? }),
        "compact" => none(Op::Compact),
        "rewind" => {
            let mut words = argument.split_whitespace();
            match (words.next(), words.next(), words.next()) {
                (None, _, _) => Ok(Op::UserMessages),
                (Some(number), files, None) if matches!(files, None | Some("files")) => {
                    Ok(Op::Rewind {
                        message: message_number(number).ok_or_else(|| {
                            problem("takes the number /rewind lists, and optionally `files`")
                        })?,
                        restore_files: files.is_some(),
                    })
                }
                _ => Err(problem(
                    "takes the number /rewind lists, and optionally `files`",
                )),
            }
        }
        "fork" => match argument {
            "" => Ok(Op::Fork { message: None }),
            number => message_number(number)
                .map(|message| Op::Fork {
                    message: Some(message),
                })
                .ok_or_else(|| problem("takes the number /rewind lists")),
        },
        "mcp" => match argument.split_once(char::is_whitespace) {
            _ if argument.is_empty() => Ok(Op::ListToolServers),
            Some(("trust", server)) if !server.trim().is_empty() => Ok(Op::TrustToolServer {
                name: server.trim().to_owned(),
            }),
            _ => Err(problem("lists the servers, or `trust <server>` starts one")),
        },
        "permissions" => match argument.split_once(char::is_whitespace) {
            _ if argument.is_empty() => Ok(Op::ListPermissions),
            Some(("remove", number)) => number
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|number| *number > 0)
                .map(|number| Op::RemovePermission { number })
                .ok_or_else(|| problem("`remove` takes a rule's number from the list")),
            Some(("add", rest)) => added_rule(rest.trim()).ok_or_else(|| {
                problem("`add [project|user] allow|ask|deny RULE` saves a rule, e.g. `add deny Bash(rm:*)`")
            }),
            _ => Err(problem(
                "lists the rules, `remove <n>` deletes one, `add [project|user] allow|ask|deny RULE` saves one",
            )),
        },
        other => Err(CommandError::Unknown(other.to_owned())),
    }
}

/// `/permissions add [project|user] allow|ask|deny RULE` (the project's file unless `user`).
fn added_rule(text: &str) -> Option<Op> {
    let (first, rest) = text.split_once(char::is_whitespace)?;
    let (file, text) = match first {
        "project" => (RuleFile::Project, rest.trim_start()),
        "user" => (RuleFile::User, rest.trim_start()),
        _ => (RuleFile::Project, text),
    };
    let (action, rule) = text.split_once(char::is_whitespace)?;
    let action = match action {
        "allow" => RuleAction::Allow,
        "ask" => RuleAction::Ask,
        "deny" => RuleAction::Deny,
        _ => return None,
    };
    let rule = rule.trim();
    (!rule.is_empty()).then(|| Op::AddPermission {
        action,
        rule: rule.to_owned(),
        file,
    })
}

/// A user message as the user numbers it (from 1), as the protocol does (from 0).
fn message_number(text: &str) -> Option<u32> {
    text.parse::<u32>().ok()?.checked_sub(1)
}

#[cfg(test)]
mod tests;

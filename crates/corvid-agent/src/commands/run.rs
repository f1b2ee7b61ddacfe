//! Expanding a command inside its turn: `@path` files are read (inside the project only) and
//! `!` command lines run as `bash` calls of the turn, so they go through the hooks, the saved
//! rules, the approval gate and the sandbox, and every face shows them as it shows a call.

use std::path::{Component, Path};

use corvid_protocol::TurnOutcome;
use corvid_tools::Offer;
use corvid_wire::model::{Part, ToolCall, ToolResultContent};
use serde_json::json;

use super::expand::{Piece, pieces};
use super::{CustomCommand, MAX_COMMAND_BYTES};
use crate::instructions::{ConfinedReadError, read_confined};
use crate::turn::{TurnSetup, handle_call};

/// The tool `!` command lines run as.
const SHELL_TOOL: &str = "bash";

/// `command` invoked with `arguments`, expanded: the text the model receives as the user's
/// message. `Err` when the turn was cancelled while a command line waited or ran.
pub(crate) async fn expand_in_turn(
    setup: &TurnSetup,
    command: &CustomCommand,
    arguments: &str,
) -> Result<String, TurnOutcome> {
    let project = &setup.shared.settings.project;
    let allowed = crate::commands::live::allowed_rules(command, project);
    let mut text = String::new();
    let mut files = Vec::new();
    let mut seen = Vec::new();
    for (index, piece) in pieces(command, arguments).into_iter().enumerate() {
        match piece {
            Piece::Text(piece) => text.push_str(&piece),
            Piece::File { path, literal } => match inline(project, &path) {
                Inlined::Content(content) => {
                    text.push_str(&path);
                    files.push((path, content));
                }
                Inlined::Literal => text.push_str(&literal),
                Inlined::Refused(reason) => {
                    text.push_str(&format!("{literal} [not inlined: {reason}]"));
                }
            },
            Piece::Shell(line) => {
                let arguments = json!({ "command": line });
                if let Some(allowed) = &allowed
                    && allowed.decide(project, SHELL_TOOL, &arguments)
                        != Some(crate::permissions::RuleDecision::Allow)
                {
                    text.push_str(&format!(
                        "[`{line}` not run: the command's allowed-tools do not include it]"
                    ));
                    continue;
                }
                let call = ToolCall {
                    id: format!("{}_cmd{index}", setup.scope.id),
                    name: SHELL_TOOL.to_owned(),
                    arguments: arguments.to_string(),
                    signature: None,
                };
                let (part, stop) = handle_call(setup, &call, &mut seen).await;
                if let Some(outcome) = stop {
                    return Err(outcome);
                }
                text.push_str(result_text(&part).trim_end());
            }
        }
    }
    let mut message = text.trim().to_owned();
    for (path, content) in files {
        message.push_str(&format!("\n\nContents of {path}:\n```\n{content}\n```"));
    }
    Ok(message)
}

enum Inlined {
    Content(String),
    /// No such file: the mention stays as written.
    Literal,
    Refused(String),
}

fn inline(project: &Path, path: &str) -> Inlined {
    let relative = Path::new(path.strip_prefix("./").unwrap_or(path));
    let leaves = relative
        .components()
        .any(|part| !matches!(part, Component::Normal(_) | Component::CurDir));
    if leaves || path.starts_with('~') {
        return Inlined::Refused("only files inside the project are".to_owned());
    }
    match read_confined(project, relative, MAX_COMMAND_BYTES) {
        Ok(Some(read)) if read.complete => Inlined::Content(read.text),
        Ok(Some(_)) => Inlined::Refused(format!(
            "it is larger than {} KiB",
            MAX_COMMAND_BYTES / 1024
        )),
        Ok(None) => Inlined::Literal,
        Err(ConfinedReadError::NotAFile) => Inlined::Literal,
        Err(reason) => Inlined::Refused(reason.to_string()),
    }
}

fn result_text(part: &Part) -> String {
    match part {
        Part::ToolResult(result) => result
            .content
            .iter()
            .filter_map(|content| match content {
                ToolResultContent::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The offer narrowed to the tools `command`'s `allowed-tools` names (all of them when it names
/// none). The main agent's own `task` stays.
pub(crate) fn narrowed(command: &CustomCommand, offer: &Offer) -> Offer {
    if command.allowed_tools.is_empty() {
        return offer.clone();
    }
    let names: Vec<&str> = command
        .allowed_tools
        .iter()
        .map(|entry| entry.split('(').next().unwrap_or("").trim())
        .collect();
    let named = |tool: &str| {
        names.iter().any(|name| {
            *name == tool
                || *name == crate::hooks::claude_name(tool)
                || (name.starts_with("mcp__") && tool.starts_with(&format!("{name}__")))
        })
    };
    offer.retain(|spec| named(&spec.name))
}

//! corvid's events as ACP `session/update`s: text and reasoning chunks, tool calls (kind, title,
//! locations, raw input, diffs for edits, the command for `bash`), results, the plan, usage, and
//! the history a `session/load` replays. Pure functions; the server sends what they build.

use std::path::Path;

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, Diff, Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus,
    SessionUpdate, ToolCall, ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields, ToolKind,
};
use corvid_protocol::{
    HistoryEntry, TodoItem, TodoStatus, ToolCallNotification, ToolResultNotification, ToolServer,
    ToolServerState,
};
use serde_json::Value;

/// The most tool output shown in the editor (the model sees what the engine gives it).
const OUTPUT_SHOWN: usize = 8 * 1024;

pub(crate) fn text(text: impl Into<String>) -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::from(text.into())))
}

pub(crate) fn thought(text: impl Into<String>) -> SessionUpdate {
    SessionUpdate::AgentThoughtChunk(ContentChunk::new(ContentBlock::from(text.into())))
}

fn user(text: impl Into<String>) -> SessionUpdate {
    SessionUpdate::UserMessageChunk(ContentChunk::new(ContentBlock::from(text.into())))
}

/// The ACP kind of a corvid tool.
pub(crate) fn kind_of(tool: &str) -> ToolKind {
    match tool {
        "read" | "skill" => ToolKind::Read,
        "glob" | "grep" | "web_search" => ToolKind::Search,
        "edit" | "write" => ToolKind::Edit,
        "bash" | "process" => ToolKind::Execute,
        "todowrite" | "task" => ToolKind::Think,
        "web_fetch" => ToolKind::Fetch,
        _ => ToolKind::Other,
    }
}

fn argument<'a>(arguments: &'a Value, names: &[&str]) -> Option<&'a str> {
    names
        .iter()
        .find_map(|name| arguments.get(*name).and_then(Value::as_str))
}

fn path_argument(arguments: &Value) -> Option<&str> {
    argument(arguments, &["path", "file_path", "filePath"])
}

/// What a call shows: its title (the command itself for `bash`), where it works, and its
/// content (the edit's old and new text, or the command line).
pub(crate) fn describe(call: &ToolCallNotification, project: &Path) -> Described {
    let arguments = &call.arguments;
    let path = path_argument(arguments).map(|path| project.join(path));
    let mut content = Vec::new();
    let title = match call.tool.as_str() {
        "bash" => match argument(arguments, &["command"]) {
            Some(command) => {
                content.push(ToolCallContent::from(format!("$ {command}")));
                command.to_owned()
            }
            None => call.summary.clone(),
        },
        _ => call.summary.clone(),
    };
    if let Some(path) = &path {
        match call.tool.as_str() {
            "edit" => {
                let old = argument(arguments, &["old_string", "oldString", "old_str"]);
                let new = argument(arguments, &["new_string", "newString", "new_str"]);
                if let (Some(old), Some(new)) = (old, new) {
                    let diff = Diff::new(path.clone(), new);
                    let diff = if old.is_empty() {
                        diff
                    } else {
                        diff.old_text(old)
                    };
                    content.push(ToolCallContent::Diff(diff));
                }
            }
            "write" => {
                if let Some(new) = argument(arguments, &["content"]) {
                    let old = std::fs::read_to_string(path).ok();
                    content.push(ToolCallContent::Diff(
                        Diff::new(path.clone(), new).old_text(old),
                    ));
                }
            }
            _ => {}
        }
    }
    Described {
        kind: kind_of(&call.tool),
        title,
        locations: path.into_iter().map(ToolCallLocation::new).collect(),
        content,
    }
}

/// A call, as shown.
#[derive(Debug, Clone)]
pub(crate) struct Described {
    pub(crate) kind: ToolKind,
    pub(crate) title: String,
    pub(crate) locations: Vec<ToolCallLocation>,
    pub(crate) content: Vec<ToolCallContent>,
}

/// The `tool_call` announcing a call.
pub(crate) fn tool_call(
    call: &ToolCallNotification,
    described: &Described,
    status: ToolCallStatus,
) -> SessionUpdate {
    SessionUpdate::ToolCall(
        ToolCall::new(call.call_id.clone(), described.title.clone())
            .kind(described.kind)
            .status(status)
            .locations(described.locations.clone())
            .content(described.content.clone())
            .raw_input(call.arguments.clone()),
    )
}

/// The fields a permission request shows: everything the `tool_call` had, pending.
pub(crate) fn pending_fields(
    call: &ToolCallNotification,
    described: &Described,
) -> ToolCallUpdateFields {
    ToolCallUpdateFields::new()
        .kind(described.kind)
        .status(ToolCallStatus::Pending)
        .title(described.title.clone())
        .locations(described.locations.clone())
        .content(described.content.clone())
        .raw_input(call.arguments.clone())
}

pub(crate) fn status(call_id: &str, status: ToolCallStatus) -> SessionUpdate {
    SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
        call_id.to_owned(),
        ToolCallUpdateFields::new().status(status),
    ))
}

/// A call the model is still writing: pending, titled with its tool and how much has arrived.
/// The first announces the call (`first`); later ones change its title; the `tool_call` that
/// follows replaces it all.
pub(crate) fn preparing(call_id: &str, tool: &str, bytes: u64, first: bool) -> SessionUpdate {
    let title = format!("Writing {tool} call ({})", size(bytes));
    if first {
        SessionUpdate::ToolCall(
            ToolCall::new(call_id.to_owned(), title)
                .kind(kind_of(tool))
                .status(ToolCallStatus::Pending),
        )
    } else {
        SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            call_id.to_owned(),
            ToolCallUpdateFields::new().title(title),
        ))
    }
}

fn size(bytes: u64) -> String {
    match bytes {
        1 => "1 byte".to_owned(),
        0..1_024 => format!("{bytes} bytes"),
        1_024..1_048_576 => format!("{:.1} KB", bytes as f64 / 1_024.0),
        _ => format!("{:.1} MB", bytes as f64 / 1_048_576.0),
    }
}

/// A running command's output so far as the call's content (its tail, when long), so the
/// editor shows it while the command runs; the result replaces it.
pub(crate) fn running_output(call_id: &str, output: &str) -> SessionUpdate {
    let shown = tail(output, OUTPUT_SHOWN);
    SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
        call_id.to_owned(),
        ToolCallUpdateFields::new()
            .status(ToolCallStatus::InProgress)
            .content(vec![ToolCallContent::from(shown)]),
    ))
}

/// The last `max` bytes of `text`, saying how much came before.
fn tail(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("… ({start} earlier bytes)\n{}", &text[start..])
}

/// A call's result: completed or failed, with its output (edits keep their diff as content).
pub(crate) fn result(result: &ToolResultNotification, keep_content: bool) -> SessionUpdate {
    let status = if result.ok {
        ToolCallStatus::Completed
    } else {
        ToolCallStatus::Failed
    };
    let mut fields = ToolCallUpdateFields::new()
        .status(status)
        .raw_output(serde_json::json!({ "output": result.output, "ok": result.ok }));
    if !keep_content || !result.ok {
        let shown = cut(&result.output, OUTPUT_SHOWN);
        fields = fields.content(vec![ToolCallContent::from(shown)]);
    }
    SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(result.call_id.clone(), fields))
}

fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n… ({} more bytes)", &text[..end], text.len() - end)
}

/// The agent's todo list as the plan.
pub(crate) fn plan(todos: &[TodoItem]) -> SessionUpdate {
    SessionUpdate::Plan(Plan::new(
        todos
            .iter()
            .map(|todo| {
                let status = match todo.status {
                    TodoStatus::Pending => PlanEntryStatus::Pending,
                    TodoStatus::InProgress => PlanEntryStatus::InProgress,
                    TodoStatus::Completed => PlanEntryStatus::Completed,
                };
                PlanEntry::new(todo.content.clone(), PlanEntryPriority::Medium, status)
            })
            .collect(),
    ))
}

/// A stored conversation, replayed.
pub(crate) fn history(entries: &[HistoryEntry], project: &Path) -> Vec<SessionUpdate> {
    let mut updates = Vec::new();
    let mut edits = std::collections::HashSet::new();
    for entry in entries {
        match entry {
            HistoryEntry::User { text } => updates.push(user(text.clone())),
            HistoryEntry::Assistant { text: said } => updates.push(text(said.clone())),
            HistoryEntry::ToolCall(call) => {
                if call.tool == "edit" || call.tool == "write" {
                    edits.insert(call.call_id.clone());
                }
                let described = describe(call, project);
                updates.push(tool_call(call, &described, ToolCallStatus::InProgress));
            }
            HistoryEntry::ToolResult(done) => {
                updates.push(result(done, edits.contains(&done.call_id)));
            }
        }
    }
    updates
}

#[cfg(test)]
mod tests;

/// The answer to `/mcp`, as markdown: a line per server, its tools under it.
pub(crate) fn tool_servers_text(servers: &[ToolServer]) -> String {
    if servers.is_empty() {
        return "No MCP servers in this session. `corvid mcp add NAME -- COMMAND…` adds one to the project's `.corvid/mcp.json` (`--global` to config.toml); a new thread starts it.\n".to_owned();
    }
    let mut text = String::new();
    for server in servers {
        let mut state = server.state_words();
        if server.state == ToolServerState::Untrusted {
            state.push_str(&format!(": `/mcp trust {}` starts it", server.name));
        }
        text.push_str(&format!(
            "- **{}**: {state} ({}; {})\n",
            server.name, server.configured_in, server.transport
        ));
        if !server.tools.is_empty() {
            let tools: Vec<String> = server
                .short_tool_names()
                .iter()
                .map(|tool| format!("`{tool}`"))
                .collect();
            text.push_str(&format!("  tools: {}\n", tools.join(", ")));
        }
        if !server.withheld.is_empty() {
            text.push_str(&format!(
                "  not offered (enabled_tools/disabled_tools): {}\n",
                server.withheld.join(", ")
            ));
        }
    }
    text
}

//! corvid's events as ACP `session/update`s: text and reasoning chunks, tool calls (the kind and
//! locations the engine reports, its title, raw input; a proposal's diff, command and sandbox
//! notice as the engine made them), results, the plan, usage, and the history a `session/load`
//! replays. Pure functions over the events (no disk reads, no tool names); the server sends what
//! they build.

use std::path::Path;

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, Diff, Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus,
    SessionUpdate, ToolCall, ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields, ToolKind,
};
use corvid_protocol::{
    HistoryEntry, ProposalKind, ProposalNotification, TodoItem, TodoStatus, ToolCallKind,
    ToolCallNotification, ToolResultNotification, ToolServer,
};

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

/// The ACP kind of a call, from the kind its source offered it with (never from its name).
pub(crate) fn kind_of(kind: &ToolCallKind) -> ToolKind {
    match kind {
        ToolCallKind::Read => ToolKind::Read,
        ToolCallKind::Search => ToolKind::Search,
        ToolCallKind::Edit => ToolKind::Edit,
        ToolCallKind::Command => ToolKind::Execute,
        ToolCallKind::Fetch => ToolKind::Fetch,
        ToolCallKind::Mcp { .. } | ToolCallKind::Other => ToolKind::Other,
    }
}

/// What a call shows: the engine's one line for it, as every face shows it (an MCP call's
/// already names its server), the files it touches (absolute), and no content yet: a proposal
/// brings the diff or the command.
pub(crate) fn describe(call: &ToolCallNotification, project: &Path) -> Described {
    Described {
        kind: kind_of(&call.kind),
        title: call.summary.clone(),
        locations: call
            .locations
            .iter()
            .map(|path| ToolCallLocation::new(project.join(path)))
            .collect(),
        content: Vec::new(),
    }
}

/// What a proposal shows in the permission request: its diff (the proposal's own, as the
/// editor's diff view) or the command it would run, and its sandbox notice (a safety text every
/// face shows), as the engine made them.
pub(crate) fn proposal_content(
    proposal: &ProposalNotification,
    project: &Path,
) -> Vec<ToolCallContent> {
    let mut content = Vec::new();
    match &proposal.kind {
        ProposalKind::Edit { diff, path } | ProposalKind::Write { diff, path } => {
            content.push(diff_content(path, diff, project));
        }
        ProposalKind::Command { command, .. } => {
            content.push(ToolCallContent::from(format!("$ {command}")));
        }
        ProposalKind::Other { summary, .. } => {
            content.push(ToolCallContent::from(summary.clone()));
        }
        ProposalKind::Plan { plan } => {
            content.push(ToolCallContent::from(plan.clone()));
        }
    }
    if let Some(notice) = &proposal.notice {
        content.push(ToolCallContent::from(format!("⚠ {notice}")));
    }
    content
}

/// A unified diff of `path` as the editor's diff view.
fn diff_content(path: &str, diff: &str, project: &Path) -> ToolCallContent {
    let (old, new) = hunk_texts(diff);
    let shown = Diff::new(project.join(path), new);
    ToolCallContent::Diff(if old.is_empty() {
        shown
    } else {
        shown.old_text(old)
    })
}

/// The text before and after a unified diff's hunks (context lines in both): what the
/// editor's diff view compares.
fn hunk_texts(diff: &str) -> (String, String) {
    let (mut old, mut new) = (String::new(), String::new());
    let mut in_hunk = false;
    for line in diff.lines() {
        if line.starts_with("@@") {
            in_hunk = true;
            continue;
        }
        if !in_hunk || line.starts_with('\\') {
            continue;
        }
        match line.split_at_checked(1) {
            Some((" ", text)) => {
                old.push_str(text);
                old.push('\n');
                new.push_str(text);
                new.push('\n');
            }
            Some(("-", text)) => {
                old.push_str(text);
                old.push('\n');
            }
            Some(("+", text)) => {
                new.push_str(text);
                new.push('\n');
            }
            _ => in_hunk = false,
        }
    }
    (old, new)
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
            // Its kind arrives with the `tool_call` (never guessed from the name here).
            ToolCall::new(call_id.to_owned(), title).status(ToolCallStatus::Pending),
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
/// A call's end: its status, its raw output, and what it shows: the change an edit made, from
/// the result's own diff (also for an edit that ran without a proposal), else the output cut
/// to size (unless `keep_content`: an edit keeps its proposal's diff when the result has none).
pub(crate) fn result(
    result: &ToolResultNotification,
    keep_content: bool,
    project: &Path,
) -> SessionUpdate {
    let status = if result.ok {
        ToolCallStatus::Completed
    } else {
        ToolCallStatus::Failed
    };
    let mut fields = ToolCallUpdateFields::new()
        .status(status)
        .raw_output(serde_json::json!({ "output": result.output, "ok": result.ok }));
    match &result.change {
        Some(change) if result.ok => {
            fields = fields.content(vec![diff_content(&change.path, &change.diff, project)]);
        }
        _ if !keep_content || !result.ok => {
            let shown = cut(&result.output, OUTPUT_SHOWN);
            fields = fields.content(vec![ToolCallContent::from(shown)]);
        }
        _ => {}
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
                if call.kind == ToolCallKind::Edit {
                    edits.insert(call.call_id.clone());
                }
                let described = describe(call, project);
                updates.push(tool_call(call, &described, ToolCallStatus::InProgress));
            }
            HistoryEntry::ToolResult(done) => {
                updates.push(result(done, edits.contains(&done.call_id), project));
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
        let state = server.describe();
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

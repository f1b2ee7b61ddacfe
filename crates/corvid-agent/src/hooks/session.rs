//! Where a session's hooks run: the small calls the engine, the turn and the gate make at each
//! event, so those files only name the event.

use std::sync::Arc;

use corvid_protocol::EventMsg;
use corvid_tools::ToolOutput;
use serde_json::{Value, json};

use super::{Answer, HookEvent, Permission, tool_fields};
use crate::scope::Scope;
use crate::session::Shared;

/// What `PreToolUse` hooks decided for one call.
pub(crate) enum PreTool {
    /// Run it, through the gate as usual.
    Gate,
    /// Run it without asking (a hook allowed it).
    Allow,
    /// Ask, whatever the policy says.
    Ask,
    /// Do not run it; the reason goes to the model.
    Refuse(String),
}

fn notices(shared: &Shared, scope: &Scope, answer: &Answer) {
    for message in &answer.notices {
        shared.emit(
            scope,
            EventMsg::Warning {
                message: message.clone(),
            },
        );
    }
}

/// Runs the hooks of `event` and writes their model calls (prompt hooks) to the usage ledger,
/// as a turn's steps are.
async fn fire(shared: &Shared, event: HookEvent, subject: Option<&str>, fields: Value) -> Answer {
    let answer = shared.hooks.fire(event, subject, fields).await;
    for (meter, end) in shared.hooks.take_calls() {
        meter.finish(shared, end).await;
    }
    answer
}

/// `PreToolUse` for the call of `tool` with `arguments`.
pub(crate) async fn pre_tool(
    shared: &Shared,
    scope: &Scope,
    tool: &str,
    arguments: &Value,
) -> PreTool {
    if !shared.hooks.listens(HookEvent::PreToolUse) {
        return PreTool::Gate;
    }
    let fields = tool_fields(&shared.settings.project, tool, arguments);
    let answer = fire(shared, HookEvent::PreToolUse, Some(tool), fields).await;
    notices(shared, scope, &answer);
    if let Some(reason) = answer.blocked {
        return PreTool::Refuse(reason);
    }
    match answer.permission {
        Some(Permission::Deny) => PreTool::Refuse(
            answer
                .permission_reason
                .unwrap_or_else(|| "a PreToolUse hook denied this call".to_owned()),
        ),
        Some(Permission::Ask) => PreTool::Ask,
        Some(Permission::Allow) => PreTool::Allow,
        None => PreTool::Gate,
    }
}

/// `PostToolUse` after `tool` ran: what the hooks say for the model is added to its result.
pub(crate) async fn post_tool(
    shared: &Shared,
    scope: &Scope,
    tool: &str,
    arguments: &Value,
    output: &mut ToolOutput,
) {
    if !shared.hooks.listens(HookEvent::PostToolUse) {
        return;
    }
    let mut fields = tool_fields(&shared.settings.project, tool, arguments);
    let mut response = json!({
        "output": output.text,
        "success": !output.is_error,
        "is_error": output.is_error,
    });
    if tool == "bash" {
        response["stdout"] = json!(output.text);
        response["stderr"] = json!("");
    }
    if let Some(path) = fields["tool_input"].get("file_path").cloned() {
        response["filePath"] = path;
    }
    fields["tool_response"] = response;
    let answer = fire(shared, HookEvent::PostToolUse, Some(tool), fields).await;
    notices(shared, scope, &answer);
    if let Some(reason) = answer.blocked {
        output
            .text
            .push_str(&format!("\n\n[PostToolUse hook] {reason}"));
    }
    for context in answer.context {
        output
            .text
            .push_str(&format!("\n\n[PostToolUse hook context] {context}"));
    }
}

/// `Stop` (or `SubagentStop`) when the model answered without tools: the reason a hook gives
/// for going on, which becomes the model's next input.
pub(crate) async fn on_stop(
    shared: &Shared,
    scope: &Scope,
    is_main: bool,
    active: bool,
) -> Option<String> {
    let event = if is_main {
        HookEvent::Stop
    } else {
        HookEvent::SubagentStop
    };
    if !shared.hooks.listens(event) {
        return None;
    }
    let answer = fire(shared, event, None, json!({"stop_hook_active": active})).await;
    notices(shared, scope, &answer);
    answer.blocked
}

/// `Notification`, without waiting for it (an approval waits for the user, not the hook).
pub(crate) fn notify(shared: &Arc<Shared>, message: String) {
    if !shared.hooks.listens(HookEvent::Notification) {
        return;
    }
    let shared = Arc::clone(shared);
    tokio::spawn(async move {
        fire(
            &shared,
            HookEvent::Notification,
            None,
            json!({"message": message}),
        )
        .await;
    });
}

/// `PreCompact` (`trigger`: `manual` or `auto`); its answer only informs the user.
pub(crate) async fn pre_compact(shared: &Shared, scope: &Scope, trigger: &str) {
    if !shared.hooks.listens(HookEvent::PreCompact) {
        return;
    }
    let answer = fire(
        shared,
        HookEvent::PreCompact,
        Some(trigger),
        json!({"trigger": trigger, "custom_instructions": ""}),
    )
    .await;
    notices(shared, scope, &answer);
}

/// A `UserPromptSubmit` hook blocked the prompt, for this reason.
#[derive(Debug)]
pub(crate) struct PromptBlocked(pub(crate) String);

/// Before a turn: `SessionStart` (on the session's first turn) and `UserPromptSubmit`. The
/// context they give for the model, or why the prompt was blocked.
pub(crate) async fn before_turn(
    shared: &Shared,
    scope: &Scope,
    prompt: &str,
) -> Result<Vec<String>, PromptBlocked> {
    let mut context = Vec::new();
    if shared.hooks.first_turn() && shared.hooks.listens(HookEvent::SessionStart) {
        let answer = fire(
            shared,
            HookEvent::SessionStart,
            Some("startup"),
            json!({"source": "startup"}),
        )
        .await;
        notices(shared, scope, &answer);
        context.extend(answer.context);
    }
    if shared.hooks.listens(HookEvent::UserPromptSubmit) {
        let answer = fire(
            shared,
            HookEvent::UserPromptSubmit,
            None,
            json!({"prompt": prompt}),
        )
        .await;
        notices(shared, scope, &answer);
        if let Some(reason) = answer.blocked.or(answer.stop) {
            return Err(PromptBlocked(reason));
        }
        context.extend(answer.context);
    }
    Ok(context)
}

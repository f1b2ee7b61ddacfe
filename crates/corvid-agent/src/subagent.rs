//! The `task` tool: a subagent with its own fresh history, working on one job and answering
//! with a summary. `explore` may only read; `general` has every tool but `task` and `todowrite`.
//! Its events go out at depth + 1, tagged with the `task` call, and its writes and commands go
//! through the same approval gate.

use corvid_protocol::{EventMsg, SubagentKind, TurnOutcome};
use corvid_tools::{ToolKind, ToolOutput};
use corvid_wire::model::{Message, Role, Tool, ToolCall};
use serde_json::{Value, json};

use crate::emitter::Scope;
use crate::turn::{TurnSetup, run_turn};

/// The tool's name: kept out of every tool source's offer, since only the agent can run it.
pub(crate) const TASK_TOOL: &str = "task";

/// Whether a call is the main agent's `task`.
pub(crate) fn is_task(name: &str) -> bool {
    name == TASK_TOOL
}

/// `task (explore) <description>`, the line front ends show.
pub(crate) fn summary(arguments: &Value) -> String {
    let field = |name: &str| arguments.get(name).and_then(Value::as_str).unwrap_or("");
    format!("{TASK_TOOL} ({}) {}", field("agent"), field("description"))
}

/// The tool the main agent sees.
pub(crate) fn task_tool() -> Tool {
    Tool {
        name: TASK_TOOL.to_owned(),
        description: Some(
            "Start a subagent for a self-contained job and get its final answer. `explore` only reads \
             and searches (use it to investigate a question across many files); `general` can also \
             edit and run commands (its writes and commands still need approval). Give it a clear, \
             complete prompt: it does not see this conversation."
                .to_owned(),
        ),
        parameters: json!({
            "type": "object",
            "properties": {
                "agent": {"type": "string", "enum": ["explore", "general"]},
                "description": {"type": "string", "description": "A few words on the job, for the user."},
                "prompt": {"type": "string", "description": "The full instructions for the subagent."}
            },
            "required": ["agent", "description", "prompt"]
        }),
        strict: None,
    }
}

/// The web tools the explore subagent is offered beside the read-only ones.
const EXPLORE_WEB_TOOLS: [&str; 2] = ["web_fetch", "web_search"];

pub(crate) async fn run(
    setup: &TurnSetup,
    call: &ToolCall,
    arguments: Value,
) -> (ToolOutput, Option<TurnOutcome>) {
    let field = |name: &str| {
        arguments
            .get(name)
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let (Some(agent), Some(prompt)) = (field("agent"), field("prompt")) else {
        return (
            failed("`task` needs `agent` (explore or general), `description` and `prompt`."),
            None,
        );
    };
    let kind = match agent.as_str() {
        "explore" => SubagentKind::Explore,
        "general" => SubagentKind::General,
        other => {
            return (
                failed(&format!("unknown agent `{other}`: use explore or general")),
                None,
            );
        }
    };
    let description = field("description").unwrap_or_else(|| agent.clone());
    setup.shared.emit(
        &setup.scope,
        EventMsg::SubagentStarted {
            call_id: call.id.clone(),
            agent: kind,
            description: description.clone(),
        },
    );
    let tools = match kind {
        // Explore reads the project and the web (as seed 004's does): it changes nothing, and
        // the web tools still go through the gate.
        SubagentKind::Explore => setup.tools.retain(|spec| {
            spec.subagents
                && (matches!(spec.kind, ToolKind::Read | ToolKind::Search)
                    || EXPLORE_WEB_TOOLS.contains(&spec.name.as_str()))
        }),
        SubagentKind::General => setup.tools.retain(|spec| spec.subagents),
    };
    // Its own prompt: it lists the tools this subagent has, not the main agent's.
    let system = format!(
        "{}\nYou are a {agent} subagent working for the main agent. Do the job below and end with a concise report of what you found or did; that report is all the main agent will see.",
        crate::prompt::system_prompt(&setup.shared, &tools, false, &[])
    );
    let child = TurnSetup {
        shared: setup.shared.clone(),
        scope: Scope {
            id: setup.scope.id.clone(),
            depth: setup.scope.depth + 1,
            parent_call_id: Some(call.id.clone()),
        },
        tools,
        is_main: false,
        model: setup.model.clone(),
        system,
        cancel: setup.cancel.clone(),
    };
    let history = vec![Message::text(Role::User, prompt)];
    // A subagent's turn runs inside its parent's: the recursion needs a boxed future.
    let result = Box::pin(run_turn(&child, &history, None, 0)).await;
    let ok = result.outcome == TurnOutcome::Completed;
    let summary = if result.final_text.is_empty() {
        format!(
            "The subagent ended ({:?}) without a report.",
            result.outcome
        )
    } else {
        result.final_text.clone()
    };
    setup.shared.emit(
        &setup.scope,
        EventMsg::SubagentFinished {
            call_id: call.id.clone(),
            ok,
            summary: summary.clone(),
        },
    );
    let stop = (result.outcome == TurnOutcome::Cancelled).then_some(TurnOutcome::Cancelled);
    (
        ToolOutput {
            text: summary,
            is_error: !ok,
            detail: None,
        },
        stop,
    )
}

fn failed(text: &str) -> ToolOutput {
    ToolOutput {
        text: text.to_owned(),
        is_error: true,
        detail: None,
    }
}

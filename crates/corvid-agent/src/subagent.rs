//! The `task` tool: a subagent with its own fresh history, working on one job and answering
//! with a summary. `explore` may only read; `general` has every tool but `task` and `todowrite`;
//! a custom subagent (`subagent/custom.rs`) has the tools its file names and its own
//! instructions. Its events go out at depth + 1, tagged with the `task` call, and its writes and
//! commands go through the same approval gate and sandbox.

mod custom;

use corvid_protocol::{EventMsg, SubagentKind, TurnOutcome};
use corvid_tools::{Offer, ToolKind, ToolOutput};
use corvid_wire::model::{Message, Role, Tool, ToolCall};
use serde_json::{Value, json};

use crate::scope::Scope;
use crate::turn::{TurnSetup, run_turn};
pub(crate) use custom::LiveAgents;
pub(crate) use custom::{AgentSet, CustomAgent, user_dir};

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

/// The tool the main agent sees: explore, general and the project's custom subagents.
pub(crate) fn task_tool(agents: &AgentSet) -> Tool {
    let mut names = vec!["explore".to_owned(), "general".to_owned()];
    names.extend(agents.agents.iter().map(|agent| agent.name.clone()));
    let mut description =
        "Start a subagent for a self-contained job and get its final answer. `explore` only reads \
         and searches (use it to investigate a question across many files); `general` can also \
         edit and run commands (its writes and commands still need approval). Give it a clear, \
         complete prompt: it does not see this conversation."
            .to_owned();
    if !agents.agents.is_empty() {
        description
            .push_str("\nThe project's own subagents (use one when its description fits the job):");
        for agent in &agents.agents {
            let words: Vec<&str> = agent.description.split_whitespace().collect();
            description.push_str(&format!("\n- {}: {}", agent.name, words.join(" ")));
        }
    }
    Tool {
        name: TASK_TOOL.to_owned(),
        description: Some(description),
        parameters: json!({
            "type": "object",
            "properties": {
                "agent": {"type": "string", "enum": names},
                "description": {"type": "string", "description": "A few words on the job, for the user."},
                "prompt": {"type": "string", "description": "The full instructions for the subagent."}
            },
            "required": ["agent", "description", "prompt"]
        }).into(),
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
    let agents = setup.shared.agents.current();
    let custom = agents.get(&agent);
    let kind = match (agent.as_str(), custom) {
        ("explore", _) => SubagentKind::Explore,
        ("general", _) | (_, Some(_)) => SubagentKind::General,
        (other, None) => {
            let mut known = vec!["explore".to_owned(), "general".to_owned()];
            known.extend(agents.agents.iter().map(|agent| agent.name.clone()));
            return (
                failed(&format!(
                    "unknown agent `{other}`: use one of {}",
                    known.join(", ")
                )),
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
            name: custom.map(|custom| custom.name.clone()),
        },
    );
    let tools = match (kind, custom) {
        (_, Some(custom)) => custom_tools(setup, custom),
        // Explore reads the project and the web (as seed 004's does): it changes nothing, and
        // the web tools still go through the gate.
        (SubagentKind::Explore, None) => setup.tools.retain(|spec| {
            spec.subagents
                && (matches!(spec.kind, ToolKind::Read | ToolKind::Search)
                    || EXPLORE_WEB_TOOLS.contains(&spec.name.as_str()))
        }),
        (SubagentKind::General, None) => setup.tools.retain(|spec| spec.subagents),
    };
    // Its own prompt: it lists the tools this subagent has, not the main agent's; a custom
    // subagent's instructions come first.
    let own = custom
        .map(|custom| format!("{}\n\n", custom.prompt))
        .unwrap_or_default();
    let system = format!(
        "{own}{}\nYou are a {agent} subagent working for the main agent. Do the job below and end with a concise report of what you found or did; that report is all the main agent will see.",
        crate::prompt::system_prompt(&setup.shared, &tools, false, &[])
    );
    let model = custom
        .and_then(|custom| custom.model.clone())
        .unwrap_or_else(|| setup.model.clone());
    let child = TurnSetup {
        shared: setup.shared.clone(),
        scope: Scope {
            id: setup.scope.id.clone(),
            depth: setup.scope.depth + 1,
            parent_call_id: Some(call.id.clone()),
        },
        tools,
        is_main: false,
        model,
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

/// A custom subagent's tools: those of a subagent its file names (all of them when it names
/// none). A name no tool has is reported once per run, as a warning, so a typo is seen.
fn custom_tools(setup: &TurnSetup, custom: &CustomAgent) -> Offer {
    let subagent_tools = setup.tools.retain(|spec| spec.subagents);
    let Some(names) = &custom.tools else {
        return subagent_tools;
    };
    let names: Vec<&str> = names
        .iter()
        .map(|entry| entry.split('(').next().unwrap_or("").trim())
        .collect();
    let matches = |name: &str, tool: &str| {
        name == tool
            || name == crate::hooks::claude_name(tool)
            || (name.starts_with("mcp__") && tool.starts_with(&format!("{name}__")))
    };
    let unknown: Vec<&str> = names
        .iter()
        .copied()
        .filter(|name| !subagent_tools.specs().any(|spec| matches(name, &spec.name)))
        .collect();
    if !unknown.is_empty() {
        setup.shared.emit(
            &setup.scope,
            EventMsg::Warning {
                message: format!(
                    "the agent `{}` ({}) names tools a subagent here does not have: {} (they are left out)",
                    custom.name,
                    custom.source,
                    unknown.join(", ")
                ),
            },
        );
    }
    subagent_tools.retain(|spec| names.iter().any(|name| matches(name, &spec.name)))
}

fn failed(text: &str) -> ToolOutput {
    ToolOutput {
        text: text.to_owned(),
        is_error: true,
        detail: None,
    }
}

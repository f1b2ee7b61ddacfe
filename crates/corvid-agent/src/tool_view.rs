//! How tool calls and the tool list are shown: the display helpers the turn, the history replay
//! and the system prompt share (kept out of `crate::turn`, so neither the history nor the prompt
//! imports the turn).

use std::path::Path;

use corvid_tools::Offer;
use corvid_wire::model::Tool;

/// A call's arguments as events show them: the JSON, or the raw text when it is not JSON.
pub(crate) fn shown_arguments(text: &str) -> serde_json::Value {
    corvid_tools::parse_call_arguments(text)
        .unwrap_or_else(|_| serde_json::Value::String(text.to_owned()))
}

/// A one-line description of a call in the history, for front ends replaying it: the agent's
/// and the built-ins' lines (a path in it relative to the project); other tools by name (their
/// source may be gone since).
pub(crate) fn summarize(project: &Path, tool: &str, arguments: &serde_json::Value) -> String {
    if crate::subagent::is_task(tool) {
        return crate::subagent::summary(arguments);
    }
    if crate::plan_mode::is_present_plan(tool) {
        return crate::plan_mode::summary(arguments);
    }
    corvid_tools::builtin_summary(project, tool, arguments)
        .or_else(|| {
            (tool == crate::skills::SKILL_TOOL)
                .then(|| crate::skills::skill_summary(arguments))
                .flatten()
        })
        .unwrap_or_else(|| tool.to_owned())
}

/// The tools an agent with `offer` is offered: the offer's (a subagent only those meant for
/// subagents), plus `task` for the main agent. The system prompt describes exactly these.
pub(crate) fn offered_tools(
    offer: &Offer,
    is_main: bool,
    agents: &crate::subagent::AgentSet,
) -> Vec<Tool> {
    let mut tools: Vec<Tool> = offer
        .specs()
        .filter(|spec| is_main || spec.subagents)
        .map(|spec| Tool {
            name: spec.name.clone(),
            description: Some(spec.description.clone()),
            parameters: corvid_wire::model::RawJson::from_value(&spec.parameters),
            strict: None,
        })
        .collect();
    if is_main {
        tools.push(crate::subagent::task_tool(agents));
    }
    tools
}

/// A tool source's server as front ends show it, its words (`describe()`) filled in: the
/// engine's `tool_servers` and `corvid mcp list` build it here.
pub fn tool_server(report: corvid_tools::ServerReport) -> corvid_protocol::ToolServer {
    use corvid_protocol::ToolServerState as State;
    use corvid_tools::ServerHealth;
    let (state, reason) = match report.health {
        ServerHealth::Disabled => (State::Disabled, None),
        ServerHealth::Idle => (State::Idle, None),
        ServerHealth::Untrusted => (State::Untrusted, None),
        ServerHealth::Starting => (State::Starting, None),
        ServerHealth::Ready => (State::Ready, None),
        ServerHealth::NeedsSignIn => (State::NeedsSignIn, None),
        ServerHealth::Failed(reason) => (State::Failed, Some(reason)),
    };
    let mut server = corvid_protocol::ToolServer {
        name: report.name,
        configured_in: report.configured_in,
        transport: report.transport,
        state,
        reason,
        tools: report.tools,
        withheld: report.withheld,
        description: String::new(),
    };
    server.description = server.describe();
    server
}

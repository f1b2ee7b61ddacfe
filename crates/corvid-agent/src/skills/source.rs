//! The `skill` tool as a tool source: the agent's own, listed right after the built-ins. It
//! only reads (a skill's instructions), so the gate never asks.

use corvid_tools::{
    Listing, Plan, Prepared, Proposal, Run, ToolError, ToolFuture, ToolKind, ToolOutput,
    ToolSource, ToolSpec,
};
use std::sync::Arc;

use serde_json::Value;

use super::{LiveSkills, SKILL_TOOL};

/// The session's skills, offered through the `skill` tool; each listing (one per turn) reads
/// them again if their files changed.
pub(crate) struct SkillSource {
    skills: Arc<LiveSkills>,
}

impl SkillSource {
    pub(crate) fn new(skills: Arc<LiveSkills>) -> Self {
        Self { skills }
    }
}

/// A loaded skill, from prepare to apply.
struct Loaded(String);

impl ToolSource for SkillSource {
    fn name(&self) -> &str {
        "skills"
    }

    fn list(&self) -> ToolFuture<'_, Listing> {
        let (skills, notices) = self.skills.refresh();
        let tool = skills.tool();
        Box::pin(async move {
            Listing {
                tools: vec![ToolSpec::new(
                    tool.name,
                    tool.description.unwrap_or_default(),
                    tool.parameters.to_value(),
                    ToolKind::Read,
                )],
                notices,
            }
        })
    }

    fn prepare<'a>(
        &'a self,
        _tool: &'a str,
        arguments: Value,
    ) -> ToolFuture<'a, Result<Prepared, ToolError>> {
        Box::pin(async move {
            let name = skill_name(&arguments).to_owned();
            let body = self
                .skills
                .current()
                .load_tool(arguments)
                .map_err(|error| ToolError::Failed(error.to_string()))?;
            Ok(Prepared::new(
                SKILL_TOOL,
                ToolKind::Read,
                Proposal {
                    summary: format!("Load the skill `{name}`"),
                    ..Proposal::default()
                },
                Plan::external(Loaded(body)),
            ))
        })
    }

    fn apply<'a>(
        &'a self,
        _tool: &'a str,
        plan: Plan,
        _run: Run,
    ) -> ToolFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            match plan.into_external::<Loaded>() {
                Some(Loaded(body)) => Ok(ToolOutput::text(body)),
                None => Err(ToolError::Internal(
                    "the skill tool was given another tool's plan".to_owned(),
                )),
            }
        })
    }

    fn summary(&self, _tool: &str, arguments: &Value) -> Option<String> {
        summary(arguments)
    }
}

/// `skill <name>`, the line front ends show.
pub(crate) fn summary(arguments: &Value) -> Option<String> {
    Some(format!("{SKILL_TOOL} {}", skill_name(arguments)))
}

fn skill_name(arguments: &Value) -> &str {
    match arguments {
        Value::Object(map) => map.get("name").and_then(Value::as_str).unwrap_or(""),
        Value::String(name) => name,
        _ => "",
    }
}

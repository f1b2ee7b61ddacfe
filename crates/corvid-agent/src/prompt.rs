//! The system prompt for a turn: the agent's preamble, the environment, the project's
//! instructions (AGENTS.md), the skill index and the current todos.

use corvid_protocol::{TodoItem, TodoStatus};
use corvid_tools::{Offer, ToolKind, ToolSpec};

use crate::session::Shared;

/// The prompt of an agent offered `offer` (the main agent's, or a subagent's fewer).
pub(crate) fn system_prompt(
    shared: &Shared,
    offer: &Offer,
    is_main: bool,
    todos: &[TodoItem],
) -> String {
    let tools = crate::tool_view::offered_tools(offer, is_main, &shared.agents.current());
    let settings = &shared.settings;
    let instructions = crate::instructions::load_instructions(
        &settings.project,
        &settings.cwd,
        settings.instructions_cap,
    );
    let todos: Vec<String> = todos
        .iter()
        .map(|todo| {
            let mark = match todo.status {
                TodoStatus::Pending => "[ ]",
                TodoStatus::InProgress => "[~]",
                TodoStatus::Completed => "[x]",
            };
            format!("{mark} {}", todo.content)
        })
        .collect();
    let parts = crate::instructions::PromptParts {
        project_root: settings.project.display().to_string(),
        working_folder: settings.cwd.display().to_string(),
        os: std::env::consts::OS.to_owned(),
        shell: "bash".to_owned(),
        date: today(),
        is_git_repo: settings.project.join(".git").exists(),
        instructions: instructions.text,
        skill_index: shared.skills.current().index(),
        todos: todos.join("\n"),
        tools: tools.iter().map(|tool| tool.name.clone()).collect(),
    };
    let mut prompt = crate::instructions::system_prompt(&parts);
    // Only an agent that can run commands is told what they may do.
    if runs_commands(offer.specs().filter(|spec| is_main || spec.subagents)) {
        prompt.push_str(&crate::sandbox_state::prompt_section(shared.sandbox()));
    }
    prompt
}

/// Whether any of `specs` runs the model's own command lines (by its kind, whatever its name
/// or source), so the prompt should say what the sandbox lets commands do.
fn runs_commands<'a>(mut specs: impl Iterator<Item = &'a ToolSpec>) -> bool {
    specs.any(|spec| spec.kind == ToolKind::Command)
}

/// Today's date (UTC), `YYYY-MM-DD`, from the system clock.
fn today() -> String {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_secs() as i64)
        .unwrap_or_default();
    corvid_config::time::UtcTime::from_unix(seconds).date()
}

#[cfg(test)]
mod tests;

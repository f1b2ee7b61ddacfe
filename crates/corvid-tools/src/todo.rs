//! `todowrite`: the model's plan as a checked list. The tool only validates and echoes it; the
//! agent keeps the list (and shows it) from [`ToolDetail::Todos`].

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::args;
use crate::error::ToolError;
use crate::tool::{
    Action, BuiltinSpec, Plan, Prepared, Proposal, ToolDetail, ToolKind, ToolOutput,
};

pub(crate) const NAME: &str = "todowrite";

/// The most items a list may hold.
const MAX_TODOS: usize = 100;
/// The longest item, in characters.
const MAX_CONTENT_CHARS: usize = 500;

/// One item of the model's todo list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Todo {
    /// What to do.
    pub content: String,
    /// Where it stands.
    pub status: TodoStatus,
}

/// Where a todo stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    #[serde(alias = "in-progress", alias = "inprogress", alias = "active")]
    InProgress,
    /// Done.
    #[serde(alias = "done", alias = "complete")]
    Completed,
    /// Dropped.
    #[serde(alias = "canceled")]
    Cancelled,
}

impl TodoStatus {
    fn mark(self) -> &'static str {
        match self {
            Self::Pending => "[ ]",
            Self::InProgress => "[~]",
            Self::Completed => "[x]",
            Self::Cancelled => "[-]",
        }
    }
}

pub(crate) fn spec() -> BuiltinSpec {
    BuiltinSpec {
        name: NAME,
        description: "Write your todo list for the current task (the whole list each time; it replaces the previous one). \
            Use it for work with several steps: keep one item in_progress, mark items completed as soon as they are done.",
        parameters: json!({
            "type": "object",
            "properties": {
                "todos": {
                    "type": "array",
                    "maxItems": MAX_TODOS,
                    "items": {
                        "type": "object",
                        "properties": {
                            "content": {"type": "string", "description": "The step, in a few words"},
                            "status": {"type": "string", "enum": ["pending", "in_progress", "completed", "cancelled"]}
                        },
                        "required": ["content", "status"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["todos"],
            "additionalProperties": false
        }),
        kind: ToolKind::Other,
    }
}

#[derive(Debug, Deserialize)]
struct TodoArgs {
    #[serde(alias = "plan", alias = "items")]
    todos: Vec<TodoItem>,
}

/// An item as models send it: `content` (or `step`, codex's name), extra fields ignored.
#[derive(Debug, Deserialize)]
struct TodoItem {
    #[serde(alias = "step", alias = "text", alias = "title")]
    content: String,
    status: TodoStatus,
}

pub(crate) fn prepare(arguments: Value) -> Result<Prepared, ToolError> {
    let arguments: TodoArgs = args::parse(NAME, arguments)?;
    if arguments.todos.len() > MAX_TODOS {
        return Err(ToolError::invalid(
            NAME,
            format!("at most {MAX_TODOS} todos; merge some steps"),
        ));
    }
    let mut todos = Vec::with_capacity(arguments.todos.len());
    for (index, item) in arguments.todos.into_iter().enumerate() {
        let content = item.content.trim().to_owned();
        if content.is_empty() {
            return Err(ToolError::invalid(
                NAME,
                format!("todo {} has empty content", index + 1),
            ));
        }
        if content.chars().count() > MAX_CONTENT_CHARS {
            return Err(ToolError::invalid(
                NAME,
                format!(
                    "todo {} is longer than {MAX_CONTENT_CHARS} characters; keep each step short",
                    index + 1
                ),
            ));
        }
        todos.push(Todo {
            content,
            status: item.status,
        });
    }
    let done = todos
        .iter()
        .filter(|todo| todo.status == TodoStatus::Completed)
        .count();
    Ok(Prepared {
        tool: NAME.to_owned(),
        kind: ToolKind::Other,
        proposal: Proposal {
            summary: format!("Update the todo list ({done}/{} done)", todos.len()),
            diff: None,
            whole_file: false,
            command: None,
            path: None,
        },
        plan: Plan {
            action: Action::Todo(todos),
        },
    })
}

pub(crate) fn output(todos: Vec<Todo>) -> ToolOutput {
    let text = if todos.is_empty() {
        "The todo list is now empty.".to_owned()
    } else {
        let mut text = String::from("Todo list updated:\n");
        for todo in &todos {
            text.push_str(&format!("{} {}\n", todo.status.mark(), todo.content));
        }
        text
    };
    ToolOutput {
        text,
        is_error: false,
        detail: Some(ToolDetail::Todos(todos)),
    }
}

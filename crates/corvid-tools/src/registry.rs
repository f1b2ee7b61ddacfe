//! The built-in tools: which of them an agent is offered, and the two-phase entry point that
//! runs them. The registry is the built-in [`ToolSource`]; other sources sit beside it in the
//! agent's [`ToolBox`](crate::ToolBox).

use std::sync::Arc;

use serde_json::Value;

use crate::context::{ToolContext, blocking};
use crate::error::ToolError;
use crate::source::{Listing, Run, ToolFuture, ToolSource};
use crate::stream::OutputSink;
use crate::tool::{Action, Cancellation, Plan, Prepared, ToolOutput, ToolSpec};
use crate::{edit, process, read, search, shell, todo, write};

/// The built-in tools as the model sees them: `read`, `write`, `edit`, `glob`, `grep`, `bash`,
/// `process`, `todowrite`.
/// `todowrite` is the main agent's only: subagents keep no todo list.
pub fn builtin_tools() -> Vec<ToolSpec> {
    let todos = ToolSpec {
        subagents: false,
        ..todo::spec().into()
    };
    vec![
        read::spec().into(),
        write::spec().into(),
        edit::spec().into(),
        search::glob_spec().into(),
        search::grep_spec().into(),
        shell::spec().into(),
        process::spec().into(),
        todos,
    ]
}

/// The tools on offer to one agent, and the entry point that runs them. Cloning is cheap;
/// [`ToolRegistry::retain`] makes a narrower registry (for a read-only subagent) that shares the
/// context and its background processes.
#[derive(Debug, Clone)]
pub struct ToolRegistry {
    context: Arc<ToolContext>,
    specs: Arc<[ToolSpec]>,
}

impl ToolRegistry {
    /// Every built-in tool, working in `context`.
    pub fn new(context: ToolContext) -> Self {
        Self {
            context: Arc::new(context),
            specs: builtin_tools().into(),
        }
    }

    /// The tools on offer, for the model's request.
    pub fn specs(&self) -> &[ToolSpec] {
        &self.specs
    }

    /// One tool's description.
    pub fn spec(&self, name: &str) -> Option<&ToolSpec> {
        self.specs.iter().find(|spec| spec.name == name)
    }

    /// A registry offering only the tools `keep` accepts; calls to the others are refused.
    pub fn retain(&self, keep: impl Fn(&ToolSpec) -> bool) -> Self {
        Self {
            context: Arc::clone(&self.context),
            specs: self
                .specs
                .iter()
                .filter(|spec| keep(spec))
                .cloned()
                .collect(),
        }
    }

    /// The shared context.
    pub fn context(&self) -> &ToolContext {
        &self.context
    }

    /// The shared context, for a [`crate::ToolPlugin`] opening a source over it.
    pub fn shared_context(&self) -> &Arc<ToolContext> {
        &self.context
    }

    /// Phase one: checks the arguments, resolves paths and computes the proposal. Nothing
    /// changes on disk.
    pub async fn prepare(&self, name: &str, arguments: Value) -> Result<Prepared, ToolError> {
        let Some(spec) = self.spec(name) else {
            return Err(ToolError::UnknownTool {
                name: name.to_owned(),
                available: self
                    .specs
                    .iter()
                    .map(|spec| spec.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        };
        let name = spec.name.clone();
        blocking(&self.context, move |context| match name.as_str() {
            read::NAME => read::prepare(context, arguments),
            write::NAME => write::prepare(context, arguments),
            edit::NAME => edit::prepare(context, arguments),
            search::GLOB => search::prepare_glob(context, arguments),
            search::GREP => search::prepare_grep(context, arguments),
            shell::NAME => shell::prepare(context, arguments),
            process::NAME => process::prepare(context, arguments),
            todo::NAME => todo::prepare(arguments),
            other => Err(ToolError::Internal(format!(
                "no implementation for `{other}`"
            ))),
        })
        .await
    }

    /// Phase two: carries a prepared call out. An edit is located again in the file's current
    /// text; a command is killed (with its process group) when `cancel` fires.
    pub async fn apply(&self, plan: Plan, cancel: Cancellation) -> Result<ToolOutput, ToolError> {
        self.apply_streaming(plan, cancel, None).await
    }

    /// [`ToolRegistry::apply`], with a foreground command's output also streamed to `sink`
    /// while it runs (other tools ignore it).
    pub async fn apply_streaming(
        &self,
        plan: Plan,
        cancel: Cancellation,
        sink: Option<OutputSink>,
    ) -> Result<ToolOutput, ToolError> {
        if cancel.is_cancelled() {
            return Err(ToolError::Cancelled {
                output: String::new(),
            });
        }
        let context = &self.context;
        match plan.action {
            Action::Read(plan) => {
                blocking(context, move |context| read::apply(context, &plan)).await
            }
            Action::Write(plan) => {
                let _guard = context.locks.lock(&plan.path).await;
                blocking(context, move |context| write::apply(context, &plan)).await
            }
            Action::Edit(plan) => {
                let _guard = context.locks.lock(&plan.path).await;
                blocking(context, move |context| edit::apply(context, &plan)).await
            }
            Action::Glob(plan) => search::glob(Arc::clone(context), plan, cancel).await,
            Action::Grep(plan) => search::grep(Arc::clone(context), plan, cancel).await,
            Action::Bash(plan) => shell::run(context, plan, cancel, sink).await,
            Action::Process(plan) => process::apply(context, plan).await,
            Action::Todo(todos) => Ok(todo::output(todos)),
            Action::External(_) => Err(ToolError::Internal(
                "a plan made by another tool source was given to the built-ins".to_owned(),
            )),
        }
    }

    /// Both phases at once, for calls the gate lets through without asking.
    pub async fn execute(
        &self,
        name: &str,
        arguments: Value,
        cancel: Cancellation,
    ) -> Result<ToolOutput, ToolError> {
        let prepared = self.prepare(name, arguments).await?;
        self.apply(prepared.plan, cancel).await
    }
}

impl ToolSource for ToolRegistry {
    fn name(&self) -> &str {
        "built-in"
    }

    fn list(&self) -> ToolFuture<'_, Listing> {
        Box::pin(async move {
            Listing {
                tools: self.specs.to_vec(),
                notices: Vec::new(),
            }
        })
    }

    fn prepare<'a>(
        &'a self,
        tool: &'a str,
        arguments: Value,
    ) -> ToolFuture<'a, Result<Prepared, ToolError>> {
        Box::pin(ToolRegistry::prepare(self, tool, arguments))
    }

    fn apply<'a>(
        &'a self,
        _tool: &'a str,
        plan: Plan,
        run: Run,
    ) -> ToolFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(self.apply_streaming(plan, run.cancel, run.sink))
    }

    fn summary(&self, tool: &str, arguments: &Value) -> Option<String> {
        crate::summary::builtin_summary(self.context.workspace.root(), tool, arguments)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_specs_are_object_schemas_with_unique_names() {
        let specs = builtin_tools();
        let mut names: Vec<&str> = specs.iter().map(|spec| spec.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "read",
                "write",
                "edit",
                "glob",
                "grep",
                "bash",
                "process",
                "todowrite"
            ]
        );
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), specs.len());
        for spec in &specs {
            assert_eq!(spec.parameters["type"], "object", "{}", spec.name);
            assert!(spec.parameters["properties"].is_object(), "{}", spec.name);
            assert!(!spec.description.is_empty());
            for required in spec.parameters["required"].as_array().into_iter().flatten() {
                let required = required.as_str().unwrap_or_default();
                assert!(
                    spec.parameters["properties"].get(required).is_some(),
                    "{}: required `{required}` is not a property",
                    spec.name
                );
            }
        }
    }
}

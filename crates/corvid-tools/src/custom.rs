//! Custom tools: a folder `.corvid/tools/<name>/` in the project with a `tool.json` manifest
//! (`name` equal to the folder's, `description`, `parameters` as a JSON Schema, `command`)
//! becomes a tool the model calls like any other. Written by the user, or by the agent itself
//! (the `authoring-tools` skill teaches it how).
//!
//! - **Discovered per turn** (each [`ToolSource::list`]), so a tool written in one turn is there
//!   in the next; a manifest that cannot be used is skipped with a notice naming the file and
//!   the reason, and the other tools still work.
//! - **Arguments are validated** against the manifest's schema before anything is proposed;
//!   a violation comes back to the model as an invalid-arguments error saying where and why.
//! - **Arguments travel on stdin** as one JSON object, never on the command line, so nothing in
//!   them is ever seen by a shell: metacharacters are inert.
//! - **The command runs through `bash`'s runner** ([`crate::runner`]): `bash -c <command>` in the
//!   tool's own folder, inside the sandbox, with the same timeout, output cap, log file, process
//!   group and cancel. It cannot ask for more than the sandbox allows.
//! - **The gate treats it as a mutating tool** ([`ToolKind::Mutating`]): it asks under `ask` and
//!   `auto-edit` unless the user kept an "always" rule for that tool, and always asks when there
//!   is no sandbox.

mod manifest;

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use serde_json::Value;

use crate::context::ToolContext;
use crate::error::ToolError;
use crate::shell::{self, BashPlan};
use crate::source::{Listing, Run, ToolFuture, ToolPlugin, ToolSource};
use crate::tool::{Action, Plan, Prepared, Proposal, ToolKind, ToolOutput};

use manifest::CustomTool;
pub use manifest::{MANIFEST, TOOLS_DIR};

/// The plugin the composition root registers: each session gets its project's custom tools.
#[derive(Debug, Default, Clone, Copy)]
pub struct CustomTools;

impl ToolPlugin for CustomTools {
    fn open(&self, context: &Arc<ToolContext>) -> Arc<dyn ToolSource> {
        Arc::new(CustomSource {
            context: Arc::clone(context),
            listed: Mutex::default(),
        })
    }
}

/// One session's custom tools.
struct CustomSource {
    context: Arc<ToolContext>,
    /// The tools as last listed: calls are prepared against what the model was offered.
    listed: Mutex<HashMap<String, Arc<CustomTool>>>,
}

impl CustomSource {
    fn listed(&self, name: &str) -> Option<Arc<CustomTool>> {
        self.listed.lock().get(name).cloned()
    }
}

impl ToolSource for CustomSource {
    fn name(&self) -> &str {
        "custom"
    }

    fn list(&self) -> ToolFuture<'_, Listing> {
        Box::pin(async move {
            let root = self.context.workspace.root().to_path_buf();
            let (tools, notices) = tokio::task::spawn_blocking(move || manifest::discover(&root))
                .await
                .unwrap_or_else(|error| {
                    (
                        Vec::new(),
                        vec![format!("custom tools could not be read: {error}")],
                    )
                });
            let specs = tools.iter().map(|tool| tool.spec()).collect();
            *self.listed.lock() = tools
                .into_iter()
                .map(|tool| (tool.name.clone(), Arc::new(tool)))
                .collect();
            Listing {
                tools: specs,
                notices,
            }
        })
    }

    fn prepare<'a>(
        &'a self,
        tool: &'a str,
        arguments: Value,
    ) -> ToolFuture<'a, Result<Prepared, ToolError>> {
        Box::pin(async move {
            let Some(custom) = self.listed(tool) else {
                return Err(ToolError::Failed(format!(
                    "the custom tool `{tool}` is gone: its folder or manifest was removed"
                )));
            };
            let arguments = custom.check(arguments)?;
            let input = serde_json::to_vec(&arguments)
                .map_err(|error| ToolError::Internal(error.to_string()))?;
            let folder = self.context.workspace.relative(&custom.folder);
            let summary = format!(
                "Run the custom tool `{tool}`: `{}` in {}, with {} on stdin",
                custom.command,
                folder.display(),
                shown_arguments(&arguments)
            );
            let plan =
                BashPlan::fixed(&self.context, &custom.command, custom.folder.clone(), input);
            Ok(Prepared {
                tool: tool.to_owned(),
                kind: ToolKind::Mutating,
                proposal: Proposal {
                    summary,
                    path: Some(folder),
                    ..Proposal::default()
                },
                plan: Plan {
                    action: Action::Bash(plan),
                },
            })
        })
    }

    fn apply<'a>(
        &'a self,
        _tool: &'a str,
        plan: Plan,
        run: Run,
    ) -> ToolFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            match plan.action {
                Action::Bash(plan) => shell::run(&self.context, plan, run.cancel, run.sink).await,
                _ => Err(ToolError::Internal(
                    "a custom tool was given another tool's plan".to_owned(),
                )),
            }
        })
    }

    fn summary(&self, tool: &str, arguments: &Value) -> Option<String> {
        Some(format!("{tool} {}", shown_arguments(arguments)))
    }
}

/// The arguments as one line, cut to a length people read at a glance.
fn shown_arguments(arguments: &Value) -> String {
    const LONGEST: usize = 200;
    let text = arguments.to_string();
    match text.char_indices().nth(LONGEST) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text,
    }
}

#[cfg(test)]
mod tests;

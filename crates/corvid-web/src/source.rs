//! The web tools as one tool source for the agent: the composition root registers a
//! [`WebPlugin`], each session gets a source over the same [`WebTools`] (one fetcher, one TLS
//! configuration per process).
//!
//! Kinds, for the approval gate: `web_fetch` is [`ToolKind::Fetch`] — a network request to
//! a place the model picked (a hostile page can ask it to send what it read elsewhere), so it
//! asks under `ask` and `auto-edit`, "always" keeps allowing it for the session, and
//! `full-auto` runs it. `web_search` is [`ToolKind::Fetch`] too: it only reaches the backend
//! the user configured, but the query is the model's words and leaves the machine (a prompt
//! injection could put the project's contents in it), so it asks like a fetch.

use std::sync::Arc;

use corvid_tools::{
    Listing, Plan, Prepared, Proposal, Run, ToolContext, ToolError, ToolFuture, ToolKind,
    ToolOutput, ToolPlugin, ToolSource, ToolSpec,
};
use serde_json::Value;

use crate::tools::{FETCH, SEARCH, WebCall, WebTools};

/// Opens a [`WebSource`] for each session.
#[derive(Debug, Clone)]
pub struct WebPlugin {
    tools: Arc<WebTools>,
    notices: Vec<String>,
}

impl WebPlugin {
    /// The plugin `[web]` and the keys describe (see [`WebTools::configured`]).
    pub fn configured(loaded: &corvid_config::Loaded) -> Self {
        let (tools, notices) = WebTools::configured(loaded);
        Self::new(tools, notices)
    }

    /// The plugin over `tools`; `notices` (a backend without its key) are shown to the user
    /// once per session.
    pub fn new(tools: WebTools, notices: Vec<String>) -> Self {
        Self {
            tools: Arc::new(tools),
            notices,
        }
    }
}

impl ToolPlugin for WebPlugin {
    fn open(&self, _context: &Arc<ToolContext>) -> Arc<dyn ToolSource> {
        Arc::new(WebSource {
            tools: Arc::clone(&self.tools),
            notices: self.notices.clone(),
        })
    }
}

/// One session's web tools.
#[derive(Debug)]
pub struct WebSource {
    tools: Arc<WebTools>,
    notices: Vec<String>,
}

/// Both tools send something the model wrote off the machine (see the module's comment).
fn kind(_tool: &str) -> ToolKind {
    ToolKind::Fetch
}

impl ToolSource for WebSource {
    fn name(&self) -> &str {
        "web"
    }

    fn list(&self) -> ToolFuture<'_, Listing> {
        Box::pin(async move {
            Listing {
                tools: self
                    .tools
                    .offered()
                    .into_iter()
                    .map(|offered| {
                        ToolSpec::new(
                            offered.name,
                            offered.description,
                            offered.parameters,
                            kind(offered.name),
                        )
                    })
                    .collect(),
                notices: self.notices.clone(),
            }
        })
    }

    fn prepare<'a>(
        &'a self,
        tool: &'a str,
        arguments: Value,
    ) -> ToolFuture<'a, Result<Prepared, ToolError>> {
        Box::pin(async move {
            let call = self
                .tools
                .check(tool, &arguments)
                .map_err(|error| ToolError::Failed(error.to_string()))?;
            let proposal = Proposal {
                summary: call.summary(),
                ..Proposal::default()
            };
            Ok(Prepared::new(
                tool,
                kind(call.tool()),
                proposal,
                Plan::external(call),
            ))
        })
    }

    fn apply<'a>(
        &'a self,
        tool: &'a str,
        plan: Plan,
        run: Run,
    ) -> ToolFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let call = plan.into_external::<WebCall>().ok_or_else(|| {
                ToolError::Failed(format!("`{tool}` was given a plan it did not make"))
            })?;
            Ok(self.tools.run(&call, run.cancel).await)
        })
    }

    fn summary(&self, tool: &str, arguments: &Value) -> Option<String> {
        match tool {
            FETCH | SEARCH => self
                .tools
                .check(tool, arguments)
                .ok()
                .map(|call| call.summary()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests;

//! The agent's tools from every source: a [`ToolBox`] holds a session's [`ToolSource`]s in
//! order of precedence (the built-ins first) and, once per turn, asks each for its tools and
//! makes an [`Offer`]: the tools the model is offered, each routed to the source that listed
//! it. A name listed twice goes to the first source (so a built-in always wins a clash) and the
//! loser is reported; a name no provider would accept is left out and reported.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use parking_lot::Mutex;
use serde_json::Value;

use crate::error::ToolError;
use crate::source::{Run, ServerReport, ToolSource, TrustServerError};
use crate::tool::{Plan, Prepared, ToolOutput, ToolSpec};

/// The longest tool name every provider accepts.
pub const MAX_TOOL_NAME: usize = 64;

/// A session's tool sources, the first winning a name clash. Cloning shares the sources.
#[derive(Clone)]
pub struct ToolBox {
    sources: Arc<[Arc<dyn ToolSource>]>,
    /// Names the agent keeps for its own tools (`task`): never routed to a source.
    reserved: Arc<[String]>,
    /// The notices of the last offer, so each is shown once while it lasts.
    shown: Arc<Mutex<HashSet<String>>>,
}

impl fmt::Debug for ToolBox {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("ToolBox")
            .field(
                "sources",
                &self
                    .sources
                    .iter()
                    .map(|source| source.name())
                    .collect::<Vec<_>>(),
            )
            .field("reserved", &self.reserved)
            .finish()
    }
}

/// An offer and what the user should hear about it.
#[derive(Debug, Clone)]
pub struct Offered {
    /// The tools on offer.
    pub offer: Offer,
    /// Notices that appeared since the last offer (a source's, or a clash or a bad name).
    pub notices: Vec<String>,
}

impl ToolBox {
    /// The sources, in order of precedence.
    pub fn new(sources: Vec<Arc<dyn ToolSource>>) -> Self {
        Self {
            sources: sources.into(),
            reserved: Arc::from(Vec::new()),
            shown: Arc::default(),
        }
    }

    /// Keeps `names` out of every offer: the agent's own tools have them.
    pub fn with_reserved(mut self, names: &[&str]) -> Self {
        self.reserved = names.iter().map(|name| (*name).to_owned()).collect();
        self
    }

    /// Asks every source for its tools (all at once) and makes this turn's offer.
    pub async fn offer(&self) -> Offered {
        let listings =
            futures_util::future::join_all(self.sources.iter().map(|source| source.list())).await;
        let mut tools = Vec::new();
        let mut notices = Vec::new();
        let mut taken: Vec<(String, usize)> = Vec::new();
        for (index, listing) in listings.into_iter().enumerate() {
            let source = self.sources[index].name();
            notices.extend(listing.notices);
            for spec in listing.tools {
                if let Some(problem) = bad_name(&spec.name) {
                    notices.push(format!(
                        "the {source} tool `{}` is not offered: {problem}",
                        spec.name
                    ));
                    continue;
                }
                if self.reserved.contains(&spec.name) {
                    notices.push(format!(
                        "the {source} tool `{}` is not offered: the agent's own tool has that name",
                        spec.name
                    ));
                    continue;
                }
                if let Some((_, winner)) = taken.iter().find(|(name, _)| *name == spec.name) {
                    notices.push(format!(
                        "the {source} tool `{}` is not offered: a {} tool has that name",
                        spec.name,
                        self.sources[*winner].name()
                    ));
                    continue;
                }
                taken.push((spec.name.clone(), index));
                tools.push(OfferedTool {
                    spec,
                    source: index,
                });
            }
        }
        let notices = self.new_notices(notices);
        Offered {
            offer: Offer {
                tools: tools.into(),
                sources: Arc::clone(&self.sources),
            },
            notices,
        }
    }

    /// Every server behind every source, in order of precedence (`/mcp`).
    pub fn servers(&self) -> Vec<ServerReport> {
        self.sources
            .iter()
            .flat_map(|source| source.servers())
            .collect()
    }

    /// The user trusts the held server `name`: the first source that has it keeps that and
    /// starts it.
    pub fn trust_server(&self, name: &str) -> Result<(), TrustServerError> {
        self.sources
            .iter()
            .find_map(|source| source.trust_server(name))
            .unwrap_or_else(|| {
                Err(TrustServerError::NoServer {
                    name: name.to_owned(),
                })
            })
    }

    /// The notices not shown at the last offer; remembers these as shown.
    fn new_notices(&self, notices: Vec<String>) -> Vec<String> {
        let mut shown = self.shown.lock();
        let fresh = notices
            .iter()
            .filter(|notice| !shown.contains(*notice))
            .cloned()
            .collect::<Vec<_>>();
        *shown = notices.into_iter().collect();
        let mut seen = HashSet::new();
        fresh
            .into_iter()
            .filter(|notice| seen.insert(notice.clone()))
            .collect()
    }
}

/// Why no provider would accept `name`, if none would: the strictest rule is OpenAI's and
/// Anthropic's `^[a-zA-Z0-9_-]{1,64}$`.
fn bad_name(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("its name is empty".to_owned());
    }
    if name.len() > MAX_TOOL_NAME {
        return Some(format!(
            "its name is longer than {MAX_TOOL_NAME} characters"
        ));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Some("a name may only have letters, digits, `_` and `-`".to_owned());
    }
    None
}

#[derive(Clone)]
struct OfferedTool {
    spec: ToolSpec,
    source: usize,
}

/// The tools on offer for one turn, each routed to the source that listed it. Cloning is cheap.
#[derive(Clone)]
pub struct Offer {
    tools: Arc<[OfferedTool]>,
    sources: Arc<[Arc<dyn ToolSource>]>,
}

impl fmt::Debug for Offer {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_list()
            .entries(self.tools.iter().map(|tool| &tool.spec.name))
            .finish()
    }
}

impl Offer {
    /// The tools, in order: each source's in its own order, the first source's first.
    pub fn specs(&self) -> impl Iterator<Item = &ToolSpec> {
        self.tools.iter().map(|tool| &tool.spec)
    }

    /// One tool's description.
    pub fn spec(&self, name: &str) -> Option<&ToolSpec> {
        self.find(name).map(|tool| &tool.spec)
    }

    /// The offer narrowed to the tools `keep` accepts (a subagent's); calls to the others are
    /// refused as unknown.
    pub fn retain(&self, keep: impl Fn(&ToolSpec) -> bool) -> Self {
        Self {
            tools: self
                .tools
                .iter()
                .filter(|tool| keep(&tool.spec))
                .cloned()
                .collect(),
            sources: Arc::clone(&self.sources),
        }
    }

    fn find(&self, name: &str) -> Option<&OfferedTool> {
        self.tools.iter().find(|tool| tool.spec.name == name)
    }

    fn unknown(&self, name: &str) -> ToolError {
        ToolError::UnknownTool {
            name: name.to_owned(),
            available: self
                .tools
                .iter()
                .map(|tool| tool.spec.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        }
    }

    /// Phase one, by the source that offered `name`. The prepared call carries the name and
    /// the kind it was offered with, whatever the source put there: the gate judges what the
    /// model was offered.
    pub async fn prepare(&self, name: &str, arguments: Value) -> Result<Prepared, ToolError> {
        let Some(tool) = self.find(name) else {
            return Err(self.unknown(name));
        };
        let mut prepared = self.sources[tool.source]
            .prepare(&tool.spec.name, arguments)
            .await?;
        prepared.tool.clone_from(&tool.spec.name);
        prepared.kind = tool.spec.kind;
        Ok(prepared)
    }

    /// Phase two: `plan` (prepared for `name`) carried out by the source that made it.
    pub async fn apply(&self, name: &str, plan: Plan, run: Run) -> Result<ToolOutput, ToolError> {
        let Some(tool) = self.find(name) else {
            return Err(self.unknown(name));
        };
        if run.cancel.is_cancelled() {
            return Err(ToolError::Cancelled {
                output: String::new(),
            });
        }
        self.sources[tool.source]
            .apply(&tool.spec.name, plan, run)
            .await
    }

    /// The line front ends show for a call: the owning source's, else the tool's name.
    pub fn summary(&self, name: &str, arguments: &Value) -> String {
        self.find(name)
            .and_then(|tool| self.sources[tool.source].summary(name, arguments))
            .unwrap_or_else(|| name.to_owned())
    }
}

#[cfg(test)]
mod tests;

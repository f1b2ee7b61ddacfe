//! MCP servers as one of the agent's tool sources: [`McpPlugin`] is what the composition root
//! registers; it opens one [`McpManager`] per session (the session's project decides which
//! `.corvid/mcp.json` is read, and its sandbox is the one stdio servers start in).
//!
//! Every MCP tool is offered as [`ToolKind::Mutating`]: corvid cannot show what it will do, so
//! the approval gate asks unless the policy is full-auto or the user kept an "always" rule. A
//! server's `readOnlyHint` is the server's word, not corvid's, and changes nothing here. The
//! proposal shows the server, the tool and the arguments.

use std::sync::Arc;

use corvid_config::{McpServer, merge_servers, read_project_mcp};
use corvid_tools::{
    AlwaysAllow, Listing, Plan, Prepared, Proposal, Run, ServerReport, ToolContext, ToolDetail,
    ToolError, ToolFuture, ToolImage, ToolKind, ToolOutput, ToolPlugin, ToolSource, ToolSpec,
    TrustServerError,
};
use serde_json::Value;

use crate::launch::{Lookup, McpEnvironment};
use crate::manager::{McpManager, ServerStatus};
use crate::oauth::OAuthStore;
use crate::trust::{TrustStore, needs_trust};

/// Registers the MCP servers of `config.toml` (and of each session's project) with the agent.
#[derive(Clone)]
pub struct McpPlugin {
    global: Vec<McpServer>,
    max_tools: usize,
    lookup: Lookup,
    /// Whether each session's `.corvid/mcp.json` is read too (not for editor-given servers).
    read_project: bool,
    /// corvid's own credentials, which a project's servers may not name.
    protected: Arc<Vec<String>>,
    /// The user's answers about the project's own servers; without it none is trusted.
    trust: Option<TrustStore>,
    /// Where `corvid mcp login` keeps sign-ins; without it no server signs in.
    oauth: Option<OAuthStore>,
}

impl std::fmt::Debug for McpPlugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpPlugin")
            .field("global", &self.global.len())
            .field("max_tools", &self.max_tools)
            .finish_non_exhaustive()
    }
}

impl McpPlugin {
    /// `global` are `config.toml`'s servers; `lookup` resolves `${VAR}` and friends (the
    /// process environment, then corvid's env file).
    pub fn new(global: Vec<McpServer>, max_tools: usize, lookup: Lookup) -> Self {
        Self {
            global,
            max_tools,
            lookup,
            read_project: true,
            protected: Arc::new(Vec::new()),
            trust: None,
            oauth: None,
        }
    }

    /// Where the sign-ins of `corvid mcp login` are kept: HTTP servers connect with theirs.
    pub fn with_oauth(mut self, store: OAuthStore) -> Self {
        self.oauth = Some(store);
        self
    }

    /// Where the user's trust in a project's own servers is kept: those it does not trust (as
    /// defined now) are not started. Without a store no project server starts.
    pub fn with_trust(mut self, trust: TrustStore) -> Self {
        self.trust = Some(trust);
        self
    }

    /// The variable names that are corvid's own credentials (its providers' keys, the names in
    /// its env file): a project's `.corvid/mcp.json` may not pass them to a server.
    pub fn with_protected(mut self, names: Vec<String>) -> Self {
        self.protected = Arc::new(names);
        self
    }

    /// The servers an editor passed for one session (ACP's `session/new`): those alone, no
    /// project file (the configured servers have their own plugin).
    pub fn editor_given(servers: Vec<McpServer>, max_tools: usize, lookup: Lookup) -> Self {
        Self {
            read_project: false,
            ..Self::new(servers, max_tools, lookup)
        }
    }

    /// The manager for a session in `project` with `sandbox`, and what to tell the user about
    /// the project's file (a broken `.corvid/mcp.json` is a notice, never a failed session).
    pub fn manager(
        &self,
        project: &std::path::Path,
        sandbox: corvid_tools::Sandbox,
    ) -> (McpManager, Vec<String>) {
        let read = if self.read_project {
            read_project_mcp(project)
        } else {
            Ok(corvid_config::McpFile::default())
        };
        let (servers, notices) = match read {
            Ok(file) => (merge_servers(&self.global, &file.servers), file.warnings),
            Err(error) => (
                self.global.clone(),
                vec![format!("the project's MCP servers were not read: {error}")],
            ),
        };
        let environment = McpEnvironment {
            project: project.to_path_buf(),
            sandbox,
            lookup: Arc::clone(&self.lookup),
            protected: Arc::clone(&self.protected),
            oauth: self.oauth.clone(),
        };
        let untrusted: Vec<&McpServer> = servers
            .iter()
            .filter(|server| server.enabled && needs_trust(server))
            .filter(|server| {
                !self
                    .trust
                    .as_ref()
                    .is_some_and(|store| store.is_trusted(project, server))
            })
            .collect();
        let names: Vec<String> = untrusted.iter().map(|server| server.name.clone()).collect();
        let manager = McpManager::new(servers, self.max_tools, environment).hold_untrusted(&names);
        (manager, notices)
    }
}

impl ToolPlugin for McpPlugin {
    fn open(&self, context: &Arc<ToolContext>) -> Arc<dyn ToolSource> {
        let (manager, notices) =
            self.manager(context.workspace().root(), context.sandbox().clone());
        // Servers start now, in the background, so they are up by the first message.
        manager.start();
        Arc::new(McpSource {
            manager,
            notices,
            trust: self
                .trust
                .clone()
                .map(|store| (store, context.workspace().root().to_path_buf())),
        })
    }
}

/// One session's MCP tools.
#[derive(Debug)]
pub struct McpSource {
    manager: McpManager,
    /// About the configuration itself; said on every listing while it holds.
    notices: Vec<String>,
    /// Where the user's trust in the project's servers is kept, and the project.
    trust: Option<(TrustStore, std::path::PathBuf)>,
}

impl McpSource {
    /// A source over `manager`.
    pub fn new(manager: McpManager) -> Self {
        Self {
            manager,
            notices: Vec::new(),
            trust: None,
        }
    }

    /// The servers behind it (for `/mcp` and tests).
    pub fn manager(&self) -> &McpManager {
        &self.manager
    }
}

impl Drop for McpSource {
    fn drop(&mut self) {
        // The session ended: stop its servers (their processes die with their handles too;
        // this also ends HTTP sessions politely).
        let manager = self.manager.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move { manager.shutdown().await });
        }
    }
}

/// What a prepared MCP call carries to `apply`.
struct McpPlan {
    arguments: Value,
}

impl ToolSource for McpSource {
    fn name(&self) -> &str {
        "MCP"
    }

    fn list(&self) -> ToolFuture<'_, Listing> {
        Box::pin(async move {
            if self.manager.is_empty() {
                return Listing {
                    tools: Vec::new(),
                    notices: self.notices.clone(),
                };
            }
            let tools = self
                .manager
                .tools(&|_| false)
                .await
                .into_iter()
                .map(|tool| {
                    let mut spec = ToolSpec::new(
                        tool.name,
                        tool.description,
                        tool.parameters,
                        ToolKind::Mutating,
                    )
                    .with_origin(format!("mcp:{}", tool.server));
                    if tool.always_allow_server {
                        spec.always_allow = AlwaysAllow::Origin;
                    }
                    spec
                })
                .collect();
            let mut notices = self.notices.clone();
            notices.extend(self.manager.take_notices());
            Listing { tools, notices }
        })
    }

    fn prepare<'a>(
        &'a self,
        tool: &'a str,
        arguments: Value,
    ) -> ToolFuture<'a, Result<Prepared, ToolError>> {
        Box::pin(async move {
            let arguments = match arguments {
                Value::Null => Value::Object(serde_json::Map::new()),
                Value::Object(map) => Value::Object(map),
                _ => {
                    return Err(ToolError::invalid(
                        tool,
                        "the arguments must be a JSON object",
                    ));
                }
            };
            let Some((server, raw)) = self.manager.origin_of(tool) else {
                return Err(ToolError::Failed(format!(
                    "`{tool}` is not an MCP tool offered in this session"
                )));
            };
            let proposal = Proposal {
                summary: format!(
                    "Call `{raw}` on the MCP server `{server}` with {}",
                    short(&arguments, 400)
                ),
                ..Proposal::default()
            };
            Ok(Prepared::new(
                tool,
                ToolKind::Mutating,
                proposal,
                Plan::external(McpPlan { arguments }),
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
            let Some(plan) = plan.into_external::<McpPlan>() else {
                return Err(ToolError::Failed(format!(
                    "`{tool}` was not prepared by the MCP source"
                )));
            };
            let output = self.manager.call(tool, plan.arguments, run.cancel).await;
            let mut result = if output.is_error {
                ToolOutput::failure(output.text)
            } else {
                ToolOutput::text(output.text)
            };
            if !output.images.is_empty() {
                result.detail = Some(ToolDetail::Images(
                    output
                        .images
                        .into_iter()
                        .map(|image| ToolImage {
                            media_type: image.media_type,
                            data: image.data,
                        })
                        .collect(),
                ));
            }
            Ok(result)
        })
    }

    fn summary(&self, tool: &str, arguments: &Value) -> Option<String> {
        let (server, raw) = self.manager.origin_of(tool)?;
        Some(format!("{server}/{raw} {}", short(arguments, 80)))
    }

    fn trust_server(&self, name: &str) -> Option<Result<(), TrustServerError>> {
        if !self.manager.has_server(name) {
            return None;
        }
        Some(self.manager.admit(name, |server| {
            match &self.trust {
                Some((store, project)) => store
                    .trust(project, server)
                    .map_err(|error| TrustServerError::Keep(Box::new(error))),
                None => Err(TrustServerError::NoTrustStore),
            }
        }))
    }

    fn servers(&self) -> Vec<ServerReport> {
        self.manager
            .statuses()
            .into_iter()
            .map(ServerStatus::report)
            .collect()
    }
}

/// `value` as compact JSON, cut at `limit` characters.
fn short(value: &Value, limit: usize) -> String {
    let text = value.to_string();
    if text.chars().count() <= limit {
        return text;
    }
    let cut: String = text.chars().take(limit).collect();
    format!("{cut}…")
}

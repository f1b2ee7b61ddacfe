//! What one corvid process is built from, built once: one provider registry (so one token
//! refresher per sign-in: xAI's refresh token rotates, and two refreshers would race), one
//! store (one SQLite connection for conversations and the usage ledger), and the agent's
//! session service over them. `chat`, `exec` and `acp` take their sessions from it; `serve`
//! builds it over the gateway's registry and the store the gateway's ledger writer uses, so the
//! gateway, the page and the agent share all three.

use std::sync::Arc;

use anyhow::Context;

use parking_lot::Mutex;

use corvid_agent::{
    AgentConfig, Agents, EventStream, ModelClient, ModelError, ModelReply, ModelRoute,
    ProjectFolders, ReplyFuture, StreamFuture, error_class,
};
use corvid_auth::McpSignInStore;
use corvid_config::{CredentialSource, Loaded};
use corvid_mcp::{McpPlugin, OAuthStore, TrustStore};
use corvid_providers::Registry;
use corvid_store::{SharedConversations, SharedStore, Store};
use corvid_wire::model::ChatRequest;

/// The process's shared parts. (`serve` builds it over the gateway's registry and store, so the
/// gateway and the page's agent share them.)
pub(crate) struct Composition {
    pub(crate) agents: Agents,
    /// The registry the agents' model client uses (a clone: the same sign-in sessions), for
    /// front ends that list its catalog (`acp`'s model selector).
    pub(crate) registry: Registry,
}

impl Composition {
    /// The terminal's and ACP's composition: the registry and the configured conversation
    /// store opened here.
    pub(crate) async fn build(loaded: &Loaded) -> anyhow::Result<Self> {
        let registry = registry(loaded)?;
        Ok(Self::with_parts(registry, conversations(loaded).await?))
    }

    /// Over a registry and a store already built (`serve` passes the gateway's, so the page's
    /// agent and the gateway share sign-in sessions and one database connection; in team mode
    /// PostgreSQL's, so every instance shares the conversations).
    pub(crate) fn with_parts(registry: Registry, store: SharedConversations) -> Self {
        let agents = Agents::new(Arc::new(InProcessModel(registry.clone())), store);
        Self { agents, registry }
    }

    /// [`Composition::with_parts`] whose sessions announce approvals waiting and turns ending
    /// on the host's `attention` feed (one feed across live settings reloads).
    pub(crate) fn attending(
        registry: Registry,
        store: SharedConversations,
        attention: Arc<corvid_agent::AttentionFeed>,
    ) -> Self {
        let model = Arc::new(InProcessModel(registry.clone()));
        let agents = Agents::with_attention(model, store, attention);
        Self { agents, registry }
    }
}

/// The agent's conversations where the configuration keeps them: on PostgreSQL in team mode
/// (`[store] url`), so `corvid chat`, `exec` and `acp` see the conversations of every
/// instance's page as `serve`'s page agent does; else in the local SQLite file.
pub(crate) async fn conversations(loaded: &Loaded) -> anyhow::Result<SharedConversations> {
    let Some(pg) = crate::team_commands::postgres(loaded)? else {
        return Ok(open_store(loaded)?);
    };
    pg.check_schema()
        .await
        .context("corvid cannot keep its conversations in this database")?;
    let conversations =
        corvid_store::pg::PgConversations::new(pg, tokio::runtime::Handle::current());
    Ok(Arc::new(Mutex::new(conversations)))
}

/// Opens the process's one store (`<data dir>/corvid.db`).
pub(crate) fn open_store(loaded: &Loaded) -> anyhow::Result<SharedStore> {
    let store = Store::open(&loaded.paths.database()).map_err(|error| {
        anyhow::anyhow!(
            "cannot open the store {}: {error}",
            loaded.paths.database().display()
        )
    })?;
    Ok(Arc::new(Mutex::new(store)))
}

/// A session's settings from the configuration: the project, the model, the front end that the
/// usage ledger names, and corvid's data folders for spilled output and checkpoints (every front
/// end the same, so `/undo` in the page undoes a turn made in the terminal).
pub(crate) fn agent_config(
    loaded: &Loaded,
    folders: ProjectFolders,
    model: String,
    front_end: &str,
) -> AgentConfig {
    let mut config = AgentConfig::new(folders.root, model);
    config.cwd = folders.cwd;
    config.front_end = front_end.to_owned();
    config.output_dir = loaded.paths.data_dir.join("output");
    config.checkpoint_dir = Some(loaded.paths.data_dir.join("checkpoints"));
    // Every front end gets the kernel sandbox as config.toml sets it; `chat`/`exec` may
    // override it with `--sandbox`.
    config.sandbox = crate::sandbox_setup::sandbox(loaded, None);
    config.approval = crate::agent_front::default_approval(loaded);
    config.tool_plugins = tool_plugins(loaded);
    // Hooks and permission rules in Claude Code's format; a project's hooks need trust.
    config.user_settings = Some(crate::hooks_command::user_settings(loaded));
    config.project_trust = Some(crate::hooks_command::project_trust(loaded));
    config.prices = loaded.config.prices.clone();
    config
}

/// The tool sources every session gets beside the built-ins and the skills, in order of
/// precedence (a built-in wins a name clash, then the earlier plugin; MCP servers belong before
/// custom tools, as in seed 004). Each is opened once per session over that session's tool
/// context, so its commands share `bash`'s runner and sandbox.
pub(crate) fn tool_plugins(loaded: &Loaded) -> Vec<Arc<dyn corvid_tools::ToolPlugin>> {
    // corvid's own web tools first (web_fetch, web_search, as `[web]` sets them), then MCP
    // servers (config.toml's, and each session's .corvid/mcp.json), then custom tools.
    let web: Arc<dyn corvid_tools::ToolPlugin> =
        Arc::new(corvid_web::WebPlugin::configured(loaded));
    let mcp: Arc<dyn corvid_tools::ToolPlugin> = Arc::new(mcp_plugin(loaded));
    vec![web, mcp, Arc::new(corvid_tools::CustomTools)]
}

/// The MCP tool source every session gets: config.toml's servers, plus each session's
/// `.corvid/mcp.json`; `${VAR}` references resolve from the process environment, then the env
/// file. (`corvid mcp list` starts the same one to show the servers.)
pub(crate) fn mcp_plugin(loaded: &Loaded) -> McpPlugin {
    let secrets = loaded.clone();
    McpPlugin::new(
        loaded.config.mcp.servers.clone(),
        loaded.config.mcp.max_tools(),
        Arc::new(move |name| secrets.secret(name)),
    )
    .with_protected(credential_names(loaded))
    .with_trust(mcp_trust_store(loaded))
    .with_oauth(mcp_oauth_store(loaded))
}

/// The tool source of the MCP servers an editor passes over ACP for one session.
pub(crate) fn editor_mcp(loaded: &Loaded) -> corvid_acp::ClientMcp {
    let secrets = loaded.clone();
    let max_tools = loaded.config.mcp.max_tools();
    Arc::new(move |servers| {
        let secrets = secrets.clone();
        Arc::new(McpPlugin::editor_given(
            servers,
            max_tools,
            Arc::new(move |name| secrets.secret(name)),
        )) as Arc<dyn corvid_tools::ToolPlugin>
    })
}

/// Where the user's trust in projects' own MCP servers is kept (corvid's data folder).
pub(crate) fn mcp_trust_store(loaded: &Loaded) -> TrustStore {
    TrustStore::in_data_dir(&loaded.paths.data_dir)
}

/// Where `corvid mcp login` keeps sign-ins: the env file, plus the keyring where one works.
pub(crate) fn mcp_oauth_store(loaded: &Loaded) -> OAuthStore {
    OAuthStore::new(McpSignInStore::detect(loaded))
}

/// The variables that hold corvid's own credentials, which a project's MCP server may not be
/// given: each provider's key variables, the xAI sign-in's, and every name in the env file.
pub(crate) fn credential_names(loaded: &Loaded) -> Vec<String> {
    let mut names: Vec<String> = ["XAI_API_KEY", "XAI_ACCESS_TOKEN", "XAI_REFRESH_TOKEN"]
        .map(str::to_owned)
        .to_vec();
    for provider in &loaded.config.providers {
        if let CredentialSource::Env(variables) = &provider.credential {
            names.extend(variables.iter().cloned());
        }
    }
    names.extend(loaded.env_file.keys().map(str::to_owned));
    names.sort();
    names.dedup();
    names
}

/// The provider registry; a process builds one and clones it (clones share sign-in sessions).
pub(crate) fn registry(loaded: &Loaded) -> anyhow::Result<Registry> {
    let oauth_http = corvid_auth::oauth_http_client()?;
    Registry::from_config(loaded, oauth_http)
        .map_err(|error| anyhow::anyhow!("cannot set up the providers: {error}"))
}

/// The in-process model client: the gateway's providers, routing and credentials.
pub(crate) struct InProcessModel(pub(crate) Registry);

impl ModelClient for InProcessModel {
    fn stream(&self, request: ChatRequest) -> StreamFuture<'_> {
        Box::pin(async move { self.call(request).await.map(|reply| reply.events) })
    }

    fn call(&self, request: ChatRequest) -> ReplyFuture<'_> {
        Box::pin(async move {
            let model = request.model.clone();
            match self.0.call(request).await {
                Ok(reply) => Ok(ModelReply {
                    events: Box::pin(reply.stream) as EventStream,
                    attempts: reply.attempts,
                    served_by: Some(ModelRoute {
                        provider: reply.route.provider.name().to_owned(),
                        model: reply.route.model,
                    }),
                }),
                Err(failure) => {
                    let message = failure.message(self.0.dialect(&model));
                    let mut error = ModelError::new(error_class(failure.class()), message);
                    error.retry_after = failure.retry_after();
                    error.attempts = failure.attempts;
                    Err(error)
                }
            }
        })
    }

    fn route(&self, model: &str) -> Option<ModelRoute> {
        let route = self.0.lead(model).ok()?;
        Some(ModelRoute {
            provider: route.provider.name().to_owned(),
            model: route.model,
        })
    }

    fn context_window(&self, model: &str) -> Option<u64> {
        self.0.context_window(model).map(|window| window.tokens)
    }

    fn takes_images(&self, model: &str) -> Option<bool> {
        self.0
            .model_info(model)
            .capabilities
            .map(|capabilities| capabilities.images)
    }
}

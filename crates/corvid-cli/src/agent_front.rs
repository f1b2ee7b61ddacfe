//! The agent's terminal front ends: the start-up they share (providers, the agent's settings),
//! `corvid chat` (the terminal UI in `corvid-tui`) here, and `corvid exec` in `exec.rs`. Both
//! are clients of the engine's protocol only.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use corvid_agent::{
    AgentConfig, AgentHandle, EventStream, ModelClient, ModelError, ModelRoute, StreamFuture,
};
use corvid_config::Loaded;
use corvid_protocol::{ApprovalPolicy, ErrorClass, Event};
use corvid_providers::{FailureClass, Registry};
use corvid_wire::model::ChatRequest;
use tokio::sync::mpsc;

/// The in-process model client: the gateway's providers, routing and credentials.
struct InProcessModel(Registry);

impl ModelClient for InProcessModel {
    fn stream(&self, request: ChatRequest) -> StreamFuture<'_> {
        Box::pin(async move {
            match self.0.stream(request).await {
                Ok(stream) => Ok(Box::pin(stream) as EventStream),
                Err(failure) => {
                    let class = match failure.class {
                        FailureClass::NotConfigured => ErrorClass::NotConfigured,
                        FailureClass::AuthenticationRejected => ErrorClass::AuthenticationRejected,
                        FailureClass::RateLimited => ErrorClass::RateLimited,
                        FailureClass::ServerError => ErrorClass::ServerError,
                        FailureClass::Network => ErrorClass::Network,
                        FailureClass::UnexpectedResponse => ErrorClass::UnexpectedResponse,
                    };
                    let mut error = ModelError::new(class, failure.message);
                    error.retry_after = failure.retry_after;
                    Err(error)
                }
            }
        })
    }

    fn route(&self, model: &str) -> Option<ModelRoute> {
        let route = self.0.resolve(model).ok()?;
        Some(ModelRoute {
            provider: route.provider.name().to_owned(),
            model: route.model,
        })
    }
}

/// Options shared by `exec` and `chat`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct AgentArgs {
    /// The model (alias, provider/model, or a bare name); default: default_model.
    #[arg(long)]
    model: Option<String>,
    /// ask (reads run; writes and commands ask), auto-edit (edits run; commands ask), full-auto.
    #[arg(long, value_name = "POLICY", default_value = "ask")]
    pub(crate) approval: ApprovalPolicy,
    /// The project folder (default: the nearest folder at or above the current one, below the
    /// home folder, holding `.git`; else the current directory).
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// Model steps that may call tools in one turn (then one last step answers without tools).
    #[arg(long, default_value_t = 50)]
    max_steps: u32,
    /// The model's context window in tokens; older turns are summarised near it
    /// (default: 128000).
    #[arg(long, value_name = "TOKENS")]
    context_window: Option<u64>,
}

/// Starts the agent: the one place front ends set it up (providers, project, settings).
pub(crate) fn start(
    loaded: &Loaded,
    args: &AgentArgs,
    front_end: &str,
) -> anyhow::Result<(AgentHandle, mpsc::UnboundedReceiver<Event>)> {
    let here = std::env::current_dir().context("cannot read the current directory")?;
    let folders = corvid_agent::project_folders(&here, args.project.as_deref());
    let oauth_http = corvid_auth::oauth_http_client()?;
    let registry = Registry::from_config(loaded, oauth_http)
        .map_err(|error| anyhow::anyhow!("cannot set up the providers: {error}"))?;
    let model = args
        .model
        .clone()
        .unwrap_or_else(|| loaded.config.default_model.clone());
    let mut config = AgentConfig::new(folders.root, model);
    config.cwd = folders.cwd;
    config.front_end = front_end.to_owned();
    config.approval = args.approval;
    config.max_steps = args.max_steps;
    config.database = Some(loaded.paths.database());
    config.output_dir = loaded.paths.data_dir.join("output");
    config.checkpoint_dir = Some(loaded.paths.data_dir.join("checkpoints"));
    config.context_window = args.context_window;
    Ok(AgentHandle::spawn(
        config,
        Arc::new(InProcessModel(registry)),
    )?)
}

/// `corvid chat`: the terminal UI (plain lines when stdin or stdout is not a terminal).
pub(crate) async fn chat(loaded: &Loaded, args: &AgentArgs) -> anyhow::Result<()> {
    let (handle, events) = start(loaded, args, "chat")?;
    let here = std::env::current_dir().context("cannot read the current directory")?;
    let project = corvid_agent::project_folders(&here, args.project.as_deref()).root;
    let mut catalog: Vec<String> = loaded.config.aliases.keys().cloned().collect();
    if !catalog.contains(&loaded.config.default_model) {
        catalog.insert(0, loaded.config.default_model.clone());
    }
    let prices = loaded
        .config
        .prices
        .iter()
        .map(|(model, price)| {
            let rate = corvid_tui::Rate {
                input: price.input,
                cached_input: price.cached_input,
                cache_write: price.cache_write,
                output: price.output,
            };
            (model.clone(), rate)
        })
        .collect();
    let settings = corvid_tui::Settings {
        prices,
        history_file: Some(corvid_tui::history::file_for(
            &loaded.paths.data_dir,
            &project,
        )),
        project,
        catalog,
    };
    corvid_tui::run(Arc::new(handle), events, settings)
        .await
        .context("the terminal failed")
}

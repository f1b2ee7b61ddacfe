//! `corvid acp`: the coding agent over the Agent Client Protocol on stdin/stdout, for Zed's
//! agent panel (`agent_servers` in Zed's settings). Each ACP session is one session of the
//! process's session service (compose.rs), on the project holding the session's folder; stdout
//! carries only protocol frames, logs go to stderr.

use std::io::IsTerminal;
use std::sync::Arc;

use corvid_acp::ServiceSessions;
use corvid_config::Loaded;
use corvid_providers::Registry;
use tracing_subscriber::EnvFilter;

use crate::compose::{self, Composition};

pub(crate) async fn run(loaded: &Loaded) -> anyhow::Result<()> {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        EnvFilter::new(format!(
            "{},hyper=warn,reqwest=warn,h2=warn",
            loaded.config.log_level.as_str()
        ))
    });
    let colour = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(colour)
        .init();
    let composition = Composition::build(loaded).await?;
    let default_model = loaded.config.default_model.clone();
    let models = catalog(&composition.registry, &default_model);
    // `project` and `cwd` are replaced per session by the session's folder; the service's store
    // holds the conversations.
    let here = std::env::current_dir()?;
    let folders = corvid_agent::project_folders(&here, None);
    let base = compose::agent_config(loaded, folders, default_model, "acp");
    let sessions = ServiceSessions {
        agents: composition.agents.clone(),
        base,
        models,
        client_mcp: Some(crate::compose::editor_mcp(loaded)),
    };
    tracing::info!("corvid acp: serving the Agent Client Protocol on stdio");
    let served = corvid_acp::serve(Arc::new(sessions)).await;
    // Every session saves and stops before the process ends.
    composition.agents.close_all().await;
    served.map_err(|error| anyhow::anyhow!("the ACP connection failed: {error}"))
}

/// The model selector's entries: the default, the aliases, then each enabled provider's
/// configured models as `provider/model` (no network: the catalog as configured).
fn catalog(registry: &Registry, default_model: &str) -> Vec<String> {
    let mut models = vec![default_model.to_owned()];
    models.extend(registry.aliases().keys().cloned());
    for provider in registry.providers() {
        if !provider.config().enabled {
            continue;
        }
        for model in &provider.config().models {
            models.push(format!("{}/{model}", provider.name()));
        }
    }
    let mut seen = std::collections::HashSet::new();
    models.retain(|model| seen.insert(model.clone()));
    models
}

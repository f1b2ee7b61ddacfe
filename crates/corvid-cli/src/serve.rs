//! `corvid serve`: logging, the credential, the upstream client, the bind policy, and the
//! server with its signal handling.

use anyhow::Context;
use corvid_config::Loaded;
use corvid_gateway::{AppState, check_bind_address, router};
use corvid_providers::Registry;
use corvid_store::{Store, UsageRecorder};
use tracing_subscriber::EnvFilter;

pub(crate) async fn run(loaded: Loaded, json_logs: bool) -> anyhow::Result<()> {
    init_logging(loaded.config.log_level.as_str(), json_logs);
    let config = loaded.config.clone();
    check_bind_address(&config.host, config.allow_remote)?;
    if config.allow_remote {
        warn_allow_remote(&config.host);
    }
    if loaded.paths.legacy {
        tracing::info!(dir = %loaded.paths.dir.display(), "using the supergrok-zed configuration directory as-is");
    }

    let oauth_http = corvid_auth::oauth_http_client()?;
    let registry = Registry::from_config(&loaded, oauth_http)
        .map_err(|error| anyhow::anyhow!("cannot set up the providers: {error}"))?;
    if let Some(xai) = registry.provider("xai")
        && !xai.upstream().credential().is_available()
    {
        tracing::warn!(
            auth_mode = %config.auth_mode,
            env_file = %loaded.paths.env_file.display(),
            "no xAI credential: xAI requests will be answered 401 until one is set (XAI_API_KEY, or `corvid login xai` with auth_mode = \"oauth\")"
        );
    }
    for provider in registry.providers() {
        let credential = provider.upstream().credential();
        if !provider.is_available() {
            continue;
        }
        if !credential.is_available() {
            // xAI without a key stays routable (its requests get a 401 naming what to set);
            // it was warned about above, so it is not "ready".
            tracing::info!(
                provider = provider.name(),
                "provider routable but without a credential"
            );
            continue;
        }
        tracing::info!(provider = provider.name(), kind = provider.kind().as_str(), base_url = %provider.config().base_url, "provider ready");
    }
    let mut state = AppState::new(config.clone(), registry);
    match Store::open(&loaded.paths.database()).and_then(UsageRecorder::spawn) {
        Ok(recorder) => state = state.with_recorder(recorder),
        Err(error) => {
            tracing::warn!(%error, "usage ledger unavailable; requests will not be recorded")
        }
    }
    let app = router(state.clone());

    let address = format!(
        "{}:{}",
        config.host.trim_start_matches('[').trim_end_matches(']'),
        config.port
    );
    let listener = tokio::net::TcpListener::bind(&address).await.with_context(|| {
        format!(
            "cannot listen on {address} (is another corvid or the Python supergrok-zed connector running? stop it, or pick --port)"
        )
    })?;
    let bound = listener.local_addr()?;
    tracing::info!(
        address = %bound,
        upstream = %config.upstream,
        auth_mode = %config.auth_mode,
        default_model = %config.default_model,
        "corvid listening on http://{bound}"
    );
    corvid_gateway::serve(listener, app, shutdown_signal(), config.shutdown_grace).await?;
    // The last responses' ledger rows are written after their bytes went out; let them land.
    state.settle().await;
    tracing::info!("stopped");
    Ok(())
}

/// `--allow-remote` (or `CORVID_ALLOW_REMOTE`): said loudly, on stderr itself and in the log,
/// because anyone who can reach the port spends the user's credits.
fn warn_allow_remote(host: &str) {
    let reach = if check_bind_address(host, false).is_ok() {
        format!("corvid listens on {host} now, but remote binds are allowed")
    } else {
        format!(
            "corvid listens on {host}: anyone who can reach this address can use your credentials and spend your credits"
        )
    };
    eprintln!(
        "\n  WARNING: remote access is on (--allow-remote / CORVID_ALLOW_REMOTE).\n  {reach}.\n  \
         corvid has no client authentication; keep it behind a firewall or a tunnel you control.\n  \
         The Zed account provider is off while this is set.\n"
    );
    tracing::warn!(host, "remote access is on: requests are not authenticated");
}

fn init_logging(level: &str, json: bool) {
    use std::io::IsTerminal;
    // RUST_LOG, when set, refines the configured level.
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new(format!("{level},hyper=warn,reqwest=warn,h2=warn")));
    // Colour only for a person at a terminal: not in files, pipes or journald, nor with
    // NO_COLOR set.
    let colour = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(colour);
    if json {
        builder.json().init();
    } else {
        builder.init();
    }
}

/// Resolves on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(error) = tokio::signal::ctrl_c().await {
            tracing::warn!(%error, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(error) => {
                tracing::warn!(%error, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => tracing::info!("Ctrl-C received"),
        () = terminate => tracing::info!("SIGTERM received"),
    }
}

//! `corvid serve`: logging, the credential, the upstream client, the bind policy, the agent
//! behind the web page, and the server with its signal handling; `corvid open`: the page of
//! the running server in a browser.
//!
//! One process, one of each: the gateway and the page's agent share one provider registry
//! (one token refresher per sign-in) and one store (one SQLite connection: the gateway's ledger
//! writer, the agent's conversations and ledger rows, the page's usage and status reports).
//! The settings are followed live (`live`): a change builds the registry, the gateway state
//! and the page's agent again from them, over the same store, listener and page token.

use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use corvid_config::{Flags, Loaded};
use corvid_gateway::{AppState, check_bind_address, router};
use corvid_providers::Registry;
use corvid_server::{PageAgent, PageState, Reloads, Token, page_url};
use corvid_store::{SharedConversations, SharedStore, UsageRecorder};
use tracing_subscriber::EnvFilter;

use crate::compose::Composition;
use crate::live::{Face, Generation, LiveApp, LiveSettings, Watch};

/// Where the running server leaves its page URL (with the token) for `corvid open`; readable
/// by the user only, removed at shutdown.
pub(crate) fn url_file(loaded: &Loaded) -> PathBuf {
    loaded.paths.data_dir.join("page-url")
}

pub(crate) async fn run(
    flags: Flags,
    loaded: Loaded,
    json_logs: bool,
    project: Option<PathBuf>,
) -> anyhow::Result<()> {
    init_logging(loaded.config.log_level.as_str(), json_logs);
    run_until(flags, loaded, project, shutdown_signal(), |_| {}).await?;
    if crate::restart::was_requested() {
        return Err(crate::restart::start_again());
    }
    Ok(())
}

/// What the server tells the program hosting it once it listens (corvid-desktop's tray).
#[derive(Debug, Clone)]
pub struct Listening {
    /// The address bound (the port is the real one when 0 was asked for).
    pub address: SocketAddr,
    /// The page's URL with its token; `None` when the page is off (no store, no agent).
    pub page_url: Option<String>,
    /// The settings in use, followed live: the providers serving now, what the last look at
    /// the settings files found.
    pub settings: LiveSettings,
}

/// `corvid serve` after its logging is set up: the gateway, the page and its agent until
/// `shutdown` resolves, then the graceful stop (streams end within the grace, the ledger is
/// committed, the port is freed). Meanwhile the settings files are followed (see `live`):
/// `flags` load them again as they loaded `loaded`. `listening` is called once the port is
/// bound.
pub(crate) async fn run_until(
    flags: Flags,
    loaded: Loaded,
    project: Option<PathBuf>,
    shutdown: impl Future<Output = ()> + Send + 'static,
    listening: impl FnOnce(Listening),
) -> anyhow::Result<()> {
    let config = loaded.config.clone();
    check_bind_address(&config.host, config.allow_remote)?;
    if config.allow_remote {
        warn_allow_remote(&config.host);
    }
    if loaded.paths.legacy {
        tracing::info!(dir = %loaded.paths.dir.display(), "using the supergrok-zed configuration directory as-is");
    }
    let store = match crate::compose::open_store(&loaded) {
        Ok(store) => Some(store),
        Err(error) => {
            tracing::warn!(error = %format!("{error:#}"), "usage ledger unavailable; requests will not be recorded and the web page is off");
            None
        }
    };
    // The providers, built once: a first run is told how to connect one where the user looks
    // (the terminal) before binding, so a busy port does not hide it.
    let registry = crate::compose::registry(&loaded)?;
    if crate::first_run::ready(&registry).is_empty() {
        tracing::warn!(
            "no provider can answer yet: requests get 401 until one is connected (the settings are followed live)"
        );
        eprintln!("\n{}\n", crate::first_run::connect_choices(&loaded));
    }
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
    let restart = Arc::new(tokio::sync::Notify::new());
    let (reloads, requests) = Reloads::channel();
    let reloads = reloads.with_restart(Arc::clone(&restart));
    let attention = corvid_agent::AttentionFeed::new();
    let builder = Builder {
        store,
        project,
        token: crate::restart::page_token(&url_file(&loaded)),
        port: bound.port(),
        reloads: reloads.clone(),
        attention: Arc::clone(&attention),
    };
    let first = crate::live::Build::build(&builder, loaded.clone(), registry, None).await?;
    tracing::info!(
        address = %bound,
        upstream = %config.upstream,
        auth_mode = %config.auth_mode,
        default_model = %config.default_model,
        "corvid listening on http://{bound}"
    );
    let page = first
        .page
        .is_some()
        .then(|| page_url(&config.host, bound.port(), &builder.token));
    let root = first.root.clone();
    let live = LiveApp::new(first);
    listening(Listening {
        address: bound,
        page_url: page.clone(),
        settings: LiveSettings {
            live: live.clone(),
            reloads: reloads.clone(),
            attention,
        },
    });
    if let Some(url) = &page {
        // Replaced at once (never half written: `corvid open` and the tests read it as it appears),
        // readable by the user only.
        if let Err(error) = corvid_config::write_atomic(
            &url_file(&loaded),
            url.as_bytes(),
            corvid_config::FileMode::Private,
        ) {
            tracing::warn!(%error, "cannot leave the page URL for `corvid open`");
        }
        // The URL holds the token: stdout only (for the user), never the log.
        println!("corvid: the web page is at {url}");
        if let Some(root) = root {
            println!("corvid: the agent works in {}", root.display());
        }
    }

    // One signal, two listeners: the server and the settings follower. A restart the page
    // asks for stops the same way, then starts again (`crate::restart`).
    let (stop, stopped) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        tokio::select! {
            () = shutdown => {}
            () = restart.notified() => crate::restart::requested(),
        }
        let _ = stop.send(true);
    });
    let follower = tokio::spawn(crate::live::follow(
        live.clone(),
        builder,
        flags,
        Watch::new(&loaded),
        reloads,
        requests,
        stopped.clone(),
    ));
    let mut stopping = stopped;
    let served = corvid_gateway::serve(
        listener,
        live.clone(),
        async move {
            let _ = stopping.wait_for(|stop| *stop).await;
        },
        config.shutdown_grace,
    )
    .await;
    follower.abort();
    let _ = follower.await;
    // A restart keeps the page URL: the next start takes its token from it.
    if page.is_some() && !crate::restart::was_requested() {
        let _ = std::fs::remove_file(url_file(&loaded));
    }
    // Running turns end as cancelled turns do (their finished steps saved); the last
    // responses' ledger rows are written after their bytes went out: let them land.
    for generation in live.all() {
        generation.close().await;
    }
    served?;
    tracing::info!("stopped");
    Ok(())
}

/// What every app built from the settings shares: the process's one store, the project, the
/// page's token and the bound port (open pages keep working across settings changes).
struct Builder {
    store: Option<SharedStore>,
    project: Option<PathBuf>,
    token: Token,
    port: u16,
    reloads: Reloads,
    /// Where every app's agent announces approvals waiting and turns ending, for the host.
    attention: Arc<corvid_agent::AttentionFeed>,
}

impl crate::live::Build for Builder {
    /// The gateway, the page and its agent, sharing one provider registry (one token refresher
    /// per sign-in) and the process's store.
    async fn build(
        &self,
        loaded: Loaded,
        registry: Registry,
        previous: Option<&Generation>,
    ) -> anyhow::Result<Generation> {
        let config = loaded.config.clone();
        log_providers(&registry);
        let (state, conversations) = match previous {
            // A reload: the store's connections (SQLite, or PostgreSQL and Redis), the ledger
            // writer, the key gate, the shutdown gate and the agent's conversations are the
            // running server's (the store cannot change live).
            // The admin key is a setting: it follows the env file.
            Some(previous) => (
                previous
                    .state
                    .with_settings(config, registry)
                    .with_admin_key(crate::team_commands::admin_key(&loaded)),
                previous.conversations.clone(),
            ),
            None => match crate::team_commands::postgres(&loaded)? {
                // Team mode: keys, budgets, the gateway's ledger and the page agent's
                // conversations on PostgreSQL, one pool for all of them.
                Some(pg) => {
                    let state = AppState::new(config, registry);
                    let state = crate::team_commands::postgres_gateway(&loaded, state, &pg).await?;
                    let conversations = corvid_store::pg::PgConversations::new(
                        pg,
                        tokio::runtime::Handle::current(),
                    );
                    let shared: SharedConversations =
                        Arc::new(parking_lot::Mutex::new(conversations));
                    (state, Some(shared))
                }
                None => {
                    let state = gateway_state(config, registry, self.store.as_ref());
                    let state =
                        crate::team_commands::sqlite_gate(&loaded, state, self.store.as_ref())
                            .await?;
                    let shared = self
                        .store
                        .as_ref()
                        .map(|store| -> SharedConversations { store.clone() });
                    (state, shared)
                }
            },
        };
        let gateway = router(state.clone());
        let agent = match conversations.clone() {
            Some(store) => page_agent(
                &loaded,
                self.project.as_deref(),
                &state,
                store,
                &self.attention,
            ),
            None => Err(anyhow::anyhow!("the store cannot be opened")),
        };
        Ok(match agent {
            Ok((agent, root)) => {
                let page = PageState::hosted(
                    state.clone(),
                    agent.clone(),
                    self.token.clone(),
                    loaded.clone(),
                    self.port,
                    self.reloads.clone(),
                );
                Generation {
                    face: Face::Page(corvid_server::app(gateway, page.clone())),
                    state,
                    agent: Some(agent),
                    page: Some(page),
                    root: Some(root),
                    conversations,
                    loaded,
                }
            }
            // The gateway does not need the agent: editors and SDKs keep working without the page.
            Err(error) => {
                tracing::warn!(%error, "the web page is off: its agent cannot start");
                Generation {
                    face: Face::Gateway(gateway),
                    state,
                    agent: None,
                    page: None,
                    root: None,
                    conversations,
                    loaded,
                }
            }
        })
    }
}

/// Each provider's state in the log: ready, or routable without a credential.
fn log_providers(registry: &Registry) {
    for provider in registry.providers() {
        let credential = provider.upstream().credential();
        if !provider.is_available() {
            continue;
        }
        if !credential.is_available() {
            // xAI without a key stays routable (its requests get a 401 naming what to set);
            // it is not "ready".
            tracing::info!(
                provider = provider.name(),
                "provider routable but without a credential"
            );
            continue;
        }
        tracing::info!(provider = provider.name(), kind = provider.kind().as_str(), base_url = %provider.config().base_url, "provider ready");
    }
}

/// The gateway's state, its usage ledger written through the process's store (when it opened).
fn gateway_state(
    config: corvid_config::Config,
    registry: Registry,
    store: Option<&SharedStore>,
) -> AppState {
    let state = AppState::new(config, registry);
    let Some(store) = store else {
        return state;
    };
    match UsageRecorder::spawn_shared(Arc::clone(store)) {
        Ok(recorder) => state.with_recorder(recorder),
        Err(error) => {
            tracing::warn!(%error, "usage ledger unavailable; requests will not be recorded");
            state
        }
    }
}

/// The page's agent: the session service over the gateway's registry and the process's store,
/// its sessions in the project folder, tagged `web` in the ledger, in the configured sandbox.
/// Each tab opens its own session on the conversation it shows.
fn page_agent(
    loaded: &Loaded,
    project: Option<&Path>,
    state: &AppState,
    store: SharedConversations,
    attention: &Arc<corvid_agent::AttentionFeed>,
) -> anyhow::Result<(PageAgent, PathBuf)> {
    let here = std::env::current_dir().context("cannot read the current directory")?;
    let folders = corvid_agent::project_folders(&here, project);
    let root = folders.root.clone();
    anyhow::ensure!(
        root.is_dir(),
        "the project {} is not a folder",
        root.display()
    );
    let composition =
        Composition::attending(state.registry().clone(), store, Arc::clone(attention));
    let config =
        crate::compose::agent_config(loaded, folders, loaded.config.default_model.clone(), "web");
    Ok((PageAgent::new(composition.agents, config), root))
}

/// `corvid open`: the running server's page in a browser, or its URL when none starts.
pub(crate) fn open(loaded: &Loaded) -> anyhow::Result<()> {
    let path = url_file(loaded);
    let url = std::fs::read_to_string(&path)
        .map(|text| text.trim().to_owned())
        .map_err(|_| {
            anyhow::anyhow!(
                "corvid serve is not running (no {}); start it first",
                path.display()
            )
        })?;
    if corvid_auth::open_in_browser(&url) {
        println!("opened {url}");
    } else {
        println!("no browser to open; visit {url}");
    }
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

pub(crate) fn init_logging(level: &str, json: bool) {
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
pub(crate) async fn shutdown_signal() {
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

#[cfg(test)]
mod tests;

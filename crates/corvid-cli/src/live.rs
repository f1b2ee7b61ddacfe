//! Live settings for a running server (`corvid serve`, corvid-desktop): one listener, and behind
//! it the app built from the current settings. When config.toml or the env file changes (the
//! page's Settings, `corvid login` in another terminal, an edit on disk), the settings are
//! loaded and checked, a new app (providers, gateway state, the page and its agent) is built
//! from them and swapped in: every request from then on uses it, while a stream already running
//! finishes on the app it started on. An invalid edit keeps the running app and is reported
//! (the Status tab, the tray, the log). The socket stays bound: host and port changes wait for
//! a restart, and say so.
//!
//! A reload does only what changed: providers whose settings and credentials are the same keep
//! their runtime state (`Registry::keeping_unchanged`: the last failure, key cooldowns, model
//! lists); and when nothing that serves requests changed — the env file rewritten by corvid's
//! own token refresh — the running app stays and no tab reconnects (`unchanged`).
//!
//! A replaced app is retired once its agent has no turn running: its tabs' sockets close (the
//! page reconnects, to the new app), its sessions close, its ledger rows are committed, and it
//! is dropped. Its streams still running need nothing from it at shutdown: every app shares the
//! first one's shutdown gate, so ending the current app's streams ends theirs.

mod unchanged;
mod watch;

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use arc_swap::ArcSwap;
use axum::extract::Request;
use axum::response::Response;
use corvid_config::{Flags, Loaded};
use corvid_gateway::{App, AppState};
use corvid_providers::Registry;
use corvid_server::{PageAgent, PageState, ReloadOutcome, ReloadRequest, Reloads, SettingsNote};
use futures_util::future::Either;
use tokio::sync::{mpsc, watch as signal};
use tower::util::Oneshot;

use watch::NotApplied;
pub(crate) use watch::Watch;

/// How often the settings files are looked at.
const LOOK_EVERY: Duration = Duration::from_secs(1);
/// How often a replaced app's agent is asked whether a turn still runs.
const IDLE_POLL: Duration = Duration::from_millis(250);

/// What answers requests: the whole app, or the gateway alone when the page is off.
#[derive(Clone)]
pub(crate) enum Face {
    Page(corvid_server::Server),
    Gateway(App),
}

/// One app built from one version of the settings.
pub(crate) struct Generation {
    pub(crate) face: Face,
    pub(crate) state: AppState,
    pub(crate) agent: Option<PageAgent>,
    pub(crate) page: Option<PageState>,
    /// The project folder the page's agent works in.
    pub(crate) root: Option<std::path::PathBuf>,
    /// The agent's conversations (the process's store; a reload keeps them).
    pub(crate) conversations: Option<corvid_store::SharedConversations>,
    /// The settings it was built from.
    pub(crate) loaded: Loaded,
}

impl Generation {
    fn end_streams(&self) {
        match &self.face {
            Face::Page(server) => corvid_gateway::Served::end_streams(server),
            Face::Gateway(app) => corvid_gateway::Served::end_streams(app),
        }
    }

    /// Closes the tabs' sockets, then the agent's sessions, then commits the ledger rows.
    pub(crate) async fn close(&self) {
        if let Some(page) = &self.page {
            page.retire();
        }
        if let Some(agent) = &self.agent {
            agent.agents().close_all().await;
        }
        self.state.settle().await;
    }
}

struct Apps {
    /// Read by every request: a swap, never a lock.
    current: ArcSwap<Generation>,
    /// Replaced apps not yet closed (a turn still runs in their agent).
    retired: parking_lot::Mutex<Vec<Arc<Generation>>>,
}

/// The service the listener serves: each request goes to the current app. Cheap to clone.
#[derive(Clone)]
pub(crate) struct LiveApp(Arc<Apps>);

impl LiveApp {
    pub(crate) fn new(first: Generation) -> Self {
        Self(Arc::new(Apps {
            current: ArcSwap::from_pointee(first),
            retired: parking_lot::Mutex::default(),
        }))
    }

    pub(crate) fn current(&self) -> Arc<Generation> {
        self.0.current.load_full()
    }

    /// Serves `next` from now on; returns the app it replaces, kept until it is closed.
    fn swap(&self, next: Generation) -> Arc<Generation> {
        let old = self.0.current.swap(Arc::new(next));
        self.0.retired.lock().push(Arc::clone(&old));
        old
    }

    /// A replaced app is closed: nothing keeps it any more.
    fn forget(&self, closed: &Arc<Generation>) {
        self.0
            .retired
            .lock()
            .retain(|kept| !Arc::ptr_eq(kept, closed));
    }

    /// Every app not yet closed: the current one last.
    pub(crate) fn all(&self) -> Vec<Arc<Generation>> {
        let mut all = self.0.retired.lock().clone();
        all.push(self.current());
        all
    }
}

impl tower::Service<Request> for LiveApp {
    type Response = Response;
    type Error = Infallible;
    type Future = Either<Oneshot<corvid_server::Server, Request>, Oneshot<App, Request>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // Readiness is the app's own: `Oneshot` waits for it per request.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let face = self.0.current.load().face.clone();
        match face {
            Face::Page(server) => Either::Left(Oneshot::new(server, request)),
            Face::Gateway(app) => Either::Right(Oneshot::new(app, request)),
        }
    }
}

impl corvid_gateway::Served for LiveApp {
    fn end_streams(&self) {
        // Every app shares the first one's shutdown gate (see `Build`): this ends all streams.
        self.current().end_streams();
    }
}

/// Builds an app from settings (the host's composition; see `serve`) over `registry`; after
/// the first, `previous` is the app it replaces, whose shutdown gate it shares.
pub(crate) trait Build: Send + Sync + 'static {
    fn build(
        &self,
        loaded: Loaded,
        registry: Registry,
        previous: Option<&Generation>,
    ) -> impl std::future::Future<Output = anyhow::Result<Generation>> + Send;
}

/// Follows the settings files until `stop`: each change (seen every second, or asked for by
/// the page through `requests`) is loaded, built and swapped in; `reloads` carries what the
/// last look found to the Status tab and the host.
pub(crate) async fn follow(
    live: LiveApp,
    builder: impl Build,
    flags: Flags,
    mut watch: Watch,
    reloads: Reloads,
    mut requests: mpsc::UnboundedReceiver<ReloadRequest>,
    mut stop: signal::Receiver<bool>,
) {
    let mut tick = tokio::time::interval(LOOK_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let asked = tokio::select! {
            _ = stop.wait_for(|stop| *stop) => return,
            _ = tick.tick() => {
                if !watch.changed() {
                    continue;
                }
                None
            }
            Some(asked) = requests.recv() => Some(asked),
        };
        let outcome = apply(&live, &builder, &flags, &mut watch, &reloads).await;
        if let Some(asked) = asked {
            let _ = asked.send(outcome);
        }
    }
}

/// Loads the settings again and serves with them, or keeps the running ones and says why.
async fn apply(
    live: &LiveApp,
    builder: &impl Build,
    flags: &Flags,
    watch: &mut Watch,
    reloads: &Reloads,
) -> ReloadOutcome {
    let mut note = reloads.note();
    let current = live.current();
    let built = match watch.reload(|| crate::load(flags)) {
        Ok(reloaded) => next_app(builder, &current, reloaded).await,
        Err(error) => Err(error),
    };
    match built {
        Ok((next, needs_restart)) => {
            note.error = None;
            note.restart_needed.clone_from(&needs_restart);
            match next {
                Some(generation) => {
                    tokio::spawn(retire(live.clone(), live.swap(generation)));
                    note.reloads += 1;
                    tracing::info!(
                        restart_needed = needs_restart.as_deref().unwrap_or("nothing"),
                        "settings changed: serving with them"
                    );
                }
                None => tracing::debug!(
                    "the settings files changed with no effect on what serves (a token corvid refreshed): the running app stays"
                ),
            }
            reloads.set_note(note);
            ReloadOutcome::Applied { needs_restart }
        }
        Err(error) => {
            let error = error.to_string();
            tracing::warn!(%error, "the changed settings are not valid; serving the previous ones");
            note.error = Some(error.clone());
            reloads.set_note(note);
            ReloadOutcome::Refused(error)
        }
    }
}

/// The app for the reloaded settings — `None` when nothing that serves requests changed —
/// and what waits for a restart. Unchanged providers come from `current`, with their state.
async fn next_app(
    builder: &impl Build,
    current: &Generation,
    reloaded: watch::Reloaded,
) -> Result<(Option<Generation>, Option<String>), NotApplied> {
    let registry = crate::compose::registry(&reloaded.loaded)
        .map_err(NotApplied)?
        .keeping_unchanged(current.state.registry());
    if unchanged::same_effect(
        &current.loaded,
        current.state.registry(),
        &reloaded.loaded,
        &registry,
    ) {
        return Ok((None, reloaded.needs_restart));
    }
    let generation = builder
        .build(reloaded.loaded, registry, Some(current))
        .await
        .map_err(NotApplied)?;
    Ok((Some(generation), reloaded.needs_restart))
}

/// A replaced app: once no turn runs in its agent (a turn under way finishes on the settings
/// it started with), its tabs move to the new app, it closes and is dropped.
async fn retire(live: LiveApp, old: Arc<Generation>) {
    if let Some(agent) = &old.agent {
        while agent
            .agents()
            .sessions()
            .iter()
            .any(|session| session.running)
        {
            tokio::time::sleep(IDLE_POLL).await;
        }
    }
    old.close().await;
    live.forget(&old);
}

/// The running server's live settings, for the program hosting it (corvid-desktop's tray).
#[derive(Clone)]
pub struct LiveSettings {
    pub(crate) live: LiveApp,
    pub(crate) reloads: Reloads,
    pub(crate) attention: Arc<corvid_agent::AttentionFeed>,
}

impl std::fmt::Debug for LiveSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveSettings")
            .field("note", &self.reloads.note())
            .finish_non_exhaustive()
    }
}

impl LiveSettings {
    /// The providers serving now (their last failures included).
    pub fn registry(&self) -> Registry {
        self.live.current().state.registry().clone()
    }

    /// What the last look at the settings files found: an edit not applied, a change that
    /// waits for a restart, how many times they were applied.
    pub fn note(&self) -> SettingsNote {
        self.reloads.note()
    }

    /// Every approval that waits and every turn that ends in the page's agent from now on,
    /// whichever settings serve it, each saying whether a tab was looked at then.
    pub fn attention(&self) -> tokio::sync::broadcast::Receiver<corvid_agent::Attention> {
        self.attention.subscribe()
    }
}

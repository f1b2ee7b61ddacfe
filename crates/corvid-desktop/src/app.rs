//! The app: `corvid serve`'s server (the same composition, through `corvid_cli::host`) and the
//! loop that keeps the tray in step with it — its health every second, the menu's actions —
//! until Quit or a signal ends both. Platform-neutral: each platform's tray only draws what
//! this loop hands it and sends back the actions picked.

use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use corvid_cli::host::{self, Listening, SettingsNote};
use corvid_config::{Flags, Loaded};
use tokio::sync::{mpsc, oneshot, watch};

use crate::view::{Action, Health, TrayView};

/// How often the tray looks at the gateway and the providers.
const LOOK_EVERY: Duration = Duration::from_secs(1);
/// How long `/healthz` may take before the gateway counts as down.
const HEALTH_TIMEOUT: Duration = Duration::from_secs(2);

/// A platform's tray: draws views; the actions picked come back on the channel it was given.
pub(crate) trait Tray {
    fn show(&mut self, view: &TrayView) -> impl Future<Output = ()>;
    /// Takes the item off the desktop (the app is about to exit).
    fn close(self) -> impl Future<Output = ()>;
}

/// What the app was started with.
#[derive(Debug, Clone)]
pub(crate) struct Launch {
    pub(crate) loaded: Loaded,
    /// The flags it was loaded with, to load the settings again when their files change.
    pub(crate) flags: Flags,
    pub(crate) project: Option<PathBuf>,
    /// The arguments a "Start at login" entry starts this program with (`--config` when given).
    pub(crate) autostart_arguments: Vec<String>,
}

/// Runs the server and the tray loop together until Quit (or Ctrl-C, SIGTERM), then returns
/// once the server has stopped as `corvid serve` stops: streams finished within the grace, the
/// ledger committed, the port freed. The server follows the settings files itself (config.toml,
/// the env file: a key pasted on the page, a sign-in from the menu or another terminal), as
/// `corvid serve` does; the tray shows what it found.
pub(crate) async fn run(
    launch: Launch,
    tray: impl Tray,
    actions: mpsc::UnboundedReceiver<Action>,
) -> anyhow::Result<()> {
    let (quit, quitting) = watch::channel(false);
    let (done, stopped) = watch::channel(false);
    let (listening_sender, listening) = oneshot::channel();
    let server = async {
        let mut quit_picked = quitting.clone();
        let shutdown = async move {
            tokio::select! {
                _ = quit_picked.wait_for(|quit| *quit) => tracing::info!("Quit picked in the tray"),
                () = host::until_signal() => {}
            }
        };
        let served = host::serve(
            launch.flags.clone(),
            launch.loaded.clone(),
            launch.project.clone(),
            shutdown,
            move |listening: Listening| {
                let _ = listening_sender.send(listening);
            },
        )
        .await;
        let _ = done.send(true);
        served
    };
    let tray_loop = keep_in_step(&launch, tray, actions, listening, stopped, quit);
    let (served, ()) = tokio::join!(server, tray_loop);
    served
}

/// The tray's side: shows the health, runs the actions, reports the settings, closes the tray
/// once the server is done.
async fn keep_in_step(
    launch: &Launch,
    mut tray: impl Tray,
    mut actions: mpsc::UnboundedReceiver<Action>,
    listening: oneshot::Receiver<Listening>,
    mut stopped: watch::Receiver<bool>,
    quit: watch::Sender<bool>,
) {
    let mut health = Health::starting();
    health.starts_at_login = crate::autostart::enabled(&launch.autostart_arguments);
    let mut shown = health.view();
    tray.show(&shown).await;
    let listening = tokio::select! {
        listening = listening => listening.ok(),
        _ = stopped.wait_for(|done| *done) => None,
    };
    let Some(listening) = listening else {
        tray.close().await;
        return;
    };
    health.address = Some(listening.address);
    health.page = listening.page_url.is_some();
    if host::nothing_connected(&listening.settings.registry()) {
        health.note = Some("No provider connected yet: Settings… to add one".to_owned());
    }
    let mut settings_seen = SettingsNote::default();
    let (notes, mut noted) = mpsc::unbounded_channel::<String>();
    // A click on a system notification comes back as a menu action.
    let (clicked, mut clicks) = mpsc::unbounded_channel::<Action>();
    let notifier = tokio::spawn(crate::notify::run(listening.settings.attention(), clicked));
    let mut tick = tokio::time::interval(LOOK_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => {
                look(&mut health, &listening).await;
                let settings = listening.settings.note();
                if settings != settings_seen {
                    health.note = settings_line(&settings);
                    settings_seen = settings;
                }
            }
            Some(action) = actions.recv() => {
                act(action, launch, &listening, &mut health, &notes, &quit);
            }
            Some(action) = clicks.recv() => {
                act(action, launch, &listening, &mut health, &notes, &quit);
            }
            Some(note) = noted.recv() => health.note = Some(note),
            _ = stopped.wait_for(|done| *done) => break,
        }
        let view = health.view();
        if view != shown {
            tray.show(&view).await;
            shown = view;
        }
    }
    notifier.abort();
    tray.close().await;
}

/// The menu's line for what the server found in the settings files: the edit it could not
/// apply, what waits for a restart, or that they were applied.
fn settings_line(note: &SettingsNote) -> Option<String> {
    note.error
        .clone()
        .or_else(|| note.restart_needed.clone())
        .or_else(|| (note.reloads > 0).then(|| "Settings reloaded".to_owned()))
}

/// Reads the gateway's health (off the runtime's workers: a blocking probe) and the
/// providers' failures.
async fn look(health: &mut Health, listening: &Listening) {
    let address = listening.address;
    health.gateway_up =
        tokio::task::spawn_blocking(move || crate::probe::healthz(address, HEALTH_TIMEOUT))
            .await
            .unwrap_or(false);
    health.failing = crate::monitor::failing(&listening.settings.registry());
}

/// Runs a menu action. Long ones (sign-ins) run on their own task and report through `notes`.
fn act(
    action: Action,
    launch: &Launch,
    listening: &Listening,
    health: &mut Health,
    notes: &mpsc::UnboundedSender<String>,
    quit: &watch::Sender<bool>,
) {
    tracing::info!(?action, "tray menu");
    match action {
        Action::OpenChat => open_page(listening, "", health),
        Action::Settings => open_page(listening, "#settings", health),
        Action::SignInXai => sign_in(launch, notes, "xAI", |loaded| async move {
            host::sign_in_xai(&loaded).await
        }),
        Action::SignInZed => sign_in(launch, notes, "Zed", |loaded| async move {
            host::sign_in_zed(&loaded).await
        }),
        Action::CopyZedSettings => {
            health.note = Some(copy_zed_settings(&launch.loaded));
        }
        Action::StartAtLogin => {
            let wanted = !health.starts_at_login;
            match crate::autostart::set(&launch.autostart_arguments, wanted) {
                Ok(now) => {
                    health.starts_at_login = now;
                    health.note = None;
                }
                Err(error) => health.note = Some(format!("Start at login: {error}")),
            }
        }
        Action::Quit => {
            health.stopping = true;
            let _ = quit.send(true);
        }
    }
}

fn open_page(listening: &Listening, fragment: &str, health: &mut Health) {
    let Some(url) = &listening.page_url else {
        health.note = Some("The page is off (see the log)".to_owned());
        return;
    };
    let url = format!("{url}{fragment}");
    if !corvid_auth::open_in_browser(&url) {
        // The URL holds the page's token: stdout, for the user, never the log.
        println!("corvid: no browser to open; visit {url}");
        health.note = Some("No browser could be opened: the link is on stdout".to_owned());
    }
}

fn copy_zed_settings(loaded: &Loaded) -> String {
    let settings = match host::zed_settings(loaded) {
        Ok(settings) => settings,
        Err(error) => return format!("Zed settings: {error:#}"),
    };
    match crate::clipboard::copy(&settings) {
        Ok(()) => "Copied the Zed settings: merge them into settings.json".to_owned(),
        Err(error) => format!("Zed settings: {error}; run `corvid zed-config`"),
    }
}

/// Runs a sign-in flow (it opens the browser) on its own task; its outcome becomes a note.
fn sign_in<F, Fut>(launch: &Launch, notes: &mpsc::UnboundedSender<String>, name: &str, flow: F)
where
    F: FnOnce(Loaded) -> Fut + Send + 'static,
    Fut: Future<Output = anyhow::Result<()>> + Send,
{
    let loaded = launch.loaded.clone();
    let notes = notes.clone();
    let name = name.to_owned();
    tokio::spawn(async move {
        let note = match flow(loaded).await {
            // The env file changed: the server applies the sign-in by itself.
            Ok(()) => format!("Signed in to {name}"),
            Err(error) => {
                tracing::warn!(error = %format!("{error:#}"), "sign-in from the tray failed");
                format!("{name} sign-in failed (see the log)")
            }
        };
        let _ = notes.send(note);
    });
}

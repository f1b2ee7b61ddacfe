//! What a program that hosts corvid in-process uses (corvid-desktop): the same configuration,
//! logging, server composition and signal handling as `corvid serve`, and the account and
//! client actions its menu offers — the command line's own code, not a copy of it.

use std::future::Future;
use std::path::PathBuf;
use std::process::ExitCode;

use corvid_config::{Flags, Loaded};

pub use crate::launchd::LaunchAgent;
pub use crate::live::LiveSettings;
pub use crate::serve::Listening;
/// What `LiveSettings::attention` announces: an approval waiting or a turn ended.
pub use corvid_agent::{Attention, AttentionKind};
pub use corvid_server::SettingsNote;

/// When this process was started as the sandbox helper (the agent's commands re-run the
/// current program with a hidden subcommand), runs it and returns its exit code; `None` for
/// any other start. Call first thing in `main`.
pub fn sandbox_helper() -> Option<ExitCode> {
    let mut args = std::env::args_os().skip(1);
    if args
        .next()
        .is_some_and(|first| first == corvid_tools::sandbox::HELPER_SUBCOMMAND)
    {
        return Some(corvid_tools::sandbox::helper_main(args));
    }
    None
}

/// The configuration as `corvid serve` loads it (flags over the environment over the env file
/// over config.toml); its warnings go to stderr.
pub fn load(flags: &Flags) -> anyhow::Result<Loaded> {
    crate::load(flags)
}

/// `corvid serve`'s logging: the configured level (refined by `RUST_LOG`), text or JSON lines
/// on stderr.
pub fn init_logging(level: &str, json: bool) {
    crate::serve::init_logging(level, json);
}

/// Runs what `corvid serve` runs — the gateway, the page and its agent, sharing one provider
/// registry and one store, following every change of config.toml and the env file live (see
/// [`LiveSettings`]) — until `shutdown` resolves, then stops as `corvid serve` does on
/// SIGTERM: no new connections, streams finished within the grace, the ledger committed, the
/// port freed. `loaded` was loaded with `flags` (which load the changed settings again).
/// `listening` is called once, when the port is bound.
pub async fn serve(
    flags: Flags,
    loaded: Loaded,
    project: Option<PathBuf>,
    shutdown: impl Future<Output = ()> + Send + 'static,
    listening: impl FnOnce(Listening),
) -> anyhow::Result<()> {
    crate::serve::run_until(flags, loaded, project, shutdown, listening).await
}

/// Whether [`serve`] stopped because the page asked for a restart (host or port changed):
/// then call [`start_again`] once the app is closed.
pub fn restart_requested() -> bool {
    crate::restart::was_requested()
}

/// Replaces this process with the same program and arguments, which loads the settings files
/// again and keeps the page's token (see `corvid serve`'s restart). Returns only on failure.
pub fn start_again() -> anyhow::Error {
    crate::restart::start_again()
}

/// Resolves on Ctrl-C or SIGTERM (what ends `corvid serve`).
pub async fn until_signal() {
    crate::serve::shutdown_signal().await;
}

/// The page URL (with its token) that a running corvid left for `corvid open`, if any.
pub fn running_page_url(loaded: &Loaded) -> Option<String> {
    let text = std::fs::read_to_string(crate::serve::url_file(loaded)).ok()?;
    let url = text.trim();
    (!url.is_empty()).then(|| url.to_owned())
}

/// The Zed settings.json keys that point Zed's chat and edit predictions at corvid, as
/// `corvid zed-config` prints them with its defaults.
pub fn zed_settings(loaded: &Loaded) -> anyhow::Result<String> {
    crate::zed_config::render(&loaded.config, "supergrok", "qwen")
}

/// `corvid login xai` (the browser flow): the tokens are stored in the secrets file.
pub async fn sign_in_xai(loaded: &Loaded) -> anyhow::Result<()> {
    crate::auth_commands::login_xai(loaded, false).await
}

/// `corvid login zed`: the credentials are stored in the secrets file.
pub async fn sign_in_zed(loaded: &Loaded) -> anyhow::Result<()> {
    crate::zed_commands::login(loaded).await
}

/// No provider can answer yet (a first run): the app says how to connect one.
pub fn nothing_connected(registry: &corvid_providers::Registry) -> bool {
    crate::first_run::ready(registry).is_empty()
}

//! corvid-desktop: corvid as a desktop app. `corvid serve`'s gateway, page and agent run
//! in-process on a multi-thread runtime; the main thread keeps a tray icon (a
//! StatusNotifierItem on Linux, an NSStatusItem on macOS) whose menu opens the chat and the
//! settings, signs in, copies Zed's settings, starts the app at login and quits — Quit being
//! the same graceful stop as SIGTERM. A second launch opens the first one's page instead.

mod app;
mod autostart;
mod clipboard;
mod icon;
mod monitor;
mod notify;
mod probe;
#[cfg(target_os = "linux")]
mod tray_linux;
#[cfg(target_os = "macos")]
mod tray_macos;
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
mod tray_none;
mod view;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use corvid_cli::host;
use corvid_config::{Flags, Loaded};

/// corvid in the tray: the gateway, the chat and the settings, until Quit.
#[derive(Debug, Parser)]
#[command(name = "corvid-desktop", version, long_about = None)]
struct Args {
    /// Use this config.toml instead of the one in the configuration directory.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Address to bind (loopback unless --allow-remote).
    #[arg(long)]
    host: Option<String>,
    /// Port to listen on (0 picks a free one).
    #[arg(long)]
    port: Option<u16>,
    /// Allow binding a non-loopback address (anyone who can reach it can spend your credits).
    #[arg(long)]
    allow_remote: bool,
    /// Log as JSON lines instead of text.
    #[arg(long)]
    json_logs: bool,
    /// The page's agent works in this project folder (default: as `corvid serve`).
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
}

fn main() -> ExitCode {
    // The agent's commands re-run this program as the sandbox helper: nothing else first.
    if let Some(code) = host::sandbox_helper() {
        return code;
    }
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("corvid-desktop: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> anyhow::Result<()> {
    let flags = Flags {
        host: args.host,
        port: args.port,
        config_file: args.config.clone(),
        allow_remote: args.allow_remote,
        ..Flags::default()
    };
    let loaded = host::load(&flags)?;
    if let Some(url) = running_instance(&loaded) {
        // The URL holds the page's token: stdout, for the user, never the log.
        if corvid_auth::open_in_browser(&url) {
            println!("corvid is already running: opened its page {url}");
        } else {
            println!("corvid is already running: its page is {url}");
        }
        return Ok(());
    }
    host::init_logging(loaded.config.log_level.as_str(), args.json_logs);
    let autostart_arguments = match &args.config {
        Some(config) => vec!["--config".to_owned(), config.to_string_lossy().into_owned()],
        None => Vec::new(),
    };
    let launch = app::Launch {
        loaded,
        flags,
        project: args.project,
        autostart_arguments,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let result = run_with_tray(&runtime, launch);
    // Whatever still runs (a sign-in waiting for its browser) ends with the app.
    runtime.shutdown_timeout(Duration::from_secs(1));
    result?;
    if host::restart_requested() {
        // The page asked for a restart (its host or port changed): the same app again.
        return Err(host::start_again());
    }
    Ok(())
}

#[cfg(target_os = "linux")]
fn run_with_tray(runtime: &tokio::runtime::Runtime, launch: app::Launch) -> anyhow::Result<()> {
    tray_linux::run(runtime, launch)
}

#[cfg(target_os = "macos")]
fn run_with_tray(runtime: &tokio::runtime::Runtime, launch: app::Launch) -> anyhow::Result<()> {
    tray_macos::run(runtime, launch)
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn run_with_tray(runtime: &tokio::runtime::Runtime, launch: app::Launch) -> anyhow::Result<()> {
    tray_none::run(runtime, launch)
}

/// The page of a corvid already serving on the configured port: the page URL it left names
/// this port and `/healthz` there answers as corvid's. (Port 0 always starts a new one.)
fn running_instance(loaded: &Loaded) -> Option<String> {
    let port = loaded.config.port;
    if port == 0 {
        return None;
    }
    let url = host::running_page_url(loaded)?;
    let address = page_address(&url)?;
    (address.port() == port && probe::healthz(address, Duration::from_secs(2))).then_some(url)
}

/// The socket address in a page URL (`http://127.0.0.1:8787/?token=…`).
fn page_address(url: &str) -> Option<std::net::SocketAddr> {
    let rest = url.strip_prefix("http://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    authority.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_url_names_its_socket_address() {
        assert_eq!(
            page_address("http://127.0.0.1:8787/?token=abc"),
            Some("127.0.0.1:8787".parse().unwrap())
        );
        assert_eq!(
            page_address("http://[::1]:9000/?token=abc"),
            Some("[::1]:9000".parse().unwrap())
        );
        assert_eq!(page_address("https://127.0.0.1:8787/"), None);
        assert_eq!(page_address("http://localhost:8787/"), None);
    }
}

//! The `corvid` binary: the one composition root. It loads the configuration, builds the
//! credential and the upstream client, and runs the gateway or one of the account commands.
//! A library so that corvid-desktop hosts the same composition in-process (see [`host`]).

mod acp;
mod agent_front;
mod auth_commands;
mod compose;
mod doctor;
mod exec;
mod first_run;
mod hooks_command;
pub mod host;
mod launchd;
mod live;
mod mcp_command;
mod restart;
mod route_command;
mod sandbox_setup;
mod serve;
mod service;
mod setup;
mod team_commands;
mod usage_command;
mod zed_commands;
mod zed_config;

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};
use corvid_config::{Flags, Loaded};

// mimalloc: the gateway allocates and frees small buffers on every request across worker
// threads; glibc's allocator spent ~13% of a loaded gateway's CPU there (measured with perf).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A local gateway between your editor and the models you pay for, and a coding agent.
///
/// (The doc comment is the help's first line; a bare `about` would show the package
/// description instead.)
#[derive(Debug, Parser)]
#[command(name = "corvid", version, long_about = None, propagate_version = true)]
struct Cli {
    /// Use this config.toml instead of the one in the configuration directory.
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the gateway and the web page in the foreground (default 127.0.0.1:8787) until Ctrl-C
    /// or SIGTERM; prints the page's URL.
    Serve(ServeArgs),
    /// Open the page of the running `corvid serve` in a browser (prints its URL when there is
    /// no browser).
    Open,
    /// Work in this project with a coding agent, interactively.
    Chat(agent_front::AgentArgs),
    /// Serve the agent over the Agent Client Protocol on stdin/stdout (Zed's agent panel).
    Acp,
    /// Run one agent turn without a terminal session, for scripts.
    ///
    /// A new conversation unless --continue or --resume. Exit status: 0 the turn completed,
    /// 1 it failed (or was cancelled, or hit the step limit), 2 usage error, 3 it completed
    /// but an action needing approval was refused.
    Exec(exec::ExecArgs),
    /// Sign in to a provider account and store the tokens in the secrets file.
    Login {
        #[command(subcommand)]
        provider: LoginProvider,
    },
    /// Remove a stored sign-in (xAI by default) from the secrets file and the keyring.
    Logout {
        #[arg(value_enum, default_value = "xai")]
        provider: Account,
    },
    /// Show the active auth mode, who is signed in (xAI, Zed) and when tokens expire (never a secret).
    Status,
    /// Check what usually goes wrong (credentials, reaching each provider, the port, the
    /// sandbox, the env file's mode, the clients' set-up), with the fix for each problem.
    Doctor,
    /// Tokens spent per day and model (and cost, where [prices] are configured).
    Usage {
        /// Only the last N days (UTC), today included.
        #[arg(long, value_name = "N")]
        days: Option<u32>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Group by client key, team, model or day (the gateway's billed requests, on the
        /// configured store).
        #[arg(long, value_enum)]
        by: Option<team_commands::By>,
    },
    /// Create or upgrade the PostgreSQL schema (team mode); safe to run twice at once.
    Migrate,
    /// Client keys for the gateway: create, list, revoke.
    Keys {
        #[command(subcommand)]
        command: team_commands::KeysCommand,
    },
    /// Teams and their budgets: create, list.
    Teams {
        #[command(subcommand)]
        command: team_commands::TeamsCommand,
    },
    /// List the models corvid can route to, by provider.
    Models,
    /// Routing: `corvid route explain` prints which target a request would take, and why.
    Route {
        #[command(subcommand)]
        command: route_command::RouteCommand,
    },
    /// Print what to set so a client uses corvid (Claude Code, Codex, Zed).
    Setup {
        #[arg(value_enum)]
        client: setup::Client,
        /// The model the client should ask for.
        #[arg(long)]
        model: Option<String>,
    },
    /// Print the Zed settings.json keys that point Zed's chat and edit predictions at corvid.
    ZedConfig(ZedConfigArgs),
    /// Run `corvid serve` as a per-user service (systemd on Linux, launchd on macOS).
    Service {
        #[command(subcommand)]
        command: service::ServiceCommand,
    },
    /// The MCP servers the agent uses: list them (with their state and tools), add, remove.
    Mcp {
        #[command(subcommand)]
        command: mcp_command::McpCommand,
    },
    /// The hooks the agent runs (Claude Code's format, from settings.json in corvid's
    /// configuration folder and the project's .corvid/ and .claude/ settings files); `trust`
    /// lets the project's own hooks run.
    Hooks {
        #[command(subcommand)]
        command: Option<hooks_command::HooksCommand>,
        /// The project (default: the nearest folder holding .git at or above this one).
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
    },
}

#[derive(Debug, clap::Args)]
struct ServeArgs {
    /// Address to bind (loopback unless --allow-remote).
    #[arg(long)]
    host: Option<String>,
    /// Port to listen on (0 picks a free one).
    #[arg(long)]
    port: Option<u16>,
    /// Base URL of the xAI-compatible upstream API.
    #[arg(long, value_name = "URL")]
    upstream: Option<String>,
    /// Model used when a request names none.
    #[arg(long, value_name = "MODEL")]
    default_model: Option<String>,
    /// trace, debug, info, warn or error.
    #[arg(long, value_name = "LEVEL")]
    log_level: Option<String>,
    /// api_key or oauth.
    #[arg(long, value_name = "MODE")]
    auth_mode: Option<String>,
    /// Allow binding a non-loopback address (anyone who can reach it can spend your credits).
    #[arg(long)]
    allow_remote: bool,
    /// Log as JSON lines instead of text.
    #[arg(long)]
    json_logs: bool,
    /// The web page's agent works in this project folder (default: the nearest folder at or
    /// above the current one holding `.git`; else the current directory).
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum LoginProvider {
    /// Sign in with a SuperGrok subscription (xAI OAuth).
    Xai {
        /// Use the device-code flow (for a machine without a browser).
        #[arg(long)]
        device: bool,
    },
    /// Sign in with a Zed account (Pro, trial, student, business) to use its hosted models.
    Zed,
}

/// An account that can be signed out of.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Account {
    Xai,
    Zed,
}

#[derive(Debug, clap::Args)]
struct ZedConfigArgs {
    /// The model name Zed should ask for.
    #[arg(long, default_value = "supergrok")]
    model: String,
    /// FIM prompt format for edit predictions (qwen, star_coder, code_llama, deepseek_coder,
    /// codestral, glm, code_gemma).
    #[arg(long, default_value = "qwen")]
    prompt_format: String,
}

/// The `corvid` command line: parses the arguments and runs the command.
pub fn main() -> ExitCode {
    // The sandbox helper: confine this process, then become the command. Checked before any
    // parsing so nothing else runs first.
    if let Some(code) = host::sandbox_helper() {
        return code;
    }
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            if is_broken_pipe(&error) {
                return ExitCode::SUCCESS;
            }
            eprintln!("corvid: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// `serve` runs its async work on one thread; the other commands use a worker per core.
///
/// A gateway request is almost all waiting on sockets, and on the multi-thread scheduler each
/// one paid for cross-thread wake-ups: hyper's connection task wakes itself while the handler
/// reads the request body, tokio answers a task that woke itself by waking an idle worker, and
/// the request and the upstream connection then hop between threads. On one thread none of
/// that happens (`scripts/bench` on a 2-core machine: added p50 +98 → +38 µs, 33.6k → 43.2k
/// requests/s). CPU-heavy or blocking work — SQLite, each response's ledger bookkeeping, key
/// generation, the keyring, file search — runs on threads of its own.
fn runtime_for(command: &Command) -> std::io::Result<tokio::runtime::Runtime> {
    match command {
        Command::Serve(_) => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build(),
        _ => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build(),
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let runtime = runtime_for(&cli.command).context("cannot start the async runtime")?;
    match cli.command {
        Command::Serve(args) => {
            let flags = Flags {
                host: args.host,
                port: args.port,
                upstream: args.upstream,
                default_model: args.default_model,
                log_level: args.log_level,
                auth_mode: args.auth_mode,
                config_file: cli.config,
                allow_remote: args.allow_remote,
            };
            let loaded = load(&flags)?;
            runtime.block_on(serve::run(flags, loaded, args.json_logs, args.project))
        }
        Command::Open => serve::open(&load(&config_only(cli.config))?),
        Command::Login {
            provider: LoginProvider::Xai { device },
        } => {
            let loaded = load(&config_only(cli.config))?;
            runtime.block_on(auth_commands::login_xai(&loaded, device))
        }
        Command::Login {
            provider: LoginProvider::Zed,
        } => {
            let loaded = load(&config_only(cli.config))?;
            runtime.block_on(zed_commands::login(&loaded))
        }
        Command::Logout {
            provider: Account::Xai,
        } => auth_commands::logout(&load(&config_only(cli.config))?),
        Command::Logout {
            provider: Account::Zed,
        } => zed_commands::logout(&load(&config_only(cli.config))?),
        Command::Status => {
            let loaded = load(&config_only(cli.config))?;
            let text = auth_commands::status(&loaded)?;
            let zed = runtime.block_on(zed_commands::status(&loaded));
            let gateway_and_keys = auth_commands::gateway_and_keys(&loaded);
            let sandbox = sandbox_setup::sandbox(&loaded, None).describe();
            let registry = compose::registry(&loaded)?;
            let mut parts = vec![
                text.trim_end().to_owned(),
                zed.trim_end().to_owned(),
                gateway_and_keys,
            ];
            parts.extend(auth_commands::local_providers(&registry));
            parts.push(format!("agent sandbox: {sandbox}"));
            if let Some(line) = runtime.block_on(team_commands::daily_budget_line(&loaded)) {
                parts.push(line);
            }
            let mut report = parts.join("\n");
            if first_run::ready(&registry).is_empty() {
                report.push_str(&format!("\n\n{}", first_run::connect_choices(&loaded)));
            }
            print_stdout(report.trim_end())
        }
        Command::Doctor => {
            let loaded = load(&config_only(cli.config))?;
            let registry = compose::registry(&loaded)?;
            let checks = runtime.block_on(doctor::run(&loaded, &registry));
            let (text, failed) = doctor::render(&checks);
            print_stdout(&text)?;
            if failed {
                std::process::exit(1);
            }
            Ok(())
        }
        Command::Chat(args) => {
            let loaded = load(&config_only(cli.config))?;
            runtime.block_on(agent_front::chat(&loaded, &args))
        }
        Command::Acp => {
            let loaded = load(&config_only(cli.config))?;
            runtime.block_on(acp::run(&loaded))
        }
        Command::Exec(args) => {
            let loaded = load(&config_only(cli.config))?;
            let code = runtime.block_on(exec::run(&loaded, &args))?;
            // Exit here: `run`'s caller maps only success and failure, and exec has four.
            let _ = std::io::Write::flush(&mut std::io::stdout());
            std::process::exit(i32::from(code));
        }
        Command::Models => {
            let loaded = load(&config_only(cli.config))?;
            let registry = compose::registry(&loaded)?;
            let text = runtime.block_on(setup::models(&loaded.config, &registry));
            print_stdout(&text)
        }
        Command::Route { command } => {
            let loaded = load(&config_only(cli.config))?;
            let registry = compose::registry(&loaded)?;
            print_stdout(&route_command::run(&loaded, &registry, command)?)
        }
        Command::Setup { client, model } => {
            let loaded = load(&config_only(cli.config))?;
            print_stdout(&setup::setup(&loaded.config, client, model.as_deref())?)
        }
        Command::Usage {
            days,
            json,
            by: Some(by),
        } => {
            let loaded = load(&config_only(cli.config))?;
            let text = runtime.block_on(team_commands::usage_by(&loaded, by, days, json))?;
            print_stdout(&text)
        }
        Command::Usage {
            days,
            json,
            by: None,
        } => {
            let text = usage_command::usage(&load(&config_only(cli.config))?, days, json)?;
            print_stdout(&text)
        }
        Command::Service { command } => {
            let loaded = load(&config_only(cli.config.clone()))?;
            print_stdout(&service::run_command(&loaded, cli.config, command)?)
        }
        Command::Migrate => {
            let loaded = load(&config_only(cli.config))?;
            print_stdout(&runtime.block_on(team_commands::migrate(&loaded))?)
        }
        Command::Keys { command } => {
            let loaded = load(&config_only(cli.config))?;
            print_stdout(&runtime.block_on(team_commands::keys(&loaded, command))?)
        }
        Command::Teams { command } => {
            let loaded = load(&config_only(cli.config))?;
            print_stdout(&runtime.block_on(team_commands::teams(&loaded, command))?)
        }
        Command::Mcp { command } => {
            let loaded = load(&config_only(cli.config))?;
            let sandbox = sandbox_setup::sandbox(&loaded, None);
            let text = runtime.block_on(mcp_command::run(&loaded, command, sandbox))?;
            print_stdout(&text)
        }
        Command::Hooks { command, project } => {
            let loaded = load(&config_only(cli.config))?;
            print_stdout(&hooks_command::run(&loaded, command, project)?)
        }
        Command::ZedConfig(args) => {
            let loaded = load(&config_only(cli.config))?;
            let text = zed_config::render(&loaded.config, &args.model, &args.prompt_format)?;
            print_stdout(&text)
        }
    }
}

fn config_only(config_file: Option<PathBuf>) -> Flags {
    Flags {
        config_file,
        ..Flags::default()
    }
}

fn load(flags: &Flags) -> anyhow::Result<Loaded> {
    let env: HashMap<String, String> = std::env::vars().collect();
    let loaded = corvid_config::load(flags, &env)?;
    for warning in &loaded.warnings {
        eprintln!("corvid: warning: {warning}");
    }
    Ok(loaded)
}

fn print_stdout(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    if !text.ends_with('\n') {
        stdout.write_all(b"\n")?;
    }
    stdout.flush()?;
    Ok(())
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

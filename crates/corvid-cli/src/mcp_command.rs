//! `corvid mcp list|add|remove|trust|login|logout`: the MCP servers corvid reads
//! (`[mcp_servers.<name>]` in config.toml, `.corvid/mcp.json` in the project), their state and
//! their tools, and the sign-ins of HTTP servers. Files are changed through corvid-config's
//! writers (`ProjectFile`, `ConfigDocument`); the MCP tool source every session gets is built
//! by the composition root (`compose::mcp_plugin`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use corvid_auth::{DEFAULT_LOGIN_TIMEOUT, open_in_browser};
use corvid_config::{
    ConfigDocument, Loaded, McpEntry, McpScope, McpServer, McpTransport, PROJECT_MCP_FILE,
    ProjectFile, merge_servers, read_project_mcp,
};
use corvid_mcp::McpEnvironment;
use corvid_mcp::oauth::{LoginOptions, Registration, login, logout};
use corvid_protocol::ToolServerAudience;
use corvid_tools::Sandbox;

use crate::compose::{credential_names, mcp_oauth_store, mcp_plugin, mcp_trust_store};

#[derive(Debug, clap::Subcommand)]
pub(crate) enum McpCommand {
    /// Show every configured server, its state and its tools (each is started briefly).
    List {
        /// The project whose .corvid/mcp.json is read (default: the nearest folder holding
        /// .git at or above the current one).
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
    },
    /// Add a server: `corvid mcp add NAME -- COMMAND [ARGS…]` or `corvid mcp add NAME --url URL`.
    ///
    /// Written to the project's .corvid/mcp.json (as Claude Code and Cursor write it), or with
    /// --global to config.toml (as Codex writes it).
    Add {
        /// The server's name (letters, digits, `_` and `-`).
        name: String,
        /// A Streamable HTTP server at this URL.
        #[arg(long, value_name = "URL", conflicts_with = "command")]
        url: Option<String>,
        /// A header for an HTTP server, `NAME=VALUE` (`${VAR}` is read from the environment
        /// when the server starts). Repeatable.
        #[arg(long = "header", value_name = "NAME=VALUE")]
        headers: Vec<String>,
        /// A variable for a local server, `NAME=VALUE`. Repeatable.
        #[arg(long = "env", value_name = "NAME=VALUE")]
        env: Vec<String>,
        /// Write to config.toml instead of the project's .corvid/mcp.json.
        #[arg(long)]
        global: bool,
        /// The project whose .corvid/mcp.json is written.
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
        /// The program of a local server and its arguments, after `--`.
        #[arg(last = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Trust a server of the project's .corvid/mcp.json, as it is defined now, so sessions in
    /// this project start it (a changed definition asks again). Kept in corvid's data folder.
    Trust {
        /// The server's name, as `corvid mcp list` shows it.
        name: String,
        /// The project whose .corvid/mcp.json defines it.
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
    },
    /// Sign in to an HTTP server that asks for it (OAuth in the browser), and keep its tokens
    /// in corvid's env file (and the keyring where one works). Sessions then connect with them.
    Login {
        /// The server's name, as `corvid mcp list` shows it.
        name: String,
        /// The project whose .corvid/mcp.json defines it (a project's server is signed in for
        /// that project only).
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
        /// Only print the sign-in URL; do not try to open a browser.
        #[arg(long)]
        no_browser: bool,
        /// How long to wait for the browser to come back, in seconds.
        #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_LOGIN_TIMEOUT.as_secs())]
        timeout: u64,
    },
    /// Forget the sign-in of an HTTP server (its tokens, from the env file and the keyring).
    Logout {
        /// The server's name.
        name: String,
        /// The project whose .corvid/mcp.json defines it.
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
    },
    /// Remove a server from the project's .corvid/mcp.json (or, with --global, config.toml).
    Remove {
        name: String,
        /// Remove it from config.toml.
        #[arg(long)]
        global: bool,
        /// The project whose .corvid/mcp.json is changed.
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
    },
}

/// Runs one `corvid mcp` command; returns what to print.
pub(crate) async fn run(
    loaded: &Loaded,
    command: McpCommand,
    sandbox: Sandbox,
) -> anyhow::Result<String> {
    match command {
        McpCommand::List { project } => {
            list(loaded, &project_root(project.as_deref())?, sandbox).await
        }
        McpCommand::Add {
            name,
            url,
            headers,
            env,
            global,
            project,
            command,
        } => {
            let entry = entry(url, &headers, &env, &command)?;
            if global {
                let mut config = ConfigDocument::read(&loaded.paths.config_file)?;
                config.add_mcp_server(&name, &entry)?;
                config.save()?;
                Ok(format!("Added `{name}` to {}", config.path().display()))
            } else {
                let project = project_root(project.as_deref())?;
                let mut file = ProjectFile::open(&project)?;
                file.add(&name, &entry)?;
                file.save()?;
                let mut text = format!("Added `{name}` to {}", file.path().display());
                // The user wrote this definition here and now: it needs no further yes.
                text.push_str(&trust(loaded, &project, &name)?);
                Ok(text)
            }
        }
        McpCommand::Trust { name, project } => {
            trust(loaded, &project_root(project.as_deref())?, &name)
        }
        McpCommand::Login {
            name,
            project,
            no_browser,
            timeout,
        } => {
            let project = project_root(project.as_deref())?;
            sign_in(loaded, &project, &name, no_browser, timeout, sandbox).await
        }
        McpCommand::Logout { name, project } => {
            let project = project_root(project.as_deref())?;
            let server = find_server(loaded, &project, &name)?;
            let environment = environment(loaded, &project, sandbox);
            if logout(&server, &environment)? {
                Ok(format!(
                    "Signed out of `{name}`: its tokens were removed.\n"
                ))
            } else {
                Ok(format!("`{name}` had no stored sign-in.\n"))
            }
        }
        McpCommand::Remove {
            name,
            global,
            project,
        } => {
            let path = if global {
                let mut config = ConfigDocument::read(&loaded.paths.config_file)?;
                config.remove_mcp_server(&name)?;
                config.save()?;
                config.path().to_path_buf()
            } else {
                let mut file = ProjectFile::open(&project_root(project.as_deref())?)?;
                file.remove(&name)?;
                file.save()?;
                file.path().to_path_buf()
            };
            Ok(format!("Removed `{name}` from {}", path.display()))
        }
    }
}

/// What a server of `project` starts with, as a session would see it.
fn environment(loaded: &Loaded, project: &Path, sandbox: Sandbox) -> McpEnvironment {
    let secrets = loaded.clone();
    McpEnvironment {
        project: project.to_path_buf(),
        sandbox,
        lookup: Arc::new(move |name| secrets.secret(name)),
        protected: Arc::new(credential_names(loaded)),
        oauth: Some(mcp_oauth_store(loaded)),
    }
}

/// The server called `name` as a session in `project` would start it; a project's server
/// only once the user trusts it.
fn find_server(loaded: &Loaded, project: &Path, name: &str) -> anyhow::Result<McpServer> {
    let (servers, _) = servers(loaded, project);
    let Some(server) = servers.into_iter().find(|server| server.name == name) else {
        bail!(
            "no MCP server `{name}` in {} or {}",
            loaded.paths.config_file.display(),
            project.join(PROJECT_MCP_FILE).display()
        );
    };
    if corvid_mcp::trust::needs_trust(&server)
        && !mcp_trust_store(loaded).is_trusted(project, &server)
    {
        bail!(
            "`{name}` from {} is not trusted yet; if you trust it, run `corvid mcp trust {name}` first",
            project.join(PROJECT_MCP_FILE).display()
        );
    }
    Ok(server)
}

/// `corvid mcp login NAME`.
async fn sign_in(
    loaded: &Loaded,
    project: &Path,
    name: &str,
    no_browser: bool,
    timeout: u64,
    sandbox: Sandbox,
) -> anyhow::Result<String> {
    let server = find_server(loaded, project, name)?;
    let environment = environment(loaded, project, sandbox);
    let label = name.to_owned();
    let options = LoginOptions {
        callback_port: loaded.config.mcp.oauth_callback_port,
        timeout: Duration::from_secs(timeout.max(1)),
        open: Box::new(move |url: &str| {
            eprintln!("Sign in to the MCP server `{label}` in your browser:\n\n  {url}\n");
            if no_browser {
                eprintln!("(waiting for the browser to come back to corvid...)");
            } else if open_in_browser(url) {
                eprintln!("(opened your browser; waiting for it to come back to corvid...)");
            } else {
                eprintln!(
                    "No browser could be opened here: open the URL above in a browser on this machine (the sign-in comes back to 127.0.0.1)."
                );
            }
        }),
    };
    let outcome = login(&server, &environment, options).await?;
    let client = match outcome.registration {
        Registration::Configured => "the configured oauth.client_id",
        Registration::MetadataDocument => "the configured client metadata document",
        Registration::Registered => "a client registered just now",
    };
    let scopes = if outcome.scopes.is_empty() {
        "the server's default scopes".to_owned()
    } else {
        format!("scopes {}", outcome.scopes.join(" "))
    };
    Ok(format!(
        "Signed in to `{name}` ({client}; {scopes}). Its tokens are stored in {} ({}); sessions connect with them (one already running, at your next message).\n",
        outcome.env_file.display(),
        outcome.backend
    ))
}

/// `corvid mcp trust NAME`: keeps the project server's current definition as trusted.
fn trust(loaded: &Loaded, project: &Path, name: &str) -> anyhow::Result<String> {
    let file = read_project_mcp(project)?;
    let Some(server) = file.servers.iter().find(|server| server.name == name) else {
        let global = loaded
            .config
            .mcp
            .servers
            .iter()
            .any(|server| server.name == name);
        if global {
            bail!("`{name}` is defined in config.toml, not by the project: it needs no trust");
        }
        bail!(
            "{} defines no server `{name}`",
            project.join(PROJECT_MCP_FILE).display()
        );
    };
    let store = mcp_trust_store(loaded);
    store.trust(project, server)?;
    Ok(format!(
        "Trusted `{name}` ({}) for {}; sessions in this project start it. A changed definition asks again.\n",
        describe(server),
        project.display()
    ))
}

/// The servers of `project` as a session would start them (config.toml's and the project's,
/// which win a name clash), for the list.
fn servers(loaded: &Loaded, project: &Path) -> (Vec<McpServer>, Vec<String>) {
    match read_project_mcp(project) {
        Ok(file) => (
            merge_servers(&loaded.config.mcp.servers, &file.servers),
            file.warnings,
        ),
        Err(error) => (
            loaded.config.mcp.servers.clone(),
            vec![format!("MCP servers of this project not read: {error}")],
        ),
    }
}

fn project_root(explicit: Option<&Path>) -> anyhow::Result<PathBuf> {
    let cwd = std::env::current_dir().context("cannot read the current folder")?;
    Ok(corvid_agent::project_folders(&cwd, explicit).root)
}

async fn list(loaded: &Loaded, project: &Path, sandbox: Sandbox) -> anyhow::Result<String> {
    let (servers, warnings) = servers(loaded, project);
    let mut text = String::new();
    for warning in warnings {
        text.push_str(&format!("warning: {warning}\n"));
    }
    if servers.is_empty() {
        text.push_str(&format!(
            "No MCP servers configured. Add one with `corvid mcp add NAME -- COMMAND…` (writes {PROJECT_MCP_FILE}) or `--global` (writes {}).\n",
            loaded.paths.config_file.display()
        ));
        return Ok(text);
    }
    let (manager, _) = mcp_plugin(loaded).manager(project, sandbox);
    // No built-in tool names here: the list shows the names a session without clashes gives.
    manager.tools(&|_| false).await;
    for status in manager.statuses() {
        let server = servers.iter().find(|server| server.name == status.name);
        let scope = match status.scope {
            McpScope::Global => "config.toml",
            McpScope::Project => PROJECT_MCP_FILE,
            McpScope::Editor => "the editor",
        };
        let how = server.map(describe).unwrap_or_default();
        // The state in the protocol's one wording (what the chat faces show), naming the
        // command line's way to act on it.
        let state = corvid_agent::tool_server(status.clone().report())
            .describe_for(ToolServerAudience::CommandLine);
        text.push_str(&format!("{} ({scope}; {how}): {state}\n", status.name));
        for (name, tool) in &status.tools {
            if name.ends_with(&format!("__{tool}")) {
                text.push_str(&format!("  {name}\n"));
            } else {
                text.push_str(&format!("  {name}  ({tool})\n"));
            }
        }
        if !status.filtered.is_empty() {
            text.push_str(&format!(
                "  not offered (enabled_tools/disabled_tools): {}\n",
                status.filtered.join(", ")
            ));
        }
    }
    for notice in manager.take_notices() {
        if notice.contains("mcp_max_tools") {
            text.push_str(&format!("note: {notice}\n"));
        }
    }
    manager.shutdown().await;
    Ok(text)
}

fn describe(server: &McpServer) -> String {
    match &server.transport {
        McpTransport::Stdio { command, args, .. } => {
            let mut line = format!("stdio: {command}");
            for arg in args {
                line.push(' ');
                line.push_str(arg);
            }
            line
        }
        McpTransport::Http { url, .. } => format!("http: {url}"),
    }
}

/// The server as the user gave it.
fn entry(
    url: Option<String>,
    headers: &[String],
    env: &[String],
    command: &[String],
) -> anyhow::Result<McpEntry> {
    let pairs = |items: &[String], what: &str| -> anyhow::Result<BTreeMap<String, String>> {
        items
            .iter()
            .map(|item| match item.split_once('=') {
                Some((name, value)) if !name.trim().is_empty() => {
                    Ok((name.trim().to_owned(), value.to_owned()))
                }
                _ => bail!("{what} must be NAME=VALUE, got {item:?}"),
            })
            .collect()
    };
    match (url, command.split_first()) {
        (Some(url), None) => {
            if !env.is_empty() {
                bail!("--env is for local servers; an HTTP server takes --header");
            }
            Ok(McpEntry::Http {
                url,
                headers: pairs(headers, "--header")?,
            })
        }
        (None, Some((program, args))) => {
            if !headers.is_empty() {
                bail!("--header is for HTTP servers; a local server takes --env");
            }
            Ok(McpEntry::Stdio {
                command: program.clone(),
                args: args.to_vec(),
                env: pairs(env, "--env")?,
            })
        }
        (Some(_), Some(_)) => bail!("give either --url or a command after --, not both"),
        (None, None) => bail!("give the server's command after -- (or --url for an HTTP server)"),
    }
}

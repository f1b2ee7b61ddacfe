//! `corvid service install|uninstall|status`: `corvid serve` as a per-user service — a systemd
//! user unit on Linux (`~/.config/systemd/user/corvid.service`), a launchd agent on macOS
//! (`~/Library/LaunchAgents/dev.corvid.serve.plist`). The files are generated here (pure, unit-
//! tested); `systemctl --user` / `launchctl` load them, and where those are missing corvid says
//! what to run.

use std::path::{Path, PathBuf};
use std::process::Command;

use corvid_config::Loaded;

use crate::launchd::LaunchAgent;

const UNIT: &str = "corvid.service";
const LABEL: &str = "dev.corvid.serve";

#[derive(Debug, clap::Subcommand)]
pub(crate) enum ServiceCommand {
    /// Write the service file for `corvid serve` and start it (now and at every login).
    Install {
        /// Only write the file; do not enable or start it.
        #[arg(long)]
        no_start: bool,
    },
    /// Stop the service and remove its file.
    Uninstall,
    /// Where the service file is, whether it runs, and whether the gateway answers.
    Status,
}

/// What `serve` is started with by the service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ServeCommand {
    pub(crate) program: PathBuf,
    /// `--config FILE` when the user named one.
    pub(crate) config_file: Option<PathBuf>,
}

impl ServeCommand {
    fn arguments(&self) -> Vec<String> {
        let mut arguments = vec![self.program.to_string_lossy().into_owned(), "serve".into()];
        if let Some(config) = &self.config_file {
            arguments.push("--config".into());
            arguments.push(config.to_string_lossy().into_owned());
        }
        arguments
    }
}

/// The systemd user unit.
pub(crate) fn systemd_unit(serve: &ServeCommand) -> String {
    let exec = serve
        .arguments()
        .iter()
        .map(|argument| systemd_quote(argument))
        .collect::<Vec<_>>()
        .join(" ");
    format!(
        "[Unit]\n\
         Description=corvid: the local LLM gateway and its web page\n\
         \n\
         [Service]\n\
         Type=exec\n\
         ExecStart={exec}\n\
         # SIGTERM is corvid's graceful stop: streams in flight get shutdown_grace_s.\n\
         KillSignal=SIGTERM\n\
         TimeoutStopSec=60\n\
         Restart=on-failure\n\
         RestartSec=2\n\
         \n\
         [Install]\n\
         WantedBy=default.target\n"
    )
}

/// An `ExecStart` word: quoted, with `\` and `"` escaped, `%` (specifiers) and `$` (variable
/// expansion) doubled.
fn systemd_quote(argument: &str) -> String {
    let mut quoted = String::from("\"");
    for c in argument.chars() {
        match c {
            '\\' => quoted.push_str("\\\\"),
            '"' => quoted.push_str("\\\""),
            '%' => quoted.push_str("%%"),
            '$' => quoted.push_str("$$"),
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}

/// The launchd agent (macOS): kept alive, logging to `~/Library/Logs/corvid.log`.
pub(crate) fn launch_agent(serve: &ServeCommand, home: &Path) -> LaunchAgent {
    LaunchAgent {
        label: LABEL.to_owned(),
        program_arguments: serve.arguments(),
        keep_alive: true,
        log_file: Some(home.join("Library/Logs/corvid.log")),
    }
}

/// Where this platform's service file goes.
fn service_file(home: &Path) -> anyhow::Result<PathBuf> {
    if cfg!(target_os = "macos") {
        Ok(home.join(format!("Library/LaunchAgents/{LABEL}.plist")))
    } else if cfg!(target_os = "linux") {
        let config = std::env::var_os("XDG_CONFIG_HOME")
            .filter(|dir| !dir.is_empty())
            .map_or_else(|| home.join(".config"), PathBuf::from);
        Ok(config.join("systemd/user").join(UNIT))
    } else {
        anyhow::bail!("corvid service is available on Linux (systemd) and macOS (launchd) only")
    }
}

fn home() -> anyhow::Result<PathBuf> {
    std::env::var_os("HOME")
        .filter(|home| !home.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| anyhow::anyhow!("HOME is not set"))
}

/// Runs `program args`, returning its trimmed output, or why it failed.
/// Why a service manager's command failed.
#[derive(Debug, thiserror::Error)]
enum ManagerError {
    #[error("cannot run {program}: {source}")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    /// It ran and refused; its stderr (may be empty, e.g. `systemctl is-active` of a stopped unit).
    #[error("{0}")]
    Refused(String),
}

fn run(program: &str, args: &[&str]) -> Result<String, ManagerError> {
    match Command::new(program).args(args).output() {
        Ok(output) if output.status.success() => {
            Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
        }
        Ok(output) => Err(ManagerError::Refused(
            String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        )),
        Err(source) => Err(ManagerError::Spawn {
            program: program.to_owned(),
            source,
        }),
    }
}

pub(crate) fn run_command(
    loaded: &Loaded,
    config_file: Option<PathBuf>,
    command: ServiceCommand,
) -> anyhow::Result<String> {
    let home = home()?;
    let path = service_file(&home)?;
    match command {
        ServiceCommand::Install { no_start } => {
            let serve = ServeCommand {
                program: std::env::current_exe()?,
                config_file: config_file
                    .map(|file| std::path::absolute(&file))
                    .transpose()?,
            };
            let text = if cfg!(target_os = "macos") {
                launch_agent(&serve, &home).plist()
            } else {
                systemd_unit(&serve)
            };
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(&path, text)?;
            let mut said = format!("wrote {}", path.display());
            if no_start {
                said.push_str(&format!("\nstart it with: {}", start_hint(&path)));
            } else {
                match start(&path) {
                    Ok(()) => said.push_str(&format!(
                        "\nstarted; corvid serve now runs at every login (port {})",
                        loaded.config.port
                    )),
                    Err(why) => said.push_str(&format!(
                        "\nnot started ({why}); start it with: {}",
                        start_hint(&path)
                    )),
                }
            }
            Ok(said)
        }
        ServiceCommand::Uninstall => {
            if !path.exists() {
                return Ok(format!("no service file at {}", path.display()));
            }
            let stopped = stop(&path);
            std::fs::remove_file(&path)?;
            if cfg!(target_os = "linux") {
                let _ = run("systemctl", &["--user", "daemon-reload"]);
            }
            Ok(match stopped {
                Ok(()) => format!("stopped and removed {}", path.display()),
                Err(why) => format!("removed {} ({why})", path.display()),
            })
        }
        ServiceCommand::Status => {
            let file = if path.exists() {
                format!("service file: {}", path.display())
            } else {
                format!("service file: none (would be {})", path.display())
            };
            let state = if cfg!(target_os = "macos") {
                let target = format!("gui/{}/{LABEL}", uid());
                match run("launchctl", &["print", &target]) {
                    Ok(_) => "launchd: loaded".to_owned(),
                    Err(_) => "launchd: not loaded".to_owned(),
                }
            } else {
                match run("systemctl", &["--user", "is-active", UNIT]) {
                    Ok(state) => format!("systemd: {state}"),
                    Err(ManagerError::Refused(why)) if why.is_empty() => {
                        "systemd: inactive".to_owned()
                    }
                    Err(why) => format!("systemd: unknown ({why})"),
                }
            };
            Ok(format!("{file}\n{state}"))
        }
    }
}

fn uid() -> String {
    run("id", &["-u"]).unwrap_or_else(|_| "501".to_owned())
}

fn start(path: &Path) -> Result<(), ManagerError> {
    if cfg!(target_os = "macos") {
        let domain = format!("gui/{}", uid());
        run(
            "launchctl",
            &["bootstrap", &domain, &path.to_string_lossy()],
        )
        .map(drop)
    } else {
        run("systemctl", &["--user", "daemon-reload"])?;
        run("systemctl", &["--user", "enable", "--now", UNIT]).map(drop)
    }
}

fn stop(path: &Path) -> Result<(), ManagerError> {
    if cfg!(target_os = "macos") {
        let domain = format!("gui/{}", uid());
        run("launchctl", &["bootout", &domain, &path.to_string_lossy()]).map(drop)
    } else {
        run("systemctl", &["--user", "disable", "--now", UNIT]).map(drop)
    }
}

fn start_hint(path: &Path) -> String {
    if cfg!(target_os = "macos") {
        format!("launchctl bootstrap gui/$(id -u) {}", path.display())
    } else {
        format!("systemctl --user daemon-reload && systemctl --user enable --now {UNIT}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn serve() -> ServeCommand {
        ServeCommand {
            program: PathBuf::from("/opt/my tools/corvid"),
            config_file: Some(PathBuf::from("/home/me/100% \"real\" $HOME.toml")),
        }
    }

    #[test]
    fn the_unit_runs_serve_with_every_argument_quoted_and_stops_with_sigterm() {
        let unit = systemd_unit(&serve());
        assert!(unit.contains(
            "\nExecStart=\"/opt/my tools/corvid\" \"serve\" \"--config\" \
             \"/home/me/100%% \\\"real\\\" $$HOME.toml\"\n"
        ));
        assert!(unit.contains("\nKillSignal=SIGTERM\n"));
        assert!(unit.contains("\nRestart=on-failure\n"));
        assert!(unit.contains("[Install]\nWantedBy=default.target\n"));
    }

    #[test]
    fn without_a_config_file_serve_takes_the_default_one() {
        let unit = systemd_unit(&ServeCommand {
            program: PathBuf::from("/usr/local/bin/corvid"),
            config_file: None,
        });
        assert!(unit.contains("\nExecStart=\"/usr/local/bin/corvid\" \"serve\"\n"));
    }

    #[test]
    fn the_launch_agent_keeps_serve_alive_and_logs_to_the_users_logs() {
        let agent = launch_agent(&serve(), Path::new("/Users/me"));
        assert_eq!(agent.label, "dev.corvid.serve");
        assert!(agent.keep_alive);
        assert_eq!(
            agent.program_arguments,
            [
                "/opt/my tools/corvid",
                "serve",
                "--config",
                "/home/me/100% \"real\" $HOME.toml"
            ]
        );
        let plist = agent.plist();
        assert!(plist.contains("<string>/home/me/100% &quot;real&quot; $HOME.toml</string>"));
        assert!(plist.contains("<string>/Users/me/Library/Logs/corvid.log</string>"));
        assert_eq!(
            agent.path(Path::new("/Users/me")),
            Path::new("/Users/me/Library/LaunchAgents/dev.corvid.serve.plist")
        );
    }
}

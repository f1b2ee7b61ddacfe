//! `corvid doctor`: what a user would otherwise ask about, each with its fix — the
//! configuration's warnings, the env file's mode, each provider's credential and whether it
//! answers, the port, the agent's sandbox, and the clients `corvid setup` sets up. Exit status 1
//! when anything failed.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use corvid_config::{CredentialSource, Loaded};
use corvid_providers::{Provider, Registry};

/// How one check came out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    Ok(String),
    /// Nothing to do unless the user wants it (a provider without a key they may not use).
    Info(String),
    Warn {
        what: String,
        fix: String,
    },
    Fail {
        what: String,
        fix: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Check {
    pub(crate) name: String,
    pub(crate) outcome: Outcome,
}

fn check(name: impl Into<String>, outcome: Outcome) -> Check {
    Check {
        name: name.into(),
        outcome,
    }
}

/// How long a provider may take to list its models.
const REACH_TIMEOUT: Duration = Duration::from_secs(15);

/// Every check, in the order they print.
pub(crate) async fn run(loaded: &Loaded, registry: &Registry) -> Vec<Check> {
    let mut checks = Vec::new();
    let env_file = loaded.paths.env_file.display().to_string();
    // The env file's mode has a check of its own below.
    for warning in loaded.warnings.iter().filter(|w| !w.contains(&env_file)) {
        checks.push(check(
            "config",
            Outcome::Warn {
                what: warning.clone(),
                fix: format!("edit {}", loaded.paths.config_file.display()),
            },
        ));
    }
    checks.push(env_file_mode(&loaded.paths.env_file));
    for provider in registry.providers() {
        if !provider.config().enabled {
            continue;
        }
        if let Some(reason) = registry.unavailable_reason(provider) {
            checks.push(check(
                format!("provider {}", provider.name()),
                Outcome::Info(format!("unavailable: {reason}")),
            ));
            continue;
        }
        let credential = credential(loaded, provider);
        let usable = !matches!(
            credential.outcome,
            Outcome::Info(_) | Outcome::Warn { .. } | Outcome::Fail { .. }
        );
        checks.push(credential);
        if usable {
            checks.push(reach(provider).await);
        }
    }
    checks.push(port(loaded));
    checks.push(sandbox(loaded));
    checks.extend(clients(loaded));
    checks
}

/// The env file holds keys: it must be readable by its owner only.
fn env_file_mode(path: &Path) -> Check {
    let name = "env file";
    let Ok(meta) = std::fs::metadata(path) else {
        return check(
            name,
            Outcome::Info(format!(
                "none at {} (keys come from the environment)",
                path.display()
            )),
        );
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return check(
                name,
                Outcome::Fail {
                    what: format!("{} is readable by others (mode {mode:o})", path.display()),
                    fix: format!("chmod 600 {}", path.display()),
                },
            );
        }
        check(
            name,
            Outcome::Ok(format!("{} (mode {mode:o})", path.display())),
        )
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        check(name, Outcome::Ok(path.display().to_string()))
    }
}

/// Whether the provider has what it needs to be called.
fn credential(loaded: &Loaded, provider: &Provider) -> Check {
    let name = format!("credential {}", provider.name());
    if provider.zed_service().is_some() {
        return check(name, Outcome::Ok("signed in to Zed".to_owned()));
    }
    if provider.upstream().credential().is_available() {
        let source = match &provider.config().credential {
            CredentialSource::Env(variables) => variables
                .iter()
                .find(|variable| loaded.secret(variable).is_some())
                .map_or_else(|| "present".to_owned(), |found| format!("{found} present")),
            CredentialSource::None => "none needed".to_owned(),
            _ => "present".to_owned(),
        };
        return check(name, Outcome::Ok(source));
    }
    let env_file = loaded.paths.env_file.display();
    match &provider.config().credential {
        CredentialSource::None => check(name, Outcome::Ok("none needed".to_owned())),
        _ if provider.name() == "xai" && loaded.config.default_provider == "xai" => check(
            name,
            Outcome::Warn {
                what: "no xAI key or sign-in, and xai is the default provider".to_owned(),
                fix: format!(
                    "paste a key as XAI_API_KEY=… in {env_file}, or `corvid login xai` with \
                     auth_mode = \"oauth\" (SuperGrok), or `corvid login zed`, or point \
                     default_provider at a local OpenAI-compatible server"
                ),
            },
        ),
        CredentialSource::Env(variables) => check(
            name,
            Outcome::Info(format!(
                "no key: set {} in {env_file} to use it",
                variables.join(" or ")
            )),
        ),
        _ => check(
            name,
            Outcome::Info(format!("not signed in: `corvid login {}`", provider.name())),
        ),
    }
}

/// Lists the provider's models: the cheapest call that proves the address and the key.
async fn reach(provider: &Provider) -> Check {
    let name = format!("reach {}", provider.name());
    let base = provider.config().base_url.clone();
    let started = Instant::now();
    let outcome = if let Some(zed) = provider.zed_service() {
        match tokio::time::timeout(REACH_TIMEOUT, zed.models()).await {
            Ok(Ok(models)) => Ok(format!("{} models", models.models.len())),
            Ok(Err(error)) => Err((None, corvid_providers::error_chain(&error))),
            Err(_) => Err((None, "no answer in time".to_owned())),
        }
    } else {
        match tokio::time::timeout(REACH_TIMEOUT, provider.upstream().get("models")).await {
            Ok(Ok(_)) => Ok("listed its models".to_owned()),
            Ok(Err(_)) | Err(_) => Err(match provider.upstream().last_failure() {
                Some(failure) => (failure.status, failure.message),
                None => (None, "no answer in time".to_owned()),
            }),
        }
    };
    let took = started.elapsed().as_millis();
    match outcome {
        Ok(detail) => check(name, Outcome::Ok(format!("{base}: {detail} ({took} ms)"))),
        Err((status, message)) => {
            let fix = match status {
                Some(401 | 403) => format!(
                    "the credential was refused: replace it ({})",
                    key_hint(provider)
                ),
                Some(404) => {
                    format!("{base} has no /models: check base_url (it usually ends in /v1)")
                }
                Some(_) => {
                    "the provider is failing: try again later, or check its status page".to_owned()
                }
                None => format!(
                    "nothing answers at {base}: is the server running, and is base_url right?"
                ),
            };
            let what = match status {
                Some(status) => format!("{base} answered {status}: {message}"),
                None => format!("{base}: {message}"),
            };
            check(name, Outcome::Fail { what, fix })
        }
    }
}

fn key_hint(provider: &Provider) -> String {
    match &provider.config().credential {
        CredentialSource::Env(variables) => variables.join(" or "),
        _ => format!("`corvid login {}`", provider.name()),
    }
}

/// The configured port: corvid answers there, it is free, or another program holds it.
fn port(loaded: &Loaded) -> Check {
    let config = &loaded.config;
    let name = "port";
    let host = config.host.trim_start_matches('[').trim_end_matches(']');
    let address = format!("{host}:{}", config.port);
    if crate::auth_commands::probe_health(host, config.port) == Some(200) {
        return check(name, Outcome::Ok(format!("corvid answers on {address}")));
    }
    match TcpListener::bind(&address) {
        Ok(_) => check(
            name,
            Outcome::Ok(format!("{address} is free for `corvid serve`")),
        ),
        Err(error) if error.kind() == std::io::ErrorKind::AddrInUse => check(
            name,
            Outcome::Fail {
                what: format!("another program listens on {address}"),
                fix: format!(
                    "stop it (the Python supergrok-zed connector?), or pick another port: \
                     port = … in {} or --port",
                    loaded.paths.config_file.display()
                ),
            },
        ),
        Err(error) => check(
            name,
            Outcome::Fail {
                what: format!("cannot listen on {address}: {error}"),
                fix: "check host in config.toml (a loopback address)".to_owned(),
            },
        ),
    }
}

fn sandbox(loaded: &Loaded) -> Check {
    let sandbox = crate::sandbox_setup::sandbox(loaded, None);
    let name = "agent sandbox";
    if sandbox.is_enforced() {
        check(name, Outcome::Ok(sandbox.describe()))
    } else if sandbox.is_off() {
        check(
            name,
            Outcome::Warn {
                what: "off: the agent's commands run with your full rights".to_owned(),
                fix: "remove sandbox = \"off\" from config.toml (and CORVID_SANDBOX)".to_owned(),
            },
        )
    } else {
        check(
            name,
            Outcome::Warn {
                what: sandbox.describe(),
                fix: if cfg!(target_os = "linux") {
                    "use Linux 5.13+ with Landlock enabled (lsm=…,landlock on the kernel command \
                     line); until then every command asks first"
                        .to_owned()
                } else {
                    "every command asks first on this system".to_owned()
                },
            },
        )
    }
}

/// Whether Claude Code, Codex and Zed point at this corvid, as `corvid setup` sets them up.
fn clients(loaded: &Loaded) -> Vec<Check> {
    let base = loaded.config.local_base_url();
    let home = std::env::var_os("HOME")
        .filter(|home| !home.is_empty())
        .map(PathBuf::from);
    let read = |path: Option<PathBuf>| path.and_then(|path| std::fs::read_to_string(path).ok());
    let claude_env = std::env::var("ANTHROPIC_BASE_URL").ok();
    let claude_file = read(home.as_ref().map(|home| home.join(".claude/settings.json")));
    let codex_home = std::env::var_os("CODEX_HOME")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|home| home.join(".codex")));
    let codex = read(codex_home.map(|dir| dir.join("config.toml")));
    let zed = read(
        std::env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|home| home.join(".config")))
            .map(|dir| dir.join("zed/settings.json")),
    );
    let claude = claude_env
        .into_iter()
        .chain(claude_file)
        .collect::<Vec<_>>()
        .join("\n");
    vec![
        client("Claude Code", "claude-code", Some(&claude), &base),
        client("Codex", "codex", codex.as_deref(), &base),
        client("Zed", "zed", zed.as_deref(), &base),
    ]
}

fn client(label: &str, setup: &str, found: Option<&str>, base: &str) -> Check {
    let name = format!("client {label}");
    match found {
        Some(text) if text.contains(base) => check(name, Outcome::Ok(format!("points at {base}"))),
        Some(text) if text.contains("127.0.0.1:") || text.contains("localhost:") => check(
            name,
            Outcome::Warn {
                what: format!("points at a local address other than {base}"),
                fix: format!("`corvid setup {setup}` prints what to set"),
            },
        ),
        _ => check(
            name,
            Outcome::Info(format!("not set up for corvid (`corvid setup {setup}`)")),
        ),
    }
}

/// The report, one line a check (and a `fix:` line under each problem), and whether any check
/// failed.
pub(crate) fn render(checks: &[Check]) -> (String, bool) {
    let mut lines = Vec::new();
    let mut failed = false;
    for check in checks {
        let (mark, what, fix) = match &check.outcome {
            Outcome::Ok(what) => ("ok  ", what, None),
            Outcome::Info(what) => ("-   ", what, None),
            Outcome::Warn { what, fix } => ("warn", what, Some(fix)),
            Outcome::Fail { what, fix } => {
                failed = true;
                ("FAIL", what, Some(fix))
            }
        };
        lines.push(format!("{mark}  {:<22} {what}", check.name));
        if let Some(fix) = fix {
            lines.push(format!("      {:<22} fix: {fix}", ""));
        }
    }
    let problems = checks
        .iter()
        .filter(|check| matches!(check.outcome, Outcome::Fail { .. }))
        .count();
    lines.push(if failed {
        format!("{problems} problem(s) found")
    } else {
        "no problems found".to_owned()
    });
    (lines.join("\n"), failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_points_here_elsewhere_or_nowhere() {
        let base = "http://127.0.0.1:8787";
        assert!(matches!(
            client(
                "Codex",
                "codex",
                Some("base_url = \"http://127.0.0.1:8787/v1\""),
                base
            )
            .outcome,
            Outcome::Ok(_)
        ));
        assert!(matches!(
            client(
                "Codex",
                "codex",
                Some("base_url = \"http://127.0.0.1:9000/v1\""),
                base
            )
            .outcome,
            Outcome::Warn { .. }
        ));
        assert!(matches!(
            client("Zed", "zed", None, base).outcome,
            Outcome::Info(_)
        ));
    }

    #[test]
    fn the_report_marks_each_check_and_puts_the_fix_under_a_problem() {
        let checks = vec![
            check("port", Outcome::Ok("free".to_owned())),
            check(
                "reach broken",
                Outcome::Fail {
                    what: "nothing answers".to_owned(),
                    fix: "start it".to_owned(),
                },
            ),
        ];
        let (text, failed) = render(&checks);
        assert!(failed);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("ok    port"));
        assert!(lines[1].starts_with("FAIL  reach broken"));
        assert!(lines[2].trim_start().starts_with("fix: start it"));
        assert_eq!(lines[3], "1 problem(s) found");
        let (_, failed) = render(&checks[..1]);
        assert!(!failed);
    }
}

//! "Start at login": an XDG autostart entry on Linux
//! (`$XDG_CONFIG_HOME/autostart/corvid-desktop.desktop`), a launchd agent on macOS
//! (`~/Library/LaunchAgents/dev.corvid.desktop.plist`, started once at login, not kept alive:
//! Quit means quit). Elsewhere it says it is unavailable.

use std::path::{Path, PathBuf};

use corvid_cli::host::LaunchAgent;

const LABEL: &str = "dev.corvid.desktop";

/// Why the entry could not be changed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AutostartError {
    #[error("start at login is not available on this platform")]
    Unavailable,
    #[error("no home folder (HOME is not set)")]
    NoHome,
    #[error("cannot find this program's own path: {0}")]
    NoProgram(std::io::Error),
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot remove {path}: {source}")]
    Remove {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Where the entry lives and what it says, for `program` started with `arguments`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) path: PathBuf,
    pub(crate) contents: String,
}

/// The folders the entry's place depends on.
#[derive(Debug, Clone, Default)]
pub(crate) struct Places {
    pub(crate) home: Option<PathBuf>,
    pub(crate) xdg_config_home: Option<PathBuf>,
}

impl Places {
    pub(crate) fn from_env() -> Self {
        let dir = |name: &str| {
            std::env::var_os(name)
                .filter(|value| !value.is_empty())
                .map(PathBuf::from)
        };
        Self {
            home: dir("HOME"),
            xdg_config_home: dir("XDG_CONFIG_HOME"),
        }
    }
}

/// The Linux entry: a desktop file that the session starts at login.
pub(crate) fn xdg_entry(
    places: &Places,
    program: &Path,
    arguments: &[String],
) -> Result<Entry, AutostartError> {
    let config = match (&places.xdg_config_home, &places.home) {
        (Some(config), _) => config.clone(),
        (None, Some(home)) => home.join(".config"),
        (None, None) => return Err(AutostartError::NoHome),
    };
    let exec = std::iter::once(program.to_string_lossy().into_owned())
        .chain(arguments.iter().cloned())
        .map(|argument| exec_quote(&argument))
        .collect::<Vec<_>>()
        .join(" ");
    let contents = format!(
        "[Desktop Entry]\nType=Application\nName=corvid\n\
         Comment=corvid's gateway, chat and settings in the tray\nExec={exec}\n\
         Terminal=false\nX-GNOME-Autostart-enabled=true\n"
    );
    Ok(Entry {
        path: config.join("autostart/corvid-desktop.desktop"),
        contents,
    })
}

/// The macOS entry: a launchd agent run once at login.
pub(crate) fn launchd_entry(
    places: &Places,
    program: &Path,
    arguments: &[String],
) -> Result<Entry, AutostartError> {
    let home = places.home.as_deref().ok_or(AutostartError::NoHome)?;
    let agent = LaunchAgent {
        label: LABEL.to_owned(),
        program_arguments: std::iter::once(program.to_string_lossy().into_owned())
            .chain(arguments.iter().cloned())
            .collect(),
        keep_alive: false,
        log_file: None,
    };
    Ok(Entry {
        path: agent.path(home),
        contents: agent.plist(),
    })
}

/// A desktop entry's `Exec` argument: quoted when it holds anything but plain characters
/// (with `"`, `` ` ``, `$` and `\` escaped), and `%` doubled (field codes).
fn exec_quote(argument: &str) -> String {
    let plain = !argument.is_empty()
        && argument
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@".contains(c));
    let percent = argument.replace('%', "%%");
    if plain {
        return percent;
    }
    let mut quoted = String::from("\"");
    for c in percent.chars() {
        if matches!(c, '"' | '`' | '$' | '\\') {
            quoted.push('\\');
        }
        quoted.push(c);
    }
    quoted.push('"');
    quoted
}

/// This platform's entry for this program, started with `arguments`.
pub(crate) fn entry(arguments: &[String]) -> Result<Entry, AutostartError> {
    let places = Places::from_env();
    let program = std::env::current_exe().map_err(AutostartError::NoProgram)?;
    if cfg!(target_os = "macos") {
        launchd_entry(&places, &program, arguments)
    } else if cfg!(target_os = "linux") {
        xdg_entry(&places, &program, arguments)
    } else {
        Err(AutostartError::Unavailable)
    }
}

/// Whether the entry exists.
pub(crate) fn enabled(arguments: &[String]) -> bool {
    entry(arguments).is_ok_and(|entry| entry.path.is_file())
}

/// Writes or removes the entry; returns the new state.
pub(crate) fn set(arguments: &[String], on: bool) -> Result<bool, AutostartError> {
    let entry = entry(arguments)?;
    if on {
        let write = || -> std::io::Result<()> {
            if let Some(dir) = entry.path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(&entry.path, &entry.contents)
        };
        write().map_err(|source| AutostartError::Write {
            path: entry.path.clone(),
            source,
        })?;
    } else {
        match std::fs::remove_file(&entry.path) {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => {
                return Err(AutostartError::Remove {
                    path: entry.path,
                    source,
                });
            }
        }
    }
    Ok(on)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn places() -> Places {
        Places {
            home: Some(PathBuf::from("/home/me")),
            xdg_config_home: None,
        }
    }

    #[test]
    fn the_linux_entry_runs_this_program_with_its_arguments_quoted() {
        let entry = xdg_entry(
            &places(),
            Path::new("/opt/my apps/corvid-desktop"),
            &["--config".to_owned(), "/home/me/100% $real.toml".to_owned()],
        )
        .unwrap();
        assert_eq!(
            entry.path,
            Path::new("/home/me/.config/autostart/corvid-desktop.desktop")
        );
        assert!(
            entry
                .contents
                .starts_with("[Desktop Entry]\nType=Application\n")
        );
        assert!(entry.contents.contains(
            "\nExec=\"/opt/my apps/corvid-desktop\" --config \"/home/me/100%% \\$real.toml\"\n"
        ));
        assert!(entry.contents.contains("\nTerminal=false\n"));
    }

    #[test]
    fn xdg_config_home_wins_and_no_home_at_all_is_an_error() {
        let mut places = places();
        places.xdg_config_home = Some(PathBuf::from("/tmp/config"));
        let entry = xdg_entry(&places, Path::new("/usr/bin/corvid-desktop"), &[]).unwrap();
        assert_eq!(
            entry.path,
            Path::new("/tmp/config/autostart/corvid-desktop.desktop")
        );
        assert!(entry.contents.contains("\nExec=/usr/bin/corvid-desktop\n"));
        let nowhere = Places::default();
        assert!(matches!(
            xdg_entry(&nowhere, Path::new("/x"), &[]),
            Err(AutostartError::NoHome)
        ));
    }

    #[test]
    fn the_macos_entry_is_a_launch_agent_started_once_at_login() {
        let entry = launchd_entry(
            &places(),
            Path::new("/Applications/corvid.app/Contents/MacOS/corvid-desktop"),
            &[],
        )
        .unwrap();
        assert_eq!(
            entry.path,
            Path::new("/home/me/Library/LaunchAgents/dev.corvid.desktop.plist")
        );
        assert!(
            entry.contents.contains(
                "<string>/Applications/corvid.app/Contents/MacOS/corvid-desktop</string>"
            )
        );
        assert!(entry.contents.contains("<key>KeepAlive</key>\n  <false/>"));
    }
}

use std::path::PathBuf;

use crate::ConfigError;

/// Where corvid's files are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// The configuration directory.
    pub dir: PathBuf,
    /// `config.toml` (may not exist).
    pub config_file: PathBuf,
    /// The secrets file `env` (may not exist).
    pub env_file: PathBuf,
    /// True when corvid is reading the Python connector's `~/.config/supergrok-zed/` as-is.
    pub legacy: bool,
    /// corvid's own directory, for the data it writes (the database), even when the
    /// configuration is read from the legacy directory.
    pub data_dir: PathBuf,
}

impl Paths {
    /// The SQLite database: usage ledger, request log, conversations.
    pub fn database(&self) -> PathBuf {
        self.data_dir.join("corvid.db")
    }
}

/// Finds the configuration directory and files from the process environment.
///
/// The directory is `$CORVID_HOME`, else `$XDG_CONFIG_HOME/corvid`, else `~/.config/corvid`.
/// When that directory holds neither `config.toml` nor `env` and `CORVID_HOME` is unset, an
/// existing `supergrok-zed` directory beside it is used instead (drop-in for the Python
/// connector). `CORVID_CONFIG` / `SUPERGROK_ZED_CONFIG` and `CORVID_ENV` / `SUPERGROK_ZED_ENV`
/// point at the two files directly.
pub fn resolve_paths(env: impl Fn(&str) -> Option<String>) -> Result<Paths, ConfigError> {
    let non_empty = |name: &str| env(name).filter(|value| !value.trim().is_empty());
    let (dir, legacy, data_dir) = match non_empty("CORVID_HOME") {
        Some(home) => (PathBuf::from(home.clone()), false, PathBuf::from(home)),
        None => {
            let base = match non_empty("XDG_CONFIG_HOME") {
                Some(xdg) => PathBuf::from(xdg),
                None => {
                    PathBuf::from(non_empty("HOME").ok_or(ConfigError::NoHome)?).join(".config")
                }
            };
            let own = base.join("corvid");
            let python = base.join("supergrok-zed");
            let own_is_empty = !own.join("config.toml").exists() && !own.join("env").exists();
            if own_is_empty && python.is_dir() {
                (python, true, own)
            } else {
                (own.clone(), false, own)
            }
        }
    };
    let config_file = non_empty("CORVID_CONFIG")
        .or_else(|| non_empty("SUPERGROK_ZED_CONFIG"))
        .map(PathBuf::from)
        .unwrap_or_else(|| dir.join("config.toml"));
    let env_file = non_empty("CORVID_ENV")
        .or_else(|| non_empty("SUPERGROK_ZED_ENV"))
        .map(PathBuf::from)
        .unwrap_or_else(|| dir.join("env"));
    Ok(Paths {
        dir,
        config_file,
        env_file,
        legacy,
        data_dir,
    })
}

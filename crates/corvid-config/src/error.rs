use std::path::PathBuf;

/// A configuration problem, always naming the key (or variable) and what was expected.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A value that could not be accepted.
    #[error("invalid value for `{key}` (from {source_name}): {message}")]
    Invalid {
        key: String,
        source_name: String,
        message: String,
    },
    /// `config.toml` is not valid TOML or has a value of the wrong type.
    #[error("could not parse {path}: {message}")]
    Toml { path: PathBuf, message: String },
    /// A file could not be read or written.
    #[error("{action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A server being added has a name already taken in that file.
    #[error("{path} already has a server `{name}`; remove it first")]
    AlreadyDefined { name: String, path: PathBuf },
    /// A server being removed is not in that file.
    #[error("{path} has no server `{name}`")]
    NotDefined { name: String, path: PathBuf },
    /// A key that must hold a table (`[aliases]`, `mcpServers`) holds something else.
    #[error("`{key}` in {path} is not a table; fix it by hand")]
    NotATable { key: String, path: PathBuf },
    /// No home directory could be found to place the configuration in.
    #[error("cannot find a configuration directory: set CORVID_HOME or HOME")]
    NoHome,
}

impl ConfigError {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        Self::Io {
            action,
            path: path.into(),
            source,
        }
    }
}

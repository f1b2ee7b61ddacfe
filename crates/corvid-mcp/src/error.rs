//! Why a server could not be started: its definition's values, its process, its HTTP client or
//! its stored sign-in. The words become the server's `failed: …` state, so each says what is
//! wrong in the user's configuration.

use corvid_config::{ConfigError, ExpandError, PROJECT_MCP_FILE};

/// A failure before any MCP is spoken.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// A project's server named one of corvid's own credentials.
    #[error(
        "{name} is one of corvid's own credentials, which a project's {PROJECT_MCP_FILE} may not pass to a server; define this server in config.toml to give it that"
    )]
    Protected { name: String },
    /// A value of the definition (`field`) named a variable it may not read.
    #[error("{field}: {source}")]
    Refused {
        field: String,
        #[source]
        source: Box<StartError>,
    },
    /// A value of the definition (`field`) could not be expanded.
    #[error("{field}: {source}")]
    Expand {
        field: String,
        #[source]
        source: ExpandError,
    },
    /// A `*_env_var` setting names a variable that is not set.
    #[error("{field}: the variable {variable} is not set")]
    Unset {
        field: &'static str,
        variable: String,
    },
    #[error("`{name}` is a local (stdio) server")]
    NotHttp { name: String },
    #[error("`{name}` is not a valid header name")]
    HeaderName { name: String },
    #[error("the value of header `{name}` is not valid")]
    HeaderValue { name: String },
    #[error("could not start `{program}`: {source}")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the child process has no pipes")]
    NoPipes,
    #[error("could not build the HTTP client: {0}")]
    HttpClient(#[source] reqwest::Error),
    #[error("could not read its stored sign-in: {0}")]
    StoredSignIn(#[source] SignInReadError),
    /// (Boxed: rmcp's error is large, and this one travels in every `Result` here.)
    #[error("could not prepare its sign-in: {0}")]
    PrepareSignIn(#[source] Box<rmcp::transport::auth::AuthError>),
}

/// Why a stored sign-in could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SignInReadError {
    /// The env file (or the keyring) could not be read.
    #[error(transparent)]
    Store(#[from] ConfigError),
    #[error("the stored sign-in is not readable (sign in again)")]
    Unreadable,
}

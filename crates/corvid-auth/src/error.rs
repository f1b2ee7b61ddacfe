//! Errors with user-facing messages. None of them ever carries a secret.

use std::time::Duration;

use corvid_config::{AuthMode, ConfigError};

/// Why no usable xAI credential could be produced. Every message tells the user what to do.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// The active mode has no credential at all.
    #[error("{}", not_configured_message(*mode))]
    NotConfigured { mode: AuthMode },
    /// Another provider's key variable is not set.
    #[error(
        "no credential for provider `{provider}`: set {} in corvid's env file (`corvid status` shows where) or the environment{}",
        variables.join(" or "),
        SERVE_READS_AT_START
    )]
    MissingKey {
        provider: String,
        variables: Vec<String>,
    },
    /// The OAuth sign-in is gone: no refresh token, or xAI refused it (the tokens were cleared).
    #[error("xAI sign-in required ({reason}): run `corvid login xai`")]
    SignInRequired { reason: String },
    /// The refresh failed for a reason that may pass (5xx, network, timeout, bad JSON); the saved
    /// credentials were kept, so a later request can try again.
    #[error("could not refresh the xAI sign-in (credentials kept; will retry): {message}")]
    RefreshFailed { message: String },
    /// The env file could not be read or written.
    #[error("could not store the xAI credentials: {0}")]
    Storage(#[from] ConfigError),
    /// `corvid login xai` failed.
    #[error(transparent)]
    Login(#[from] LoginError),
}

impl AuthError {
    /// Whether the same request may succeed if tried again later without the user acting.
    /// An exhaustive match: a new variant must decide.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::RefreshFailed { .. } => true,
            Self::NotConfigured { .. }
            | Self::MissingKey { .. }
            | Self::SignInRequired { .. }
            | Self::Storage(_)
            | Self::Login(_) => false,
        }
    }
}

/// When a new credential is used, in words true for every front end: `corvid chat` and `corvid
/// exec` read it on their next run, and a running gateway (`corvid serve`, the desktop app)
/// follows the env file and uses it from its next request, with no restart.
pub const SERVE_READS_AT_START: &str =
    "; a running `corvid serve` uses it from its next request, no restart needed";

fn not_configured_message(mode: AuthMode) -> String {
    match mode {
        AuthMode::ApiKey => format!(
            "no xAI credential for auth_mode=api_key: set XAI_API_KEY in corvid's env file \
             (`corvid status` shows where) or the environment{SERVE_READS_AT_START}"
        ),
        AuthMode::OAuth => format!(
            "no xAI credential for auth_mode=oauth: run `corvid login xai`{SERVE_READS_AT_START}"
        ),
    }
}

/// The text for an inference 403 in oauth mode: the sign-in worked, the plan may not.
pub fn plan_lacks_api_access_message() -> &'static str {
    "signed in, but this SuperGrok plan may not include API access; set auth_mode = \"api_key\" \
     and XAI_API_KEY from console.x.ai"
}

/// Why `corvid login xai` failed.
#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    #[error(
        "port {port} on 127.0.0.1 is already in use, so the sign-in callback cannot listen \
         there; another `corvid login` or another app may be using it (close it and retry, or \
         use `corvid login xai --device`)"
    )]
    PortInUse { port: u16 },
    #[error("cannot listen on 127.0.0.1:{port} for the sign-in callback: {source}")]
    Listen {
        port: u16,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "sign-in timed out after {} s without the browser returning to corvid; run `corvid \
         login xai` again (or `corvid login xai --device` on a machine without a browser)",
        after.as_secs()
    )]
    TimedOut { after: Duration },
    #[error(
        "the sign-in callback's state did not match this login (a stale tab or a forged \
         request); run `corvid login xai` again"
    )]
    StateMismatch,
    #[error("xAI refused the sign-in: {error}{}", description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    Denied {
        error: String,
        description: Option<String>,
    },
    #[error("the sign-in callback carried no authorization code")]
    MissingCode,
    #[error(
        "xAI's token endpoint returned no refresh token, which corvid needs to stay signed in \
         (was the offline_access scope refused?)"
    )]
    MissingRefreshToken,
    #[error("xAI's token endpoint answered {status}: {body}")]
    TokenEndpoint { status: u16, body: String },
    #[error("xAI's device-code endpoint answered {status}: {body}")]
    DeviceEndpoint { status: u16, body: String },
    #[error("could not reach xAI's sign-in service: {message}")]
    Transport { message: String },
    #[error(
        "the device code expired before the sign-in was approved; run `corvid login xai \
         --device` again"
    )]
    DeviceCodeExpired,
}

#[cfg(test)]
mod tests;

//! A secret-free summary of the xAI credentials, for `corvid status`.

use std::path::PathBuf;

use corvid_config::{AuthMode, Loaded};

use crate::CredentialStore;
use crate::store::{TokenSource, tokens_from_loaded};
use crate::tokens::{API_KEY_VAR, now_unix};

/// What `corvid status` shows about auth. Holds no secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthStatus {
    pub mode: AuthMode,
    /// An OAuth sign-in is stored (it may still need a refresh).
    pub signed_in: bool,
    pub email: Option<String>,
    /// When the access token expires, Unix seconds.
    pub expires_at: Option<i64>,
    pub has_access_token: bool,
    pub has_refresh_token: bool,
    /// `XAI_API_KEY` is set (used only in api_key mode).
    pub has_api_key: bool,
    /// Where the sign-in was found.
    pub token_source: Option<TokenSource>,
    /// The keyring holding a copy, or `"env file only"`.
    pub backend: &'static str,
    pub env_file: PathBuf,
}

impl AuthStatus {
    /// The status for this configuration, probing the keyring.
    pub fn from_loaded(loaded: &Loaded) -> Self {
        Self::with_store(loaded, &CredentialStore::detect(loaded))
    }

    /// The status with a given store.
    pub fn with_store(loaded: &Loaded, store: &CredentialStore) -> Self {
        let found = tokens_from_loaded(loaded, store);
        let tokens = found.as_ref().map(|(tokens, _)| tokens);
        Self {
            mode: loaded.config.auth_mode,
            signed_in: tokens.is_some(),
            email: tokens.and_then(|tokens| tokens.email.clone()),
            expires_at: tokens
                .filter(|tokens| !tokens.access_token.expose().is_empty())
                .and_then(|tokens| tokens.expires_at),
            has_access_token: tokens.is_some_and(|tokens| !tokens.access_token.expose().is_empty()),
            has_refresh_token: tokens.is_some_and(|tokens| tokens.refresh_token.is_some()),
            has_api_key: loaded.secret(API_KEY_VAR).is_some(),
            token_source: found.map(|(_, source)| source),
            backend: store.backend(),
            env_file: store.env_file().to_path_buf(),
        }
    }
}

impl AuthStatus {
    /// Human text for `corvid status` at the current time.
    pub fn render_now(&self) -> String {
        self.render(now_unix())
    }

    /// Human text for `corvid status`: one `label: value` line each, never a secret.
    pub fn render(&self, now: i64) -> String {
        let env_file = self.env_file.display();
        let mut lines = vec![format!("auth mode:     {}", self.mode)];
        let api_key = if self.has_api_key {
            "set (XAI_API_KEY)".to_owned()
        } else {
            format!("not set (XAI_API_KEY in {env_file} or the environment)")
        };
        let sign_in = match (self.signed_in, &self.email, self.token_source) {
            (false, _, _) => "not signed in (run `corvid login xai`)".to_owned(),
            (true, email, source) => {
                let who = email.as_deref().map_or("signed in".to_owned(), |email| {
                    format!("signed in as {email}")
                });
                let from = source.map_or(String::new(), |source| {
                    format!(" (from {})", source.as_str())
                });
                format!("{who}{from}")
            }
        };
        match self.mode {
            AuthMode::ApiKey => {
                lines.push(format!("xAI API key:   {api_key}"));
                lines.push(format!("xAI sign-in:   {sign_in}"));
                if self.signed_in {
                    lines.push(
                        "               (unused while auth_mode = \"api_key\"; set auth_mode = \"oauth\" to use it)"
                            .to_owned(),
                    );
                }
            }
            AuthMode::OAuth => {
                lines.push(format!("xAI sign-in:   {sign_in}"));
                if self.signed_in {
                    let access = match (self.has_access_token, self.expires_at) {
                        (false, _) => {
                            "none yet (fetched with the refresh token on first use)".to_owned()
                        }
                        (true, Some(at)) if at <= now => format!(
                            "expired {} ago ({}){}",
                            describe_duration(now - at),
                            format_utc(at),
                            if self.has_refresh_token {
                                "; refreshed on next use"
                            } else {
                                ""
                            }
                        ),
                        (true, Some(at)) => format!(
                            "expires {} (in {})",
                            format_utc(at),
                            describe_duration(at - now)
                        ),
                        (true, None) => "expiry unknown (refreshed when xAI refuses it)".to_owned(),
                    };
                    lines.push(format!("access token:  {access}"));
                    lines.push(format!(
                        "refresh token: {}",
                        if self.has_refresh_token {
                            "stored"
                        } else {
                            "none (sign in again when the access token expires)"
                        }
                    ));
                }
                if self.has_api_key {
                    lines.push(
                        "xAI API key:   set, but unused while auth_mode = \"oauth\"".to_owned(),
                    );
                }
            }
        }
        let keyring = if self.backend == "env file only" {
            String::new()
        } else {
            format!(" + a copy in the {}", self.backend)
        };
        lines.push(format!("env file:      {env_file}{keyring}"));
        let mut text = lines.join("\n");
        text.push('\n');
        text
    }
}

/// `2030-01-02 03:04 UTC (in 52 minutes)` or `... (expired 3 hours ago)`.
pub fn describe_expiry(expires_at: i64, now: i64) -> String {
    let when = format_utc(expires_at);
    let delta = expires_at - now;
    if delta >= 0 {
        format!("{when} (in {})", describe_duration(delta))
    } else {
        format!("{when} (expired {} ago)", describe_duration(-delta))
    }
}

/// `2030-01-02 03:04 UTC`.
pub fn format_utc(unix_secs: i64) -> String {
    let time = corvid_config::time::UtcTime::from_unix(unix_secs);
    format!("{} {:02}:{:02} UTC", time.date(), time.hour, time.minute)
}

/// `45 seconds`, `1 minute`, `3 hours`, `2 days`.
pub fn describe_duration(secs: i64) -> String {
    let (amount, unit) = match secs {
        ..=59 => (secs, "second"),
        60..=3_599 => (secs / 60, "minute"),
        3_600..=172_799 => (secs / 3600, "hour"),
        _ => (secs / 86_400, "day"),
    };
    let plural = if amount == 1 { "" } else { "s" };
    format!("{amount} {unit}{plural}")
}

#[cfg(test)]
mod tests;

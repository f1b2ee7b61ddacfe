//! Where the OAuth sign-in is kept: always the env file (the drop-in contract), plus one copy in
//! the OS keyring when one works here.
//!
//! The file is the source of truth and is written first; a keyring failure is logged and never
//! fails a save, so a headless machine works with the file alone.

use corvid_config::{EnvFile, Loaded};
use serde::Deserialize;

use crate::sign_in_store::{SignInKind, SignInStore};
use crate::tokens::{
    ACCESS_TOKEN_VAR, EMAIL_VAR, EXPIRES_AT_VAR, OAUTH_VARS, REFRESH_TOKEN_VAR, jwt_expiry,
};
use crate::{AuthError, Secret, TokenSet};

/// The xAI OAuth sign-in; its keyring item is a JSON object of the four values.
#[derive(Debug, Clone, Copy)]
pub struct XaiSignIn;

impl SignInKind for XaiSignIn {
    const KEYRING_ACCOUNT: &'static str = "xai-oauth";
    const KEYRING_LABEL: &'static str = "corvid xAI sign-in";
    const NAME: &'static str = "the xAI sign-in";
}

/// Where a token set was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenSource {
    /// The process environment.
    Environment,
    /// The env file.
    EnvFile,
    /// The OS keyring (the env file had no sign-in).
    Keyring,
}

impl TokenSource {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Environment => "the environment",
            Self::EnvFile => "the env file",
            Self::Keyring => "the keyring",
        }
    }
}

/// Write-through storage for the xAI OAuth sign-in.
pub type CredentialStore = SignInStore<XaiSignIn>;

impl CredentialStore {
    /// Writes the sign-in to the env file (other lines kept, 0600, atomic), then the keyring.
    pub fn save(&self, tokens: &TokenSet) -> Result<(), AuthError> {
        let mut file = EnvFile::read(&self.env_file)?;
        file.set(ACCESS_TOKEN_VAR, tokens.access_token.expose());
        match &tokens.refresh_token {
            Some(refresh) => file.set(REFRESH_TOKEN_VAR, refresh.expose()),
            None => {
                file.remove(REFRESH_TOKEN_VAR);
            }
        }
        match tokens.expires_at {
            Some(at) => file.set(EXPIRES_AT_VAR, &at.to_string()),
            None => {
                file.remove(EXPIRES_AT_VAR);
            }
        }
        match &tokens.email {
            Some(email) => file.set(EMAIL_VAR, email),
            None => {
                file.remove(EMAIL_VAR);
            }
        }
        file.write(&self.env_file)?;
        self.copy_to_keyring(&Secret::new(keyring_json(tokens)));
        Ok(())
    }

    /// Removes the sign-in from the env file (other lines kept) and the keyring; returns the
    /// variables that were in the file.
    pub fn clear(&self) -> Result<Vec<&'static str>, AuthError> {
        Ok(self.remove(&OAUTH_VARS)?)
    }

    /// Clears the stored sign-in only if it is the one whose refresh token xAI just refused:
    /// a newer sign-in (another `corvid login` process) is left alone. Returns whether it
    /// cleared.
    pub(crate) fn clear_if_refresh_token(&self, refused: &Secret) -> Result<bool, AuthError> {
        let file = EnvFile::read(&self.env_file)?;
        let stored = file
            .get(REFRESH_TOKEN_VAR)
            .map(|value| Secret::new(value.trim()));
        if stored.is_some_and(|stored| stored != *refused) {
            return Ok(false);
        }
        self.clear()?;
        Ok(true)
    }

    /// The sign-in as stored now: the env file, else the keyring.
    pub fn load(&self) -> Result<Option<(TokenSet, TokenSource)>, AuthError> {
        let file = EnvFile::read(&self.env_file)?;
        if let Some(tokens) = token_set_from(|name| file.get(name).map(str::to_owned)) {
            return Ok(Some((tokens, TokenSource::EnvFile)));
        }
        Ok(self
            .load_keyring()
            .map(|tokens| (tokens, TokenSource::Keyring)))
    }

    /// The keyring copy, if there is a readable one.
    pub(crate) fn load_keyring(&self) -> Option<TokenSet> {
        let item = self.keyring_copy()?;
        let stored: KeyringItem = serde_json::from_str(item.expose()).ok()?;
        token_set_from(|name| match name {
            ACCESS_TOKEN_VAR => stored.access_token.clone(),
            REFRESH_TOKEN_VAR => stored.refresh_token.clone(),
            EXPIRES_AT_VAR => stored.expires_at.map(|at| at.to_string()),
            EMAIL_VAR => stored.email.clone(),
            _ => None,
        })
    }
}

/// Stores a fresh sign-in (after `corvid login xai`).
pub fn persist_login(store: &CredentialStore, tokens: &TokenSet) -> Result<(), AuthError> {
    store.save(tokens)
}

/// Forgets the sign-in; returns the env-file variables removed.
pub fn sign_out(store: &CredentialStore) -> Result<Vec<&'static str>, AuthError> {
    store.clear()
}

/// The OAuth token set from the configuration (process env, then env file), falling back to
/// the store's keyring copy; `None` when neither token is anywhere.
pub(crate) fn tokens_from_loaded(
    loaded: &Loaded,
    store: &CredentialStore,
) -> Option<(TokenSet, TokenSource)> {
    if let Some(tokens) = token_set_from(|name| loaded.secret(name)) {
        let from_file = OAUTH_VARS
            .iter()
            .filter_map(|name| loaded.secret(name).map(|value| (name, value)))
            .all(|(name, value)| loaded.env_file.get(name).map(str::trim) == Some(value.as_str()));
        let source = if from_file {
            TokenSource::EnvFile
        } else {
            TokenSource::Environment
        };
        return Some((tokens, source));
    }
    store
        .load_keyring()
        .map(|tokens| (tokens, TokenSource::Keyring))
}

/// Builds a token set from variables. Only a refresh token is valid too: the access token is
/// then empty and already expired, so the first use refreshes.
pub(crate) fn token_set_from(get: impl Fn(&str) -> Option<String>) -> Option<TokenSet> {
    let non_empty = |name: &str| {
        get(name)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    let access = non_empty(ACCESS_TOKEN_VAR);
    let refresh = non_empty(REFRESH_TOKEN_VAR).map(Secret::from);
    let email = non_empty(EMAIL_VAR);
    match access {
        Some(access) => {
            let expires_at = non_empty(EXPIRES_AT_VAR)
                .and_then(|at| {
                    at.parse::<i64>()
                        .ok()
                        .or_else(|| at.parse::<f64>().ok().map(|f| f as i64))
                })
                .or_else(|| jwt_expiry(&access));
            Some(TokenSet {
                access_token: Secret::from(access),
                refresh_token: refresh,
                expires_at,
                email,
            })
        }
        None => refresh.map(|refresh| TokenSet {
            access_token: Secret::new(""),
            refresh_token: Some(refresh),
            expires_at: Some(0),
            email,
        }),
    }
}

fn keyring_json(tokens: &TokenSet) -> String {
    serde_json::json!({
        "access_token": tokens.access_token.expose(),
        "refresh_token": tokens.refresh_token.as_ref().map(Secret::expose),
        "expires_at": tokens.expires_at,
        "email": tokens.email,
    })
    .to_string()
}

/// The keyring item. Deliberately not `Debug`.
#[derive(Deserialize)]
struct KeyringItem {
    #[serde(default)]
    access_token: Option<String>,
    #[serde(default)]
    refresh_token: Option<String>,
    #[serde(default)]
    expires_at: Option<i64>,
    #[serde(default)]
    email: Option<String>,
}

#[cfg(test)]
mod tests;

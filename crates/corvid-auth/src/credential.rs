//! The one xAI credential the gateway uses, chosen by `auth_mode`.

use std::sync::Arc;

use corvid_config::{AuthMode, Loaded};

use crate::store::tokens_from_loaded;
use crate::tokens::API_KEY_VAR;
use crate::{AuthError, CredentialStore, OAuthEndpoints, OAuthSession, Secret};

/// The credential for the xAI upstream. Exactly one mode is active; each ignores the other
/// mode's secrets.
#[derive(Debug, Clone)]
pub enum Credential {
    /// `auth_mode = "api_key"`: `XAI_API_KEY`, sent as is, never refreshed.
    ApiKey(Secret),
    /// `auth_mode = "oauth"`: the SuperGrok sign-in, refreshed as needed.
    OAuth(Arc<OAuthSession>),
    /// The active mode has no credential; requests get a 401 naming what to set.
    Missing { mode: AuthMode },
}

impl Credential {
    /// The credential for `loaded.config.auth_mode`: `XAI_API_KEY` in api_key mode;
    /// `XAI_ACCESS_TOKEN` / `XAI_REFRESH_TOKEN` / `XAI_TOKEN_EXPIRES_AT` (then the keyring copy)
    /// in oauth mode, where a refresh token alone is enough (the first use refreshes). `http`
    /// is used for refreshes.
    pub fn from_config(loaded: &Loaded, http: reqwest::Client) -> Self {
        let mode = loaded.config.auth_mode;
        let missing = || Self::Missing { mode };
        match mode {
            AuthMode::ApiKey => loaded
                .secret(API_KEY_VAR)
                .map(|key| Self::ApiKey(Secret::from(key)))
                .unwrap_or_else(missing),
            AuthMode::OAuth => {
                let store = CredentialStore::detect(loaded);
                match tokens_from_loaded(loaded, &store) {
                    Some((tokens, _source)) => Self::OAuth(Arc::new(OAuthSession::new(
                        OAuthEndpoints::from_config(&loaded.config),
                        http,
                        store,
                        Some(tokens),
                    ))),
                    None => missing(),
                }
            }
        }
    }

    /// The active mode.
    pub fn mode(&self) -> AuthMode {
        match self {
            Self::ApiKey(_) => AuthMode::ApiKey,
            Self::OAuth(_) => AuthMode::OAuth,
            Self::Missing { mode } => *mode,
        }
    }

    /// The bearer token for the next upstream request.
    pub async fn bearer(&self) -> Result<Secret, AuthError> {
        match self {
            Self::ApiKey(key) => Ok(key.clone()),
            Self::OAuth(session) => session.access_token().await,
            Self::Missing { mode } => Err(AuthError::NotConfigured { mode: *mode }),
        }
    }

    /// After upstream answered 401 to `rejected`: `Some(token)` to retry once with, or `None`
    /// when a retry cannot help (an API key is what it is).
    pub async fn after_unauthorized(&self, rejected: &Secret) -> Result<Option<Secret>, AuthError> {
        match self {
            Self::ApiKey(_) => Ok(None),
            Self::OAuth(session) => session.refresh_after_rejection(rejected).await.map(Some),
            Self::Missing { mode } => Err(AuthError::NotConfigured { mode: *mode }),
        }
    }
}

#[cfg(test)]
mod tests;

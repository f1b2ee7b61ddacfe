//! The one xAI credential the gateway uses, chosen by `auth_mode`.

use std::sync::Arc;

use corvid_config::{AuthMode, CredentialSource, Loaded, ProviderConfig};

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
    /// Another provider's API key (OpenAI, Anthropic, Gemini, …), sent as is.
    Key { provider: String, secret: Secret },
    /// Another provider whose key variable is not set.
    MissingKey {
        provider: String,
        variables: Vec<String>,
    },
    /// A provider that needs no credential (a local server).
    None,
}

impl Credential {
    /// Whether `other` is the same credential: the same secret, the same sign-in (see
    /// [`OAuthSession::holds_same_tokens`]), or the same thing missing. A provider whose
    /// credential and settings are unchanged is kept across a settings reload.
    pub fn same_as(&self, other: &Credential) -> bool {
        match (self, other) {
            (Self::ApiKey(mine), Self::ApiKey(theirs)) => mine == theirs,
            (Self::OAuth(mine), Self::OAuth(theirs)) => mine.holds_same_tokens(theirs),
            (Self::Missing { mode: mine }, Self::Missing { mode: theirs }) => mine == theirs,
            (
                Self::Key {
                    provider: mine,
                    secret: my_secret,
                },
                Self::Key {
                    provider: theirs,
                    secret: their_secret,
                },
            ) => mine == theirs && my_secret == their_secret,
            (
                Self::MissingKey {
                    provider: mine,
                    variables: my_variables,
                },
                Self::MissingKey {
                    provider: theirs,
                    variables: their_variables,
                },
            ) => mine == theirs && my_variables == their_variables,
            (Self::None, Self::None) => true,
            _ => false,
        }
    }

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

    /// The credential for a provider: the xAI one for `XaiAuth`, the first set variable for
    /// `Env`, nothing for `None`.
    pub fn for_provider(provider: &ProviderConfig, loaded: &Loaded, http: reqwest::Client) -> Self {
        match &provider.credential {
            CredentialSource::XaiAuth => Self::from_config(loaded, http),
            CredentialSource::Env(variables) => variables
                .iter()
                .find_map(|variable| loaded.secret(variable))
                .map(|secret| Self::Key {
                    provider: provider.name.clone(),
                    secret: Secret::from(secret),
                })
                .unwrap_or_else(|| Self::MissingKey {
                    provider: provider.name.clone(),
                    variables: variables.clone(),
                }),
            // The Zed account signs its own requests (corvid_providers::zed).
            CredentialSource::None | CredentialSource::ZedAccount => Self::None,
        }
    }

    /// The xAI mode (other providers' keys count as `api_key`).
    pub fn mode(&self) -> AuthMode {
        match self {
            Self::ApiKey(_) | Self::Key { .. } | Self::MissingKey { .. } | Self::None => {
                AuthMode::ApiKey
            }
            Self::OAuth(_) => AuthMode::OAuth,
            Self::Missing { mode } => *mode,
        }
    }

    /// Whether a credential is there to send (or none is needed).
    pub fn is_available(&self) -> bool {
        !matches!(self, Self::Missing { .. } | Self::MissingKey { .. })
    }

    /// Whether requests carry no credential at all.
    pub fn is_none(&self) -> bool {
        matches!(self, Self::None)
    }

    /// The bearer token for the next upstream request.
    pub async fn bearer(&self) -> Result<Secret, AuthError> {
        match self {
            Self::ApiKey(key) | Self::Key { secret: key, .. } => Ok(key.clone()),
            Self::OAuth(session) => session.access_token().await,
            Self::Missing { mode } => Err(AuthError::NotConfigured { mode: *mode }),
            Self::MissingKey {
                provider,
                variables,
            } => Err(AuthError::MissingKey {
                provider: provider.clone(),
                variables: variables.clone(),
            }),
            Self::None => Ok(Secret::new(String::new())),
        }
    }

    /// After upstream answered 401 to `rejected`: `Some(token)` to retry once with, or `None`
    /// when a retry cannot help (an API key is what it is).
    pub async fn after_unauthorized(&self, rejected: &Secret) -> Result<Option<Secret>, AuthError> {
        match self {
            Self::ApiKey(_) | Self::Key { .. } | Self::None => Ok(None),
            Self::OAuth(session) => session.refresh_after_rejection(rejected).await.map(Some),
            Self::Missing { mode } => Err(AuthError::NotConfigured { mode: *mode }),
            Self::MissingKey {
                provider,
                variables,
            } => Err(AuthError::MissingKey {
                provider: provider.clone(),
                variables: variables.clone(),
            }),
        }
    }
}

#[cfg(test)]
mod tests;

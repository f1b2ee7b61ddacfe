//! xAI's OAuth endpoints and the fixed parameters of the public Grok CLI client.

use std::time::Duration;

use crate::{AuthError, LoginError};

/// The public Grok CLI client (no secret) that xAI's loopback sign-in accepts.
pub const CLIENT_ID: &str = "b1a00492-073a-47ea-816f-4c329264a828";
/// The scopes requested; `offline_access` yields the refresh token.
pub const SCOPE: &str = "openid profile email offline_access grok-cli:access api:access";
/// The loopback callback port registered for the client; xAI accepts no other.
pub const DEFAULT_REDIRECT_PORT: u16 = 56121;
/// The `referrer` query parameter of the authorize URL.
pub const REFERRER: &str = "corvid";

/// Where the OAuth server lives, and who we are to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthEndpoints {
    pub authorize: String,
    pub token: String,
    pub device: String,
    pub client_id: String,
    pub scope: String,
}

impl OAuthEndpoints {
    /// The endpoints under `auth_url` (`https://auth.x.ai`, or a mock in tests).
    pub fn new(auth_url: &str) -> Self {
        let base = auth_url.trim().trim_end_matches('/');
        Self {
            authorize: format!("{base}/oauth2/authorize"),
            token: format!("{base}/oauth2/token"),
            device: format!("{base}/oauth2/device/code"),
            client_id: CLIENT_ID.to_owned(),
            scope: SCOPE.to_owned(),
        }
    }

    /// The endpoints for `config.xai_auth_url`.
    pub fn from_config(config: &corvid_config::Config) -> Self {
        Self::new(&config.xai_auth_url)
    }

    /// The loopback redirect URI for `port`.
    pub fn redirect_uri(port: u16) -> String {
        format!("http://127.0.0.1:{port}/callback")
    }

    /// The browser sign-in URL (authorization code with PKCE S256).
    pub(crate) fn authorize_url(
        &self,
        redirect_uri: &str,
        code_challenge: &str,
        state: &str,
        nonce: &str,
    ) -> String {
        let query = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("response_type", "code")
            .append_pair("client_id", &self.client_id)
            .append_pair("redirect_uri", redirect_uri)
            .append_pair("scope", &self.scope)
            .append_pair("code_challenge", code_challenge)
            .append_pair("code_challenge_method", "S256")
            .append_pair("state", state)
            .append_pair("nonce", nonce)
            .append_pair("plan", "generic")
            .append_pair("referrer", REFERRER)
            .finish();
        let separator = if self.authorize.contains('?') {
            '&'
        } else {
            '?'
        };
        format!("{}{separator}{query}", self.authorize)
    }
}

/// An HTTP client for the OAuth endpoints (login commands): 10 s to connect, 30 s per request.
/// The gateway passes its own client to [`crate::Credential::from_config`] instead.
pub fn oauth_http_client() -> Result<reqwest::Client, AuthError> {
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(|err| {
            AuthError::Login(LoginError::Transport {
                message: format!("cannot build an HTTP client: {err}"),
            })
        })
}

#[cfg(test)]
mod tests;

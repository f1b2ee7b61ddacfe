//! `corvid login xai`: the browser flow (authorization code + PKCE on a loopback redirect).

use std::time::Duration;

use crate::callback::CallbackServer;
use crate::pkce::{Pkce, random_hex};
use crate::token_endpoint::{TokenOutcome, post_form};
use crate::tokens::now_unix;
use crate::{AuthError, DEFAULT_REDIRECT_PORT, LoginError, OAuthEndpoints, Secret, TokenSet};

/// How long the browser flow waits for the redirect by default.
pub const DEFAULT_LOGIN_TIMEOUT: Duration = Duration::from_secs(180);

/// The browser flow's inputs.
pub struct BrowserLogin {
    pub endpoints: OAuthEndpoints,
    pub http: reqwest::Client,
    /// The loopback callback port: [`DEFAULT_REDIRECT_PORT`] for xAI; `0` picks a free port
    /// (tests against a mock).
    pub redirect_port: u16,
    /// Shows the sign-in URL: prints it and tries [`crate::open_in_browser`].
    pub open_browser: Box<dyn Fn(&str) + Send + Sync>,
    /// How long to wait for the browser to come back.
    pub timeout: Duration,
}

impl BrowserLogin {
    /// The usual options: port 56121, a 180 s wait.
    pub fn new(
        endpoints: OAuthEndpoints,
        http: reqwest::Client,
        open_browser: impl Fn(&str) + Send + Sync + 'static,
    ) -> Self {
        Self {
            endpoints,
            http,
            redirect_port: DEFAULT_REDIRECT_PORT,
            open_browser: Box::new(open_browser),
            timeout: DEFAULT_LOGIN_TIMEOUT,
        }
    }
}

/// Signs in through the browser and returns the new tokens (not yet stored: see
/// [`crate::persist_login`]). The callback port is bound before the browser opens.
pub async fn login_browser(options: BrowserLogin) -> Result<TokenSet, AuthError> {
    let server = CallbackServer::bind(options.redirect_port).await?;
    let redirect_uri = OAuthEndpoints::redirect_uri(server.port());
    let pkce = Pkce::generate();
    let state = random_hex(16);
    let nonce = random_hex(16);
    let url = options
        .endpoints
        .authorize_url(&redirect_uri, &pkce.challenge, &state, &nonce);
    (options.open_browser)(&url);

    let callback = tokio::time::timeout(options.timeout, server.wait(&state))
        .await
        .map_err(|_| LoginError::TimedOut {
            after: options.timeout,
        })??;
    let result = exchange_code(
        &options.endpoints,
        &options.http,
        &callback.code,
        &redirect_uri,
        &pkce.verifier,
    )
    .await;
    match &result {
        Ok(tokens) => {
            let who = tokens
                .email
                .as_deref()
                .map(|email| format!(" as {email}"))
                .unwrap_or_default();
            let message = format!("corvid is signed in to xAI{who}. You may close this tab.");
            callback
                .responder
                .finish("200 OK", "Signed in", &message)
                .await;
        }
        Err(err) => {
            let message = format!("{err}. You may close this tab.");
            callback
                .responder
                .finish("502 Bad Gateway", "Sign-in failed", &message)
                .await;
        }
    }
    Ok(result?)
}

/// Trades the authorization code for tokens; a reply without a refresh token is refused.
async fn exchange_code(
    endpoints: &OAuthEndpoints,
    http: &reqwest::Client,
    code: &Secret,
    redirect_uri: &str,
    verifier: &Secret,
) -> Result<TokenSet, LoginError> {
    let form = [
        ("grant_type", "authorization_code"),
        ("client_id", endpoints.client_id.as_str()),
        ("code", code.expose()),
        ("redirect_uri", redirect_uri),
        ("code_verifier", verifier.expose()),
    ];
    match post_form(http, &endpoints.token, &form, &[code, verifier]).await {
        Ok(TokenOutcome::Tokens(reply)) => tokens_from_login(reply),
        Ok(TokenOutcome::Rejected(rejection)) => Err(LoginError::TokenEndpoint {
            status: rejection.status,
            body: rejection.summary(),
        }),
        Err(error) => Err(LoginError::Transport {
            message: error.to_string(),
        }),
    }
}

/// A login's token set: a refresh token is required.
pub(crate) fn tokens_from_login(reply: crate::tokens::TokenReply) -> Result<TokenSet, LoginError> {
    if !reply.has_refresh_token() {
        return Err(LoginError::MissingRefreshToken);
    }
    let tokens = reply.into_token_set(now_unix(), None, None);
    if tokens.access_token.expose().is_empty() {
        return Err(LoginError::TokenEndpoint {
            status: 200,
            body: "the reply had an empty access_token".to_owned(),
        });
    }
    Ok(tokens)
}

#[cfg(test)]
mod tests;

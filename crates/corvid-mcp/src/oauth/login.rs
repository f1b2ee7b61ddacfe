//! `corvid mcp login NAME` and `logout NAME`: the browser sign-in to one HTTP server.
//!
//! 1. An unauthenticated `initialize` to the server; its 401 carries a `WWW-Authenticate`
//!    challenge naming the protected resource metadata (RFC 9728).
//! 2. Discovery from that challenge (else the well-known paths), then the authorization
//!    server's metadata (RFC 8414 / OpenID). rmcp refuses metadata that points at loopback or
//!    private addresses unless the server's own URL is one (see the crate README).
//! 3. The client: the configured `oauth.client_id`, else a Client ID Metadata Document where
//!    configured and supported, else dynamic client registration (RFC 7591).
//! 4. PKCE (S256) and a `state`, the browser sent to the authorization URL, the loopback
//!    callback on 127.0.0.1 (corvid-auth's), the code exchanged, the tokens stored.

use std::path::PathBuf;
use std::time::Duration;

use corvid_auth::{CallbackServer, LoginError};
use corvid_config::{McpServer, McpTransport};
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationRequest, AuthorizationSession,
};

use super::SignIn;
use crate::error::StartError;
use crate::launch::{McpEnvironment, http_parts};

/// The name corvid registers itself under.
const CLIENT_NAME: &str = "corvid";
/// How long the first, unauthenticated request may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// How one login runs.
pub struct LoginOptions {
    /// `mcp_oauth_callback_port`, for a server that names no `oauth.callback_port`; `None`:
    /// any free port.
    pub callback_port: Option<u16>,
    /// How long to wait for the browser to come back.
    pub timeout: Duration,
    /// Handed the authorization URL once the callback listens (the CLI prints it and opens a
    /// browser).
    pub open: Box<dyn FnOnce(&str) + Send>,
}

impl std::fmt::Debug for LoginOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoginOptions")
            .field("callback_port", &self.callback_port)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// How corvid identified itself to the authorization server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Registration {
    /// The configured `oauth.client_id`.
    Configured,
    /// The configured Client ID Metadata Document URL.
    MetadataDocument,
    /// Dynamic client registration, just now.
    Registered,
}

/// A finished sign-in.
#[derive(Debug, Clone)]
pub struct LoginOutcome {
    pub registration: Registration,
    /// The scopes asked for.
    pub scopes: Vec<String>,
    /// The redirect URI the browser came back to.
    pub redirect_uri: String,
    /// Where the tokens were written.
    pub env_file: PathBuf,
    /// The keyring that holds a copy, or "env file only".
    pub backend: &'static str,
}

/// Why a sign-in failed; every message says what to do. None carries a token.
#[derive(Debug, thiserror::Error)]
pub enum McpLoginError {
    #[error("`{name}` is a local (stdio) server; only HTTP servers sign in")]
    NotHttp { name: String },
    #[error("`{name}` has `oauth = false` in its configuration; remove it to sign in")]
    Disabled { name: String },
    #[error(
        "`{name}` already sends credentials of its own (`bearer_token_env_var` or an Authorization header); corvid signs in only to servers configured without them"
    )]
    OwnCredentials { name: String },
    #[error("`{name}`: {source}")]
    Config {
        name: String,
        #[source]
        source: StartError,
    },
    #[error("could not reach `{name}` at {url}: {message}")]
    Unreachable {
        name: String,
        url: String,
        message: String,
    },
    #[error(
        "`{name}` {} and publishes no OAuth metadata (RFC 9728 protected resource metadata or RFC 8414 authorization server metadata), so corvid cannot sign in to it; if it takes an API key, give it `headers` or `bearer_token_env_var`",
        if *asked { "asks for sign-in (HTTP 401)" } else { "did not ask for sign-in" }
    )]
    NoMetadata { name: String, asked: bool },
    #[error("discovering how to sign in to `{name}` failed: {message}")]
    Discovery { name: String, message: String },
    #[error(
        "the authorization server of `{name}` offers no dynamic client registration; register corvid with it (redirect URI http://127.0.0.1:<port>/callback) and set `oauth.client_id` (and `oauth.callback_port`) for this server"
    )]
    NoRegistration { name: String },
    #[error(
        "the authorization server of `{name}` refused to register corvid: {message}; register it by hand and set `oauth.client_id`"
    )]
    RegistrationRefused { name: String, message: String },
    #[error(
        "port {port} on 127.0.0.1 is in use, so the sign-in callback cannot listen there (another `corvid mcp login`, or another app); free it, or set another `oauth.callback_port` / `mcp_oauth_callback_port`"
    )]
    PortInUse { port: u16 },
    #[error("cannot listen on 127.0.0.1:{port} for the sign-in callback: {message}")]
    Listen { port: u16, message: String },
    #[error(
        "no answer from the browser within {} s (the tab was closed, or the sign-in not finished); run `corvid mcp login {name}` again",
        after.as_secs()
    )]
    TimedOut { name: String, after: Duration },
    #[error(
        "the browser came back with a `state` that is not this login's (a stale tab, or a forged request); nothing was stored: run `corvid mcp login {name}` again"
    )]
    StateMismatch { name: String },
    #[error("the authorization server of `{name}` did not sign you in: {message}")]
    Denied { name: String, message: String },
    #[error("preparing the sign-in to `{name}` failed: {message}")]
    Authorization { name: String, message: String },
    #[error("the token endpoint of `{name}` did not hand out tokens: {message}")]
    TokenEndpoint { name: String, message: String },
    #[error("could not store the sign-in: {0}")]
    Store(String),
}

/// Signs in to `server` in a browser and stores its tokens (see the module docs).
pub async fn login(
    server: &McpServer,
    environment: &McpEnvironment,
    options: LoginOptions,
) -> Result<LoginOutcome, McpLoginError> {
    let name = server.name.clone();
    if !matches!(server.transport, McpTransport::Http { .. }) {
        return Err(McpLoginError::NotHttp { name });
    }
    if server.oauth.disabled {
        return Err(McpLoginError::Disabled { name });
    }
    let Some(store) = &environment.oauth else {
        return Err(McpLoginError::Store(
            "no sign-in store was configured".to_owned(),
        ));
    };
    let config = |source: StartError| McpLoginError::Config {
        name: name.clone(),
        source,
    };
    let parts = http_parts(server, environment).map_err(config)?;
    if parts.has_own_credentials() {
        return Err(McpLoginError::OwnCredentials { name });
    }

    let challenge = probe(&name, &parts).await?;
    let discovery = |err: AuthError| McpLoginError::Discovery {
        name: name.clone(),
        message: err.to_string(),
    };
    let mut manager = AuthorizationManager::new(parts.url.as_str())
        .await
        .map_err(discovery)?;
    let resolution = manager
        .resolve_metadata_from_challenge(challenge.as_ref().and_then(Challenge::header))
        .await
        .map_err(discovery)?;
    if !resolution.source.is_discovered() {
        return Err(McpLoginError::NoMetadata {
            name,
            asked: challenge.is_some(),
        });
    }
    let metadata = resolution.metadata;
    manager.set_metadata(metadata.clone());

    let port = server
        .oauth
        .callback_port
        .or(options.callback_port)
        .unwrap_or(0);
    let callback = CallbackServer::bind(port)
        .await
        .map_err(|err| callback_error(&name, err))?
        .with_retry_command(format!("`corvid mcp login {name}`"));
    let redirect_uri = format!("http://127.0.0.1:{}/callback", callback.port());

    let scopes = if server.oauth.scopes.is_empty() {
        manager.select_initial_scopes(&[]).await
    } else {
        server.oauth.scopes.clone()
    };
    let mut sign_in = SignIn::new(
        store.store.clone(),
        server,
        &environment.project,
        &parts.url,
    );
    sign_in.metadata = Some(metadata.clone());
    sign_in.redirect_uri = Some(redirect_uri.clone());
    let mut request = AuthorizationRequest::new(redirect_uri.clone())
        .with_client_name(CLIENT_NAME)
        .with_scopes(scopes.clone());
    let supports_metadata_document = metadata
        .additional_fields
        .get("client_id_metadata_document_supported")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);
    let registration = if let Some(client_id) = &server.oauth.client_id {
        request = request.with_preregistered_client(client_id.clone());
        if let Some(secret) = configured_secret(server, environment).map_err(config)? {
            request = request.with_client_secret(secret);
        }
        Registration::Configured
    } else if let Some(document) = server
        .oauth
        .client_metadata_url
        .as_ref()
        .filter(|_| supports_metadata_document)
    {
        request = request.with_client_metadata_url(document.clone());
        Registration::MetadataDocument
    } else {
        if metadata.registration_endpoint.is_none() {
            return Err(McpLoginError::NoRegistration { name });
        }
        let scope_refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
        let client = manager
            .register_client(CLIENT_NAME, &redirect_uri, &scope_refs)
            .await
            .map_err(|err| McpLoginError::RegistrationRefused {
                name: name.clone(),
                message: registration_message(err),
            })?;
        request = request.with_preregistered_client(client.client_id.clone());
        if let Some(secret) = client.client_secret {
            request = request.with_client_secret(secret.clone());
            sign_in.client_secret = Some(secret);
        }
        Registration::Registered
    };
    manager.set_credential_store(sign_in.clone());
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, err)| McpLoginError::Authorization {
            name: name.clone(),
            message: err.to_string(),
        })?;
    let url = session.get_authorization_url().to_owned();
    let state = url::Url::parse(&url)
        .ok()
        .and_then(|url| {
            url.query_pairs()
                .find(|(key, _)| key == "state")
                .map(|(_, value)| value.into_owned())
        })
        .ok_or_else(|| McpLoginError::Authorization {
            name: name.clone(),
            message: "the authorization URL carries no state".to_owned(),
        })?;

    (options.open)(&url);
    let answer = match tokio::time::timeout(options.timeout, callback.wait(&state)).await {
        Err(_) => {
            return Err(McpLoginError::TimedOut {
                name,
                after: options.timeout,
            });
        }
        Ok(Err(err)) => return Err(callback_error(&name, err)),
        Ok(Ok(answer)) => answer,
    };
    let exchanged = session
        .handle_callback_with_issuer(answer.code.expose(), &state, answer.issuer.as_deref())
        .await;
    match exchanged {
        Ok(_) => {
            answer
                .responder
                .finish(
                    "200 OK",
                    "Signed in",
                    &format!(
                        "corvid is signed in to the MCP server `{name}`. You may close this tab."
                    ),
                )
                .await;
        }
        Err(err) => {
            let error = match err {
                AuthError::CredentialStoreError(message) => McpLoginError::Store(message),
                other => McpLoginError::TokenEndpoint {
                    name: name.clone(),
                    message: other.to_string(),
                },
            };
            answer
                .responder
                .finish("502 Bad Gateway", "Sign-in failed", &format!("{error}."))
                .await;
            return Err(error);
        }
    }
    tracing::info!(target: "corvid_mcp", server = %name, "signed in to the MCP server");
    Ok(LoginOutcome {
        registration,
        scopes,
        redirect_uri,
        env_file: sign_in.env_file(),
        backend: store.backend(),
    })
}

/// Forgets the sign-in of `server`; returns whether there was one.
pub fn logout(server: &McpServer, environment: &McpEnvironment) -> Result<bool, McpLoginError> {
    let name = server.name.clone();
    if !matches!(server.transport, McpTransport::Http { .. }) {
        return Err(McpLoginError::NotHttp { name });
    }
    let Some(store) = &environment.oauth else {
        return Ok(false);
    };
    let parts =
        http_parts(server, environment).map_err(|source| McpLoginError::Config { name, source })?;
    SignIn::new(
        store.store.clone(),
        server,
        &environment.project,
        &parts.url,
    )
    .remove()
    .map_err(|err| McpLoginError::Store(err.to_string()))
}

/// The secret of a configured client, from `oauth.client_secret_env_var`.
pub(crate) fn configured_secret(
    server: &McpServer,
    environment: &McpEnvironment,
) -> Result<Option<String>, StartError> {
    let Some(variable) = &server.oauth.client_secret_env_var else {
        return Ok(None);
    };
    environment
        .reader(server)
        .variable(variable)?
        .map(Some)
        .ok_or_else(|| StartError::Unset {
            field: "oauth.client_secret_env_var",
            variable: variable.clone(),
        })
}

/// What the unauthenticated request got back.
struct Challenge(Option<String>);

impl Challenge {
    /// The `WWW-Authenticate` header, when the 401 had one.
    fn header(&self) -> Option<&str> {
        self.0.as_deref()
    }
}

/// Sends the `initialize` a session would, without credentials: a 401 is the challenge
/// (`None` when the server answered without asking for sign-in).
async fn probe(
    name: &str,
    parts: &crate::launch::HttpParts,
) -> Result<Option<Challenge>, McpLoginError> {
    let client = reqwest::Client::builder()
        .timeout(PROBE_TIMEOUT)
        .build()
        .map_err(|err| McpLoginError::Unreachable {
            name: name.to_owned(),
            url: parts.url.clone(),
            message: err.to_string(),
        })?;
    let initialize = serde_json::json!({
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")},
        },
    });
    let response = client
        .post(&parts.url)
        .headers(
            parts
                .headers
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        )
        .header(http::header::ACCEPT, "application/json, text/event-stream")
        .json(&initialize)
        .send()
        .await
        .map_err(|err| McpLoginError::Unreachable {
            name: name.to_owned(),
            url: parts.url.clone(),
            message: without_url(&err),
        })?;
    if response.status() != reqwest::StatusCode::UNAUTHORIZED {
        return Ok(None);
    }
    let header = response
        .headers()
        .get(http::header::WWW_AUTHENTICATE)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    Ok(Some(Challenge(header)))
}

/// A reqwest error without the URL it repeats (the message names it already).
fn without_url(err: &reqwest::Error) -> String {
    let mut text = err.to_string();
    if let Some(url) = err.url() {
        text = text.replace(&format!(" for url ({url})"), "");
    }
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}

fn registration_message(err: AuthError) -> String {
    match err {
        AuthError::RegistrationFailed(message) => message,
        other => other.to_string(),
    }
}

fn callback_error(name: &str, err: LoginError) -> McpLoginError {
    let name = name.to_owned();
    match err {
        LoginError::PortInUse { port } => McpLoginError::PortInUse { port },
        LoginError::Listen { port, source } => McpLoginError::Listen {
            port,
            message: source.to_string(),
        },
        LoginError::StateMismatch => McpLoginError::StateMismatch { name },
        LoginError::Denied { error, description } => McpLoginError::Denied {
            name,
            message: match description {
                Some(description) => format!("{error}: {description}"),
                None => error,
            },
        },
        other => McpLoginError::Denied {
            name,
            message: other.to_string(),
        },
    }
}

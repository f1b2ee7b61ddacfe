//! OAuth sign-in to Streamable HTTP servers, on rmcp's `auth` pieces: `corvid mcp login`
//! ([`login`]) discovers the authorization server, registers corvid (or uses a configured
//! client), runs the browser flow with PKCE and a loopback callback, and stores the tokens;
//! a session then connects with them through rmcp's `AuthClient`, which refreshes an expired
//! access token by itself (the rotated tokens are stored again).
//!
//! A sign-in belongs to one server definition: it is stored under a key made of which
//! configuration defined the server (config.toml, or the project folder of a
//! `.corvid/mcp.json`), its name and its URL. A project's file therefore never gets the tokens
//! of another project's server, of the user's own server of the same name, or of the same name
//! at another URL; and a sign-in whose stored URL or name differs from the definition is not
//! used.
//!
//! Storage is corvid-auth's [`McpSignInStore`]: the env file (0600, atomic) plus the keyring.
//! Tokens never reach a log line or an error message.

mod login;

use std::path::{Path, PathBuf};

use corvid_auth::{McpSignInStore, Secret};
use corvid_config::{ConfigError, McpScope, McpServer};
use rmcp::service::ClientInitializeError;
use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationManager, AuthorizationMetadata, CredentialStore,
    OAuthClientConfig, StoredCredentials,
};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{SignInReadError, StartError};
use crate::launch::McpEnvironment;

pub use login::{LoginOptions, LoginOutcome, McpLoginError, Registration, login, logout};

/// Where the sign-ins of MCP servers are kept.
#[derive(Debug, Clone)]
pub struct OAuthStore {
    store: McpSignInStore,
}

impl OAuthStore {
    pub fn new(store: McpSignInStore) -> Self {
        Self { store }
    }

    /// The env file the sign-ins are written to.
    pub fn env_file(&self) -> &Path {
        self.store.env_file()
    }

    /// The keyring that holds a copy, or "env file only".
    pub fn backend(&self) -> &'static str {
        self.store.backend()
    }

    /// Whether `server` (defined for `project`, reached at `url`) has a stored sign-in with
    /// tokens.
    pub fn is_signed_in(&self, server: &McpServer, project: &Path, url: &str) -> bool {
        matches!(
            self.sign_in_for(server, project, url),
            Ok(Some(sign_in)) if sign_in.has_tokens()
        )
    }

    /// A digest of the stored sign-in of `server` at `url` when it holds tokens: it changes
    /// when `corvid mcp login` (or a refresh) writes new ones. Never the tokens themselves.
    pub(crate) fn stamp(&self, server: &McpServer, project: &Path, url: &str) -> Option<String> {
        let sign_in = SignIn::new(self.store.clone(), server, project, url);
        let (text, record) = sign_in.read_stored().ok()??;
        record
            .credentials
            .token_response
            .is_some()
            .then(|| hex_digest(text.expose(), 16))
    }

    /// The stored sign-in of `server` at `url`, if there is one that belongs to it.
    pub(crate) fn sign_in_for(
        &self,
        server: &McpServer,
        project: &Path,
        url: &str,
    ) -> Result<Option<SignIn>, StartError> {
        let sign_in = SignIn::new(self.store.clone(), server, project, url);
        match sign_in.read() {
            Ok(Some(record)) => Ok(Some(SignIn {
                metadata: record.metadata,
                client_secret: record.client_secret,
                redirect_uri: record.redirect_uri,
                ..sign_in
            })),
            Ok(None) => Ok(None),
            Err(err) => Err(StartError::StoredSignIn(err)),
        }
    }
}

/// Whose configuration defined a server, for the key of its sign-in.
fn owner(server: &McpServer, project: &Path) -> String {
    match server.origin.scope {
        McpScope::Global => "config.toml".to_owned(),
        McpScope::Project => {
            let folder = std::fs::canonicalize(project).unwrap_or_else(|_| project.to_path_buf());
            format!("project:{}", folder.display())
        }
        McpScope::Editor => "editor".to_owned(),
    }
}

/// The key of a sign-in: the first 24 hex digits of SHA-256 over the owner, the name and the
/// URL (96 bits: collisions are not a concern, and the record repeats all three anyway).
fn key(owner: &str, name: &str, url: &str) -> String {
    hex_digest(&format!("{owner}\0{name}\0{url}\0"), 12)
}

/// The first `bytes` bytes of the SHA-256 of `text`, in hex.
fn hex_digest(text: &str, bytes: usize) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .take(bytes)
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// What is stored for one sign-in (a JSON document in one env-file variable).
#[derive(Serialize, Deserialize)]
struct Record {
    server: String,
    url: String,
    owner: String,
    /// rmcp's own record: client id, tokens, granted scopes, when they came.
    credentials: StoredCredentials,
    /// The authorization server's endpoints, as discovered at login (no discovery per session).
    #[serde(default)]
    metadata: Option<AuthorizationMetadata>,
    /// The secret a dynamic registration handed out, if it did.
    #[serde(default)]
    client_secret: Option<String>,
    /// The redirect URI the client was registered with.
    #[serde(default)]
    redirect_uri: Option<String>,
}

/// One server's sign-in, as rmcp's credential store: reads and writes its record.
#[derive(Clone)]
pub(crate) struct SignIn {
    store: McpSignInStore,
    key: String,
    server: String,
    url: String,
    owner: String,
    pub(crate) metadata: Option<AuthorizationMetadata>,
    pub(crate) client_secret: Option<String>,
    pub(crate) redirect_uri: Option<String>,
}

impl SignIn {
    fn new(store: McpSignInStore, server: &McpServer, project: &Path, url: &str) -> Self {
        let owner = owner(server, project);
        Self {
            key: key(&owner, &server.name, url),
            store,
            server: server.name.clone(),
            url: url.to_owned(),
            owner,
            metadata: None,
            client_secret: None,
            redirect_uri: None,
        }
    }

    /// The URL the sign-in is for.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// Whether the stored record holds tokens.
    pub(crate) fn has_tokens(&self) -> bool {
        matches!(self.read(), Ok(Some(record)) if record.credentials.token_response.is_some())
    }

    /// The stored record, if there is one and it is this server's.
    fn read(&self) -> Result<Option<Record>, SignInReadError> {
        Ok(self.read_stored()?.map(|(_, record)| record))
    }

    /// The stored text and its record, if there is one and it is this server's.
    fn read_stored(&self) -> Result<Option<(Secret, Record)>, SignInReadError> {
        let Some(text) = self.store.load(&self.key)? else {
            return Ok(None);
        };
        let record: Record =
            serde_json::from_str(text.expose()).map_err(|_| SignInReadError::Unreadable)?;
        let ours =
            record.server == self.server && record.url == self.url && record.owner == self.owner;
        Ok(ours.then_some((text, record)))
    }

    fn write(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let record = Record {
            server: self.server.clone(),
            url: self.url.clone(),
            owner: self.owner.clone(),
            credentials,
            metadata: self.metadata.clone(),
            client_secret: self.client_secret.clone(),
            redirect_uri: self.redirect_uri.clone(),
        };
        let text = serde_json::to_string(&record)
            .map_err(|err| AuthError::CredentialStoreError(err.to_string()))?;
        self.store
            .save(&self.key, &Secret::new(text))
            .map_err(|err| AuthError::CredentialStoreError(err.to_string()))
    }

    /// Forgets the sign-in; returns whether there was one.
    pub(crate) fn remove(&self) -> Result<bool, ConfigError> {
        self.store.forget(&self.key)
    }

    /// Where it is written.
    pub(crate) fn env_file(&self) -> PathBuf {
        self.store.env_file().to_path_buf()
    }
}

#[async_trait::async_trait]
impl CredentialStore for SignIn {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.read()
            .map(|record| record.map(|record| record.credentials))
            .map_err(|err| AuthError::CredentialStoreError(err.to_string()))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.write(credentials)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.remove()
            .map(|_| ())
            .map_err(|err| AuthError::CredentialStoreError(err.to_string()))
    }

    /// The authorization server refused the refresh token: the tokens are dropped (the client
    /// registration is kept), so the server needs a new sign-in. A newer sign-in (another
    /// `corvid mcp login` meanwhile) is left alone.
    async fn on_refresh_token_rejected(
        &self,
        credentials: &StoredCredentials,
    ) -> Result<(), AuthError> {
        let refused = refresh_token_of(credentials);
        let Some(record) = self
            .read()
            .map_err(|err| AuthError::CredentialStoreError(err.to_string()))?
        else {
            return Ok(());
        };
        if refresh_token_of(&record.credentials) != refused {
            return Ok(());
        }
        tracing::info!(target: "corvid_mcp", server = %self.server, "the authorization server refused the refresh token; the server needs a new sign-in");
        let mut kept = record.credentials;
        kept.token_response = None;
        self.write(kept)
    }
}

/// The refresh token of `credentials` (read through serde: rmcp does not re-export the
/// `oauth2` trait that reads it).
fn refresh_token_of(credentials: &StoredCredentials) -> Option<Secret> {
    let tokens = serde_json::to_value(credentials.token_response.as_ref()?).ok()?;
    tokens
        .get("refresh_token")
        .and_then(serde_json::Value::as_str)
        .map(Secret::new)
}

/// An HTTP client that sends `sign_in`'s access token, refreshes it when it has expired (the
/// rotated tokens are stored again), and, when the server still answers 401, lets the
/// handshake fail with the challenge (the caller then says the server needs a sign-in).
pub(crate) async fn authorized(
    sign_in: SignIn,
    client: reqwest::Client,
    server: &McpServer,
    environment: &McpEnvironment,
) -> Result<AuthClient<reqwest::Client>, StartError> {
    let prepare = |error| StartError::PrepareSignIn(Box::new(error));
    // The default manager: discovery stays behind rmcp's address checks (loopback or private
    // metadata only for a server that is itself at such an address).
    let mut manager = AuthorizationManager::new(sign_in.url())
        .await
        .map_err(prepare)?;
    if let Some(metadata) = sign_in.metadata.clone() {
        manager.set_metadata(metadata);
    }
    let secret = match login::configured_secret(server, environment)? {
        Some(secret) => Some(secret),
        None => sign_in.client_secret.clone(),
    };
    let redirect_uri = sign_in
        .redirect_uri
        .clone()
        .unwrap_or_else(|| sign_in.url().to_owned());
    manager.set_credential_store(sign_in);
    let configured = manager.initialize_from_store().await.map_err(prepare)?;
    if configured && let Some(secret) = secret {
        // `initialize_from_store` sets up the client id alone; a confidential client's refresh
        // needs its secret too.
        let (client_id, _) = manager.get_credentials().await.map_err(prepare)?;
        manager
            .configure_client(
                OAuthClientConfig::new(client_id, redirect_uri).with_client_secret(secret),
            )
            .map_err(prepare)?;
    }
    Ok(AuthClient::new(client, manager))
}

/// Whether a handshake failed because the server wants (other) credentials: a 401, or a
/// stored sign-in that can no longer be refreshed.
pub(crate) fn is_unauthorized(err: &ClientInitializeError) -> bool {
    err.is_authorization_required()
}

#[cfg(test)]
mod tests;

//! Signing in to a Zed account the way the Zed editor does (`corvid login zed`), and keeping
//! the sign-in.
//!
//! The flow (reference `zed-cloud.md` §2):
//! 1. an RSA-2048 key pair is made off the async runtime ([`ZedKeyPair::generate_off_runtime`]);
//! 2. a one-shot listener binds `127.0.0.1:0`;
//! 3. the browser opens `{web}/native_app_signin?native_app_port=…&native_app_public_key=…
//!    &system_id=…` ([`sign_in_url`]), the key being PKCS#1 DER in URL-safe base64;
//! 4. the browser comes back to the listener, on any path, with `user_id` and an
//!    `access_token` encrypted to the key: RSA-OAEP-SHA256, or PKCS#1 v1.5 from older servers;
//! 5. the browser is sent on to the success page and the pair is returned as
//!    [`ZedCredentials`], to be stored with [`ZedStore`].
//!
//! The pair is sent as `Authorization: <user_id> <access_token>` to Zed's account API (see
//! `corvid_providers::zed`) and stays valid until that API answers 401.

use std::time::Duration;

use crate::Secret;

mod error;
mod key;
mod listener;
mod store;

#[cfg(test)]
mod tests;

pub use error::ZedLoginError;
pub use key::{KEY_BITS, TokenFormat, ZedKeyPair};
pub use store::{
    ZED_ACCESS_TOKEN_VAR, ZED_SIGN_IN_VARS, ZED_SYSTEM_ID_VAR, ZED_USER_ID_VAR, ZedSignIn,
    ZedStore, zed_credentials_from, zed_credentials_from_loaded,
};

/// Zed's own server setting (`server_url`, env `ZED_SERVER_URL` in the editor).
pub const DEFAULT_SERVER_URL: &str = "https://zed.dev";
/// How long the sign-in waits for the browser by default (Zed waits about 100 s).
pub const DEFAULT_ZED_LOGIN_TIMEOUT: Duration = Duration::from_secs(180);

/// A signed-in Zed account: what `/client/*` requests carry. `Debug` hides the token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZedCredentials {
    /// The account's numeric (legacy) user id, as text.
    pub user_id: String,
    /// The decrypted access token: an opaque string (often compact JSON), sent verbatim.
    pub access_token: Secret,
    /// This installation's id (a UUID v4), sent as `x-zed-system-id` when known.
    pub system_id: Option<String>,
}

/// Where the three parts of Zed's service live (reference §1). A mock serves all three from
/// one base ([`ZedHosts::single`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZedHosts {
    /// The web site: the sign-in pages.
    pub web: String,
    /// The account API (`/client/*`).
    pub cloud: String,
    /// The LLM API (`/models`, `/completions`).
    pub llm: String,
}

impl ZedHosts {
    /// The hosts for a Zed `server_url`, as the editor maps it.
    pub fn from_server_url(server_url: &str) -> Self {
        let server = trim_base(server_url);
        let (cloud, llm) = match server {
            "https://zed.dev" => ("https://cloud.zed.dev", "https://cloud.zed.dev"),
            "https://staging.zed.dev" => ("https://cloud.zed.dev", "https://llm-staging.zed.dev"),
            "http://localhost:3000" => ("http://localhost:8787", "http://localhost:8787"),
            other => (other, other),
        };
        Self {
            web: server.to_owned(),
            cloud: cloud.to_owned(),
            llm: llm.to_owned(),
        }
    }

    /// One base URL for everything (a mock server).
    pub fn single(base: &str) -> Self {
        let base = trim_base(base).to_owned();
        Self {
            web: base.clone(),
            cloud: base.clone(),
            llm: base,
        }
    }

    /// The page the browser is sent to once the callback is read.
    pub fn success_url(&self) -> String {
        format!("{}/native_app_signin_succeeded", self.web)
    }
}

impl Default for ZedHosts {
    fn default() -> Self {
        Self::from_server_url(DEFAULT_SERVER_URL)
    }
}

fn trim_base(url: &str) -> &str {
    url.trim().trim_end_matches('/')
}

/// A new random system id: a UUID v4 in its usual lowercase text form. Generate it once per
/// installation and keep it ([`ZedStore::system_id`] does both).
pub fn new_system_id() -> String {
    let mut bytes: [u8; 16] = rand::random();
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// Whether `text` is a UUID in hyphenated form (any version, either case).
pub fn is_uuid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(group, len)| group.len() == len && group.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The sign-in page for a callback on `port`: `{web}/native_app_signin?native_app_port=<port>
/// &native_app_public_key=<key>[&system_id=<uuid>]`, form-encoded as the newest Zed does.
pub fn sign_in_url(web: &str, port: u16, public_key: &str, system_id: Option<&str>) -> String {
    let mut query = url::form_urlencoded::Serializer::new(String::new());
    query.append_pair("native_app_port", &port.to_string());
    query.append_pair("native_app_public_key", public_key);
    if let Some(system_id) = system_id {
        query.append_pair("system_id", system_id);
    }
    format!("{}/native_app_signin?{}", trim_base(web), query.finish())
}

/// The inputs of [`login_zed`].
pub struct ZedLogin {
    /// The sign-in page's site and the success page.
    pub hosts: ZedHosts,
    /// This installation's id (from [`ZedStore::system_id`]); `None` makes a new one, which the
    /// returned credentials carry so the caller can keep it.
    pub system_id: Option<String>,
    /// A key pair made ahead of time (e.g. while the terms were shown); `None` makes one.
    pub key_pair: Option<ZedKeyPair>,
    /// Shows the sign-in URL: prints it and tries [`crate::open_in_browser`].
    pub open_browser: Box<dyn Fn(&str) + Send + Sync>,
    /// How long to wait for the browser to come back.
    pub timeout: Duration,
    /// The loopback port to listen on; `0` (the default) lets the OS pick.
    pub port: u16,
}

impl ZedLogin {
    /// The usual options: zed.dev, a new system id unless one is set, a 180 s wait.
    pub fn new(hosts: ZedHosts, open_browser: impl Fn(&str) + Send + Sync + 'static) -> Self {
        Self {
            hosts,
            system_id: None,
            key_pair: None,
            open_browser: Box::new(open_browser),
            timeout: DEFAULT_ZED_LOGIN_TIMEOUT,
            port: 0,
        }
    }
}

impl std::fmt::Debug for ZedLogin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZedLogin")
            .field("hosts", &self.hosts)
            .field("system_id", &self.system_id)
            .field("timeout", &self.timeout)
            .field("port", &self.port)
            .finish_non_exhaustive()
    }
}

/// Signs in to Zed through the browser and returns the account pair (not yet stored: see
/// [`ZedStore::save`]). The listener is bound and the key made before the browser opens; the
/// wait ends at the first callback carrying `user_id` and `access_token` (or `error`), or
/// after `timeout`.
pub async fn login_zed(options: ZedLogin) -> Result<ZedCredentials, ZedLoginError> {
    let key_pair = match options.key_pair {
        Some(key_pair) => key_pair,
        None => ZedKeyPair::generate_off_runtime().await?,
    };
    let listener = listener::CallbackListener::bind(options.port).await?;
    let system_id = options.system_id.unwrap_or_else(new_system_id);
    let url = sign_in_url(
        &options.hosts.web,
        listener.port(),
        key_pair.public_key(),
        Some(&system_id),
    );
    (options.open_browser)(&url);

    let success_url = options.hosts.success_url();
    let (user_id, access_token) =
        tokio::time::timeout(options.timeout, listener.wait(&key_pair, &success_url))
            .await
            .map_err(|_| ZedLoginError::TimedOut {
                after: options.timeout,
            })??;
    Ok(ZedCredentials {
        user_id,
        access_token,
        system_id: Some(system_id),
    })
}

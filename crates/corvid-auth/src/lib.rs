//! corvid's credentials for xAI: the `Secret` newtype, the API key or the SuperGrok OAuth
//! sign-in (browser PKCE and device flows, single-flight refresh), and where the sign-in is
//! stored (the env file, plus the OS keyring where one works).
//!
//! The gateway needs only [`Credential`]: `from_config`, `bearer`, `after_unauthorized`. The
//! CLI uses the login functions, [`CredentialStore`] and [`AuthStatus`].

mod browser;
mod callback;
mod credential;
mod device;
mod endpoints;
mod error;
mod keyring;
mod mcp_sign_in;
mod open;
mod pkce;
mod secret;
mod session;
mod sign_in_store;
mod status;
mod store;
mod token_endpoint;
mod tokens;
pub mod zed;

#[cfg(test)]
mod test_util;

pub use browser::{BrowserLogin, DEFAULT_LOGIN_TIMEOUT, login_browser};
pub use callback::{Callback, CallbackServer, Responder};
pub use credential::Credential;
pub use device::{DeviceCode, DeviceLogin, login_device, login_device_with};
pub use endpoints::{
    CLIENT_ID, DEFAULT_REDIRECT_PORT, OAuthEndpoints, REFERRER, SCOPE, oauth_http_client,
};
pub use error::{AuthError, LoginError, SERVE_READS_AT_START, plan_lacks_api_access_message};
pub use keyring::{
    KEYRING_SERVICE, KeyringBackend, KeyringError, MacKeychain, SecretTool, detect_keyring,
};
pub use mcp_sign_in::{MCP_OAUTH_VAR_PREFIX, McpSignIn, McpSignInStore};
pub use open::open_in_browser;
pub use secret::{Secret, redact};
pub use session::{OAuthSession, REFRESH_SKEW_SECS};
pub use sign_in_store::{SignInKind, SignInStore};
pub use status::{AuthStatus, describe_duration, describe_expiry, format_utc};
pub use store::{CredentialStore, TokenSource, XaiSignIn, persist_login, sign_out};
pub use tokens::{
    ACCESS_TOKEN_VAR, API_KEY_VAR, EMAIL_VAR, EXPIRES_AT_VAR, OAUTH_VARS, REFRESH_TOKEN_VAR,
    TokenSet,
};

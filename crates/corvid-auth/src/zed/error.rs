//! Why `corvid login zed` failed. No message ever carries the token.

use std::time::Duration;

use corvid_config::ConfigError;

/// Why the Zed sign-in failed. Every message says what to do next.
#[derive(Debug, thiserror::Error)]
pub enum ZedLoginError {
    /// The loopback listener could not be bound.
    #[error("cannot listen on 127.0.0.1 for the Zed sign-in callback: {0}")]
    Listen(#[source] std::io::Error),
    /// The RSA key pair could not be made (the OS random source failed).
    #[error("could not make the Zed sign-in key: {0}")]
    KeyGeneration(String),
    /// The browser never came back.
    #[error(
        "the Zed sign-in timed out after {} s without the browser returning to corvid; run \
         `corvid login zed` again and finish signing in in the browser",
        after.as_secs()
    )]
    TimedOut { after: Duration },
    /// The callback carried `error=…`.
    #[error("Zed refused the sign-in: {error}; run `corvid login zed` again")]
    Denied { error: String },
    /// The callback's `user_id` is not a number.
    #[error(
        "the Zed sign-in callback carried a user_id that is not a number; run `corvid login zed` again"
    )]
    InvalidUserId,
    /// The callback's `access_token` is not base64.
    #[error("the Zed sign-in callback's access_token is not base64; run `corvid login zed` again")]
    InvalidEncoding,
    /// Neither scheme decrypted the token to printable text with this sign-in's key.
    #[error(
        "the Zed access token could not be decrypted with this sign-in's key (tried RSA-OAEP \
         SHA-256 and PKCS#1 v1.5): a stale browser tab or another sign-in; run `corvid login \
         zed` again"
    )]
    Decrypt,
    /// The env file could not be read or written.
    #[error("could not store the Zed sign-in: {0}")]
    Storage(#[from] ConfigError),
}

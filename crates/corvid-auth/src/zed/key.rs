//! The sign-in key: RSA-2048 (e = 65537), its public half as PKCS#1 `RSAPublicKey` DER in
//! URL-safe base64 (with `=` padding, which a 2048-bit key never needs: 270 bytes make 360
//! characters), and the decryption of the token the browser brings back.

use base64::Engine;
use base64::engine::general_purpose::{URL_SAFE, URL_SAFE_NO_PAD};
use rsa::pkcs1::EncodeRsaPublicKey;
use rsa::sha2::Sha256;

use super::ZedLoginError;
use crate::Secret;

/// The modulus size Zed uses (rsa's own default is 3072).
pub const KEY_BITS: usize = 2048;

/// How the token was encrypted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenFormat {
    /// RSA-OAEP with SHA-256 and MGF1-SHA-256, empty label (Zed's "V1").
    Oaep,
    /// PKCS#1 v1.5 (Zed's legacy "V0").
    Pkcs1v15,
}

/// One sign-in's key pair. The private half never leaves this value; `Debug` shows the public
/// half only.
pub struct ZedKeyPair {
    pub(super) private: rsa::PrivateKey,
    public_key: String,
}

impl std::fmt::Debug for ZedKeyPair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZedKeyPair")
            .field("public_key", &self.public_key)
            .finish_non_exhaustive()
    }
}

impl ZedKeyPair {
    /// Makes a 2048-bit key pair from the OS random source. This is CPU work (tens to hundreds
    /// of milliseconds, more in a debug build without the rsa opt-level override): call it on
    /// a blocking thread, as [`Self::generate_off_runtime`] does.
    pub fn generate() -> Result<Self, ZedLoginError> {
        let private = rsa::PrivateKey::new(&mut getrandom::SysRng, KEY_BITS)
            .map_err(|err| ZedLoginError::KeyGeneration(err.to_string()))?;
        Self::from_private_key(private)
    }

    /// [`Self::generate`] on tokio's blocking pool, so the async runtime keeps serving.
    pub async fn generate_off_runtime() -> Result<Self, ZedLoginError> {
        tokio::task::spawn_blocking(Self::generate)
            .await
            .map_err(|err| ZedLoginError::KeyGeneration(err.to_string()))?
    }

    /// Wraps an existing key (tests use small keys; Zed's own test vector is 1024-bit).
    pub fn from_private_key(private: rsa::PrivateKey) -> Result<Self, ZedLoginError> {
        let der = private
            .to_public_key()
            .to_pkcs1_der()
            .map_err(|err| ZedLoginError::KeyGeneration(err.to_string()))?;
        Ok(Self {
            public_key: URL_SAFE.encode(der.as_bytes()),
            private,
        })
    }

    /// The public key as the sign-in page takes it: PKCS#1 DER, URL-safe base64.
    pub fn public_key(&self) -> &str {
        &self.public_key
    }

    /// Decrypts the callback's `access_token` (URL-safe base64, padded or not): RSA-OAEP
    /// SHA-256 first, then PKCS#1 v1.5. The plaintext must be printable UTF-8, which also
    /// catches PKCS#1 v1.5's implicit rejection (a wrong ciphertext decrypts to a
    /// deterministic random message instead of failing). The text is kept verbatim.
    pub fn decrypt(&self, access_token: &str) -> Result<(Secret, TokenFormat), ZedLoginError> {
        let ciphertext = decode_base64url(access_token).ok_or(ZedLoginError::InvalidEncoding)?;
        if let Ok(plain) = self.private.oaep_decrypt::<Sha256>(&ciphertext)
            && let Some(token) = printable(plain)
        {
            return Ok((token, TokenFormat::Oaep));
        }
        if let Ok(plain) = self.private.pkcs1v15_decrypt(&ciphertext)
            && let Some(token) = printable(plain)
        {
            return Ok((token, TokenFormat::Pkcs1v15));
        }
        Err(ZedLoginError::Decrypt)
    }
}

/// URL-safe base64 with or without `=` padding; the standard alphabet is accepted too.
pub(super) fn decode_base64url(text: &str) -> Option<Vec<u8>> {
    let normalized: String = text
        .trim()
        .trim_end_matches('=')
        .chars()
        .map(|c| match c {
            '+' => '-',
            '/' => '_',
            other => other,
        })
        .collect();
    URL_SAFE_NO_PAD.decode(normalized).ok()
}

/// The plaintext as a token when it is non-empty UTF-8 without control characters.
fn printable(plain: Vec<u8>) -> Option<Secret> {
    let text = String::from_utf8(plain).ok()?;
    (!text.is_empty() && !text.chars().any(char::is_control)).then(|| Secret::new(text))
}

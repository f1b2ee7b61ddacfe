//! PKCE (RFC 7636, S256) and the random `state` / `nonce` values.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rand::RngCore;
use sha2::{Digest, Sha256};

use crate::Secret;

/// A PKCE pair: the verifier stays here, the challenge goes in the authorize URL.
pub(crate) struct Pkce {
    pub(crate) verifier: Secret,
    pub(crate) challenge: String,
}

impl Pkce {
    /// verifier = base64url-nopad(32 random bytes); challenge = base64url-nopad(SHA-256(verifier)).
    pub(crate) fn generate() -> Self {
        let mut bytes = [0u8; 32];
        rand::rng().fill_bytes(&mut bytes);
        let verifier = URL_SAFE_NO_PAD.encode(bytes);
        Self {
            challenge: challenge_for(&verifier),
            verifier: Secret::new(verifier),
        }
    }
}

/// The S256 challenge of `verifier`.
pub(crate) fn challenge_for(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// `bytes` random bytes as lowercase hex.
pub(crate) fn random_hex(bytes: usize) -> String {
    let mut buffer = vec![0u8; bytes];
    rand::rng().fill_bytes(&mut buffer);
    buffer.iter().map(|byte| format!("{byte:02x}")).collect()
}

#[cfg(test)]
mod tests;

//! The client key's format: `cv-<public id>-<secret>`, both lowercase alphanumeric.

use rand::Rng;
use rand::distr::Alphanumeric;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

const PREFIX: &str = "cv-";
const PUBLIC_LEN: usize = 12;
const SECRET_LEN: usize = 40;

/// A whole client key. Its `Debug` never shows the secret.
#[derive(Clone, PartialEq, Eq)]
pub struct ClientKey {
    public_id: String,
    secret: String,
}

impl std::fmt::Debug for ClientKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ClientKey({PREFIX}{}-…)", self.public_id)
    }
}

/// Why a presented key is not one of corvid's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("not a corvid key (expected cv-<id>-<secret>)")]
pub struct KeyFormatError;

impl ClientKey {
    /// A fresh key from the OS-seeded thread RNG.
    pub fn generate() -> Self {
        let mut rng = rand::rng();
        let mut draw = |len: usize| -> String {
            (&mut rng)
                .sample_iter(Alphanumeric)
                .take(len)
                .map(|byte| char::from(byte).to_ascii_lowercase())
                .collect()
        };
        let public_id = draw(PUBLIC_LEN);
        let secret = draw(SECRET_LEN);
        Self { public_id, secret }
    }

    /// Splits a presented key.
    pub fn parse(text: &str) -> Result<Self, KeyFormatError> {
        let rest = text.trim().strip_prefix(PREFIX).ok_or(KeyFormatError)?;
        let (public_id, secret) = rest.split_once('-').ok_or(KeyFormatError)?;
        let plain =
            |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_alphanumeric());
        if !plain(public_id) || !plain(secret) || public_id.len() > 64 || secret.len() > 256 {
            return Err(KeyFormatError);
        }
        Ok(Self {
            public_id: public_id.to_owned(),
            secret: secret.to_owned(),
        })
    }

    pub fn public_id(&self) -> &str {
        &self.public_id
    }

    /// SHA-256 of the secret: what the store keeps.
    pub fn secret_hash(&self) -> [u8; 32] {
        Sha256::digest(self.secret.as_bytes()).into()
    }

    /// Whether this key's secret hashes to `stored`, compared in constant time.
    pub fn matches(&self, stored: &[u8; 32]) -> bool {
        self.secret_hash().ct_eq(stored).into()
    }

    /// The key as the client sends it. Print it once; never log it.
    pub fn reveal(&self) -> String {
        format!("{PREFIX}{}-{}", self.public_id, self.secret)
    }
}

/// Whether `presented` is the admin key `expected`: their SHA-256 digests compared in constant
/// time (the digests hide the lengths too).
pub fn admin_key_matches(expected: &str, presented: &str) -> bool {
    let expected: [u8; 32] = Sha256::digest(expected.as_bytes()).into();
    let presented: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
    expected.ct_eq(&presented).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_key_parses_back_and_matches_its_hash_only() {
        let key = ClientKey::generate();
        let text = key.reveal();
        assert!(text.starts_with("cv-"));
        let parsed = ClientKey::parse(&text).unwrap();
        assert_eq!(parsed, key);
        assert!(parsed.matches(&key.secret_hash()));
        let other = ClientKey::generate();
        assert!(!other.matches(&key.secret_hash()));
        assert!(!format!("{key:?}").contains(&text[16..]));
    }

    #[test]
    fn the_admin_key_must_match_exactly() {
        assert!(admin_key_matches("s3cret", "s3cret"));
        assert!(!admin_key_matches("s3cret", "s3cre"));
        assert!(!admin_key_matches("s3cret", ""));
    }

    #[test]
    fn foreign_keys_are_refused() {
        for text in [
            "sk-abc",
            "cv-",
            "cv-abc",
            "cv-abc-",
            "cv-a b-c",
            "cv-abc-d$f",
        ] {
            assert_eq!(ClientKey::parse(text), Err(KeyFormatError), "{text}");
        }
    }
}

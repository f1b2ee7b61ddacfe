//! The `Secret` newtype: API keys and tokens, unprintable by accident.

use std::fmt;

/// An API key or token. `Debug` prints `Secret(****)`; there is no `Display` and no `Serialize`,
/// so a secret cannot reach a log line, an error message or a config dump by accident. Read it
/// with [`Secret::expose`] at the one place that needs the value (a header, the env file).
#[derive(Clone, Eq)]
pub struct Secret(Box<str>);

impl Secret {
    /// Wraps a value.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into().into_boxed_str())
    }

    /// The value itself. Call this only to send or store the secret.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Self::new(value)
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(****)")
    }
}

impl PartialEq for Secret {
    /// Compares without stopping at the first differing byte (the length still shows).
    fn eq(&self, other: &Self) -> bool {
        let (left, right) = (self.0.as_bytes(), other.0.as_bytes());
        left.len() == right.len()
            && left
                .iter()
                .zip(right)
                .fold(0u8, |diff, (a, b)| diff | (a ^ b))
                == 0
    }
}

/// Replaces every occurrence of each secret in `text` with `****`. Empty secrets are ignored.
pub fn redact(text: &str, secrets: &[&Secret]) -> String {
    let mut out = text.to_owned();
    for secret in secrets {
        let value = secret.expose();
        if !value.is_empty() {
            out = out.replace(value, "****");
        }
    }
    out
}

#[cfg(test)]
mod tests;

//! Where the OAuth sign-ins of MCP servers (`corvid mcp login`) are kept: like the xAI and Zed
//! sign-ins, the env file (0600, written atomically, other lines kept) is the source of truth
//! and one copy goes to the OS keyring when one works here.
//!
//! Each sign-in is one variable, `CORVID_MCP_OAUTH_<KEY>`, whose value is a JSON document that
//! corvid-mcp writes and reads (tokens, client registration, authorization server metadata);
//! this store never looks inside it. `<KEY>` is chosen by the caller (corvid-mcp hashes which
//! configuration defined the server, its name and its URL), so two servers, or one name in two
//! projects, never share a sign-in. The keyring copy is the account `mcp-oauth-<key>`.

use corvid_config::{ConfigError, EnvFile};

use crate::Secret;
use crate::sign_in_store::{SignInKind, SignInStore};

/// The prefix of every MCP sign-in variable in the env file.
pub const MCP_OAUTH_VAR_PREFIX: &str = "CORVID_MCP_OAUTH_";

/// MCP servers' sign-ins, one per key (the shared keyring account is not used: each key has
/// its own, see [`McpSignInStore::load`]).
#[derive(Debug, Clone, Copy)]
pub struct McpSignIn;

impl SignInKind for McpSignIn {
    const KEYRING_ACCOUNT: &'static str = "mcp-oauth";
    const KEYRING_LABEL: &'static str = "corvid MCP sign-in";
    const NAME: &'static str = "an MCP sign-in";
}

/// Write-through storage for MCP servers' sign-ins. Cheap to clone.
pub type McpSignInStore = SignInStore<McpSignIn>;

impl McpSignInStore {
    /// The env-file variable of `key` (upper-cased; `key` holds letters, digits and `_`).
    pub fn variable(key: &str) -> String {
        format!("{MCP_OAUTH_VAR_PREFIX}{}", key.to_ascii_uppercase())
    }

    fn account(key: &str) -> String {
        format!("mcp-oauth-{}", key.to_ascii_lowercase())
    }

    /// The sign-in stored under `key`: the env file's, else the keyring's.
    pub fn load(&self, key: &str) -> Result<Option<Secret>, ConfigError> {
        let file = EnvFile::read(&self.env_file)?;
        if let Some(value) = file
            .get(&Self::variable(key))
            .filter(|value| !value.trim().is_empty())
        {
            return Ok(Some(Secret::new(value)));
        }
        let Some(keyring) = &self.keyring else {
            return Ok(None);
        };
        match keyring.load(&Self::account(key)) {
            Ok(item) => Ok(item),
            Err(err) => {
                tracing::warn!(%err, "could not read an MCP sign-in from the keyring");
                Ok(None)
            }
        }
    }

    /// Stores `value` under `key`: the env file (atomic, 0600), then the keyring.
    pub fn save(&self, key: &str, value: &Secret) -> Result<(), ConfigError> {
        let mut file = EnvFile::read(&self.env_file)?;
        file.set(&Self::variable(key), value.expose());
        file.write(&self.env_file)?;
        if let Some(keyring) = &self.keyring
            && let Err(err) = keyring.store(&Self::account(key), McpSignIn::KEYRING_LABEL, value)
        {
            tracing::warn!(%err, "could not copy an MCP sign-in to the keyring; the env file has it");
        }
        Ok(())
    }

    /// Removes the sign-in under `key` from the env file and the keyring; returns whether
    /// either held one.
    pub fn forget(&self, key: &str) -> Result<bool, ConfigError> {
        let mut file = EnvFile::read(&self.env_file)?;
        let mut removed = file.remove(&Self::variable(key));
        if removed {
            file.write(&self.env_file)?;
        }
        if let Some(keyring) = &self.keyring {
            let account = Self::account(key);
            removed |= matches!(keyring.load(&account), Ok(Some(_)));
            if let Err(err) = keyring.delete(&account) {
                tracing::warn!(%err, "could not remove an MCP sign-in from the keyring");
            }
        }
        Ok(removed)
    }
}

#[cfg(test)]
mod tests;

//! What the xAI and Zed sign-ins share: the env file is the source of truth (0600, written
//! atomically, other lines kept) and one copy goes to the OS keyring when one works here. A
//! keyring failure is logged and never fails anything, so a headless machine works with the
//! file alone. Each sign-in adds its own variables and keyring format on top
//! ([`crate::CredentialStore`], [`crate::zed::ZedStore`]).

use std::fmt;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use corvid_config::{ConfigError, EnvFile, Loaded};

use crate::Secret;
use crate::keyring::{KeyringBackend, detect_keyring};

/// Which sign-in a store holds: its keyring item and how log lines name it.
pub trait SignInKind {
    /// The keyring account the copy is stored under.
    const KEYRING_ACCOUNT: &'static str;
    /// The label a keyring shows for it.
    const KEYRING_LABEL: &'static str;
    /// How log lines name it, e.g. "the xAI sign-in".
    const NAME: &'static str;
}

/// Write-through storage for one kind of sign-in.
pub struct SignInStore<K> {
    pub(crate) env_file: PathBuf,
    pub(crate) keyring: Option<Arc<dyn KeyringBackend>>,
    kind: PhantomData<K>,
}

impl<K> Clone for SignInStore<K> {
    fn clone(&self) -> Self {
        Self {
            env_file: self.env_file.clone(),
            keyring: self.keyring.clone(),
            kind: PhantomData,
        }
    }
}

impl<K: SignInKind> fmt::Debug for SignInStore<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SignInStore")
            .field("sign_in", &K::NAME)
            .field("env_file", &self.env_file)
            .field("keyring", &self.keyring)
            .finish()
    }
}

impl<K: SignInKind> SignInStore<K> {
    /// A store writing `env_file` and, when given, a keyring copy.
    pub fn new(env_file: PathBuf, keyring: Option<Arc<dyn KeyringBackend>>) -> Self {
        Self {
            env_file,
            keyring,
            kind: PhantomData,
        }
    }

    /// The env file alone.
    pub fn file_only(env_file: PathBuf) -> Self {
        Self::new(env_file, None)
    }

    /// The configured env file plus whatever keyring works on this machine (probed once; see
    /// [`detect_keyring`]).
    pub fn detect(loaded: &Loaded) -> Self {
        let env = |name: &str| loaded.setting(name);
        Self::new(loaded.paths.env_file.clone(), detect_keyring(&env))
    }

    pub fn env_file(&self) -> &Path {
        &self.env_file
    }

    /// The keyring copy's name, or `"env file only"`. The env file is always written.
    pub fn backend(&self) -> &'static str {
        self.keyring
            .as_ref()
            .map_or("env file only", |keyring| keyring.name())
    }

    /// Replaces the keyring copy with `item` (when there is a keyring).
    pub(crate) fn copy_to_keyring(&self, item: &Secret) {
        if let Some(keyring) = &self.keyring
            && let Err(err) = keyring.store(K::KEYRING_ACCOUNT, K::KEYRING_LABEL, item)
        {
            tracing::warn!(%err, "could not copy {} to the keyring; the env file has it", K::NAME);
        }
    }

    /// The keyring copy, if there is a readable one.
    pub(crate) fn keyring_copy(&self) -> Option<Secret> {
        match self.keyring.as_ref()?.load(K::KEYRING_ACCOUNT) {
            Ok(item) => item,
            Err(err) => {
                tracing::warn!(%err, "could not read {} from the keyring", K::NAME);
                None
            }
        }
    }

    /// Removes `vars` from the env file (rewritten only when one was there) and the keyring
    /// copy; returns the variables that were in the file.
    pub(crate) fn remove(&self, vars: &[&'static str]) -> Result<Vec<&'static str>, ConfigError> {
        let mut file = EnvFile::read(&self.env_file)?;
        let removed: Vec<&'static str> = vars
            .iter()
            .copied()
            .filter(|name| file.remove(name))
            .collect();
        if !removed.is_empty() {
            file.write(&self.env_file)?;
        }
        if let Some(keyring) = &self.keyring
            && let Err(err) = keyring.delete(K::KEYRING_ACCOUNT)
        {
            tracing::warn!(%err, "could not remove {} from the keyring", K::NAME);
        }
        Ok(removed)
    }
}

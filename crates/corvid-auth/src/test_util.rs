//! Helpers shared by this crate's tests.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use corvid_config::{Flags, Loaded};

use crate::Secret;
use crate::keyring::{KeyringBackend, KeyringError};

/// An in-memory keyring, for the stores' keyring copies.
#[derive(Debug, Default)]
pub(crate) struct MemoryKeyring(pub(crate) Mutex<HashMap<String, String>>);

impl KeyringBackend for MemoryKeyring {
    fn name(&self) -> &'static str {
        "memory"
    }
    fn load(&self, account: &str) -> Result<Option<Secret>, KeyringError> {
        Ok(self.0.lock().unwrap().get(account).map(Secret::new))
    }
    fn store(&self, account: &str, _label: &str, value: &Secret) -> Result<(), KeyringError> {
        self.0
            .lock()
            .unwrap()
            .insert(account.to_owned(), value.expose().to_owned());
        Ok(())
    }
    fn delete(&self, account: &str) -> Result<(), KeyringError> {
        self.0.lock().unwrap().remove(account);
        Ok(())
    }
}

/// Loads the configuration from `home` (a temp dir) with `env` as the whole process
/// environment: no real HOME, no PATH, so no keyring.
pub(crate) fn load_from(home: &Path, env: &[(&str, &str)]) -> Loaded {
    let mut map: HashMap<String, String> = env
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    map.insert("CORVID_HOME".to_owned(), home.display().to_string());
    corvid_config::load(&Flags::default(), &map).unwrap()
}

/// Writes `text` as `home/env`.
pub(crate) fn write_env_file(home: &Path, text: &str) {
    std::fs::write(home.join("env"), text).unwrap();
}

/// The text of `home/env`.
pub(crate) fn read_env_file(home: &Path) -> String {
    std::fs::read_to_string(home.join("env")).unwrap_or_default()
}

/// A reqwest client for loopback mocks (never through a proxy).
pub(crate) fn http() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

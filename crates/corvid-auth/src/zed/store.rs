//! Where the Zed sign-in is kept: the env file (0600, other lines untouched), plus one copy in
//! the OS keyring when one works, like the xAI sign-in ([`crate::CredentialStore`]).
//!
//! `ZED_SYSTEM_ID` is this installation's id, not a secret and not part of the sign-in: signing
//! out keeps it, so the next sign-in is the same machine to Zed.

use corvid_config::{EnvFile, Loaded};
use serde::Deserialize;

use super::{ZedCredentials, ZedLoginError, new_system_id};
use crate::sign_in_store::{SignInKind, SignInStore};
use crate::{Secret, TokenSource};

/// The account's numeric user id.
pub const ZED_USER_ID_VAR: &str = "ZED_USER_ID";
/// The decrypted access token (opaque, sent verbatim).
pub const ZED_ACCESS_TOKEN_VAR: &str = "ZED_ACCESS_TOKEN";
/// This installation's id (a UUID v4), kept across sign-outs.
pub const ZED_SYSTEM_ID_VAR: &str = "ZED_SYSTEM_ID";
/// The variables a sign-out removes.
pub const ZED_SIGN_IN_VARS: [&str; 2] = [ZED_USER_ID_VAR, ZED_ACCESS_TOKEN_VAR];

/// The Zed account sign-in; its keyring item is a JSON object.
#[derive(Debug, Clone, Copy)]
pub struct ZedSignIn;

impl SignInKind for ZedSignIn {
    const KEYRING_ACCOUNT: &'static str = "zed-account";
    const KEYRING_LABEL: &'static str = "corvid Zed sign-in";
    const NAME: &'static str = "the Zed sign-in";
}

/// Write-through storage for the Zed sign-in.
pub type ZedStore = SignInStore<ZedSignIn>;

impl ZedStore {
    /// Writes the sign-in to the env file (atomic, 0600), then the keyring. A keyring failure
    /// is logged, never fatal.
    pub fn save(&self, credentials: &ZedCredentials) -> Result<(), ZedLoginError> {
        let mut file = EnvFile::read(&self.env_file)?;
        file.set(ZED_USER_ID_VAR, &credentials.user_id);
        file.set(ZED_ACCESS_TOKEN_VAR, credentials.access_token.expose());
        if let Some(system_id) = &credentials.system_id {
            file.set(ZED_SYSTEM_ID_VAR, system_id);
        }
        file.write(&self.env_file)?;
        self.copy_to_keyring(&Secret::new(
            serde_json::json!({
                "user_id": credentials.user_id,
                "access_token": credentials.access_token.expose(),
                "system_id": credentials.system_id,
            })
            .to_string(),
        ));
        Ok(())
    }

    /// The sign-in as stored now: the env file, else the keyring.
    pub fn load(&self) -> Result<Option<(ZedCredentials, TokenSource)>, ZedLoginError> {
        let file = EnvFile::read(&self.env_file)?;
        if let Some(credentials) = zed_credentials_from(|name| file.get(name).map(str::to_owned)) {
            return Ok(Some((credentials, TokenSource::EnvFile)));
        }
        let system_id = file.get(ZED_SYSTEM_ID_VAR).map(str::to_owned);
        Ok(self
            .load_keyring(system_id)
            .map(|c| (c, TokenSource::Keyring)))
    }

    /// Removes the user id and token from the env file and the keyring (the system id stays);
    /// returns the variables that were in the file.
    pub fn clear(&self) -> Result<Vec<&'static str>, ZedLoginError> {
        Ok(self.remove(&ZED_SIGN_IN_VARS)?)
    }

    /// Clears the stored sign-in only if it still holds `refused` (the token Zed just answered
    /// 401 to): a newer sign-in from another process is left alone. Returns whether it cleared.
    pub fn clear_if_token(&self, refused: &Secret) -> Result<bool, ZedLoginError> {
        let file = EnvFile::read(&self.env_file)?;
        let stored = file.get(ZED_ACCESS_TOKEN_VAR).map(Secret::new);
        if stored.is_some_and(|stored| stored != *refused) {
            return Ok(false);
        }
        self.clear()?;
        Ok(true)
    }

    /// This installation's system id: the stored one, else a new one, stored now.
    pub fn system_id(&self) -> Result<String, ZedLoginError> {
        let mut file = EnvFile::read(&self.env_file)?;
        if let Some(existing) = file
            .get(ZED_SYSTEM_ID_VAR)
            .map(str::trim)
            .filter(|id| super::is_uuid(id))
        {
            return Ok(existing.to_owned());
        }
        let id = new_system_id();
        file.set(ZED_SYSTEM_ID_VAR, &id);
        file.write(&self.env_file)?;
        Ok(id)
    }

    fn load_keyring(&self, system_id: Option<String>) -> Option<ZedCredentials> {
        let item = self.keyring_copy()?;
        let stored: KeyringItem = serde_json::from_str(item.expose()).ok()?;
        zed_credentials_from(|name| match name {
            ZED_USER_ID_VAR => stored.user_id.clone(),
            ZED_ACCESS_TOKEN_VAR => stored.access_token.clone(),
            ZED_SYSTEM_ID_VAR => system_id.clone().or_else(|| stored.system_id.clone()),
            _ => None,
        })
    }
}

/// The sign-in from variables (`ZED_USER_ID` and `ZED_ACCESS_TOKEN` both non-empty; the
/// system id when present). Surrounding whitespace is dropped, nothing else.
pub fn zed_credentials_from(get: impl Fn(&str) -> Option<String>) -> Option<ZedCredentials> {
    let non_empty = |name: &str| {
        get(name)
            .map(|value| value.trim().to_owned())
            .filter(|value| !value.is_empty())
    };
    Some(ZedCredentials {
        user_id: non_empty(ZED_USER_ID_VAR)?,
        access_token: Secret::new(non_empty(ZED_ACCESS_TOKEN_VAR)?),
        system_id: non_empty(ZED_SYSTEM_ID_VAR),
    })
}

/// The sign-in from the configuration (process environment, then env file), falling back to
/// the store's keyring copy; `None` when the user has not signed in.
pub fn zed_credentials_from_loaded(
    loaded: &Loaded,
    store: &ZedStore,
) -> Option<(ZedCredentials, TokenSource)> {
    if let Some(credentials) = zed_credentials_from(|name| loaded.secret(name)) {
        let from_file = [ZED_USER_ID_VAR, ZED_ACCESS_TOKEN_VAR]
            .iter()
            .all(|name| loaded.env_file.get(name).map(str::trim) == loaded.secret(name).as_deref());
        let source = if from_file {
            TokenSource::EnvFile
        } else {
            TokenSource::Environment
        };
        return Some((credentials, source));
    }
    store
        .load_keyring(loaded.secret(ZED_SYSTEM_ID_VAR))
        .map(|credentials| (credentials, TokenSource::Keyring))
}

/// The keyring item. Deliberately not `Debug`.
#[derive(Deserialize)]
struct KeyringItem {
    #[serde(default)]
    user_id: Option<String>,
    #[serde(default)]
    access_token: Option<String>,
    #[serde(default)]
    system_id: Option<String>,
}

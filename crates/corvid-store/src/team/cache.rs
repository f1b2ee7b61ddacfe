//! A short-lived cache of key lookups, so a request whose key has no budget costs the store
//! nothing. An entry lives `ttl`: a revocation on another instance is obeyed within it, or at
//! once where the store announces key changes (PostgreSQL's LISTEN/NOTIFY calls [`KeyCache::forget`]).
//!
//! The cache is keyed by the SHA-256 of the whole presented key, so a wrong secret under a
//! known public id never hits a cached success.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use super::{ClientKey, KeyInfo, TeamStore};
use crate::StoreError;

/// Entries kept at most; past this the cache is cleared (a flood of made-up keys cannot grow it).
const MAX_ENTRIES: usize = 100_000;

/// A cached lookup: when it was made and what it found (`None`: no live key).
type Entry = (Instant, Option<Arc<KeyInfo>>);

/// Cached key lookups over a [`TeamStore`].
#[derive(Debug, Clone)]
pub struct KeyCache {
    store: Arc<dyn TeamStore>,
    ttl: Duration,
    entries: Arc<Mutex<HashMap<[u8; 32], Entry>>>,
}

impl KeyCache {
    pub fn new(store: Arc<dyn TeamStore>, ttl: Duration) -> Self {
        Self {
            store,
            ttl,
            entries: Arc::default(),
        }
    }

    pub fn store(&self) -> &Arc<dyn TeamStore> {
        &self.store
    }

    /// The live (not revoked) key `presented` names, or `None` for an unknown, mistyped or
    /// revoked key.
    pub async fn lookup(&self, presented: &str) -> Result<Option<Arc<KeyInfo>>, StoreError> {
        let Ok(key) = ClientKey::parse(presented) else {
            return Ok(None);
        };
        let cache_key: [u8; 32] = Sha256::digest(presented.trim().as_bytes()).into();
        if let Some(found) = self.cached(&cache_key) {
            return Ok(found);
        }
        let found = self
            .store
            .key_by_public_id(key.public_id())
            .await?
            .filter(|(info, hash)| !info.revoked && key.matches(hash))
            .map(|(info, _)| Arc::new(info));
        let mut entries = self.entries.lock();
        if entries.len() >= MAX_ENTRIES {
            entries.clear();
        }
        entries.insert(cache_key, (Instant::now(), found.clone()));
        Ok(found)
    }

    /// Drops every entry of the key with this public id (it was revoked or changed).
    pub fn forget(&self, public_id: &str) {
        let mut entries = self.entries.lock();
        entries.retain(|_, (_, found)| {
            found
                .as_ref()
                .is_none_or(|info| info.public_id != public_id)
        });
    }

    /// Drops every entry (changes may have been missed).
    pub fn clear(&self) {
        self.entries.lock().clear();
    }

    fn cached(&self, cache_key: &[u8; 32]) -> Option<Option<Arc<KeyInfo>>> {
        let entries = self.entries.lock();
        let (at, found) = entries.get(cache_key)?;
        (at.elapsed() < self.ttl).then(|| found.clone())
    }
}

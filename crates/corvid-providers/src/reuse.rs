//! Runtime state across a settings reload. A provider holds more than its settings: its last
//! failure (the Status tab, the tray), its keys' cooldowns, its model list and the window its
//! server reported, its Zed account's LLM token. A live reload builds a new registry from the
//! settings files; [`Registry::keeping_unchanged`] then puts back every provider of the
//! previous registry whose settings and credentials are the same, so a key saved for one
//! provider does not wipe another's state — and the sign-in refresher of an unchanged
//! SuperGrok session stays the one that refreshes it.

use std::sync::Arc;

use crate::provider::Provider;
use crate::registry::Registry;

impl Registry {
    /// This registry, with each provider whose settings did not change since `previous`
    /// replaced by `previous`'s (the same provider, its runtime state included).
    pub fn keeping_unchanged(mut self, previous: &Registry) -> Self {
        // Every provider's transport and retries come from these: changed, nothing is kept.
        if self.timeouts != previous.timeouts || self.max_retries != previous.max_retries {
            return self;
        }
        self.providers = self
            .providers
            .into_iter()
            .map(|provider| match previous.provider(provider.name()) {
                Some(kept) if kept.same_settings(&provider) => Arc::clone(kept),
                _ => provider,
            })
            .collect();
        self
    }
}

impl Provider {
    /// Whether `other` was built from the same settings: the same provider configuration, the
    /// same keys (or sign-in) in the same order, the same Zed account.
    pub(crate) fn same_settings(&self, other: &Provider) -> bool {
        let keys = self.keys();
        let same_keys = keys.len() == other.keys().len()
            && (0..keys.len()).all(|index| {
                keys.member(index)
                    .credential()
                    .same_as(other.keys().member(index).credential())
            });
        let same_account = match (self.zed_service(), other.zed_service()) {
            (None, None) => true,
            (Some(mine), Some(theirs)) => mine.client().same_account(theirs.client()),
            _ => false,
        };
        self.config() == other.config() && same_keys && same_account
    }
}

#[cfg(test)]
mod tests;

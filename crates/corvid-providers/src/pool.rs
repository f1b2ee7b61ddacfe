//! A provider's keys: one upstream per key (same URL and transport, its own credential),
//! spread across requests in turn, and a key answered "rate limited" or "quota exhausted"
//! rested until its `Retry-After` (or [`DEFAULT_COOLDOWN`]) while the others serve.
//!
//! Keys are shown by index only (0 = the key `api_key_env` names, then `api_key_envs` in
//! order); their values never leave the credential.

use parking_lot::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::upstream::Upstream;

/// How long a rate-limited key rests when the provider named no time.
pub const DEFAULT_COOLDOWN: Duration = Duration::from_secs(30);

/// The longest rest corvid gives a key on a provider's word (a day's quota reset is longer,
/// but the key is tried again then anyway, and answered 429 again if still spent).
const MAX_COOLDOWN: Duration = Duration::from_secs(3600);

/// Every key of one provider, and when each may serve again.
#[derive(Debug)]
pub struct KeyPool {
    members: Vec<Upstream>,
    resting_until: Mutex<Vec<Option<Instant>>>,
    /// The member the next request without a preference starts at.
    next: AtomicUsize,
}

impl KeyPool {
    /// A pool of these upstreams (at least one: an empty list is given a placeholder by the
    /// caller, never here).
    pub fn new(members: Vec<Upstream>) -> Self {
        let len = members.len();
        Self {
            members,
            resting_until: Mutex::new(vec![None; len]),
            next: AtomicUsize::new(0),
        }
    }

    /// How many keys.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Whether the pool holds no key (never for a built provider).
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// The upstream of key `index` (the first for an index past the end).
    pub fn member(&self, index: usize) -> &Upstream {
        self.members.get(index).unwrap_or(&self.members[0])
    }

    /// The keys to try for one request, in order: `preferred` first when it is not resting
    /// (a conversation's own key), else the pool's turn, then the rest round the pool. Resting
    /// keys are left out; when every key rests, the one whose rest ends first is the only
    /// one (the provider may have lifted the limit early, and the next target is tried after).
    pub fn order(&self, preferred: Option<usize>) -> Vec<usize> {
        let len = self.members.len();
        if len <= 1 {
            return vec![0];
        }
        let start = preferred
            .filter(|index| *index < len)
            .unwrap_or_else(|| self.next.fetch_add(1, Ordering::Relaxed) % len);
        let now = Instant::now();
        let resting = self.resting();
        let order: Vec<usize> = (0..len)
            .map(|offset| (start + offset) % len)
            .filter(|index| resting[*index].is_none_or(|until| until <= now))
            .collect();
        if !order.is_empty() {
            return order;
        }
        let soonest = (0..len)
            .min_by_key(|index| resting[*index])
            .unwrap_or_default();
        vec![soonest]
    }

    /// Rests key `index` for `wait` (the provider's `Retry-After`), or [`DEFAULT_COOLDOWN`].
    pub fn rest(&self, index: usize, wait: Option<Duration>) {
        let wait = wait.unwrap_or(DEFAULT_COOLDOWN).min(MAX_COOLDOWN);
        let mut resting = self.resting();
        if let Some(slot) = resting.get_mut(index) {
            *slot = Some(Instant::now() + wait);
        }
        tracing::warn!(
            key = index,
            rest_ms = wait.as_millis() as u64,
            "a pool key is rate limited; the others serve meanwhile"
        );
    }

    /// Whether key `index` is resting now.
    pub fn is_resting(&self, index: usize) -> bool {
        self.resting()
            .get(index)
            .copied()
            .flatten()
            .is_some_and(|until| until > Instant::now())
    }

    fn resting(&self) -> parking_lot::MutexGuard<'_, Vec<Option<Instant>>> {
        self.resting_until.lock()
    }
}

/// The credentials of a provider's keys: its own (`api_key_env`, or the xAI sign-in), then
/// each `api_key_envs` variable that is set, a key already there counted once. Without a key
/// of its own the first pool key stands in, so a pool alone is enough.
pub(crate) fn pool_credentials(
    provider: &corvid_config::ProviderConfig,
    loaded: &corvid_config::Loaded,
    http: reqwest::Client,
) -> Vec<corvid_auth::Credential> {
    use corvid_auth::{Credential, Secret};
    let own = Credential::for_provider(provider, loaded, http);
    let mut seen: Vec<String> = Vec::new();
    let mut credentials = Vec::new();
    // A provider of its own with only `api_key_envs` has no key of its own: its keyless
    // credential is not a member (it would send requests with no key at all); it stays the
    // provider's credential only when the pool holds no key either (a local server).
    if own.is_available() && !own.is_none() {
        if let corvid_config::CredentialSource::Env(variables) = &provider.credential
            && let Some(secret) = variables.iter().find_map(|name| loaded.secret(name))
        {
            seen.push(secret);
        }
        credentials.push(own.clone());
    }
    for name in &provider.key_pool {
        let Some(secret) = loaded.secret(name) else {
            continue;
        };
        if seen.contains(&secret) {
            continue;
        }
        credentials.push(Credential::Key {
            provider: provider.name.clone(),
            secret: Secret::from(secret.clone()),
        });
        seen.push(secret);
    }
    if credentials.is_empty() {
        credentials.push(own);
    }
    credentials
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::Transport;
    use corvid_auth::{Credential, Secret};

    fn pool(keys: usize) -> KeyPool {
        let transport = Transport::new(
            Duration::from_secs(1),
            Duration::from_secs(1),
            "http://127.0.0.1:9/v1",
            |_| None,
        )
        .unwrap();
        KeyPool::new(
            (0..keys)
                .map(|index| {
                    Upstream::new(
                        transport.clone(),
                        "http://127.0.0.1:9/v1",
                        Credential::ApiKey(Secret::new(format!("k{index}"))),
                        0,
                    )
                })
                .collect(),
        )
    }

    #[test]
    fn requests_take_turns_and_a_preference_comes_first() {
        let pool = pool(3);
        assert_eq!(pool.order(None), [0, 1, 2]);
        assert_eq!(pool.order(None), [1, 2, 0]);
        assert_eq!(pool.order(None), [2, 0, 1]);
        assert_eq!(pool.order(Some(1)), [1, 2, 0]);
        assert_eq!(
            pool.order(Some(9))[..],
            [0, 1, 2][..],
            "an unknown key: the turn"
        );
    }

    #[test]
    fn a_resting_key_is_skipped_until_its_rest_ends() {
        let pool = pool(2);
        pool.rest(0, Some(Duration::from_millis(80)));
        assert!(pool.is_resting(0));
        assert_eq!(pool.order(Some(0)), [1]);
        pool.rest(1, Some(Duration::from_secs(60)));
        assert_eq!(pool.order(None), [0], "all resting: the one free soonest");
        std::thread::sleep(Duration::from_millis(100));
        assert!(!pool.is_resting(0));
        assert_eq!(pool.order(Some(0)), [0]);
    }

    #[test]
    fn one_key_is_always_itself() {
        let pool = pool(1);
        pool.rest(0, None);
        assert_eq!(pool.order(None), [0]);
    }
}

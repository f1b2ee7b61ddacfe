//! Team mode's gate: client keys, model scopes, budgets and rate limits, checked on every
//! inbound API (every dialect, the translated and the pass-through path alike) before a request
//! reaches its handler.
//!
//! - The key comes from `Authorization: Bearer`, `x-api-key`, `x-goog-api-key` or Gemini's
//!   `?key=`. It is looked up through a short-lived cache (no store round trip on the hot path
//!   when the key has no budget or limit) and is never forwarded upstream: providers inject
//!   their own credential.
//! - A key with a budget or a limit takes a hold of the request's estimated cost (counted input
//!   plus the output cap) before the handler runs; the ledger row that ends the request
//!   settles it (a routing fallback's failed attempt is charged but keeps the hold for the next
//!   one). A request that never reached a provider, or answered an error, gives its hold back
//!   at once. While the request runs, the heartbeat renews its hold's lease, so a stream longer
//!   than the lease is not settled under its feet by a sweeper and then again by its row.
//! - Refusals answer in the caller's dialect: 401 unknown or revoked key, 403 model out of
//!   scope (or unpriced under a budget), 429 budget spent or limit reached (with
//!   `Retry-After`), 503 when the store cannot be asked (budgets fail closed).

pub(crate) mod admin;
mod estimate;
mod gate;

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use parking_lot::Mutex;
use std::time::Duration;

use corvid_config::StoreConfig;
use corvid_store::team::{KeyCache, TeamStore};

pub(crate) use gate::Gate;

/// How often an instance says it is alive, and sweeps the holds of those that stopped.
const HEARTBEAT: Duration = Duration::from_secs(1);
/// An instance silent this long is dead: its holds are settled at their estimate.
const DEAD_AFTER: Duration = Duration::from_secs(5);

/// The gate's settings and its view of the store.
#[derive(Debug, Clone)]
pub struct Access {
    keys: KeyCache,
    /// Clients must present a key (else a request without one passes as the local user).
    required: bool,
    instance: String,
    lease: Duration,
    default_output_tokens: u64,
    /// The admin API's key; `None` turns the API off.
    admin_key: Option<String>,
    /// The key that stands for a request without one (the local user's daily budget).
    local: Option<Arc<corvid_store::team::KeyInfo>>,
    /// Requests of this instance holding a hold and still running (their leases are renewed).
    running: Running,
}

/// The request ids of running requests with a hold.
type Running = Arc<Mutex<HashSet<String>>>;

impl Access {
    /// The gate over `store`; `required` from `StoreConfig::keys_required`. `instance` names
    /// this process in holds (its heartbeat keeps them alive).
    pub fn new(store: Arc<dyn TeamStore>, config: &StoreConfig, required: bool) -> Self {
        Self {
            keys: KeyCache::new(store, config.key_cache),
            required,
            instance: corvid_store::team::new_request_id(),
            lease: config.lease,
            default_output_tokens: config.default_output_tokens,
            admin_key: None,
            local: None,
            running: Arc::default(),
        }
    }

    /// The same gate, charging requests that present no key to `key` (keys not required).
    pub fn with_local_key(self, key: corvid_store::team::KeyInfo) -> Self {
        Self {
            local: Some(Arc::new(key)),
            ..self
        }
    }

    /// The same gate, with the admin API (`/admin/…`) open to holders of `key`.
    pub fn with_admin_key(self, key: Option<String>) -> Self {
        Self {
            admin_key: key.filter(|key| !key.trim().is_empty()),
            ..self
        }
    }

    pub fn store(&self) -> &Arc<dyn TeamStore> {
        self.keys.store()
    }

    /// The local user's daily budget and request quota as they stand (requests without a key
    /// on the SQLite store), for the page's Status tab; `None` when neither is set or the store
    /// does not answer.
    pub async fn local_allowance(&self) -> Option<serde_json::Value> {
        let local = self.local.as_ref()?;
        let budget = match local.budgets.first() {
            Some(held) => self
                .store()
                .budgets()
                .await
                .ok()?
                .into_iter()
                .find(|budget| budget.id == held.id),
            None => None,
        };
        let requests = match local.daily_requests {
            Some(limit) => Some((limit, self.store().requests_today(local.id).await.ok()?)),
            None => None,
        };
        let (_, resets_at_ms) =
            corvid_store::team::window_of(corvid_store::team::Period::Day, corvid_store::now_ms());
        Some(serde_json::json!({
            "budget": budget.map(|budget| serde_json::json!({
                "cap_micros": budget.cap_micros,
                "spent_micros": budget.spent_micros,
                "held_micros": budget.reserved_micros,
            })),
            "requests": requests.map(|(limit, made)| serde_json::json!({
                "limit": limit,
                "made": made,
            })),
            "resets_at_ms": resets_at_ms,
        }))
    }

    /// The key lookups this gate caches (for a store that announces key changes).
    pub fn key_cache(&self) -> &KeyCache {
        &self.keys
    }

    /// Heartbeats this instance and sweeps dead instances' holds, forever; spawn it once.
    ///
    /// An instance sweeps only after it has been connected for `DEAD_AFTER`: after a database
    /// outage every live instance's heartbeat is stale, and sweeping at once would settle the
    /// holds of requests still running elsewhere.
    pub async fn maintain(self) {
        let mut tick = tokio::time::interval(HEARTBEAT);
        let mut connected_since: Option<std::time::Instant> = None;
        loop {
            tick.tick().await;
            if let Err(error) = self.store().heartbeat(&self.instance).await {
                tracing::debug!(%error, "heartbeat failed");
                connected_since = None;
                continue;
            }
            let running: Vec<String> = self.running.lock().iter().cloned().collect();
            if !running.is_empty()
                && let Err(error) = self
                    .store()
                    .renew(&self.instance, &running, self.lease)
                    .await
            {
                tracing::debug!(%error, "cannot renew the leases of running requests");
            }
            let since = *connected_since.get_or_insert_with(std::time::Instant::now);
            if since.elapsed() < DEAD_AFTER {
                continue;
            }
            match self.store().sweep(DEAD_AFTER).await {
                Ok(0) => {}
                Ok(swept) => {
                    tracing::info!(swept, "released the budget holds of stopped instances")
                }
                Err(error) => tracing::debug!(%error, "sweep failed"),
            }
        }
    }
}

/// Who pays for the request in flight: set by the gate, taken by the request's exchange.
#[derive(Debug, Clone)]
pub(crate) struct Ticket {
    pub(crate) request_id: String,
    pub(crate) key_id: i64,
    pub(crate) team_id: Option<i64>,
    /// Exchanges that took the ticket: the first settles the hold under `request_id`; a
    /// routing fallback's later attempts write rows `<request_id>.<n>`, charged to the same
    /// budgets.
    taken: Arc<AtomicU32>,
    /// Marks the request running (its lease renewed) until the last copy of the ticket — the
    /// gate's, each exchange's — is gone.
    _running: Option<Arc<RunningGuard>>,
}

/// Removes its request from the running set when dropped.
#[derive(Debug)]
pub(crate) struct RunningGuard {
    request_id: String,
    running: Running,
}

impl RunningGuard {
    /// Marks `request_id` running in `access` until the guard is dropped.
    pub(crate) fn new(access: &Access, request_id: &str) -> Arc<Self> {
        access.running.lock().insert(request_id.to_owned());
        Arc::new(Self {
            request_id: request_id.to_owned(),
            running: Arc::clone(&access.running),
        })
    }
}

impl Drop for RunningGuard {
    fn drop(&mut self) {
        self.running.lock().remove(&self.request_id);
    }
}

tokio::task_local! {
    static TICKET: Ticket;
}

/// The ticket of the request being handled on this task, marked taken.
pub(crate) fn take_ticket() -> Option<Ticket> {
    TICKET
        .try_with(|ticket| {
            let attempt = ticket.taken.fetch_add(1, Ordering::SeqCst);
            let mut taken = ticket.clone();
            if attempt > 0 {
                taken.request_id = format!("{}.{attempt}", ticket.request_id);
            }
            taken
        })
        .ok()
}

#[cfg(test)]
mod tests;

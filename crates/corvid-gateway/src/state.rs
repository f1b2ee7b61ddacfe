use std::sync::Arc;

use corvid_config::Config;
use corvid_providers::Registry;
use corvid_store::{UsageRecord, UsageRecorder};

use crate::bookkeeping::Bookkeeper;
use crate::closing::{Closing, Watch};

/// What every handler shares: the configuration, the providers, and the usage ledger. Cheap
/// to clone.
#[derive(Debug, Clone)]
pub struct AppState(Arc<Inner>);

#[derive(Debug, Clone)]
struct Inner {
    config: Config,
    registry: Registry,
    recorder: Option<UsageRecorder>,
    /// Team mode's key and budget gate (see `access`).
    access: Option<crate::access::Access>,
    metrics: Arc<crate::metrics::Metrics>,
    bookkeeper: Bookkeeper,
    /// Closed by `serve` when the shutdown grace ends (see `closing`).
    closing: Arc<Closing>,
}

impl AppState {
    /// Each response's bookkeeping runs on a thread of the state's own (see `bookkeeping`).
    pub fn new(config: Config, registry: Registry) -> Self {
        Self(Arc::new(Inner {
            config,
            registry,
            recorder: None,
            access: None,
            metrics: Arc::new(crate::metrics::Metrics::new()),
            bookkeeper: Bookkeeper::start(),
            closing: Arc::default(),
        }))
    }

    /// The same state, recording every request in the usage ledger.
    pub fn with_recorder(self, recorder: UsageRecorder) -> Self {
        let inner = Arc::unwrap_or_clone(self.0);
        Self(Arc::new(Inner {
            recorder: Some(recorder),
            ..inner
        }))
    }

    /// The same state, with client keys and budgets checked on every API request.
    pub fn with_access(self, access: crate::access::Access) -> Self {
        let inner = Arc::unwrap_or_clone(self.0);
        Self(Arc::new(Inner {
            access: Some(access),
            ..inner
        }))
    }

    /// The same state with the admin API open to holders of `key` (`None`: off), for a reload
    /// that follows the env file; without a key gate there is no admin API to open.
    pub fn with_admin_key(self, key: Option<String>) -> Self {
        match self.access().cloned() {
            Some(access) => self.with_access(access.with_admin_key(key)),
            None => self,
        }
    }

    /// The key and budget gate, in team mode.
    pub fn access(&self) -> Option<&crate::access::Access> {
        self.0.access.as_ref()
    }

    pub fn config(&self) -> &Config {
        &self.0.config
    }

    pub fn registry(&self) -> &Registry {
        &self.0.registry
    }

    /// The state for new settings (`config`, `registry`) of a server that follows them live:
    /// everything that is the running server's rather than its settings' carries over — the
    /// usage recorder, the key and budget gate with its store connections and tasks, the
    /// metrics, the bookkeeping thread and the shutdown gate (ending the newest state's streams
    /// ends every earlier one's too).
    pub fn with_settings(&self, config: Config, registry: Registry) -> Self {
        Self(Arc::new(Inner {
            config,
            registry,
            ..Inner::clone(&self.0)
        }))
    }

    /// The shutdown gate, for `serve`.
    pub(crate) fn closing(&self) -> Arc<Closing> {
        Arc::clone(&self.0.closing)
    }

    /// A body's watch on the shutdown gate.
    pub(crate) fn closing_watch(&self) -> Watch {
        Watch::new(self.closing())
    }

    /// Runs `job` on the bookkeeping thread, off the thread that serves requests.
    pub(crate) fn later(&self, job: impl FnOnce() + Send + 'static) {
        self.0.bookkeeper.later(job);
    }

    /// Resolves once the bookkeeping handed in so far has run and its ledger rows are
    /// committed (at shutdown: nothing finished is left unwritten).
    pub async fn settle(&self) {
        self.0.bookkeeper.settle().await;
        if let Some(recorder) = self.0.recorder.clone() {
            // `flush` blocks until the writer thread has committed.
            let flushed = tokio::task::spawn_blocking(move || recorder.flush()).await;
            if let Ok(Err(error)) = flushed {
                tracing::warn!(%error, "some usage rows could not be written");
            }
        }
    }

    /// `/metrics`' text.
    pub(crate) fn metrics_text(&self) -> String {
        self.0.metrics.render()
    }

    /// Adds a row to the usage ledger (never blocks; see `UsageRecorder`), and counts it in
    /// `/metrics`.
    pub(crate) fn record(&self, record: UsageRecord) {
        let known = corvid_store::price_of(&self.0.config.prices, &record.model).is_some()
            || self
                .0
                .registry
                .provider(&record.provider)
                .is_some_and(|provider| provider.lists(&record.model));
        self.0.metrics.observe(&record, known);
        if let Some(recorder) = &self.0.recorder {
            recorder.record(record);
        }
    }
}

use std::sync::Arc;

use corvid_config::{AuthMode, Config};
use corvid_providers::Upstream;

/// What every handler shares: the configuration and the upstream client. Cheap to clone.
#[derive(Debug, Clone)]
pub struct AppState(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    config: Config,
    upstream: Upstream,
}

impl AppState {
    pub fn new(config: Config, upstream: Upstream) -> Self {
        Self(Arc::new(Inner { config, upstream }))
    }

    pub fn config(&self) -> &Config {
        &self.0.config
    }

    pub fn upstream(&self) -> &Upstream {
        &self.0.upstream
    }

    /// Whether the active credential is a SuperGrok sign-in (a 403 then means the plan).
    pub(crate) fn is_oauth(&self) -> bool {
        self.0.upstream.credential().mode() == AuthMode::OAuth
    }
}

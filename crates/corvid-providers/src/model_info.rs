//! What corvid says of a model to clients (`/v1/models` in every dialect) and in
//! `corvid models`: its context window (the one the agent compacts against), output limit and
//! capabilities. The provider's own list wins where it states them (Zed's flags, Gemini's
//! `outputTokenLimit`, Anthropic's `max_tokens`), then the catalog shipped with corvid. Prices
//! are the ledger's (`corvid_store::price_of` on [`ModelInfo::upstream`]).

use crate::context_windows::ContextWindow;
use crate::registry::Registry;

/// What a model can do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ModelCapabilities {
    /// Function calling.
    pub tools: bool,
    /// Image input.
    pub images: bool,
    /// Thinks before answering.
    pub reasoning: bool,
}

/// What corvid knows of one model a client may ask for.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelInfo {
    /// The provider it routes to now, if any.
    pub provider: Option<String>,
    /// The name that provider takes (what ledger rows and prices are keyed by).
    pub upstream: String,
    pub window: Option<ContextWindow>,
    pub max_output: Option<u64>,
    /// `None` when neither the provider nor the catalog knows.
    pub capabilities: Option<ModelCapabilities>,
}

impl Registry {
    /// What is known of `requested` (an alias, `provider/model` or a bare name). A provider's
    /// list counts once it has been read (`Provider::models`).
    pub fn model_info(&self, requested: &str) -> ModelInfo {
        let route = self.lead(requested).ok();
        let upstream = self.upstream_name(requested, route.as_ref());
        let listed = route
            .as_ref()
            .map(|route| route.provider.listed_facts(&route.model))
            .unwrap_or_default();
        let facts = corvid_config::catalog().model(&upstream);
        ModelInfo {
            provider: route.as_ref().map(|route| route.provider.name().to_owned()),
            window: self.context_window(requested),
            max_output: listed
                .max_output
                .or_else(|| facts.and_then(|facts| facts.max_output)),
            capabilities: listed.capabilities.or_else(|| {
                facts.map(|facts| ModelCapabilities {
                    tools: facts.tools,
                    images: facts.images,
                    reasoning: facts.reasoning,
                })
            }),
            upstream,
        }
    }
}

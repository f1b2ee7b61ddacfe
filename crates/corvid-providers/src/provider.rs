//! One configured upstream: its settings, its keys, and what its own model list says.

use std::sync::Arc;
use std::time::{Duration, Instant};

use corvid_config::{ProviderConfig, ProviderKind};
use tokio::sync::Mutex;

use crate::model_list::ListedModel;
use crate::pool::KeyPool;
use crate::registry::dialect_of;
use crate::upstream::Upstream;
use crate::zed::ZedService;

/// How long a fetched model list is trusted.
const MODEL_LIST_TTL: Duration = Duration::from_secs(600);

/// One configured upstream: its settings, its client, and its cached model list.
#[derive(Debug)]
pub struct Provider {
    pub(crate) config: ProviderConfig,
    /// One upstream per key (one for most providers); `upstream()` is the first.
    pub(crate) keys: KeyPool,
    /// The window a local server says it was started with (llama.cpp's `/props`), read with
    /// its model list.
    pub(crate) served_window: parking_lot::Mutex<Option<u64>>,
    pub(crate) fetched: Mutex<Option<(Instant, Vec<ListedModel>)>>,
    /// The signed-in Zed account, for the `zed` provider: its backend instead of `upstream`.
    pub(crate) zed: Option<Arc<ZedService>>,
}

impl Provider {
    pub fn new(config: ProviderConfig, upstream: Upstream) -> Self {
        Self::with_keys(config, vec![upstream])
    }

    /// A provider with a pool of keys: one upstream each, the first being `upstream()`. With
    /// more than one, a key answered 429 hands the request to the next at once.
    pub fn with_keys(config: ProviderConfig, mut members: Vec<Upstream>) -> Self {
        if members.len() > 1 {
            members = members
                .into_iter()
                .map(Upstream::handing_off_rate_limits)
                .collect();
        }
        Self {
            config,
            keys: KeyPool::new(members),
            served_window: parking_lot::Mutex::new(None),
            fetched: Mutex::new(None),
            zed: None,
        }
    }

    /// The `zed` provider, backed by a signed-in account.
    pub fn zed(config: ProviderConfig, upstream: Upstream, service: ZedService) -> Self {
        Self {
            zed: Some(Arc::new(service)),
            ..Self::new(config, upstream)
        }
    }

    /// The Zed account behind this provider, when it is the `zed` provider and signed in.
    pub fn zed_service(&self) -> Option<&ZedService> {
        self.zed.as_deref()
    }

    /// The account backend the pipeline sends this provider's calls through, if any.
    pub(crate) fn account(&self) -> Option<Arc<ZedService>> {
        self.zed.clone()
    }

    /// The dialect this provider's own HTTP API speaks, or `None` for a backend that takes
    /// canonical requests only (the Zed account, whose models each speak their own provider's
    /// dialect inside Zed's wrapper): nothing is ever passed through to it.
    pub fn api_dialect(&self) -> Option<corvid_wire::Dialect> {
        match self.zed {
            Some(_) => None,
            None => Some(dialect_of(self.config.kind)),
        }
    }

    /// Whether this provider takes `inbound` bodies as they are (the byte pass-through). A
    /// chat provider that serves `/responses` too (the xAI and OpenAI presets) takes Responses
    /// clients straight.
    pub fn takes_as_is(&self, inbound: corvid_wire::Dialect) -> bool {
        use corvid_wire::Dialect;
        let Some(outbound) = self.api_dialect() else {
            return false;
        };
        outbound == inbound
            || (inbound == Dialect::OpenAiResponses
                && outbound == Dialect::OpenAiChat
                && self.config.capabilities.serves_responses)
    }

    pub fn name(&self) -> &str {
        &self.config.name
    }

    pub fn kind(&self) -> ProviderKind {
        self.config.kind
    }

    pub fn config(&self) -> &ProviderConfig {
        &self.config
    }

    /// The provider's (first key's) upstream.
    pub fn upstream(&self) -> &Upstream {
        self.keys.member(0)
    }

    /// Every key's upstream, and which rest.
    pub fn keys(&self) -> &KeyPool {
        &self.keys
    }

    /// Whether requests may be routed here: switched on, and declared in `config.toml` or with
    /// a credential present. The xai provider is always available (the seed's behaviour: a
    /// missing key is a 401 naming what to set).
    pub fn is_available(&self) -> bool {
        if self.config.kind == ProviderKind::Zed {
            // Only with a signed-in account that Zed has not refused (and never when corvid
            // listens beyond loopback).
            return self.config.enabled
                && self
                    .zed
                    .as_ref()
                    .is_some_and(|zed| !zed.client().is_signed_out());
        }
        self.config.enabled
            && (self.config.explicit || self.config.name == "xai" || self.has_own_credential())
    }

    /// A preset with a key of its own (a keyless preset such as ollama must be declared).
    fn has_own_credential(&self) -> bool {
        let credential = self.upstream().credential();
        credential.is_available() && !credential.is_none()
    }

    /// Whether this provider lists `model` (configured, or in a fetched list still cached).
    pub fn lists(&self, model: &str) -> bool {
        if self.config.models.iter().any(|known| known == model) {
            return true;
        }
        if let Some(zed) = &self.zed {
            return zed
                .cached(|models| Some(models.get(model).is_some()))
                .unwrap_or(false);
        }
        self.fetched
            .try_lock()
            .ok()
            .and_then(|cache| {
                cache
                    .as_ref()
                    .map(|(_, models)| models.iter().any(|known| known.id == model))
            })
            .unwrap_or(false)
    }

    /// The context window this provider's own list states for `model`, once the list has been
    /// read (Zed's `max_token_count`; Gemini's `inputTokenLimit`; `context_length`,
    /// `context_window`, `max_model_len` or `max_input_tokens` of OpenAI-shaped lists).
    pub fn listed_window(&self, model: &str) -> Option<u64> {
        if let Some(zed) = &self.zed {
            return zed.cached(|models| {
                models
                    .get(model)
                    .map(|listed| listed.max_token_count)
                    .filter(|tokens| *tokens > 0)
            });
        }
        let cache = self.fetched.try_lock().ok()?;
        let listed = &cache.as_ref()?.1;
        listed
            .iter()
            .find(|listed| listed.id == model)
            .and_then(|listed| listed.window)
            // A local server's own window (llama.cpp's `n_ctx`) holds for any name it is asked.
            .or(*self.served_window.lock())
    }

    /// What this provider's own list says of `model` beyond its window, once read: the output
    /// limit, and (Zed's list) its tools, images and thinking flags.
    pub fn listed_facts(&self, model: &str) -> ListedFacts {
        if let Some(zed) = &self.zed {
            return zed
                .cached(|models| {
                    models.get(model).map(|listed| ListedFacts {
                        max_output: Some(listed.max_output_tokens).filter(|tokens| *tokens > 0),
                        capabilities: Some(crate::ModelCapabilities {
                            tools: listed.supports_tools,
                            images: listed.supports_images,
                            reasoning: listed.supports_thinking,
                        }),
                    })
                })
                .unwrap_or_default();
        }
        let Ok(cache) = self.fetched.try_lock() else {
            return ListedFacts::default();
        };
        let max_output = cache.as_ref().and_then(|(_, listed)| {
            listed
                .iter()
                .find(|listed| listed.id == model)
                .and_then(|listed| listed.max_output)
        });
        ListedFacts {
            max_output,
            capabilities: None,
        }
    }

    /// The configured models plus the provider's own list, fetched on demand and cached.
    pub async fn models(&self) -> Vec<String> {
        if let Some(zed) = &self.zed {
            return match zed.models().await {
                Ok(models) => models.models.into_iter().map(|model| model.id).collect(),
                Err(error) => {
                    tracing::debug!(error = %crate::error_chain(&error), "could not list the Zed account's models");
                    Vec::new()
                }
            };
        }
        let mut models = self.config.models.clone();
        let mut cache = self.fetched.lock().await;
        let fresh = cache
            .as_ref()
            .is_some_and(|(at, _)| at.elapsed() < MODEL_LIST_TTL);
        if !fresh && self.upstream().credential().is_available() {
            match self.fetch_models().await {
                Ok(list) => *cache = Some((Instant::now(), list)),
                Err(error) => {
                    tracing::debug!(provider = %self.config.name, error = %crate::error_chain(&*error), "could not list models")
                }
            }
        }
        if let Some((_, fetched)) = cache.as_ref() {
            for model in fetched {
                if !models.contains(&model.id) {
                    models.push(model.id.clone());
                }
            }
        }
        models
    }
}

/// What a provider's list states of a model besides its window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ListedFacts {
    pub max_output: Option<u64>,
    pub capabilities: Option<crate::ModelCapabilities>,
}

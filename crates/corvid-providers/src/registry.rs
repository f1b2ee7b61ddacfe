//! Providers by name, and routing a requested model to one of them.
//!
//! A model is addressed as `provider/model`, as an alias (which may itself name a provider), or
//! as a bare name that the catalog resolves: the providers that list it (configured models and
//! fetched lists); one → that provider; several → an error naming them; none → the provider
//! whose family the name belongs to (`claude-…` → anthropic), else `default_provider`.

use std::sync::Arc;

use corvid_auth::Credential;
use corvid_config::{Config, Loaded, ProviderConfig, ProviderKind};
use http::{HeaderName, HeaderValue};

use crate::error::RouteError;
use crate::provider::Provider;
use crate::transport::{BoxError, Transport};
use crate::upstream::{AuthStyle, Upstream};
use crate::zed::{ZedClient, ZedService};

/// Where a request goes.
#[derive(Debug, Clone)]
pub struct Route {
    pub provider: Arc<Provider>,
    /// The model name to send upstream.
    pub model: String,
    /// Which of the provider's keys sends it (0 unless the provider has a pool).
    pub key: usize,
    /// Whether a failure is retried on this target before anything else is tried: false when
    /// the route's next attempt is another target, which is tried at once instead.
    pub retry_in_place: bool,
}

impl Route {
    /// A route to `model` on `provider`, with its first key.
    pub fn new(provider: Arc<Provider>, model: impl Into<String>) -> Self {
        Self {
            provider,
            model: model.into(),
            key: 0,
            retry_in_place: true,
        }
    }

    /// The retries to ask of the upstream: none when another target follows (see
    /// [`Route::retry_in_place`]), else the provider's own.
    pub fn in_place_retries(&self) -> Option<u32> {
        (!self.retry_in_place).then_some(0)
    }

    /// The upstream of this route's key.
    pub fn upstream(&self) -> &Upstream {
        self.provider.keys().member(self.key)
    }

    /// `provider/model`, as the `x-corvid-target` header and `corvid route explain` say it.
    pub fn target(&self) -> String {
        format!("{}/{}", self.provider.name(), self.model)
    }
}

/// Every provider, with the aliases and the default for unknown names.
#[derive(Debug, Clone)]
pub struct Registry {
    pub(crate) providers: Vec<Arc<Provider>>,
    aliases: std::collections::BTreeMap<String, String>,
    default_model: String,
    default_provider: String,
    /// corvid may listen beyond loopback: the Zed account stays off.
    allow_remote: bool,
    pub(crate) max_retries: u32,
    /// The connect and request timeouts every provider's transport was built with.
    pub(crate) timeouts: (std::time::Duration, std::time::Duration),
    /// The configured context windows, with the aliases they are looked up through.
    windows: Config,
    /// `[routes.*]` and `[router]`.
    pub(crate) routing: corvid_config::RoutingConfig,
    /// Where each conversation began (shared by every clone).
    pub(crate) sticky: Arc<crate::routing::StickyTable>,
}

impl Registry {
    /// Builds every configured provider with its credential and transport. `oauth_http` serves
    /// SuperGrok token refreshes.
    pub fn from_config(loaded: &Loaded, oauth_http: reqwest::Client) -> Result<Self, BoxError> {
        let mut registry = Self::build_pooled(&loaded.config, |provider| {
            crate::pool::pool_credentials(provider, loaded, oauth_http.clone())
        })?;
        // A Zed account acts for the signed-in user only, on this machine: never when corvid
        // listens beyond loopback.
        if !loaded.config.allow_remote {
            let store = corvid_auth::zed::ZedStore::detect(loaded);
            if let Some((credentials, _)) =
                corvid_auth::zed::zed_credentials_from_loaded(loaded, &store)
            {
                let hosts = zed_hosts(&loaded.config);
                // A sign-in Zed refuses (401) is removed from the store, as Zed does.
                let client = ZedClient::new(crate::zed::ZedConfig::new(&hosts), credentials)?
                    .with_store(store);
                registry = registry.with_zed(client);
            }
        }
        Ok(registry)
    }

    /// The same registry with the `zed` provider backed by `client`.
    pub fn with_zed(mut self, client: ZedClient) -> Self {
        self.providers = self
            .providers
            .into_iter()
            .map(|provider| {
                if provider.config.kind == ProviderKind::Zed {
                    Arc::new(Provider::zed(
                        provider.config.clone(),
                        provider.upstream().clone(),
                        ZedService::with_retries(client.clone(), self.max_retries),
                    ))
                } else {
                    provider
                }
            })
            .collect();
        self
    }

    /// Builds every provider of `config`, asking `credential_for` for each one's credential.
    pub fn build(
        config: &Config,
        credential_for: impl Fn(&ProviderConfig) -> Credential,
    ) -> Result<Self, BoxError> {
        Self::build_pooled(config, |provider| vec![credential_for(provider)])
    }

    /// Builds every provider of `config` with the keys `credentials_for` gives it (a pool
    /// when more than one; none is taken as one missing credential).
    pub fn build_pooled(
        config: &Config,
        credentials_for: impl Fn(&ProviderConfig) -> Vec<Credential>,
    ) -> Result<Self, BoxError> {
        let mut providers = Vec::with_capacity(config.providers.len());
        for provider in &config.providers {
            let transport = Transport::new(
                config.connect_timeout,
                config.request_timeout,
                &provider.base_url,
                |name| std::env::var(name).ok(),
            )?;
            let headers = provider
                .headers
                .iter()
                .map(|(name, value)| {
                    Ok((
                        HeaderName::from_bytes(name.as_bytes())?,
                        HeaderValue::from_str(value)?,
                    ))
                })
                .collect::<Result<Vec<_>, BoxError>>()?;
            let mut credentials = credentials_for(provider).into_iter();
            let first = credentials.next().unwrap_or(Credential::None);
            let upstream = Upstream::new(transport, &provider.base_url, first, config.max_retries)
                .with_auth(AuthStyle::for_kind(provider.kind))
                .with_headers(headers);
            let mut members = vec![upstream];
            for credential in credentials {
                members.push(members[0].with_credential(credential));
            }
            providers.push(Arc::new(Provider::with_keys(provider.clone(), members)));
        }
        Ok(Self::new(providers, config))
    }

    /// A registry of ready providers.
    pub fn new(providers: Vec<Arc<Provider>>, config: &Config) -> Self {
        Self {
            providers,
            aliases: config.aliases.clone(),
            default_model: config.default_model.clone(),
            default_provider: config.default_provider.clone(),
            allow_remote: config.allow_remote,
            max_retries: config.max_retries,
            timeouts: (config.connect_timeout, config.request_timeout),
            routing: config.routing.clone(),
            sticky: Arc::default(),
            windows: Config {
                aliases: config.aliases.clone(),
                default_model: config.default_model.clone(),
                context_window: config.context_window,
                context_windows: config.context_windows.clone(),
                ..Config::default()
            },
        }
    }

    /// The configuration the context windows are looked up in.
    pub(crate) fn windows(&self) -> &Config {
        &self.windows
    }

    /// All providers, available or not.
    pub fn providers(&self) -> &[Arc<Provider>] {
        &self.providers
    }

    /// The provider called `name`.
    pub fn provider(&self, name: &str) -> Option<&Arc<Provider>> {
        self.providers
            .iter()
            .find(|provider| provider.name() == name)
    }

    /// The model a request that names none gets.
    pub fn default_model(&self) -> &str {
        &self.default_model
    }

    /// The aliases (public name → target).
    pub fn aliases(&self) -> &std::collections::BTreeMap<String, String> {
        &self.aliases
    }

    /// Routes `requested` (see the module docs). An empty name means `default_model`.
    pub fn resolve(&self, requested: &str) -> Result<Route, RouteError> {
        let requested = requested.trim();
        let name = if requested.is_empty() {
            self.default_model.as_str()
        } else {
            requested
        };
        let name = self.aliases.get(name).map(String::as_str).unwrap_or(name);

        if let Some((prefix, model)) = name.split_once('/')
            && let Some(provider) = self.provider(prefix)
        {
            return self.available(provider, model);
        }

        let listing: Vec<&Arc<Provider>> = self
            .providers
            .iter()
            .filter(|provider| provider.is_available() && provider.lists(name))
            .collect();
        match listing.as_slice() {
            [only] => {
                return Ok(Route::new(Arc::clone(only), name));
            }
            [] => {}
            several => {
                return Err(RouteError::Ambiguous {
                    model: name.to_owned(),
                    candidates: several
                        .iter()
                        .map(|provider| format!("{}/{name}", provider.name()))
                        .collect(),
                });
            }
        }
        if let Some(family) = family_of(name)
            && let Some(provider) = self.provider(family)
            && provider.is_available()
        {
            return Ok(Route::new(Arc::clone(provider), name));
        }
        if let Some(family) = family_of(name)
            && let Some(provider) = self.provider(family)
        {
            // The family's provider exists but is not set up: say how, rather than sending a
            // Claude model to xAI.
            return self.available(provider, name);
        }
        if let Some((prefix, _)) = name.split_once('/') {
            return Err(RouteError::UnknownProvider {
                provider: prefix.to_owned(),
                model: name.to_owned(),
                available: self.available_names(),
            });
        }
        match self.provider(&self.default_provider) {
            Some(provider) if provider.is_available() => Ok(Route::new(Arc::clone(provider), name)),
            _ => Err(RouteError::UnknownModel {
                model: name.to_owned(),
                available: self.available_names(),
            }),
        }
    }

    fn available(&self, provider: &Arc<Provider>, model: &str) -> Result<Route, RouteError> {
        if let Some(reason) = self.unavailable_reason(provider) {
            return Err(RouteError::Unavailable {
                provider: provider.name().to_owned(),
                reason,
            });
        }
        Ok(Route::new(Arc::clone(provider), model))
    }

    /// Why requests cannot go to `provider` now, saying what to do; `None` when they can.
    pub fn unavailable_reason(&self, provider: &Provider) -> Option<String> {
        if !provider.config.enabled {
            return Some("it is switched off (enabled = false)".to_owned());
        }
        if provider.is_available() {
            return None;
        }
        let zed_refused = provider
            .zed
            .as_ref()
            .is_some_and(|zed| zed.client().is_signed_out());
        Some(match &provider.config.credential {
            _ if provider.kind() == ProviderKind::Zed && self.allow_remote => {
                "the Zed account is off while corvid may listen beyond loopback \
                 (CORVID_ALLOW_REMOTE or --allow-remote): its hosted models are for you alone, \
                 on this machine"
                    .to_owned()
            }
            _ if zed_refused => format!(
                "Zed refused the stored sign-in (401) and corvid removed it; run `corvid login \
                 zed`{}",
                corvid_auth::SERVE_READS_AT_START
            ),
            _ if provider.kind() == ProviderKind::Zed => format!(
                "not signed in to a Zed account; run `corvid login zed`{}",
                corvid_auth::SERVE_READS_AT_START
            ),
            corvid_config::CredentialSource::Env(variables) => format!(
                "set {} in corvid's env file or the environment",
                variables.join(" or ")
            ),
            _ => "declare it under [providers] in config.toml".to_owned(),
        })
    }

    fn available_names(&self) -> Vec<String> {
        self.providers
            .iter()
            .filter(|provider| provider.is_available())
            .map(|provider| provider.name().to_owned())
            .collect()
    }
}

/// Zed's hosts for the `zed` provider's `base_url` (`https://zed.dev` by default; a mock in
/// tests).
pub fn zed_hosts(config: &Config) -> corvid_auth::zed::ZedHosts {
    let base = config
        .provider("zed")
        .map(|provider| provider.base_url.clone())
        .unwrap_or_else(|| "https://zed.dev".to_owned());
    corvid_auth::zed::ZedHosts::from_server_url(&base)
}

/// The dialect a provider kind speaks.
pub fn dialect_of(kind: ProviderKind) -> corvid_wire::Dialect {
    match kind {
        ProviderKind::OpenAiChat => corvid_wire::Dialect::OpenAiChat,
        ProviderKind::OpenAiResponses => corvid_wire::Dialect::OpenAiResponses,
        ProviderKind::Anthropic => corvid_wire::Dialect::Anthropic,
        ProviderKind::Gemini => corvid_wire::Dialect::Gemini,
        // A Zed model speaks its own provider's dialect inside Zed's wrapper; the pipeline
        // sends it through the account backend and `Provider::takes_as_is` never passes a
        // body through to it.
        ProviderKind::Zed => corvid_wire::Dialect::OpenAiChat,
    }
}

/// The preset provider a model family belongs to.
fn family_of(model: &str) -> Option<&'static str> {
    let model = model.to_ascii_lowercase();
    let starts = |prefixes: &[&str]| prefixes.iter().any(|prefix| model.starts_with(prefix));
    if starts(&["claude-", "anthropic"]) {
        Some("anthropic")
    } else if starts(&["gpt-", "o1", "o3", "o4", "chatgpt-", "codex-"]) {
        Some("openai")
    } else if starts(&["gemini-", "gemma-"]) {
        Some("gemini")
    } else if starts(&["grok-", "grok"]) {
        Some("xai")
    } else {
        None
    }
}

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use crate::providers::ProviderConfig;

/// The port corvid listens on unless told otherwise (the supergrok-zed port).
pub const DEFAULT_PORT: u16 = 8787;

/// Which xAI credential is active. Exactly one is used; the other mode's secrets are ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AuthMode {
    /// `XAI_API_KEY`, a pay-per-token developer key.
    #[default]
    ApiKey,
    /// SuperGrok sign-in: `XAI_ACCESS_TOKEN`, refreshed with `XAI_REFRESH_TOKEN`.
    OAuth,
}

impl AuthMode {
    pub(crate) const ACCEPTED: &'static str = "api_key, oauth";

    pub(crate) fn parse(value: &str) -> Option<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "api_key" | "apikey" | "api-key" => Some(Self::ApiKey),
            "oauth" => Some(Self::OAuth),
            _ => None,
        }
    }

    /// The name used in `config.toml` and in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ApiKey => "api_key",
            Self::OAuth => "oauth",
        }
    }
}

impl fmt::Display for AuthMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which upstream API serves `POST /v1/completions` (edit predictions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CompletionsBackend {
    /// `{upstream}/responses` with `store: false` (the default).
    #[default]
    Responses,
    /// `{upstream}/chat/completions`.
    Chat,
}

impl CompletionsBackend {
    pub(crate) const ACCEPTED: &'static str = "responses, chat";

    pub(crate) fn parse(value: &str) -> Option<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "responses" => Some(Self::Responses),
            "chat" => Some(Self::Chat),
            _ => None,
        }
    }

    /// The name used in `config.toml`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Responses => "responses",
            Self::Chat => "chat",
        }
    }
}

/// Whether the agent's commands run in the kernel sandbox (`sandbox` in `config.toml`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SandboxSetting {
    /// Confine every command (the default); where the kernel cannot, every command asks.
    #[default]
    On,
    /// The user turned it off: commands run with the user's full rights, under the approval
    /// policy alone.
    Off,
}

impl SandboxSetting {
    pub(crate) const ACCEPTED: &'static str = "on, off";

    /// Reads `on` or `off` (any case, surrounding spaces ignored).
    pub fn parse(value: &str) -> Option<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "on" => Some(Self::On),
            "off" => Some(Self::Off),
            _ => None,
        }
    }

    /// The name used in `config.toml` and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::On => "on",
            Self::Off => "off",
        }
    }
}

/// What the agent may do without asking when no `--approval` flag says (`approval` in
/// `config.toml`). The names are the agent protocol's approval policies; this crate is a leaf,
/// so the front ends map it onto theirs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ApprovalSetting {
    /// Reads run; edits, writes and commands ask (the default).
    #[default]
    Ask,
    /// Reads and edits run; commands ask.
    AutoEdit,
    /// Everything runs without asking.
    FullAuto,
}

impl ApprovalSetting {
    pub(crate) const ACCEPTED: &'static str = "ask, auto-edit, full-auto";

    /// Reads `ask`, `auto-edit` or `full-auto` (any case, surrounding spaces ignored).
    pub fn parse(value: &str) -> Option<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "ask" => Some(Self::Ask),
            "auto-edit" => Some(Self::AutoEdit),
            "full-auto" => Some(Self::FullAuto),
            _ => None,
        }
    }

    /// The name used in `config.toml` and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ask => "ask",
            Self::AutoEdit => "auto-edit",
            Self::FullAuto => "full-auto",
        }
    }
}

/// How much corvid logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogLevel {
    Trace,
    Debug,
    #[default]
    Info,
    Warn,
    Error,
}

impl LogLevel {
    pub(crate) const ACCEPTED: &'static str = "trace, debug, info, warn, warning, error, critical";

    pub(crate) fn parse(value: &str) -> Option<Self> {
        // The Python connector used Python's level names; accept those too.
        match value.trim().to_ascii_lowercase().as_str() {
            "trace" => Some(Self::Trace),
            "debug" => Some(Self::Debug),
            "info" => Some(Self::Info),
            "warn" | "warning" => Some(Self::Warn),
            "error" | "critical" => Some(Self::Error),
            _ => None,
        }
    }

    /// The `tracing` filter directive for this level.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Trace => "trace",
            Self::Debug => "debug",
            Self::Info => "info",
            Self::Warn => "warn",
            Self::Error => "error",
        }
    }
}

/// The resolved configuration: every value has been checked, every default applied.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Address to bind; loopback unless `allow_remote`.
    pub host: String,
    pub port: u16,
    /// Model used when a request names none.
    pub default_model: String,
    /// Base URL of the xAI-compatible API, e.g. `https://api.x.ai/v1`.
    pub upstream: String,
    pub request_timeout: Duration,
    pub connect_timeout: Duration,
    /// Deadline for one edit-prediction (`/v1/completions`) upstream call.
    pub completions_timeout: Duration,
    /// Retries after the first attempt, before any byte reached the client.
    pub max_retries: u32,
    pub log_level: LogLevel,
    /// Log prompt text; off by default.
    pub log_prompts: bool,
    pub auth_mode: AuthMode,
    pub completions_backend: CompletionsBackend,
    pub completions_enabled: bool,
    /// Public model names rewritten to upstream names (`supergrok` → `grok-4.6`).
    pub aliases: BTreeMap<String, String>,
    /// Permit a bind beyond loopback (`CORVID_ALLOW_REMOTE`).
    pub allow_remote: bool,
    /// Base URL of xAI's OAuth server (`https://auth.x.ai`), overridable for tests.
    pub xai_auth_url: String,
    /// Largest request body accepted, in bytes.
    pub max_body_bytes: usize,
    /// How long in-flight requests may run after a shutdown signal.
    pub shutdown_grace: Duration,
    /// Prices per model (upstream model name), for `corvid usage` costs.
    pub prices: BTreeMap<String, Price>,
    /// Every provider: the presets merged with `[providers.*]`.
    pub providers: Vec<ProviderConfig>,
    /// Where a bare model name that no provider lists goes (`xai`, the seed's behaviour).
    pub default_provider: String,
    /// Whether the agent's commands run in the kernel sandbox.
    pub sandbox: SandboxSetting,
    /// The agent's approval policy when no `--approval` flag is given.
    pub approval: ApprovalSetting,
    /// `context_window`: the agent's context window in tokens for every model that
    /// `context_windows` does not name; `None` leaves it to the catalog.
    pub context_window: Option<u64>,
    /// `[context_windows]`: a model name (as the user writes it, or `provider/model`) → its
    /// context window in tokens.
    pub context_windows: BTreeMap<String, u64>,
    /// `[web]`: the agent's `web_fetch` and `web_search`.
    pub web: crate::web::WebConfig,
    /// `[mcp_servers.<name>]` and `mcp_max_tools` (see [`crate::McpSettings`]).
    pub mcp: crate::McpSettings,
    /// `[store]`: SQLite or PostgreSQL, client keys (see [`crate::StoreConfig`]).
    pub store: crate::StoreConfig,
    /// `[routes.*]` and `[router]`: fallback targets, task rules, stickiness.
    pub routing: crate::RoutingConfig,
}

/// What a model costs, in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Price {
    /// Fresh (uncached) input.
    pub input: f64,
    /// Input read from a cache; defaults to `input` when not given.
    pub cached_input: f64,
    /// Input written to a cache; defaults to `input` when not given.
    pub cache_write: f64,
    /// Output, reasoning included.
    pub output: f64,
}

impl Default for Config {
    fn default() -> Self {
        let aliases = [("supergrok", "grok-4.6"), ("grok", "grok-4.6")]
            .into_iter()
            .map(|(alias, model)| (alias.to_owned(), model.to_owned()))
            .collect();
        Self {
            host: "127.0.0.1".to_owned(),
            port: DEFAULT_PORT,
            default_model: "grok-4.6".to_owned(),
            upstream: "https://api.x.ai/v1".to_owned(),
            request_timeout: Duration::from_secs(600),
            connect_timeout: Duration::from_secs(10),
            completions_timeout: Duration::from_secs(20),
            max_retries: 2,
            log_level: LogLevel::Info,
            log_prompts: false,
            auth_mode: AuthMode::ApiKey,
            completions_backend: CompletionsBackend::Responses,
            completions_enabled: true,
            aliases,
            allow_remote: false,
            xai_auth_url: "https://auth.x.ai".to_owned(),
            max_body_bytes: 32 * 1024 * 1024,
            shutdown_grace: Duration::from_secs(10),
            prices: BTreeMap::new(),
            providers: crate::providers::presets("https://api.x.ai/v1"),
            default_provider: "xai".to_owned(),
            sandbox: SandboxSetting::On,
            approval: ApprovalSetting::Ask,
            context_window: None,
            context_windows: BTreeMap::new(),
            web: crate::web::WebConfig::default(),
            mcp: crate::McpSettings::default(),
            store: crate::StoreConfig::default(),
            routing: crate::RoutingConfig::default(),
        }
    }
}

impl Config {
    /// The upstream model name for what a client asked for: aliases rewritten, an empty name
    /// replaced by `default_model`, anything else passed through unchanged.
    pub fn resolve_model<'a>(&'a self, requested: &'a str) -> &'a str {
        let requested = requested.trim();
        if requested.is_empty() {
            return self.resolve_model_once(&self.default_model);
        }
        self.resolve_model_once(requested)
    }

    fn resolve_model_once<'a>(&'a self, name: &'a str) -> &'a str {
        self.aliases.get(name).map(String::as_str).unwrap_or(name)
    }

    /// The configured context window for the model the user called `requested`, which routes
    /// to `provider`/`model` upstream: `[context_windows]` under the name as written, then its
    /// alias target, then `provider/model`, then the bare upstream name; else `context_window`.
    /// `None` when neither is configured (the catalog decides).
    pub fn configured_context_window(
        &self,
        requested: &str,
        route: Option<(&str, &str)>,
    ) -> Option<u64> {
        let requested = requested.trim();
        let mut names = vec![
            requested.to_owned(),
            self.resolve_model(requested).to_owned(),
        ];
        if let Some((provider, model)) = route {
            names.push(format!("{provider}/{model}"));
            names.push(model.to_owned());
        }
        names
            .iter()
            .find_map(|name| self.context_windows.get(name).copied())
            .or(self.context_window)
    }

    /// The provider called `name`.
    pub fn provider(&self, name: &str) -> Option<&ProviderConfig> {
        self.providers.iter().find(|provider| provider.name == name)
    }

    /// The base URL the server listens on, for messages and printed settings.
    pub fn local_base_url(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        format!("http://{host}:{}", self.port)
    }
}

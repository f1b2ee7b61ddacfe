//! Upstream providers: built-in presets (xai, openai, anthropic, gemini, ollama) merged with
//! `[providers.<name>]` tables, so a user usually adds only a key.
//!
//! ```toml
//! [providers.openrouter]
//! kind = "openai-chat"                       # openai-chat | openai-responses | anthropic | gemini
//! base_url = "https://openrouter.ai/api/v1"
//! api_key_env = "OPENROUTER_API_KEY"         # read from the environment or the env file
//! api_key_envs = ["OPENROUTER_KEY_2"]        # more keys: a pool, spread and rested on 429
//! headers = { "HTTP-Referer" = "https://example.com" }
//! models = ["anthropic/claude-sonnet-4.5"]
//! [providers.openrouter.model_rules."anthropic/claude-sonnet-4.5"]
//! drop = ["prompt_cache_key"]
//! max_output_tokens = 64000
//! ```

use std::collections::BTreeMap;

use crate::ConfigError;

/// The API an upstream speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProviderKind {
    /// OpenAI Chat Completions (OpenAI, xAI, Ollama, llama.cpp, vLLM, OpenRouter, …).
    OpenAiChat,
    /// OpenAI Responses.
    OpenAiResponses,
    /// Anthropic Messages.
    Anthropic,
    /// Google Gemini `generateContent`.
    Gemini,
    /// A Zed account's hosted models (`corvid login zed`): each model keeps its own provider's
    /// API, wrapped in Zed's completion endpoint.
    Zed,
}

impl ProviderKind {
    pub(crate) const ACCEPTED: &'static str = "openai-chat, openai-responses, anthropic, gemini";

    pub(crate) fn parse(value: &str) -> Option<Self> {
        match value.trim() {
            "openai-chat" | "openai" | "openai_chat" => Some(Self::OpenAiChat),
            "openai-responses" | "openai_responses" | "responses" => Some(Self::OpenAiResponses),
            "anthropic" => Some(Self::Anthropic),
            "gemini" | "google" => Some(Self::Gemini),
            "zed" => Some(Self::Zed),
            _ => None,
        }
    }

    /// The name used in `config.toml`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OpenAiChat => "openai-chat",
            Self::OpenAiResponses => "openai-responses",
            Self::Anthropic => "anthropic",
            Self::Gemini => "gemini",
            Self::Zed => "zed",
        }
    }
}

/// Where a provider's credential comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CredentialSource {
    /// The xAI credential chosen by `auth_mode` (API key or SuperGrok sign-in).
    XaiAuth,
    /// The first of these variables that is set, in the environment or the env file.
    Env(Vec<String>),
    /// No credential (a local server such as Ollama).
    None,
    /// The Zed account stored by `corvid login zed`.
    ZedAccount,
}

/// Per-model parameter rules for one provider.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelRule {
    /// Top-level request fields removed before forwarding.
    pub drop: Vec<String>,
    /// The largest output token limit the model accepts; larger requests are clamped.
    pub max_output_tokens: Option<u32>,
}

/// One upstream provider, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderConfig {
    pub name: String,
    pub kind: ProviderKind,
    /// Base URL including the version path (`https://api.openai.com/v1`).
    pub base_url: String,
    pub credential: CredentialSource,
    /// `api_key_envs`: more variables whose keys join the provider's key pool (beside the
    /// one `api_key_env` names); requests spread over every key that is set, and a key
    /// answered 429 rests while the others serve.
    pub key_pool: Vec<String>,
    /// Extra headers sent on every request.
    pub headers: Vec<(String, String)>,
    /// Models this provider is known to serve (its fetched list is added at run time).
    pub models: Vec<String>,
    pub model_rules: BTreeMap<String, ModelRule>,
    /// Declared in `config.toml` (a preset counts only once its credential exists).
    pub explicit: bool,
    /// `enabled = false` switches a provider off.
    pub enabled: bool,
    /// What the provider's API can do, decided by settings rather than by its name.
    pub capabilities: Capabilities,
}

/// What a provider's API accepts beyond its kind's dialect. The xAI and OpenAI presets set
/// them; any `[providers.<name>]` table may set each one (`serves_responses = true`…).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// An OpenAI chat provider that also serves `/responses`: Responses clients pass straight
    /// through, and `/v1/completions` uses it.
    pub serves_responses: bool,
    /// The chat API reads reasoning sent back in earlier assistant turns (DeepSeek-style
    /// `reasoning_content`); when false, corvid leaves it out.
    pub accepts_reasoning: bool,
    /// xAI's table of fields its models refuse applies (`shared/reference/zed-and-xai.md` §7).
    pub xai_field_rules: bool,
}

impl Capabilities {
    /// A plain provider of its kind.
    pub const PLAIN: Self = Self {
        serves_responses: false,
        accepts_reasoning: true,
        xai_field_rules: false,
    };
}

impl ProviderConfig {
    /// The rule for `model`, when one is configured.
    pub fn rule(&self, model: &str) -> Option<&ModelRule> {
        // Most providers have no rules: skip hashing the name on every request.
        if self.model_rules.is_empty() {
            return None;
        }
        self.model_rules.get(model)
    }
}

/// The xAI models corvid knows (reference `zed-and-xai.md` §7.1).
pub const XAI_MODELS: &[&str] = &[
    "grok-4.6",
    "grok-4.5",
    "grok-build-0.1",
    "grok-4.3",
    "grok-4",
    "grok-4-fast-reasoning",
    "grok-4-fast-non-reasoning",
    "grok-3-mini",
];

/// The built-in presets; `xai_base` is the seed's `upstream` setting.
pub(crate) fn presets(xai_base: &str) -> Vec<ProviderConfig> {
    let preset = |name: &str, kind, base_url: &str, credential, models: &[&str]| ProviderConfig {
        name: name.to_owned(),
        kind,
        base_url: base_url.to_owned(),
        credential,
        key_pool: Vec::new(),
        headers: Vec::new(),
        models: models.iter().map(|model| (*model).to_owned()).collect(),
        model_rules: BTreeMap::new(),
        explicit: false,
        enabled: true,
        capabilities: match name {
            "xai" => Capabilities {
                serves_responses: true,
                accepts_reasoning: false,
                xai_field_rules: true,
            },
            "openai" => Capabilities {
                serves_responses: true,
                accepts_reasoning: false,
                xai_field_rules: false,
            },
            _ => Capabilities::PLAIN,
        },
    };
    let env = |names: &[&str]| {
        CredentialSource::Env(names.iter().map(|name| (*name).to_owned()).collect())
    };
    vec![
        preset(
            "xai",
            ProviderKind::OpenAiChat,
            xai_base,
            CredentialSource::XaiAuth,
            XAI_MODELS,
        ),
        preset(
            "openai",
            ProviderKind::OpenAiChat,
            "https://api.openai.com/v1",
            env(&["OPENAI_API_KEY"]),
            &[],
        ),
        preset(
            "anthropic",
            ProviderKind::Anthropic,
            "https://api.anthropic.com/v1",
            env(&["ANTHROPIC_API_KEY"]),
            &[],
        ),
        preset(
            "gemini",
            ProviderKind::Gemini,
            "https://generativelanguage.googleapis.com/v1beta",
            env(&["GEMINI_API_KEY", "GOOGLE_API_KEY"]),
            &[],
        ),
        preset(
            "ollama",
            ProviderKind::OpenAiChat,
            "http://127.0.0.1:11434/v1",
            CredentialSource::None,
            &[],
        ),
        preset(
            "zed",
            ProviderKind::Zed,
            "https://zed.dev",
            CredentialSource::ZedAccount,
            &[],
        ),
    ]
}

/// Merges `[providers.*]` over the presets.
pub(crate) fn read_providers(
    table: Option<&toml::Value>,
    xai_base: &str,
    source: &str,
) -> Result<Vec<ProviderConfig>, ConfigError> {
    let mut providers = presets(xai_base);
    let Some(table) = table else {
        return Ok(providers);
    };
    let invalid = |key: String, message: String| ConfigError::Invalid {
        key,
        source_name: source.to_owned(),
        message,
    };
    let table = table.as_table().ok_or_else(|| {
        invalid(
            "providers".to_owned(),
            "expected [providers.<name>] tables".to_owned(),
        )
    })?;
    for (name, entry) in table {
        let key = |field: &str| format!("providers.{name}.{field}");
        if name.is_empty() || name.contains('/') {
            return Err(invalid(
                format!("providers.{name}"),
                "a provider name must be non-empty and contain no '/'".to_owned(),
            ));
        }
        let entry = entry
            .as_table()
            .ok_or_else(|| invalid(format!("providers.{name}"), "expected a table".to_owned()))?;
        let existing = providers.iter().position(|provider| provider.name == *name);
        let mut provider = match existing {
            Some(index) => providers.remove(index),
            None => {
                let kind = entry
                    .get("kind")
                    .and_then(toml::Value::as_str)
                    .ok_or_else(|| {
                        invalid(
                            key("kind"),
                            format!(
                                "required for a new provider: one of {}",
                                ProviderKind::ACCEPTED
                            ),
                        )
                    })?;
                let kind = ProviderKind::parse(kind).ok_or_else(|| {
                    invalid(
                        key("kind"),
                        format!("expected one of {}; got {kind:?}", ProviderKind::ACCEPTED),
                    )
                })?;
                let base_url = entry
                    .get("base_url")
                    .and_then(toml::Value::as_str)
                    .ok_or_else(|| {
                        invalid(key("base_url"), "required for a new provider".to_owned())
                    })?;
                ProviderConfig {
                    name: name.clone(),
                    kind,
                    base_url: base_url.to_owned(),
                    credential: CredentialSource::None,
                    key_pool: Vec::new(),
                    headers: Vec::new(),
                    models: Vec::new(),
                    model_rules: BTreeMap::new(),
                    explicit: true,
                    enabled: true,
                    capabilities: Capabilities::PLAIN,
                }
            }
        };
        provider.explicit = true;
        for (field, value) in entry {
            let string = || {
                value
                    .as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| invalid(key(field), "expected a string".to_owned()))
            };
            match field.as_str() {
                "kind" => {
                    let text = string()?;
                    provider.kind = ProviderKind::parse(&text).ok_or_else(|| {
                        invalid(
                            key(field),
                            format!("expected one of {}; got {text:?}", ProviderKind::ACCEPTED),
                        )
                    })?;
                }
                "base_url" => {
                    let url = string()?;
                    if !(url.starts_with("http://") || url.starts_with("https://")) {
                        return Err(invalid(
                            key(field),
                            format!("expected an http:// or https:// URL, got {url:?}"),
                        ));
                    }
                    provider.base_url = url;
                }
                "api_key_env" => provider.credential = CredentialSource::Env(vec![string()?]),
                "api_key_envs" => {
                    provider.key_pool = value
                        .as_array()
                        .and_then(|items| {
                            items
                                .iter()
                                .map(|item| item.as_str().map(str::to_owned))
                                .collect::<Option<Vec<_>>>()
                        })
                        .filter(|names| !names.is_empty())
                        .ok_or_else(|| {
                            invalid(
                                key(field),
                                "expected a non-empty list of variable names".to_owned(),
                            )
                        })?;
                }
                "enabled" => {
                    provider.enabled = value
                        .as_bool()
                        .ok_or_else(|| invalid(key(field), "expected true or false".to_owned()))?;
                }
                "serves_responses" | "accepts_reasoning" | "xai_field_rules" => {
                    let on = value
                        .as_bool()
                        .ok_or_else(|| invalid(key(field), "expected true or false".to_owned()))?;
                    let capabilities = &mut provider.capabilities;
                    match field.as_str() {
                        "serves_responses" => capabilities.serves_responses = on,
                        "accepts_reasoning" => capabilities.accepts_reasoning = on,
                        _ => capabilities.xai_field_rules = on,
                    }
                }
                "headers" => {
                    let headers = value.as_table().ok_or_else(|| {
                        invalid(
                            key(field),
                            "expected a table of name = \"value\"".to_owned(),
                        )
                    })?;
                    provider.headers = headers
                        .iter()
                        .map(|(header, text)| {
                            text.as_str()
                                .map(|text| (header.clone(), text.to_owned()))
                                .ok_or_else(|| {
                                    invalid(
                                        format!("{}.{header}", key(field)),
                                        "expected a string".to_owned(),
                                    )
                                })
                        })
                        .collect::<Result<_, _>>()?;
                }
                "models" => {
                    let models = value.as_array().ok_or_else(|| {
                        invalid(key(field), "expected a list of model names".to_owned())
                    })?;
                    provider.models = models
                        .iter()
                        .map(|model| {
                            model.as_str().map(str::to_owned).ok_or_else(|| {
                                invalid(key(field), "expected a list of strings".to_owned())
                            })
                        })
                        .collect::<Result<_, _>>()?;
                }
                "model_rules" => provider.model_rules = read_rules(value, &key(field), source)?,
                other => {
                    return Err(invalid(
                        key(other),
                        "unknown field (accepted: kind, base_url, api_key_env, api_key_envs, enabled, headers, models, model_rules)".to_owned(),
                    ));
                }
            }
        }
        provider.base_url = provider.base_url.trim_end_matches('/').to_owned();
        providers.push(provider);
    }
    Ok(providers)
}

fn read_rules(
    value: &toml::Value,
    key: &str,
    source: &str,
) -> Result<BTreeMap<String, ModelRule>, ConfigError> {
    let invalid = |key: String, message: &str| ConfigError::Invalid {
        key,
        source_name: source.to_owned(),
        message: message.to_owned(),
    };
    let table = value.as_table().ok_or_else(|| {
        invalid(
            key.to_owned(),
            "expected [..model_rules.\"<model>\"] tables",
        )
    })?;
    let mut rules = BTreeMap::new();
    for (model, rule) in table {
        let rule_key = format!("{key}.{model}");
        let rule = rule
            .as_table()
            .ok_or_else(|| invalid(rule_key.clone(), "expected a table"))?;
        let mut parsed = ModelRule::default();
        for (field, value) in rule {
            match field.as_str() {
                "drop" => {
                    parsed.drop = value
                        .as_array()
                        .and_then(|items| {
                            items
                                .iter()
                                .map(|item| item.as_str().map(str::to_owned))
                                .collect()
                        })
                        .ok_or_else(|| {
                            invalid(format!("{rule_key}.drop"), "expected a list of field names")
                        })?;
                }
                "max_output_tokens" => {
                    parsed.max_output_tokens = Some(
                        value
                            .as_integer()
                            .and_then(|n| u32::try_from(n).ok())
                            .filter(|n| *n > 0)
                            .ok_or_else(|| {
                                invalid(
                                    format!("{rule_key}.max_output_tokens"),
                                    "expected a positive integer",
                                )
                            })?,
                    );
                }
                _ => {
                    return Err(invalid(
                        format!("{rule_key}.{field}"),
                        "unknown field (accepted: drop, max_output_tokens)",
                    ));
                }
            }
        }
        rules.insert(model.clone(), parsed);
    }
    Ok(rules)
}

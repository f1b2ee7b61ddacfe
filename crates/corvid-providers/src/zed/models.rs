//! `GET /models`: what the account may call, and which provider's API each model speaks
//! (reference §4). Disabled models are left out; so are providers corvid cannot write for.

use serde::Deserialize;

/// The provider behind a Zed-hosted model: it decides how `provider_request` is written and how
/// the reply's events are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ZedProvider {
    /// Anthropic Messages.
    Anthropic,
    /// OpenAI Responses.
    OpenAi,
    /// Gemini `generateContent`.
    Google,
    /// xAI, OpenAI Chat Completions.
    XAi,
    /// Baseten, OpenAI Chat Completions (newest servers).
    Baseten,
}

impl ZedProvider {
    /// Reads the snake_case wire name.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "anthropic" => Self::Anthropic,
            "open_ai" => Self::OpenAi,
            "google" => Self::Google,
            "x_ai" => Self::XAi,
            "baseten" => Self::Baseten,
            _ => return None,
        })
    }

    /// The snake_case wire name (a PascalCase one makes the cloud answer 500).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Anthropic => "anthropic",
            Self::OpenAi => "open_ai",
            Self::Google => "google",
            Self::XAi => "x_ai",
            Self::Baseten => "baseten",
        }
    }

    /// A last-resort guess from a model id that `/models` does not list.
    pub fn guess(model: &str) -> Option<Self> {
        let model = model.strip_prefix("models/").unwrap_or(model);
        if model.starts_with("claude") {
            Some(Self::Anthropic)
        } else if model.starts_with("gpt")
            || model
                .strip_prefix('o')
                .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
        {
            Some(Self::OpenAi)
        } else if model.starts_with("gemini") {
            Some(Self::Google)
        } else if model.starts_with("grok") {
            Some(Self::XAi)
        } else {
            None
        }
    }

    /// Whether replies are Chat Completions chunks (which carry no end marker on this path).
    pub(crate) fn is_chat(self) -> bool {
        matches!(self, Self::XAi | Self::Baseten)
    }
}

/// An effort level a model offers.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ZedEffortLevel {
    #[serde(default)]
    pub name: String,
    pub value: String,
    #[serde(default)]
    pub is_default: bool,
}

/// One model the account may call.
#[derive(Debug, Clone, PartialEq)]
pub struct ZedModel {
    pub provider: ZedProvider,
    /// The bare cloud id (`claude-sonnet-4-6`; no `models/` prefix, even for Google).
    pub id: String,
    pub display_name: String,
    pub max_token_count: u64,
    pub max_output_tokens: u64,
    pub supports_tools: bool,
    pub supports_images: bool,
    pub supports_thinking: bool,
    pub supports_fast_mode: bool,
    pub supports_parallel_tool_calls: bool,
    pub supported_effort_levels: Vec<ZedEffortLevel>,
    pub is_latest: bool,
}

impl ZedModel {
    /// A model known only by id (not listed by `/models`), its provider given or guessed.
    pub fn unlisted(id: &str, provider: ZedProvider) -> Self {
        Self {
            provider,
            id: id.to_owned(),
            display_name: id.to_owned(),
            max_token_count: 0,
            max_output_tokens: 0,
            supports_tools: true,
            supports_images: false,
            supports_thinking: false,
            supports_fast_mode: false,
            supports_parallel_tool_calls: false,
            supported_effort_levels: Vec::new(),
            is_latest: false,
        }
    }
}

/// `GET /models`, filtered.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ZedModels {
    /// The enabled models of known providers, in Zed's order. Empty: the account can call
    /// nothing.
    pub models: Vec<ZedModel>,
    /// Kept only when listed in `models`.
    pub default_model: Option<String>,
    pub default_fast_model: Option<String>,
    pub recommended_models: Vec<String>,
}

impl ZedModels {
    /// Reads a `/models` body: disabled models and unknown providers left out, default and
    /// recommended ids not in the list dropped.
    pub fn parse(body: &[u8]) -> Result<Self, serde_json::Error> {
        let wire: ModelsWire = serde_json::from_slice(body)?;
        let models: Vec<ZedModel> = wire
            .models
            .into_iter()
            .filter(|model| !model.is_disabled)
            .filter_map(|model| {
                let Some(provider) = ZedProvider::parse(&model.provider) else {
                    tracing::debug!(model = %model.id, provider = %model.provider, "Zed model of an unknown provider left out");
                    return None;
                };
                Some(ZedModel {
                    provider,
                    display_name: model.display_name.unwrap_or_else(|| model.id.clone()),
                    id: model.id,
                    max_token_count: model.max_token_count,
                    max_output_tokens: model.max_output_tokens,
                    supports_tools: model.supports_tools,
                    supports_images: model.supports_images,
                    supports_thinking: model.supports_thinking,
                    supports_fast_mode: model.supports_fast_mode,
                    supports_parallel_tool_calls: model.supports_parallel_tool_calls,
                    supported_effort_levels: model.supported_effort_levels,
                    is_latest: model.is_latest,
                })
            })
            .collect();
        let listed = |id: &String| models.iter().any(|model| &model.id == id);
        let default_model = wire.default_model.filter(listed);
        let default_fast_model = wire.default_fast_model.filter(listed);
        let recommended_models = wire.recommended_models.into_iter().filter(listed).collect();
        Ok(Self {
            models,
            default_model,
            default_fast_model,
            recommended_models,
        })
    }

    /// The model with this id (a `models/` prefix is ignored).
    pub fn get(&self, id: &str) -> Option<&ZedModel> {
        let id = id.strip_prefix("models/").unwrap_or(id);
        self.models.iter().find(|model| model.id == id)
    }
}

#[derive(Debug, Deserialize)]
struct ModelsWire {
    #[serde(default)]
    models: Vec<ModelWire>,
    #[serde(default)]
    default_model: Option<String>,
    #[serde(default)]
    default_fast_model: Option<String>,
    #[serde(default)]
    recommended_models: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct ModelWire {
    provider: String,
    id: String,
    #[serde(default)]
    display_name: Option<String>,
    #[serde(default)]
    is_latest: bool,
    #[serde(default)]
    max_token_count: u64,
    #[serde(default)]
    max_output_tokens: u64,
    #[serde(default)]
    supports_tools: bool,
    #[serde(default)]
    supports_images: bool,
    #[serde(default)]
    supports_thinking: bool,
    #[serde(default)]
    supports_fast_mode: bool,
    #[serde(default)]
    supports_parallel_tool_calls: bool,
    #[serde(default)]
    supported_effort_levels: Vec<ZedEffortLevel>,
    #[serde(default)]
    is_disabled: bool,
}

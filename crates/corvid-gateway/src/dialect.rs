use corvid_config::ProviderKind;

/// The API dialect a client speaks (and the one its errors must come back in).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dialect {
    #[default]
    OpenAiChat,
    OpenAiResponses,
    Anthropic,
    Gemini,
}

impl Dialect {
    /// The dialect a provider kind speaks.
    pub fn of(kind: ProviderKind) -> Self {
        match kind {
            ProviderKind::OpenAiChat => Self::OpenAiChat,
            ProviderKind::OpenAiResponses => Self::OpenAiResponses,
            ProviderKind::Anthropic => Self::Anthropic,
            ProviderKind::Gemini => Self::Gemini,
        }
    }

    /// The name recorded in the usage ledger.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OpenAiChat => "openai-chat",
            Self::OpenAiResponses => "openai-responses",
            Self::Anthropic => "anthropic",
            Self::Gemini => "gemini",
        }
    }
}

use serde::{Deserialize, Serialize};

/// Token counts, split so that every dialect's totals can be rebuilt exactly (they disagree on
/// what "input" and "output" include; reference `wire-formats.md` §6.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    /// Input tokens neither read from nor written to a cache (Anthropic's `input_tokens`).
    pub input: u64,
    /// Input tokens read from a cache.
    pub cache_read: u64,
    /// Input tokens written to a cache.
    pub cache_write: u64,
    /// All output tokens, reasoning included (OpenAI's `completion_tokens`).
    pub output: u64,
    /// The reasoning share of `output`.
    pub reasoning: u64,
}

impl Usage {
    /// Every input token: fresh, cache read and cache written (OpenAI's `prompt_tokens`).
    pub fn total_input(&self) -> u64 {
        self.input + self.cache_read + self.cache_write
    }

    /// Input plus output.
    pub fn total(&self) -> u64 {
        self.total_input() + self.output
    }

    /// Output without reasoning (Gemini's `candidatesTokenCount`, xAI's `completion_tokens`).
    pub fn visible_output(&self) -> u64 {
        self.output.saturating_sub(self.reasoning)
    }

    /// From OpenAI-style counts, where `prompt` includes cached tokens.
    pub fn from_openai(
        prompt: u64,
        cached: u64,
        cache_write: u64,
        completion: u64,
        reasoning: u64,
    ) -> Self {
        Self {
            input: prompt.saturating_sub(cached).saturating_sub(cache_write),
            cache_read: cached,
            cache_write,
            output: completion,
            reasoning,
        }
    }
}

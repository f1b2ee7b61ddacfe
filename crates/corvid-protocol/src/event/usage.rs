//! Token usage and its cost, as `usage` events carry them.

use std::ops::{Add, AddAssign};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The payload of `usage`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UsageNotification {
    /// The step, counted from 1 within the turn.
    pub step: u32,
    /// This step's tokens.
    pub usage: TokenUsage,
    /// The turn's tokens so far, this step included.
    pub turn: TokenUsage,
    /// The turn's cost so far in US dollars, priced as the usage ledger prices it (the step's
    /// model); absent when the model has no known price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_cost_usd: Option<f64>,
    /// The context window of the step's model, in tokens, as the engine works with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
}

/// Token counts, split like `corvid-wire`'s `Usage` so every provider's totals can be rebuilt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct TokenUsage {
    /// Input tokens neither read from nor written to a cache.
    pub input: u64,
    /// Input tokens read from a cache.
    pub cache_read: u64,
    /// Input tokens written to a cache.
    pub cache_write: u64,
    /// All output tokens, reasoning included.
    pub output: u64,
    /// The reasoning share of `output`.
    pub reasoning: u64,
}

impl TokenUsage {
    /// Every input token: fresh, cache read and cache written.
    pub fn total_input(&self) -> u64 {
        self.input
            .saturating_add(self.cache_read)
            .saturating_add(self.cache_write)
    }

    /// Input plus output.
    pub fn total(&self) -> u64 {
        self.total_input().saturating_add(self.output)
    }
}

impl Add for TokenUsage {
    type Output = TokenUsage;

    fn add(mut self, other: TokenUsage) -> TokenUsage {
        self += other;
        self
    }
}

impl AddAssign for TokenUsage {
    fn add_assign(&mut self, other: TokenUsage) {
        self.input = self.input.saturating_add(other.input);
        self.cache_read = self.cache_read.saturating_add(other.cache_read);
        self.cache_write = self.cache_write.saturating_add(other.cache_write);
        self.output = self.output.saturating_add(other.output);
        self.reasoning = self.reasoning.saturating_add(other.reasoning);
    }
}

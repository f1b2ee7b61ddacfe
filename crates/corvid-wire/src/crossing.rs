//! What changes when a client's request crosses to a provider that is not the client's own
//! kind (the translation path): what corvid minted is opened or removed ([`minted::settle`]),
//! and what only Anthropic reads is left behind.

use crate::Dialect;
use crate::minted;
use crate::model::ChatRequest;

/// The system line Claude Code puts first for Anthropic's billing; other providers would read
/// it as part of the system prompt.
const ANTHROPIC_BILLING_HEADER: &str = "x-anthropic-billing-header";

/// Prepares `request` for the provider named `provider`, which speaks `dialect`.
pub fn prepare(request: &mut ChatRequest, provider: &str, dialect: Dialect) {
    minted::settle(request, provider);
    if dialect != Dialect::Anthropic {
        request
            .system
            .retain(|text| !text.trim_start().starts_with(ANTHROPIC_BILLING_HEADER));
    }
}

#[cfg(test)]
mod tests;

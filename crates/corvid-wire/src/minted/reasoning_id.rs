//! Opaque reasoning for a client whose dialect has no field for it next to a tool call (Chat
//! Completions): Anthropic's signed thinking, or a Responses model's `encrypted_content`, rides
//! in the id of the turn's first tool call — `corvid1_<origin>_t<hex id>_<base64url JSON>` — as
//! Gemini signatures already do, and is put back before that call when the conversation
//! returns to the provider that made it (Anthropic refuses a tool loop with thinking on whose
//! assistant turn lost its signed thinking).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use super::{MARKER, hex};
use crate::model::Reasoning;

/// A tool call id carrying `reasoning` (the provider's own values) from provider `origin`.
pub fn mint_reasoning_id(origin: &str, id: &str, reasoning: &Reasoning) -> String {
    let payload = serde_json::to_vec(reasoning).unwrap_or_default();
    format!(
        "{MARKER}{origin}_t{}_{}",
        hex(id),
        URL_SAFE_NO_PAD.encode(payload)
    )
}

/// The provider and the reasoning a [`mint_reasoning_id`] id carries; `None` for any other.
pub fn open_reasoning_id(text: &str) -> Option<(String, Reasoning)> {
    let rest = text.strip_prefix(MARKER)?;
    let (origin, rest) = rest.split_once('_')?;
    let rest = rest.strip_prefix('t')?;
    let (_, encoded) = rest.split_once('_')?;
    let payload = URL_SAFE_NO_PAD.decode(encoded).ok()?;
    let reasoning: Reasoning = serde_json::from_slice(&payload).ok()?;
    Some((origin.to_owned(), reasoning))
}

/// Whether a reasoning part carries something only its provider can read.
pub(super) fn is_opaque(reasoning: &Reasoning) -> bool {
    reasoning
        .signature
        .as_deref()
        .is_some_and(|s| !s.is_empty())
        || reasoning
            .encrypted
            .as_deref()
            .is_some_and(|e| !e.is_empty())
}

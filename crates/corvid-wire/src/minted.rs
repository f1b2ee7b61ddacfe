//! What corvid mints: opaque provider tokens (Anthropic thinking signatures and redacted
//! thinking, Responses `encrypted_content`, Gemini thought signatures) handed to a client of
//! another dialect, wrapped in an envelope that says corvid made it and which provider the
//! value inside came from.
//!
//! A client keeps such a token and sends it back on a later turn, maybe to another provider.
//! The envelope lets corvid give the value back only to the provider that produced it and
//! strip it everywhere else — on the translation path ([`settle`]) and on the pass-through
//! path (the gateway looks for [`MARKER`] with one byte search, and rewrites only then).
//!
//! Text form (thinking `signature`, redacted `data`, `encrypted_content`):
//! `corvid1_<origin>_<kind><value>`. Id form (a tool call id carrying a Gemini signature, for
//! clients whose tool calls have no signature field): `corvid1_<origin>_g<hex id>_<base64url
//! signature>`, only `[A-Za-z0-9_-]`, so Anthropic's id rule holds. `origin` is the provider's
//! name reduced to `[a-z0-9]`.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::Dialect;
use crate::model::{ChatRequest, ChatResponse, Part, Reasoning, StreamEvent, ToolCall, ToolResult};

mod adopt;
mod reasoning_id;
mod strip;
#[cfg(test)]
mod tests;

pub use adopt::adopt;
pub use reasoning_id::{mint_reasoning_id, open_reasoning_id};
pub use strip::{Stripped, conversation_field, may_hold_minted, strip};

/// What every minted token starts with: the pass-through path looks for these bytes.
pub const MARKER: &str = "corvid1_";

/// What every minted token handed to a client in a field it types as bytes (a Gemini
/// `thoughtSignature`) starts with: the token is sent base64-encoded there, so the client's
/// SDK can decode it, and every encoding of [`MARKER`] plus one more byte begins with these
/// characters.
pub const MARKER_BASE64: &str = "Y29ydmlkMV9";

/// What a minted token holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An Anthropic thinking `signature`.
    Signature,
    /// Anthropic `redacted_thinking` data.
    Redacted,
    /// Responses `encrypted_content`.
    Encrypted,
    /// A Gemini `thoughtSignature` (carried in a tool call id).
    GeminiSignature,
}

impl Kind {
    fn letter(self) -> char {
        match self {
            Self::Signature => 's',
            Self::Redacted => 'r',
            Self::Encrypted => 'e',
            Self::GeminiSignature => 'g',
        }
    }

    fn from_letter(letter: u8) -> Option<Self> {
        Some(match letter {
            b's' => Self::Signature,
            b'r' => Self::Redacted,
            b'e' => Self::Encrypted,
            b'g' => Self::GeminiSignature,
            _ => return None,
        })
    }
}

/// An opened token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Minted {
    /// The provider the value came from (see [`origin_label`]).
    pub origin: String,
    pub kind: Kind,
    /// The provider's own value, as it sent it.
    pub value: String,
}

/// A provider name as it is written in tokens: ASCII letters and digits, lower case.
pub fn origin_label(provider: &str) -> String {
    provider
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Whether `text` is (or starts like) something corvid minted.
pub fn is_minted(text: &str) -> bool {
    text.starts_with(MARKER) || text.starts_with(MARKER_BASE64)
}

/// Wraps `value` from provider `origin` (an [`origin_label`]).
pub fn mint(origin: &str, kind: Kind, value: &str) -> String {
    format!("{MARKER}{origin}_{}{value}", kind.letter())
}

/// Opens a token in text form; `None` when corvid did not mint it.
pub fn open(text: &str) -> Option<Minted> {
    if text.starts_with(MARKER_BASE64) {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(text)
            .ok()?;
        let inner = String::from_utf8(decoded).ok()?;
        return inner.starts_with(MARKER).then(|| open(&inner)).flatten();
    }
    let rest = text.strip_prefix(MARKER)?;
    let (origin, rest) = rest.split_once('_')?;
    let kind = Kind::from_letter(*rest.as_bytes().first()?)?;
    Some(Minted {
        origin: origin.to_owned(),
        kind,
        value: rest[1..].to_owned(),
    })
}

/// A tool call id that carries the Gemini `signature` of call `id` from provider `origin`.
pub fn mint_id(origin: &str, id: &str, signature: &str) -> String {
    format!(
        "{MARKER}{origin}_g{}_{}",
        hex(id),
        URL_SAFE_NO_PAD.encode(signature)
    )
}

/// An id in lower-case hex, two digits a byte.
fn hex(id: &str) -> String {
    id.bytes().map(|byte| format!("{byte:02x}")).collect()
}

/// An opened tool call id: the provider, the original id and the signature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MintedId {
    pub origin: String,
    pub id: String,
    pub signature: String,
}

/// Opens a tool call id made by [`mint_id`] (or [`mint_reasoning_id`], whose `signature` is
/// empty: its reasoning is read by [`open_reasoning_id`]); `None` for any other id.
pub fn open_id(text: &str) -> Option<MintedId> {
    let rest = text.strip_prefix(MARKER)?;
    let (origin, rest) = rest.split_once('_')?;
    if let Some(rest) = rest.strip_prefix('t') {
        let (hex, _) = rest.split_once('_')?;
        open_reasoning_id(text)?;
        return Some(MintedId {
            origin: origin.to_owned(),
            id: unhex(hex)?,
            signature: String::new(),
        });
    }
    let rest = rest.strip_prefix('g')?;
    let (hex, encoded) = rest.split_once('_')?;
    let id = unhex(hex)?;
    let signature = String::from_utf8(URL_SAFE_NO_PAD.decode(encoded).ok()?).ok()?;
    Some(MintedId {
        origin: origin.to_owned(),
        id,
        signature,
    })
}

/// The text of an id written by [`hex`].
fn unhex(hex: &str) -> Option<String> {
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    let bytes: Option<Vec<u8>> = (0..hex.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(hex.get(at..at + 2)?, 16).ok())
        .collect();
    String::from_utf8(bytes?).ok()
}

/// Wraps what a translated reply hands a client: every opaque value from provider `origin`
/// goes out minted, so it can be recognised when it comes back.
#[derive(Debug, Clone)]
pub struct Minter {
    origin: String,
    client: Dialect,
    /// A Chat client's stream: the reasoning so far, for the turn's first tool call id.
    pending: Option<Reasoning>,
}

impl Minter {
    /// A minter for replies from `provider` (its configured name) to a `client` dialect.
    pub fn new(provider: &str, client: Dialect) -> Self {
        Self {
            origin: origin_label(provider),
            client,
            pending: None,
        }
    }

    /// Mints the opaque values of one stream event in place.
    pub fn event(&mut self, event: &mut StreamEvent) {
        if self.client == Dialect::OpenAiChat {
            self.hold_reasoning(event);
        }
        match event {
            StreamEvent::ReasoningSignature { signature } if !signature.is_empty() => {
                *signature = self.wrap(Kind::Signature, signature);
            }
            StreamEvent::ReasoningEncrypted { data, id } if !data.is_empty() => {
                let kind = if id.is_some() {
                    Kind::Encrypted
                } else {
                    Kind::Redacted
                };
                *data = self.wrap(kind, data);
            }
            StreamEvent::ToolCallStart { id, signature, .. } => {
                if let Some(minted) = self.call_id(id, signature.as_deref()) {
                    *id = minted;
                    *signature = None;
                } else if let Some(reasoning) = self.pending.take().filter(reasoning_id::is_opaque)
                    && !is_minted(id)
                {
                    *id = mint_reasoning_id(&self.origin, id, &reasoning);
                }
            }
            _ => {}
        }
    }

    /// A Chat client's stream: keeps the reasoning (its provider's own values, before they
    /// are minted) until the first tool call, whose id carries it.
    fn hold_reasoning(&mut self, event: &StreamEvent) {
        match event {
            StreamEvent::ReasoningDelta { text } => {
                self.pending.get_or_insert_default().text.push_str(text);
            }
            StreamEvent::ReasoningSignature { signature } if !is_minted(signature) => {
                self.pending.get_or_insert_default().signature = Some(signature.clone());
            }
            StreamEvent::ReasoningEncrypted { data, id } if !is_minted(data) => {
                let pending = self.pending.get_or_insert_default();
                pending.encrypted = Some(data.clone());
                pending.id = id.clone();
            }
            _ => {}
        }
    }

    /// Mints the opaque values of a whole reply in place.
    pub fn response(&self, response: &mut ChatResponse) {
        if self.client == Dialect::OpenAiChat {
            self.reasoning_into_call_id(response);
        }
        for part in &mut response.parts {
            match part {
                Part::Reasoning(reasoning) => {
                    if let Some(signature) = reasoning.signature.as_mut().filter(|s| !s.is_empty())
                    {
                        *signature = self.wrap(Kind::Signature, signature);
                    }
                    let kind = if reasoning.id.is_some() {
                        Kind::Encrypted
                    } else {
                        Kind::Redacted
                    };
                    if let Some(data) = reasoning.encrypted.as_mut().filter(|d| !d.is_empty()) {
                        *data = self.wrap(kind, data);
                    }
                }
                Part::ToolCall(call) => {
                    if let Some(minted) = self.call_id(&call.id, call.signature.as_deref()) {
                        call.id = minted;
                        call.signature = None;
                    }
                }
                _ => {}
            }
        }
    }

    /// A Chat client's whole reply: the opaque reasoning before the first tool call rides in
    /// that call's id.
    fn reasoning_into_call_id(&self, response: &mut ChatResponse) {
        let mut reasoning = None;
        for part in &mut response.parts {
            match part {
                Part::Reasoning(found) if reasoning_id::is_opaque(found) => {
                    reasoning = Some(found.clone());
                }
                Part::ToolCall(call) if call.signature.is_none() && !is_minted(&call.id) => {
                    if let Some(reasoning) = reasoning.take() {
                        call.id = mint_reasoning_id(&self.origin, &call.id, &reasoning);
                    }
                    return;
                }
                _ => {}
            }
        }
    }

    fn wrap(&self, kind: Kind, value: &str) -> String {
        if is_minted(value) {
            value.to_owned()
        } else if self.client == Dialect::Gemini {
            // Gemini's SDKs type `thoughtSignature` as bytes: the token must be base64 there.
            base64::engine::general_purpose::STANDARD.encode(mint(&self.origin, kind, value))
        } else {
            mint(&self.origin, kind, value)
        }
    }

    /// The id that carries a call's Gemini signature, for clients that have no field for it
    /// (a Gemini client has one: its calls keep their signature).
    fn call_id(&self, id: &str, signature: Option<&str>) -> Option<String> {
        let signature = signature.filter(|signature| !signature.is_empty())?;
        (self.client != Dialect::Gemini && !is_minted(id))
            .then(|| mint_id(&self.origin, id, signature))
    }
}

/// Opens what corvid minted in a client's request for provider `target` (its configured
/// name): a value the target produced goes back in its own field; anything another provider
/// produced is removed (a provider cannot read another's tokens, and Anthropic refuses a
/// thinking block it did not sign). Reasoning left with nothing is dropped.
pub fn settle(request: &mut ChatRequest, target: &str) {
    let target = origin_label(target);
    for message in &mut request.messages {
        let mut restored = None;
        message.parts.retain_mut(|part| match part {
            Part::Reasoning(reasoning) => settle_reasoning(reasoning, &target),
            Part::ToolCall(call) => {
                if restored.is_none()
                    && let Some((origin, reasoning)) = open_reasoning_id(&call.id)
                    && origin == target
                {
                    restored = Some(reasoning);
                }
                settle_call(call, &target);
                true
            }
            Part::ToolResult(result) => {
                settle_result(result);
                true
            }
            _ => true,
        });
        // The reasoning a Chat client's call id carried goes back first in its turn, unless
        // the turn kept its own.
        if let Some(reasoning) = restored
            && !message
                .parts
                .iter()
                .any(|part| matches!(part, Part::Reasoning(own) if reasoning_id::is_opaque(own)))
        {
            message
                .parts
                .retain(|part| !matches!(part, Part::Reasoning(_)));
            message.parts.insert(0, Part::Reasoning(reasoning));
        }
    }
}

/// Whether the reasoning still holds anything once its minted values are settled.
fn settle_reasoning(reasoning: &mut Reasoning, target: &str) -> bool {
    let mut opened = Vec::new();
    if let Some(minted) = reasoning.signature.as_deref().and_then(open) {
        reasoning.signature = None;
        opened.push(minted);
    }
    if let Some(minted) = reasoning.encrypted.as_deref().and_then(open) {
        reasoning.encrypted = None;
        opened.push(minted);
    }
    let had_minted = !opened.is_empty();
    for minted in opened {
        if minted.origin != target {
            continue;
        }
        match minted.kind {
            Kind::Signature => reasoning.signature = Some(minted.value),
            Kind::Redacted => {
                reasoning.encrypted = Some(minted.value);
                reasoning.id = None;
            }
            Kind::Encrypted => {
                reasoning.encrypted = Some(minted.value);
                reasoning.id.get_or_insert_with(|| "rs_corvid".to_owned());
            }
            Kind::GeminiSignature => {}
        }
    }
    if had_minted && reasoning.encrypted.is_none() {
        // Responses' item id only means something beside its encrypted content.
        reasoning.id = None;
    }
    !reasoning.text.is_empty() || reasoning.signature.is_some() || reasoning.encrypted.is_some()
}

fn settle_call(call: &mut ToolCall, target: &str) {
    if let Some(minted) = open_id(&call.id) {
        call.id = minted.id;
        call.signature =
            (minted.origin == target && !minted.signature.is_empty()).then_some(minted.signature);
    }
}

fn settle_result(result: &mut ToolResult) {
    if let Some(minted) = open_id(&result.call_id) {
        result.call_id = minted.id;
    }
}

//! The fast path of [`super::StreamDecoder`]: a `chat.completion.chunk` read by serde into
//! borrowing structs, with no `serde_json::Value` tree per chunk.
//!
//! It reads only what it reads exactly as the tree path does (`Value::as_str` on a field is
//! [`MaybeText`], an absent or `null` object is `None`) and answers `None` for anything else —
//! a chunk that is not an object, a repeated key, an `error`, an object or array of the wrong
//! type — so the caller reads that chunk through the tree, which gives the same events. The
//! property tests in `tests/stream_chunk.rs` hold the two paths to the same events.

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::borrowed::{MaybeText, Obj, Present, Text};

/// One chunk.
#[derive(Deserialize)]
pub(super) struct Chunk<'a> {
    #[serde(borrow, default)]
    pub(super) id: MaybeText<'a>,
    #[serde(borrow, default)]
    pub(super) model: MaybeText<'a>,
    #[serde(borrow, default)]
    error: Present<'a>,
    #[serde(borrow, default)]
    choices: Option<Vec<Obj<Choice<'a>>>>,
    #[serde(borrow, default)]
    usage: Present<'a>,
}

/// One of `choices`.
#[derive(Deserialize)]
pub(super) struct Choice<'a> {
    #[serde(borrow, default)]
    index: Present<'a>,
    #[serde(borrow, default)]
    pub(super) delta: Option<Obj<Delta<'a>>>,
    #[serde(borrow, default)]
    pub(super) finish_reason: MaybeText<'a>,
}

/// A choice's `delta`.
#[derive(Deserialize)]
pub(super) struct Delta<'a> {
    #[serde(borrow, default)]
    reasoning_content: MaybeText<'a>,
    #[serde(borrow, default)]
    reasoning: MaybeText<'a>,
    #[serde(borrow, default)]
    pub(super) content: MaybeText<'a>,
    #[serde(borrow, default)]
    pub(super) refusal: MaybeText<'a>,
    #[serde(borrow, default)]
    pub(super) tool_calls: Option<Vec<Obj<CallDelta<'a>>>>,
    #[serde(borrow, default)]
    pub(super) function_call: Option<Obj<Function<'a>>>,
}

/// One of a delta's `tool_calls`.
#[derive(Deserialize)]
pub(super) struct CallDelta<'a> {
    #[serde(borrow, default)]
    index: Present<'a>,
    #[serde(borrow, default)]
    pub(super) id: MaybeText<'a>,
    #[serde(borrow, default)]
    pub(super) function: Option<Obj<Function<'a>>>,
}

/// A call's `function`: its name and a piece of its arguments.
#[derive(Deserialize)]
pub(super) struct Function<'a> {
    #[serde(borrow, default)]
    pub(super) name: MaybeText<'a>,
    #[serde(borrow, default)]
    arguments: Present<'a>,
}

impl<'a> Chunk<'a> {
    /// The chunk, or `None` to read it through the tree instead.
    pub(super) fn read(payload: &'a [u8]) -> Option<Self> {
        let Obj(chunk) =
            serde_json::from_str::<Obj<Self>>(std::str::from_utf8(payload).ok()?).ok()?;
        // Errors are rare and worded by the tree path.
        if chunk.error.0.is_some_and(|error| error.get() != "null") {
            return None;
        }
        Some(chunk)
    }

    /// The choice the decoder reads: the one with `index` 0, else the first.
    pub(super) fn first_choice(&self) -> Option<&Choice<'a>> {
        let choices = self.choices.as_deref()?;
        choices
            .iter()
            .find(|choice| as_u64(&choice.index) == Some(0))
            .or_else(|| choices.first())
            .map(|choice| &choice.0)
    }

    /// `usage` when it is an object.
    pub(super) fn usage(&self) -> Option<Value> {
        let raw = self.usage.0?;
        if !raw.get().starts_with('{') {
            return None;
        }
        serde_json::from_str(raw.get()).ok()
    }
}

impl Delta<'_> {
    /// `reasoning_content`, else a string `reasoning`, when not empty.
    pub(super) fn reasoning_text(&self) -> Option<&str> {
        let text = match &self.reasoning_content.0 {
            Some(text) => Some(text.as_str()),
            None => self.reasoning.0.as_ref().map(Text::as_str),
        };
        text.filter(|text| !text.is_empty())
    }
}

impl CallDelta<'_> {
    pub(super) fn index(&self) -> Option<u64> {
        as_u64(&self.index)
    }
}

impl Function<'_> {
    /// The arguments text: a string as it is, an object as its compact JSON, else empty.
    pub(super) fn arguments(&self) -> String {
        let Some(raw) = self.arguments.0 else {
            return String::new();
        };
        match raw.get().as_bytes().first() {
            Some(b'"') => serde_json::from_str::<Text<'_>>(raw.get())
                .map(Text::into_string)
                .unwrap_or_default(),
            Some(b'{') => serde_json::from_str::<Value>(raw.get())
                .map(|arguments| arguments.to_string())
                .unwrap_or_default(),
            _ => String::new(),
        }
    }
}

/// What `Value::as_u64` reads from a field.
fn as_u64(field: &Present<'_>) -> Option<u64> {
    let raw: &RawValue = field.0?;
    serde_json::from_str::<Value>(raw.get()).ok()?.as_u64()
}

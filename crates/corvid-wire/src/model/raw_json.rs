//! A JSON value carried as its text: a tool's schema passes from the client's body to the
//! upstream's as bytes, with no `Value` tree (and no hashing of its keys) on the way.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

/// One JSON value, kept as the text it was read from (or written to, when built from a
/// [`Value`]). Always valid JSON: it is made only from a parsed slice or a serialised value.
///
/// Two are equal when they hold the same JSON value, whatever their spacing, escapes or
/// duplicate keys (the last one counts, as when parsed).
#[derive(Clone)]
pub struct RawJson(Box<RawValue>);

impl RawJson {
    /// `null`.
    pub fn null() -> Self {
        Self(RawValue::NULL.to_owned())
    }

    /// The schema of a tool without arguments: `{"type":"object","properties":{}}`.
    pub fn empty_object_schema() -> Self {
        Self::from_value(&serde_json::json!({"type": "object", "properties": {}}))
    }

    /// The compact text of `value`.
    pub fn from_value(value: &Value) -> Self {
        // A `Value` always serialises (its keys are strings, its numbers finite).
        serde_json::value::to_raw_value(value).map_or_else(|_| Self::null(), Self)
    }

    /// A copy of a slice already read from a JSON document.
    pub(crate) fn from_raw(raw: &RawValue) -> Self {
        Self(raw.to_owned())
    }

    /// Parses `text`, which must be one JSON value.
    pub fn parse(text: &str) -> Result<Self, serde_json::Error> {
        RawValue::from_string(text.to_owned()).map(Self)
    }

    /// The JSON text.
    pub fn get(&self) -> &str {
        self.0.get()
    }

    /// The value as a tree, for code that reads or edits it (Gemini's schema subset, the
    /// Responses strict check, the agent's tools).
    pub fn to_value(&self) -> Value {
        // The text is valid JSON by construction, so this parse does not fail.
        serde_json::from_str(self.get()).unwrap_or(Value::Null)
    }

    /// Whether the value is a JSON object.
    pub fn is_object(&self) -> bool {
        self.get().starts_with('{')
    }

    /// The characters of the value's text outside insignificant white space: what its compact
    /// form would count, without writing it (escapes are counted as written).
    pub fn compact_chars(&self) -> u64 {
        let text = self.get();
        // Every character, then less the white space between tokens: strings are skipped whole
        // (to their closing quote, escapes stepped over), so only the structure is walked.
        let mut spaces = 0u64;
        let bytes = text.as_bytes();
        let mut at = 0;
        while let Some(&byte) = bytes.get(at) {
            match byte {
                b' ' | b'\n' | b'\r' | b'\t' => spaces += 1,
                b'"' => at = string_end(bytes, at + 1),
                _ => {}
            }
            at += 1;
        }
        (text.chars().count() as u64).saturating_sub(spaces)
    }
}

/// The position of the quote that closes the string whose text starts at `from`.
fn string_end(bytes: &[u8], mut from: usize) -> usize {
    loop {
        match memchr::memchr2(b'"', b'\\', &bytes[from.min(bytes.len())..]) {
            Some(offset) if bytes[from + offset] == b'\\' => from += offset + 2,
            Some(offset) => return from + offset,
            None => return bytes.len(),
        }
    }
}

impl Default for RawJson {
    fn default() -> Self {
        Self::null()
    }
}

impl From<Value> for RawJson {
    fn from(value: Value) -> Self {
        Self::from_value(&value)
    }
}

impl From<&Value> for RawJson {
    fn from(value: &Value) -> Self {
        Self::from_value(value)
    }
}

impl PartialEq for RawJson {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get() || self.to_value() == other.to_value()
    }
}

impl PartialEq<Value> for RawJson {
    fn eq(&self, other: &Value) -> bool {
        self.to_value() == *other
    }
}

impl fmt::Debug for RawJson {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.get())
    }
}

impl fmt::Display for RawJson {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.get())
    }
}

impl Serialize for RawJson {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for RawJson {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Box::<RawValue>::deserialize(deserializer).map(Self)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    #[test]
    fn equal_values_are_equal_whatever_their_spacing() {
        let spaced = RawJson::parse(r#"{ "type" : "object", "a": [1, 2] }"#).unwrap();
        let compact = RawJson::from(json!({"type": "object", "a": [1, 2]}));
        assert_eq!(spaced, compact);
        assert_ne!(spaced, RawJson::from(json!({"type": "object"})));
        assert_eq!(spaced.to_value(), json!({"type": "object", "a": [1, 2]}));
    }

    #[test]
    fn serialises_as_its_text() {
        let raw = RawJson::parse(r#"{"b":1,"a":"x"}"#).unwrap();
        let written = serde_json::to_string(&json!({"schema": raw.to_value()})).unwrap();
        assert_eq!(written, r#"{"schema":{"b":1,"a":"x"}}"#);
        #[derive(Serialize, Deserialize)]
        struct Holder {
            schema: RawJson,
        }
        let text = serde_json::to_string(&Holder {
            schema: raw.clone(),
        })
        .unwrap();
        assert_eq!(text, r#"{"schema":{"b":1,"a":"x"}}"#);
        let back: Holder = serde_json::from_str(&text).unwrap();
        assert_eq!(back.schema.get(), raw.get());
        assert!(RawJson::parse("{").is_err());
    }

    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i32>().prop_map(Value::from),
            prop::collection::vec(
                prop::sample::select(vec![
                    'a', ' ', '"', '\\', '\n', '\t', 'é', '😀', '{', ':', ',', '\u{1}'
                ]),
                0..10
            )
            .prop_map(|chars| Value::String(String::from_iter(chars))),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec(("[a-z \"]{0,4}", inner), 0..4)
                    .prop_map(|entries| Value::Object(entries.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn pretty_text_counts_as_its_compact_form(value in value()) {
            let compact = serde_json::to_string(&value).unwrap();
            let pretty = RawJson::parse(&serde_json::to_string_pretty(&value).unwrap()).unwrap();
            prop_assert_eq!(pretty.compact_chars(), compact.chars().count() as u64);
        }
    }

    #[test]
    fn counts_the_characters_of_the_compact_form() {
        let spaced = RawJson::parse("{ \"k\" : \"a b\\\" é\" ,\n \"n\": 1 }").unwrap();
        let compact = RawJson::from(spaced.to_value());
        assert_eq!(spaced.compact_chars(), compact.get().chars().count() as u64);
        assert_eq!(RawJson::null().compact_chars(), 4);
    }
}

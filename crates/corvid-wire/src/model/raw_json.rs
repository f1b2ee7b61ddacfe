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
        let mut count = 0u64;
        let mut in_string = false;
        let mut escaped = false;
        for &byte in self.get().as_bytes() {
            if byte & 0xC0 == 0x80 {
                continue;
            }
            if in_string {
                if escaped {
                    escaped = false;
                } else if byte == b'\\' {
                    escaped = true;
                } else if byte == b'"' {
                    in_string = false;
                }
            } else if matches!(byte, b' ' | b'\n' | b'\r' | b'\t') {
                continue;
            } else if byte == b'"' {
                in_string = true;
            }
            count += 1;
        }
        count
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

    #[test]
    fn counts_the_characters_of_the_compact_form() {
        let spaced = RawJson::parse("{ \"k\" : \"a b\\\" é\" ,\n \"n\": 1 }").unwrap();
        let compact = RawJson::from(spaced.to_value());
        assert_eq!(spaced.compact_chars(), compact.get().chars().count() as u64);
        assert_eq!(RawJson::null().compact_chars(), 4);
    }
}

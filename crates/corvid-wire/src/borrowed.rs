//! Pieces for decoding client bodies straight into the canonical model with serde: strings
//! borrowed from the body where it has no escapes, fields kept as raw JSON slices, no
//! `serde_json::Value` tree in between.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

mod compact;

pub(crate) use compact::compact;

/// A JSON string, borrowed from the body unless it had escapes.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Text<'a>(pub(crate) Cow<'a, str>);

impl Text<'_> {
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }

    pub(crate) fn into_string(self) -> String {
        self.0.into_owned()
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = Text<'de>;

            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str("a string")
            }

            fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Borrowed(text)))
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(text.to_owned())))
            }

            fn visit_string<E: de::Error>(self, text: String) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(text)))
            }
        }
        deserializer.deserialize_str(TextVisitor)
    }
}

/// A field as its raw JSON, `null` included: `Option<&RawValue>` would read `null` as absent.
/// Use with `#[serde(default)]`, so an absent field is `Present(None)`.
#[derive(Debug, Default)]
pub(crate) struct Present<'a>(pub(crate) Option<&'a RawValue>);

impl<'de: 'a, 'a> Deserialize<'de> for Present<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        <&'a RawValue>::deserialize(deserializer).map(|raw| Present(Some(raw)))
    }
}

impl Present<'_> {
    /// Whether the field is there and `true` (what `Value::as_bool() == Some(true)` says).
    pub(crate) fn is_true(&self) -> bool {
        self.0.is_some_and(|raw| raw.get() == "true")
    }
}

/// A string, or anything else (what `Value::as_str` on an optional field reads: a string, else
/// nothing).
#[derive(Debug, Default)]
pub(crate) struct MaybeText<'a>(pub(crate) Option<Text<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for MaybeText<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(MaybeText(match AnyValue::deserialize(deserializer)? {
            AnyValue::Text(text) => Some(text),
            AnyValue::Array | AnyValue::Other => None,
        }))
    }
}

impl MaybeText<'_> {
    /// The string, when the field was one.
    pub(crate) fn as_str(&self) -> Option<&str> {
        self.0.as_ref().map(Text::as_str)
    }
}

/// Any value read in one pass: a string is kept, an array or anything else is read past and
/// only its kind remembered (not captured raw and read again, which scanned every text twice).
#[derive(Debug, Default)]
pub(crate) enum AnyValue<'a> {
    Text(Text<'a>),
    Array,
    #[default]
    Other,
}

impl<'de: 'a, 'a> Deserialize<'de> for AnyValue<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct AnyValueVisitor;
        impl<'de> Visitor<'de> for AnyValueVisitor {
            type Value = AnyValue<'de>;

            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str("any JSON value")
            }

            fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Self::Value, E> {
                Ok(AnyValue::Text(Text(Cow::Borrowed(text))))
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
                Ok(AnyValue::Text(Text(Cow::Owned(text.to_owned()))))
            }

            fn visit_string<E: de::Error>(self, text: String) -> Result<Self::Value, E> {
                Ok(AnyValue::Text(Text(Cow::Owned(text))))
            }

            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(AnyValue::Other)
            }

            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(AnyValue::Other)
            }

            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(AnyValue::Other)
            }

            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(AnyValue::Other)
            }

            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(AnyValue::Other)
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<de::IgnoredAny>()?.is_some() {}
                Ok(AnyValue::Array)
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map
                    .next_entry::<de::IgnoredAny, de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(AnyValue::Other)
            }
        }
        deserializer.deserialize_any(AnyValueVisitor)
    }
}

/// A JSON object read as `T`. serde's derived structs also read an array, field by position,
/// where the tree decoders see no object; this reads objects only.
pub(crate) struct Obj<T>(pub(crate) T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ObjVisitor<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjVisitor<T> {
            type Value = Obj<T>;

            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map)).map(Obj)
            }
        }
        deserializer.deserialize_map(ObjVisitor(PhantomData))
    }
}

impl<T> std::ops::Deref for Obj<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

/// A field that is a string or an array of `T` (Anthropic's `system` and `content`, the
/// Responses API's `input`, `instructions`, `content` and `output`); anything else is an error,
/// so the caller falls back to the tree decoder.
pub(crate) enum TextOr<'a, T> {
    Text(Text<'a>),
    Items(Vec<T>),
}

impl<'de: 'a, 'a, T: Deserialize<'de>> Deserialize<'de> for TextOr<'a, T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextOrVisitor<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for TextOrVisitor<T> {
            type Value = TextOr<'de, T>;

            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str("a string or an array")
            }

            fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Self::Value, E> {
                Ok(TextOr::Text(Text(Cow::Borrowed(text))))
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
                Ok(TextOr::Text(Text(Cow::Owned(text.to_owned()))))
            }

            fn visit_string<E: de::Error>(self, text: String) -> Result<Self::Value, E> {
                Ok(TextOr::Text(Text(Cow::Owned(text))))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(4));
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(TextOr::Items(items))
            }
        }
        deserializer.deserialize_any(TextOrVisitor(PhantomData))
    }
}

/// Reads a request's top-level object: each field named in `typed` is handed to `read` with
/// its index, once — a repeated one is an error, so the caller falls back to the tree decoder
/// (which keeps the last) — and every other field goes into `rest` as a value, the last one
/// when a key repeats (as the tree does). Answers whether one of those did.
pub(crate) fn read_top<'de, A: MapAccess<'de>>(
    map: &mut A,
    typed: &[&str],
    rest: &mut Map<String, Value>,
    read: impl FnMut(usize, &mut A) -> Result<(), A::Error>,
) -> Result<bool, A::Error> {
    let mut repeated = false;
    read_top_with(
        map,
        typed,
        |key, map| {
            let value: Value = map.next_value()?;
            repeated |= rest.insert(key.into_string(), value).is_some();
            Ok(())
        },
        read,
    )?;
    Ok(repeated)
}

/// [`read_top`] with every other field kept as its raw text, in order (repeats included), for
/// the caller to read typed: no `Value` and no map for the small fields.
pub(crate) fn read_top_raw<'de, A: MapAccess<'de>>(
    map: &mut A,
    typed: &[&str],
    rest: &mut Vec<(Text<'de>, &'de RawValue)>,
    read: impl FnMut(usize, &mut A) -> Result<(), A::Error>,
) -> Result<(), A::Error> {
    read_top_with(
        map,
        typed,
        |key, map| {
            rest.push((key, map.next_value()?));
            Ok(())
        },
        read,
    )
}

fn read_top_with<'de, A: MapAccess<'de>>(
    map: &mut A,
    typed: &[&str],
    mut other: impl FnMut(Text<'de>, &mut A) -> Result<(), A::Error>,
    mut read: impl FnMut(usize, &mut A) -> Result<(), A::Error>,
) -> Result<(), A::Error> {
    let mut seen = 0u32;
    while let Some(key) = map.next_key::<Text<'de>>()? {
        let Some(slot) = typed.iter().position(|name| *name == key.as_str()) else {
            other(key, map)?;
            continue;
        };
        if seen & (1 << slot) != 0 {
            return Err(de::Error::custom("a repeated field"));
        }
        seen |= 1 << slot;
        read(slot, map)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{AnyValue, MaybeText, Text};

    fn maybe_text(json: &str) -> Option<String> {
        let read: MaybeText<'_> = serde_json::from_str(json).unwrap();
        read.0.map(Text::into_string)
    }

    #[test]
    fn maybe_text_keeps_a_string_and_reads_past_anything_else() {
        assert_eq!(maybe_text(r#""plain""#).as_deref(), Some("plain"));
        assert_eq!(maybe_text(r#""a\nb \u00e9""#).as_deref(), Some("a\nb é"));
        for other in [
            "7",
            "-1.5e3",
            "true",
            "null",
            "[]",
            r#"[1, "two", {"three": [3]}]"#,
            r#"{"text": "inside", "n": {"deeper": [null]}}"#,
        ] {
            assert_eq!(maybe_text(other), None, "{other}");
        }
    }

    #[test]
    fn any_value_tells_a_string_an_array_and_anything_else_apart() {
        let kind = |json: &str| match serde_json::from_str::<AnyValue<'_>>(json).unwrap() {
            AnyValue::Text(text) => format!("text {}", text.as_str()),
            AnyValue::Array => "array".to_owned(),
            AnyValue::Other => "other".to_owned(),
        };
        assert_eq!(kind(r#""a\u00e9""#), "text aé");
        assert_eq!(kind(r#"[{"type": "text", "text": "a"}, 2]"#), "array");
        assert_eq!(kind("[]"), "array");
        for other in [
            "null",
            "false",
            "-0.5",
            "18446744073709551615",
            r#"{"a": [1]}"#,
        ] {
            assert_eq!(kind(other), "other", "{other}");
        }
        assert!(serde_json::from_str::<AnyValue<'_>>("[1,").is_err());
    }

    #[test]
    fn maybe_text_refuses_what_is_not_json() {
        for broken in [r#""unterminated"#, "[1,]", r#"{"a" 1}"#, "tru", r#""\q""#] {
            assert!(
                serde_json::from_str::<MaybeText<'_>>(broken).is_err(),
                "{broken}"
            );
        }
    }
}

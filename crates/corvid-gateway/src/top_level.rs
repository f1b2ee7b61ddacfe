//! A JSON body read only one level deep: each top-level field keeps its raw text, so the hot
//! path can check the body is valid JSON, read `model` and `stream`, and rewrite a field or two
//! by splicing — without re-serialising the messages, tools or images it never looks at.

use std::borrow::Cow;
use std::fmt;

use bytes::{BufMut, Bytes, BytesMut};
use serde::Deserialize;
use serde::de::{self, MapAccess, Visitor};
use serde_json::value::RawValue;

/// The top-level fields of a JSON object body, in order, values unparsed.
#[derive(Debug)]
pub(crate) struct TopLevel<'a> {
    fields: Vec<(Cow<'a, str>, &'a RawValue)>,
}

/// A change to make to one top-level field.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Edit {
    /// Replace the field's value with this JSON text (added when absent).
    Set(&'static str, String),
    /// Remove the field.
    Remove(&'static str),
    /// Remove a field named at run time (from configuration).
    RemoveOwned(String),
}

impl Edit {
    fn field(&self) -> &str {
        match self {
            Self::Set(name, _) | Self::Remove(name) => name,
            Self::RemoveOwned(name) => name,
        }
    }
}

impl<'a> TopLevel<'a> {
    /// Parses `body`, which must be one JSON object. The whole body is validated. UTF-8 is
    /// checked once up front: parsing from a `&str`, serde_json then neither re-checks each
    /// string nor each raw value it keeps.
    pub(crate) fn parse(body: &'a [u8]) -> Result<Self, serde_json::Error> {
        let text = std::str::from_utf8(body).map_err(|error| {
            <serde_json::Error as de::Error>::custom(format_args!("the body is not UTF-8: {error}"))
        })?;
        serde_json::from_str(text)
    }

    /// The raw value of `key` (the last one when a key repeats, as JSON parsers do).
    pub(crate) fn raw(&self, key: &str) -> Option<&'a RawValue> {
        self.fields
            .iter()
            .rev()
            .find(|(name, _)| name == key)
            .map(|(_, value)| *value)
    }

    /// `key` as a string, or `None` when absent or not a string.
    pub(crate) fn str(&self, key: &str) -> Option<Cow<'a, str>> {
        let raw = self.raw(key)?;
        serde_json::from_str::<Cow<'a, str>>(raw.get()).ok()
    }

    /// Whether `key` is present (with any value, `null` included).
    pub(crate) fn has(&self, key: &str) -> bool {
        self.raw(key).is_some()
    }

    /// The body with `edits` applied. Untouched fields are copied as raw text; with no edits the
    /// original buffer is returned without copying.
    pub(crate) fn rewrite(&self, original: &Bytes, edits: &[Edit]) -> Bytes {
        if edits.is_empty() {
            return original.clone();
        }
        let mut out = BytesMut::with_capacity(original.len() + 64);
        out.put_u8(b'{');
        let mut first = true;
        let mut push = |out: &mut BytesMut, key: &str, value: &str| {
            if !first {
                out.put_u8(b',');
            }
            first = false;
            write_json_string(out, key);
            out.put_u8(b':');
            out.put_slice(value.as_bytes());
        };
        let mut set_done = vec![false; edits.len()];
        for (key, value) in &self.fields {
            let edit = edits
                .iter()
                .enumerate()
                .find(|(_, edit)| edit.field() == key);
            match edit {
                Some((index, Edit::Set(_, replacement))) => {
                    set_done[index] = true;
                    push(&mut out, key, replacement);
                }
                Some((_, Edit::Remove(_) | Edit::RemoveOwned(_))) => {}
                None => push(&mut out, key, value.get()),
            }
        }
        for (index, edit) in edits.iter().enumerate() {
            if let (Edit::Set(name, value), false) = (edit, set_done[index]) {
                push(&mut out, name, value);
            }
        }
        out.put_u8(b'}');
        out.freeze()
    }
}

/// Writes `text` as a JSON string straight into `out` (no temporary `String` per key).
fn write_json_string(out: &mut BytesMut, text: &str) {
    // Serialising a &str into a growable buffer cannot fail.
    let _ = serde_json::to_writer(out.writer(), text);
}

/// A JSON string value, for [`Edit::Set`].
pub(crate) fn json_string(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

impl<'de> Deserialize<'de> for TopLevel<'de> {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ObjectVisitor;

        impl<'de> Visitor<'de> for ObjectVisitor {
            type Value = TopLevel<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut fields = Vec::with_capacity(map.size_hint().unwrap_or(8));
                while let Some(Key(key)) = map.next_key()? {
                    let value: &'de RawValue = map.next_value()?;
                    fields.push((key, value));
                }
                Ok(TopLevel { fields })
            }
        }

        deserializer.deserialize_map(ObjectVisitor)
    }
}

/// An object key, borrowed from the body unless it had escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;

        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string key")
            }

            fn visit_borrowed_str<E: de::Error>(self, value: &'de str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Borrowed(value)))
            }

            fn visit_str<E: de::Error>(self, value: &str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(value.to_owned())))
            }
        }

        deserializer.deserialize_str(KeyVisitor)
    }
}

#[cfg(test)]
mod tests;

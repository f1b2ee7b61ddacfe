//! A JSON body read only one level deep: each top-level field keeps its raw text, so the hot
//! path can check the body is valid JSON, read `model` and `stream`, and rewrite a field or two
//! by splicing — without re-serialising the messages, tools or images it never looks at.

use std::borrow::Cow;

use bytes::{BufMut, Bytes, BytesMut};

mod scan;

pub(crate) use scan::ScanError;

/// The raw text of the first item of `array`, a JSON array; `None` when it is not an array or
/// is empty. Reads only that item, not the whole array.
pub(crate) fn first_item(array: &[u8]) -> Option<&[u8]> {
    scan::first_item(array).map(|(start, end)| &array[start..end])
}

/// The top-level fields of a JSON object body, in order, values unparsed: each is the raw
/// JSON text of the value, a slice of the body (valid UTF-8, as the whole body is).
#[derive(Debug)]
pub(crate) struct TopLevel<'a> {
    fields: Vec<Field<'a>>,
}

#[derive(Debug)]
struct Field<'a> {
    /// The decoded key.
    name: Cow<'a, str>,
    /// The key as written, quotes included.
    raw_name: &'a [u8],
    value: &'a [u8],
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
    /// Parses `body`, which must be one JSON object in UTF-8. The whole body is validated in
    /// one pass that keeps only where each top-level field lies.
    pub(crate) fn parse(body: &'a [u8]) -> Result<Self, ScanError> {
        let mut fields = Vec::with_capacity(16);
        let mut bad_key = None;
        scan::object_fields(body, |span| {
            let (key_start, key_end) = span.key;
            let raw_name = &body[key_start - 1..key_end + 1];
            let name = if span.key_escaped {
                // Refused when its `\u` escapes name a lone surrogate: valid JSON to skip,
                // not a name.
                serde_json::from_slice::<String>(raw_name)
                    .ok()
                    .map(Cow::Owned)
            } else {
                // Validated already; checking a short key again is cheap and needs no
                // `unsafe`.
                std::str::from_utf8(&body[key_start..key_end])
                    .ok()
                    .map(Cow::Borrowed)
            };
            let name = name.unwrap_or_else(|| {
                bad_key.get_or_insert(key_start);
                Cow::Borrowed("")
            });
            fields.push(Field {
                name,
                raw_name,
                value: &body[span.value.0..span.value.1],
            });
        })?;
        if let Some(at) = bad_key {
            return Err(ScanError::at(body, at, "invalid unicode escape in a key"));
        }
        Ok(Self { fields })
    }

    /// A key that appears more than once, if any. JSON parsers disagree on which of two values
    /// wins, so a body with one could be routed by one value and read upstream by the other;
    /// the gateway refuses it.
    pub(crate) fn duplicate(&self) -> Option<&str> {
        let fields = &self.fields;
        // Bodies have a dozen fields or so: comparing pairs beats building a set.
        if fields.len() <= 32 {
            return fields.iter().enumerate().find_map(|(at, field)| {
                fields[at + 1..]
                    .iter()
                    .any(|later| later.name == field.name)
                    .then_some(field.name.as_ref())
            });
        }
        let mut seen = std::collections::HashSet::with_capacity(fields.len());
        fields
            .iter()
            .find(|field| !seen.insert(field.name.as_ref()))
            .map(|field| field.name.as_ref())
    }

    /// The raw JSON text of `key`'s value (the last one when a key repeats, as JSON parsers
    /// do).
    pub(crate) fn raw(&self, key: &str) -> Option<&'a [u8]> {
        self.fields
            .iter()
            .rev()
            .find(|field| field.name == key)
            .map(|field| field.value)
    }

    /// `key` as a string, or `None` when absent or not a string.
    pub(crate) fn str(&self, key: &str) -> Option<Cow<'a, str>> {
        let raw = self.raw(key)?;
        match raw
            .strip_prefix(b"\"")
            .and_then(|inner| inner.strip_suffix(b"\""))
        {
            // Valid, so without a backslash nothing in it needs decoding.
            Some(plain) if !plain.contains(&b'\\') => {
                std::str::from_utf8(plain).ok().map(Cow::Borrowed)
            }
            Some(_) => serde_json::from_slice::<String>(raw).ok().map(Cow::Owned),
            None => None,
        }
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
        // Keys are written as they came (already valid JSON); a new one is serialised.
        let mut push = |out: &mut BytesMut, raw_key: Option<&[u8]>, key: &str, value: &[u8]| {
            if !first {
                out.put_u8(b',');
            }
            first = false;
            match raw_key {
                Some(raw_key) => out.put_slice(raw_key),
                None => write_json_string(out, key),
            }
            out.put_u8(b':');
            out.put_slice(value);
        };
        let mut set_done = vec![false; edits.len()];
        for field in &self.fields {
            let edit = edits
                .iter()
                .enumerate()
                .find(|(_, edit)| edit.field() == field.name);
            match edit {
                Some((index, Edit::Set(_, replacement))) => {
                    set_done[index] = true;
                    push(
                        &mut out,
                        Some(field.raw_name),
                        &field.name,
                        replacement.as_bytes(),
                    );
                }
                Some((_, Edit::Remove(_) | Edit::RemoveOwned(_))) => {}
                None => push(&mut out, Some(field.raw_name), &field.name, field.value),
            }
        }
        for (index, edit) in edits.iter().enumerate() {
            if let (Edit::Set(name, value), false) = (edit, set_done[index]) {
                push(&mut out, None, name, value.as_bytes());
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

#[cfg(test)]
mod tests;

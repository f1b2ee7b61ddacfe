//! An encoded request body: its top-level fields already written as JSON text, in order, in one
//! buffer. Callers may still read a field or drop one (a provider's field rules, an upstream
//! that refuses `stream_options`) without a `serde_json::Value` tree, then take the bytes.

use std::borrow::Cow;
use std::ops::Range;

use serde::Serialize;
use serde_json::{Map, Value};

/// A JSON object body, field by field.
#[derive(Debug, Clone, Default)]
pub struct EncodedBody {
    /// Every field's value text, back to back.
    buf: Vec<u8>,
    /// Each field's name and the span of its value in `buf`, in order.
    fields: Vec<(Cow<'static, str>, Range<usize>)>,
}

impl EncodedBody {
    /// An empty object with room for `bytes` of field text.
    pub fn with_capacity(bytes: usize) -> Self {
        Self {
            buf: Vec::with_capacity(bytes),
            fields: Vec::with_capacity(16),
        }
    }

    /// Adds a field written by `write` (which must write exactly one JSON value).
    pub fn push_with(
        &mut self,
        name: impl Into<Cow<'static, str>>,
        write: impl FnOnce(&mut Vec<u8>),
    ) {
        let start = self.buf.len();
        write(&mut self.buf);
        let end = self.buf.len();
        self.fields.push((name.into(), start..end));
    }

    /// Adds a field holding `value`, serialised.
    pub fn push<T: Serialize + ?Sized>(&mut self, name: impl Into<Cow<'static, str>>, value: &T) {
        self.push_with(name, |out| write_json(out, value));
    }

    /// Whether the body has a field `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.fields.iter().any(|(field, _)| field == name)
    }

    /// A field's JSON text.
    pub fn get(&self, name: &str) -> Option<&str> {
        let (_, span) = self.fields.iter().find(|(field, _)| field == name)?;
        // Every span holds what a serialiser wrote: UTF-8.
        std::str::from_utf8(&self.buf[span.clone()]).ok()
    }

    /// A field's value when it is a string.
    pub fn get_str(&self, name: &str) -> Option<String> {
        serde_json::from_str(self.get(name)?).ok()
    }

    /// Drops a field; whether it was there.
    pub fn remove(&mut self, name: &str) -> bool {
        let before = self.fields.len();
        self.fields.retain(|(field, _)| field != name);
        self.fields.len() != before
    }

    /// The body as bytes: `{"name":value,…}`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let names: usize = self.fields.iter().map(|(name, _)| name.len() + 4).sum();
        let mut out = Vec::with_capacity(self.buf.len() + names + 2);
        out.push(b'{');
        for (index, (name, span)) in self.fields.iter().enumerate() {
            if index > 0 {
                out.push(b',');
            }
            write_json(&mut out, name.as_ref());
            out.push(b':');
            out.extend_from_slice(&self.buf[span.clone()]);
        }
        out.push(b'}');
        out
    }

    /// The body as text (for `log_prompts` and tests).
    pub fn to_text(&self) -> String {
        // `to_bytes` joins UTF-8 spans with ASCII punctuation.
        String::from_utf8(self.to_bytes()).unwrap_or_default()
    }

    /// The body as a value (for tests and the rare caller that edits deeply).
    pub fn to_value(&self) -> Value {
        serde_json::from_slice(&self.to_bytes()).unwrap_or(Value::Null)
    }

    /// A body from a value's fields (a non-object becomes an empty body).
    pub fn from_value(value: &Value) -> Self {
        let mut body = Self::with_capacity(256);
        if let Value::Object(fields) = value {
            body.extend(fields);
        }
        body
    }

    /// Adds each of `fields` that the body does not have yet.
    pub fn extend(&mut self, fields: &Map<String, Value>) {
        for (name, value) in fields {
            if !self.contains(name) {
                self.push(name.clone(), value);
            }
        }
    }
}

/// Serialises `value` onto `out`. Writing to a `Vec` cannot fail, and the values written here
/// (strings, numbers, the model's types, `Value`s) always serialise.
pub(crate) fn write_json<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    let start = out.len();
    if serde_json::to_writer(&mut *out, value).is_err() {
        out.truncate(start);
        out.extend_from_slice(b"null");
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn fields_are_written_in_order_and_can_be_read_and_dropped() {
        let mut body = EncodedBody::with_capacity(64);
        body.push("model", "grok \"4\"");
        body.push_with("n", |out| out.extend_from_slice(b"1"));
        body.push("stream_options", &json!({"include_usage": true}));
        assert_eq!(body.get_str("model").as_deref(), Some("grok \"4\""));
        assert_eq!(body.get("n"), Some("1"));
        assert!(body.remove("stream_options"));
        assert!(!body.remove("stream_options"));
        assert_eq!(body.to_text(), r#"{"model":"grok \"4\"","n":1}"#);
        let mut extra = Map::new();
        extra.insert("n".into(), json!(2));
        extra.insert("user".into(), json!("u"));
        body.extend(&extra);
        assert_eq!(
            body.to_value(),
            json!({"model": "grok \"4\"", "n": 1, "user": "u"})
        );
        assert_eq!(
            EncodedBody::from_value(&body.to_value()).to_bytes(),
            body.to_bytes()
        );
    }
}

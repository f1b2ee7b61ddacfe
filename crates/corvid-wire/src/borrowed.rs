//! Pieces for decoding client bodies straight into the canonical model with serde: strings
//! borrowed from the body where it has no escapes, fields kept as raw JSON slices, no
//! `serde_json::Value` tree in between.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

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
        // One pass over the value: a string is kept, anything else is read past (not captured
        // raw and read again, which scanned every text twice).
        struct MaybeTextVisitor;
        impl<'de> Visitor<'de> for MaybeTextVisitor {
            type Value = MaybeText<'de>;

            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str("any JSON value")
            }

            fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Self::Value, E> {
                Ok(MaybeText(Some(Text(Cow::Borrowed(text)))))
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
                Ok(MaybeText(Some(Text(Cow::Owned(text.to_owned())))))
            }

            fn visit_string<E: de::Error>(self, text: String) -> Result<Self::Value, E> {
                Ok(MaybeText(Some(Text(Cow::Owned(text)))))
            }

            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(MaybeText(None))
            }

            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(MaybeText(None))
            }

            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(MaybeText(None))
            }

            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(MaybeText(None))
            }

            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(MaybeText(None))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<de::IgnoredAny>()?.is_some() {}
                Ok(MaybeText(None))
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map
                    .next_entry::<de::IgnoredAny, de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(MaybeText(None))
            }
        }
        deserializer.deserialize_any(MaybeTextVisitor)
    }
}

impl MaybeText<'_> {
    /// The string, when the field was one.
    pub(crate) fn as_str(&self) -> Option<&str> {
        self.0.as_ref().map(Text::as_str)
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
/// (which keeps the last) — and every other field goes into `rest` as a value.
pub(crate) fn read_top<'de, A: MapAccess<'de>>(
    map: &mut A,
    typed: &[&str],
    rest: &mut Map<String, Value>,
    read: impl FnMut(usize, &mut A) -> Result<(), A::Error>,
) -> Result<(), A::Error> {
    read_top_with(
        map,
        typed,
        |key, map| {
            let value: Value = map.next_value()?;
            rest.insert(key.into_string(), value);
            Ok(())
        },
        read,
    )
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

/// The compact text of a JSON value read from `raw`, exactly as `Value`'s serialiser writes it
/// (numbers and escapes normalised, keys in their order, a repeated key once). Text already in
/// that form — what clients that write JSON with a serialiser send — is copied as it is; only
/// other text is read into a `Value` and written again.
pub(crate) fn compact(raw: &RawValue) -> Result<String, serde_json::Error> {
    if is_compact(raw.get()) {
        return Ok(raw.get().to_owned());
    }
    let value: serde_json::Value = serde_json::from_str(raw.get())?;
    serde_json::to_string(&value)
}

/// Whether `text`, one valid JSON value, is exactly what `Value`'s serialiser writes for it:
/// no whitespace outside strings; in strings only the escapes it writes (`\"`, `\\`, the
/// short control characters, `\u00xx` in lowercase for the other control characters; `\/` and
/// any other `\u` escape are left to the `Value`); integers of at most 18 digits, not `-0`
/// (fractions and exponents are left to it); no key twice in one object.
fn is_compact(text: &str) -> bool {
    let bytes = text.as_bytes();
    // The keys of each open object so far; `None` for an open array.
    let mut open: Vec<Option<Vec<&[u8]>>> = Vec::new();
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        match byte {
            b'{' => open.push(Some(Vec::new())),
            b'[' => open.push(None),
            b'}' | b']' => {
                open.pop();
            }
            b',' | b':' => {}
            b'"' => {
                let start = at + 1;
                let Some(end) = plain_string_end(bytes, start) else {
                    return false;
                };
                at = end;
                if bytes.get(end + 1) == Some(&b':')
                    && let Some(Some(keys)) = open.last_mut()
                {
                    let key = &bytes[start..end];
                    if keys.contains(&key) {
                        return false;
                    }
                    keys.push(key);
                }
            }
            b'-' | b'0'..=b'9' => {
                let start = at;
                let digits_from = if byte == b'-' { at + 1 } else { at };
                at += 1;
                while bytes.get(at).is_some_and(u8::is_ascii_digit) {
                    at += 1;
                }
                let integer = !matches!(bytes.get(at), Some(b'.' | b'e' | b'E'));
                if !integer || at - digits_from > 18 || &bytes[start..at] == b"-0" {
                    return false;
                }
                continue;
            }
            b't' | b'n' => at += 3,
            b'f' => at += 4,
            _ => return false,
        }
        at += 1;
    }
    true
}

/// Where the string whose text starts at `at` ends (its closing quote), when every escape in it
/// is one `Value`'s serialiser writes as it is (see [`is_compact`]).
fn plain_string_end(bytes: &[u8], mut at: usize) -> Option<usize> {
    loop {
        let next = at + memchr::memchr2(b'"', b'\\', bytes.get(at..)?)?;
        if bytes[next] == b'"' {
            return Some(next);
        }
        match bytes.get(next + 1)? {
            b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => at = next + 2,
            b'u' => {
                // `\u00xx` (lowercase) for a control character without a short escape.
                let &[b'0', b'0', high @ (b'0' | b'1'), low] = bytes.get(next + 2..next + 6)?
                else {
                    return None;
                };
                let low = match low {
                    b'0'..=b'9' => low - b'0',
                    b'a'..=b'f' => low - b'a' + 10,
                    _ => return None,
                };
                let control = (high - b'0') * 16 + low;
                if matches!(control, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d) {
                    return None;
                }
                at = next + 6;
            }
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::Value;
    use serde_json::value::RawValue;

    use super::{MaybeText, Text, compact, is_compact};

    /// What `compact` must answer: the text of the value read from `text`.
    fn through_a_value(text: &str) -> String {
        serde_json::to_string(&serde_json::from_str::<Value>(text).unwrap()).unwrap()
    }

    fn compacted(text: &str) -> String {
        compact(serde_json::from_str::<&RawValue>(text).unwrap()).unwrap()
    }

    #[test]
    fn compact_copies_serialiser_text_and_rewrites_the_rest() {
        for (text, copied) in [
            (
                r#"{"path":"a.rs","n":[1,-2,3],"ok":true,"none":null}"#,
                true,
            ),
            (r#"{"text":"line\nnext\t\"q\" \\ \b\f\r é 😀"}"#, true),
            (r#"{"a":{"a":1},"b":"a"}"#, true),
            ("-999999999999999999", true),
            ("[]", true),
            (r#"{ "a": 1 }"#, false),
            (r#"{"a":1,"a":2}"#, false),
            (r#"{"x":{"a":1,"b":2,"a":3}}"#, false),
            (r#""\/""#, false),
            (r#""\u0041""#, false),
            (r#""\u0001\u001f""#, true),
            (r#""\u001F""#, false),
            (r#""\u000a""#, false),
            ("1.0", false),
            ("1.50", false),
            ("1e5", false),
            ("-0", false),
            ("1234567890123456789", false),
            ("-12345678901234567890", false),
        ] {
            assert_eq!(is_compact(text), copied, "{text}");
            assert_eq!(compacted(text), through_a_value(text), "{text}");
        }
    }

    /// Any JSON value; `exact` keeps to what `Value`'s serialiser writes as it reads (no
    /// fractions, integers of at most 18 digits).
    fn json_value(exact: bool) -> impl Strategy<Value = Value> {
        let small = -999_999_999_999_999_999i64..=999_999_999_999_999_999;
        let numbers = if exact {
            small.prop_map(Value::from).boxed()
        } else {
            prop_oneof![
                small.prop_map(Value::from),
                any::<i64>().prop_map(Value::from),
                any::<u64>().prop_map(Value::from),
                any::<f64>()
                    .prop_filter("finite", |number| number.is_finite())
                    .prop_map(Value::from),
            ]
            .boxed()
        };
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            numbers,
            any::<String>().prop_map(Value::String),
            "[a-z\\\\\"/\n\t\u{1}\u{7f}é ]{0,12}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec(("[a-c\"\\\\]{0,2}", inner), 0..6)
                    .prop_map(|entries| { Value::Object(entries.into_iter().collect()) }),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

        /// Whatever the text — written compact, pretty, or with a key repeated — `compact`
        /// answers what reading it into a value and writing that answers.
        #[test]
        fn compact_answers_what_a_value_writes(value in json_value(false), repeat in any::<bool>()) {
            let plain = serde_json::to_string(&value).unwrap();
            let pretty = serde_json::to_string_pretty(&value).unwrap();
            let mut texts = vec![plain.clone(), pretty];
            if repeat && plain.starts_with("{\"") {
                // The first entry again at the end: the value keeps one, the last.
                let first_end = plain.find(',').unwrap_or(plain.len() - 1);
                texts.push(format!("{},{}}}", &plain[..plain.len() - 1], &plain[1..first_end]));
            }
            for text in texts {
                if serde_json::from_str::<Value>(&text).is_ok() {
                    prop_assert_eq!(compacted(&text), through_a_value(&text), "{}", text);
                }
            }
        }

        /// The serialiser's own text of a value without fractions or long integers is copied.
        #[test]
        fn serialiser_text_is_copied_as_it_is(value in json_value(true)) {
            let plain = serde_json::to_string(&value).unwrap();
            prop_assert!(is_compact(&plain), "{}", plain);
        }
    }

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
    fn maybe_text_refuses_what_is_not_json() {
        for broken in [r#""unterminated"#, "[1,]", r#"{"a" 1}"#, "tru", r#""\q""#] {
            assert!(
                serde_json::from_str::<MaybeText<'_>>(broken).is_err(),
                "{broken}"
            );
        }
    }
}

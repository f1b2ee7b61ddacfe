//! The compact text of a raw JSON value, exactly as `serde_json::Value`'s serialiser writes it:
//! what a tool call's `arguments` string must be when a dialect gives the input as an object.

use serde_json::value::RawValue;

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

    use super::{compact, is_compact};

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
}

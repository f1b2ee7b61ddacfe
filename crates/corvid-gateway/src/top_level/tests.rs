use pretty_assertions::assert_eq;

use super::*;

#[test]
fn reads_top_level_fields_without_touching_nested_ones() {
    let body = br#"{"model":"grok","stream":true,"messages":[{"role":"user","content":"hi \"there\""}],"n":null}"#;
    let top = TopLevel::parse(body).unwrap();
    assert_eq!(top.str("model").as_deref(), Some("grok"));
    assert_eq!(top.raw("stream").unwrap(), b"true");
    assert_eq!(top.str("stream"), None);
    assert!(top.has("n"));
    assert!(!top.has("tools"));
    assert_eq!(
        top.raw("messages").unwrap(),
        br#"[{"role":"user","content":"hi \"there\""}]"#
    );
}

#[test]
fn no_edits_returns_the_same_buffer() {
    let body = Bytes::from_static(br#"{ "model" : "grok-4.6" }"#);
    let top = TopLevel::parse(&body).unwrap();
    let out = top.rewrite(&body, &[]);
    assert_eq!(out.as_ptr(), body.as_ptr(), "no copy");
}

#[test]
fn rewrite_replaces_removes_and_adds() {
    let body = Bytes::from_static(
        br#"{"model":"grok","prompt_cache_key":"t1","messages":[{"role":"user","content":"caf\u00e9"}],"temperature":1.0}"#,
    );
    let top = TopLevel::parse(&body).unwrap();
    let out = top.rewrite(
        &body,
        &[
            Edit::Set("model", json_string("grok-4.6")),
            Edit::Remove("prompt_cache_key"),
            Edit::Set("store", "false".to_owned()),
        ],
    );
    assert_eq!(
        std::str::from_utf8(&out).unwrap(),
        r#"{"model":"grok-4.6","messages":[{"role":"user","content":"caf\u00e9"}],"temperature":1.0,"store":false}"#
    );
    let reparsed: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(reparsed["messages"][0]["content"], "café");
}

#[test]
fn escaped_keys_and_strings() {
    let body = Bytes::from_static(br#"{"mo\u0064el":"a\nb"}"#);
    let top = TopLevel::parse(&body).unwrap();
    assert_eq!(top.str("model").as_deref(), Some("a\nb"));
    let out = top.rewrite(&body, &[Edit::Set("model", json_string("x\"y"))]);
    assert_eq!(
        std::str::from_utf8(&out).unwrap(),
        r#"{"mo\u0064el":"x\"y"}"#,
        "the key is kept as the client wrote it"
    );
}

#[test]
fn rejects_what_is_not_one_json_object() {
    for body in [
        &b"not json"[..],
        b"[1,2]",
        b"\"text\"",
        b"{\"a\":1",
        b"{} trailing",
        b"",
    ] {
        assert!(
            TopLevel::parse(body).is_err(),
            "{:?}",
            String::from_utf8_lossy(body)
        );
    }
}

#[test]
fn a_body_that_is_not_utf8_is_refused_and_one_that_is_keeps_its_raw_fields() {
    let error = TopLevel::parse(b"{\"model\":\"gr\xffok\"}").unwrap_err();
    assert!(error.to_string().contains("not UTF-8"), "{error}");
    let top =
        TopLevel::parse("{\"model\":\"grök\",\"messages\":[{\"content\":\"é\\n\"}]}".as_bytes())
            .unwrap();
    assert_eq!(top.str("model").as_deref(), Some("grök"));
    assert_eq!(
        top.raw("messages").unwrap(),
        "[{\"content\":\"é\\n\"}]".as_bytes()
    );
    assert!(TopLevel::parse(b"[1]").is_err());
}

/// The top level as serde_json reads it: (decoded key, raw value) in order.
fn reference_fields(body: &[u8]) -> Result<Vec<(String, String)>, serde_json::Error> {
    use serde::de::{self, Deserializer as _, MapAccess, Visitor};
    use serde_json::value::RawValue;

    struct Fields;
    impl<'de> Visitor<'de> for Fields {
        type Value = Vec<(String, String)>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut fields = Vec::new();
            while let Some(key) = map.next_key::<String>()? {
                let value: &'de RawValue = map.next_value()?;
                fields.push((key, value.get().to_owned()));
            }
            Ok(fields)
        }
    }
    let text = std::str::from_utf8(body).map_err(de::Error::custom)?;
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let fields = (&mut deserializer).deserialize_map(Fields)?;
    deserializer.end()?;
    Ok(fields)
}

fn fields_of(body: &[u8]) -> Result<Vec<(String, String)>, ScanError> {
    TopLevel::parse(body).map(|top| {
        top.fields
            .iter()
            .map(|field| {
                let value = String::from_utf8(field.value.to_vec()).unwrap();
                (field.name.clone().into_owned(), value)
            })
            .collect()
    })
}

/// Asserts the scanner and serde_json agree on `body`: both refuse it, or both read the same
/// fields.
fn agrees_with_serde_json(body: &[u8]) {
    let ours = fields_of(body);
    let reference = reference_fields(body);
    match (&ours, &reference) {
        (Ok(ours), Ok(reference)) => {
            assert_eq!(ours, reference, "{}", String::from_utf8_lossy(body))
        }
        (Err(_), Err(_)) => {}
        _ => panic!(
            "disagreement on {:?}: ours {ours:?}, serde_json {reference:?}",
            String::from_utf8_lossy(body)
        ),
    }
}

const VALID: &[&str] = &[
    "{}",
    " \t\r\n{ } \n",
    r#"{"a":1}"#,
    r#"{"a":-0,"b":0.5,"c":-12.25e+3,"d":1E-7,"e":10,"f":123456789012345678901234567890}"#,
    r#"{"a":true,"b":false,"c":null,"d":[],"e":{},"f":[[],[{}]],"g":""}"#,
    r#"{"s":"\" \\ \/ \b \f \n \r \t \u00e9 \uD83D\uDE00 \udead"}"#,
    "{\"unicode\":\"caf\u{e9} \u{1F600} \u{4e2d}\u{6587}\",\"k\u{e9}y\":1}",
    r#"{"dup":1,"dup":2}"#,
    r#"{"mo\u0064el":"grok","m\"q":"x"}"#,
    r#"{ "a" : [ 1 , 2 , { "b" : [ "c" , null ] } ] , "z" : "y" }"#,
    r#"{"long":"0123456789abcdef0123456789abcdef0123456789abcdef\"0123456789abcdef"}"#,
];

const INVALID: &[&str] = &[
    "",
    " ",
    "[]",
    "[1]",
    "\"text\"",
    "1",
    "null",
    "{",
    "}",
    "{\"a\"}",
    "{\"a\":}",
    "{\"a\" 1}",
    "{a:1}",
    "{'a':1}",
    "{\"a\":1,}",
    "{,}",
    "{\"a\":1 \"b\":2}",
    "{\"a\":[1,]}",
    "{\"a\":[1 2]}",
    "{\"a\":[1}",
    "{\"a\":{\"b\":1]}",
    "{\"a\":01}",
    "{\"a\":1.}",
    "{\"a\":.5}",
    "{\"a\":+1}",
    "{\"a\":-}",
    "{\"a\":1e}",
    "{\"a\":1e+}",
    "{\"a\":NaN}",
    "{\"a\":Infinity}",
    "{\"a\":tru}",
    "{\"a\":nul}",
    "{\"a\":True}",
    "{\"a\":\"x}",
    "{\"a\":\"\\x\"}",
    "{\"a\":\"\\u12\"}",
    "{\"a\":\"\\u12G4\"}",
    "{\"a\":\"tab\there\"}",
    "{\"a\":\"nl\nhere\"}",
    "{\"a\":1} {}",
    "{\"a\":1}x",
    "{\"\\uD800\":1}",
    "{\"a\":[{\"b\":}]}",
    "{\"a\":\"\u{7f}\"",
    "{\"a\" :",
    "{\"a\":[",
    "{\"a\":{",
    "{\"a\":{\"b\"",
    "{\"a\":{\"b\":1,",
];

#[test]
fn agrees_with_serde_json_on_valid_and_invalid_bodies() {
    for body in VALID {
        assert!(TopLevel::parse(body.as_bytes()).is_ok(), "{body}");
        agrees_with_serde_json(body.as_bytes());
    }
    for body in INVALID {
        assert!(TopLevel::parse(body.as_bytes()).is_err(), "{body:?}");
        agrees_with_serde_json(body.as_bytes());
    }
}

#[test]
fn agrees_with_serde_json_on_many_mutated_bodies() {
    // A deterministic xorshift: the same cases every run.
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    let mut next = move |bound: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % bound as u64) as usize
    };
    let pieces: &[&[u8]] = &[
        b"{",
        b"}",
        b"[",
        b"]",
        b"\"",
        b",",
        b":",
        b"\\",
        b"\\u",
        b"0",
        b"1",
        b"-",
        b".",
        b"e",
        b"+",
        b"true",
        b"null",
        b" ",
        b"\n",
        b"\t",
        b"\x01",
        b"\x1f",
        "\u{e9}".as_bytes(),
        b"\xff",
        b"\xc3",
        "\u{1F600}".as_bytes(),
        b"a",
        b"\xed\xa0\x80",
        b"\xc0\xaf",
        b"\xe2\x82",
        b"\xf4\x90\x80\x80",
        "\u{a0}".as_bytes(),
    ];
    let seeds: Vec<Vec<u8>> = VALID
        .iter()
        .map(|body| body.as_bytes().to_vec())
        .chain([
            br#"{"model":"grok","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi \"you\" \u00e9"}],"temperature":0.2,"max_tokens":512,"stream":true,"stream_options":{"include_usage":true}}"#.to_vec(),
        ])
        .collect();
    let mut checked = 0;
    for round in 0..20_000 {
        let mut body = seeds[round % seeds.len()].clone();
        for _ in 0..=next(3) {
            let at = next(body.len() + 1);
            match next(4) {
                0 if !body.is_empty() => {
                    body.remove(at.min(body.len() - 1));
                }
                1 => {
                    let piece = pieces[next(pieces.len())];
                    body.splice(at..at, piece.iter().copied());
                }
                2 => body.truncate(at),
                _ => {
                    let end = (at + next(8)).min(body.len());
                    let copy = body[at..end].to_vec();
                    body.splice(end..end, copy);
                }
            }
        }
        agrees_with_serde_json(&body);
        checked += 1;
    }
    assert_eq!(checked, 20_000);
}

#[test]
fn errors_say_what_and_where() {
    let error = TopLevel::parse(b"{\n  \"a\": 01\n}")
        .unwrap_err()
        .to_string();
    assert_eq!(error, "invalid number at line 2 column 9");
    let error = TopLevel::parse(b"[1]").unwrap_err().to_string();
    assert!(error.starts_with("expected `{`"), "{error}");
    let error = TopLevel::parse(b"{\"a\":\"x").unwrap_err().to_string();
    assert!(error.starts_with("EOF while parsing a string"), "{error}");
}

#[test]
fn long_strings_cross_the_wide_scan_at_every_offset() {
    // A quote, a backslash or a control character at each position of a 16-byte window.
    for length in 0..40 {
        for special in ["\\\"", "\\n", "\u{e9}"] {
            for at in 0..=length {
                let text = format!("{}{special}{}", "x".repeat(at), "y".repeat(length - at));
                let body = format!(r#"{{"k":"{text}","n":1}}"#);
                agrees_with_serde_json(body.as_bytes());
                assert!(TopLevel::parse(body.as_bytes()).is_ok(), "{body}");
            }
        }
        let body = format!("{{\"k\":\"{}\u{1}\"}}", "x".repeat(length));
        assert!(
            TopLevel::parse(body.as_bytes()).is_err(),
            "control character at {length}"
        );
    }
}

#[test]
fn utf8_is_checked_wherever_a_string_leaves_ascii() {
    let bad: &[&[u8]] = &[
        b"\xff",
        b"\xc3",             // cut short by the closing quote
        b"\xc3\\n",          // cut short by an escape
        b"\xc0\xaf",         // overlong
        b"\xed\xa0\x80",     // a surrogate
        b"\xf4\x90\x80\x80", // past U+10FFFF
        b"\xe2\x82",
    ];
    for (index, bytes) in bad.iter().enumerate() {
        for prefix in ["", "é", "0123456789abcdefghij"] {
            let mut body = format!(r#"{{"k{index}":"{prefix}"#).into_bytes();
            body.extend_from_slice(bytes);
            body.extend_from_slice(br#"x","n":1}"#);
            let error = TopLevel::parse(&body).unwrap_err().to_string();
            assert!(
                error.starts_with("the body is not UTF-8"),
                "{bytes:?}: {error}"
            );
            agrees_with_serde_json(&body);
        }
    }
    // Outside strings, anything but ASCII is not JSON.
    for body in ["{\u{a0}\"a\":1}", "{\"a\":\u{e9}}", "{\"a\":1}\u{e9}"] {
        assert!(TopLevel::parse(body.as_bytes()).is_err(), "{body}");
        agrees_with_serde_json(body.as_bytes());
    }
    // A control character after a non-ASCII character is still refused.
    let error = TopLevel::parse("{\"a\":\"é\u{1}\"}".as_bytes())
        .unwrap_err()
        .to_string();
    assert!(error.starts_with("control character"), "{error}");
}

/// `first_item` answers what reading the whole array with serde and taking its first item
/// answers, reading only that item.
#[test]
fn the_first_item_of_an_array_is_what_serde_reads_first() {
    fn by_serde(array: &str) -> Option<&str> {
        serde_json::from_str::<Vec<&serde_json::value::RawValue>>(array)
            .ok()
            .and_then(|items| items.first().map(|first| first.get()))
    }
    for array in [
        r#"[{"role":"user","content":"hi ] } ["},{"role":"assistant"}]"#,
        " [ \n {\"a\": [1, {\"b\": \"]\"}]} , 2 ] ",
        r#"["a\"]",1]"#,
        "[[],[1]]",
        "[-1.5e3,true]",
        "[null]",
        "[]",
        " [ ] ",
        r#""a string""#,
        r#"{"not":"an array"}"#,
    ] {
        let first =
            super::first_item(array.as_bytes()).map(|item| std::str::from_utf8(item).unwrap());
        assert_eq!(first, by_serde(array), "{array}");
    }
    // Only the first item is read: what follows it is not looked at.
    assert_eq!(super::first_item(b"[1, this is not read"), Some(&b"1"[..]));
}

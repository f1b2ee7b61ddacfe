use pretty_assertions::assert_eq;

use super::*;

#[test]
fn reads_top_level_fields_without_touching_nested_ones() {
    let body = br#"{"model":"grok","stream":true,"messages":[{"role":"user","content":"hi \"there\""}],"n":null}"#;
    let top = TopLevel::parse(body).unwrap();
    assert_eq!(top.str("model").as_deref(), Some("grok"));
    assert_eq!(top.raw("stream").unwrap().get(), "true");
    assert_eq!(top.str("stream"), None);
    assert!(top.has("n"));
    assert!(!top.has("tools"));
    assert_eq!(
        top.raw("messages").unwrap().get(),
        r#"[{"role":"user","content":"hi \"there\""}]"#
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
    assert_eq!(std::str::from_utf8(&out).unwrap(), r#"{"model":"x\"y"}"#);
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
        top.raw("messages").unwrap().get(),
        "[{\"content\":\"é\\n\"}]"
    );
    assert!(TopLevel::parse(b"[1]").is_err());
}

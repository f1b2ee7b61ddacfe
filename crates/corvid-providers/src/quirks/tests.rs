use pretty_assertions::assert_eq;
use serde_json::Value;

use super::*;

/// The removals for `body` read as an encoded `Value` (the translation's view).
fn removed(model: &str, body: &str) -> Vec<&'static str> {
    let body: Value = serde_json::from_str(body).unwrap();
    xai_removals(model, |field| body.get(field).map(Value::as_str))
}

#[test]
fn table() {
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "grok-4.6",
            r#"{"prompt_cache_key":"t"}"#,
            &["prompt_cache_key"],
        ),
        (
            "grok-4.6",
            r#"{"search_parameters":{}}"#,
            &["search_parameters"],
        ),
        ("grok-4.6", r#"{"reasoning_effort":"high"}"#, &[]),
        ("grok-4.6", r#"{"reasoning_effort":"xhigh"}"#, &[]),
        (
            "grok-4.6",
            r#"{"reasoning_effort":"none"}"#,
            &["reasoning_effort"],
        ),
        (
            "grok-4.6",
            r#"{"reasoning_effort":null}"#,
            &["reasoning_effort"],
        ),
        (
            "grok-4.5",
            r#"{"reasoning_effort":"xhigh"}"#,
            &["reasoning_effort"],
        ),
        ("grok-4.5", r#"{"reasoning_effort":"low"}"#, &[]),
        ("grok-4.3", r#"{"reasoning_effort":"none"}"#, &[]),
        (
            "grok-3-mini",
            r#"{"reasoning_effort":"medium"}"#,
            &["reasoning_effort"],
        ),
        ("grok-3-mini", r#"{"reasoning_effort":"high"}"#, &[]),
        (
            "grok-build-0.1",
            r#"{"reasoning_effort":"high"}"#,
            &["reasoning_effort"],
        ),
        (
            "grok-4",
            r#"{"reasoning_effort":"high"}"#,
            &["reasoning_effort"],
        ),
        (
            "grok-4-fast-reasoning",
            r#"{"reasoning_effort":"low"}"#,
            &["reasoning_effort"],
        ),
        (
            "grok-4.1-fast",
            r#"{"reasoning_effort":"low"}"#,
            &["reasoning_effort"],
        ),
        (
            "grok-4.20-beta",
            r#"{"reasoning_effort":"low"}"#,
            &["reasoning_effort"],
        ),
        ("some-other-model", r#"{"reasoning_effort":"low"}"#, &[]),
        (
            "grok-4.6",
            r#"{"presence_penalty":0.5,"frequency_penalty":0.1}"#,
            &["presence_penalty", "frequency_penalty"],
        ),
        ("grok-2", r#"{"presence_penalty":0.5}"#, &[]),
        ("grok-4.6", r#"{"temperature":1.0,"messages":[]}"#, &[]),
    ];
    for (model, body, expected) in cases {
        assert_eq!(removed(model, body), *expected, "{model} {body}");
    }
}

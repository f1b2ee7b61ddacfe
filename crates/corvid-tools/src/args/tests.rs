use serde::Deserialize;
use serde_json::json;

use super::*;

#[derive(Debug, Deserialize)]
struct PathArgs {
    #[allow(dead_code)]
    path: String,
}

#[test]
fn cut_off_json_is_named_as_such_not_as_a_missing_field() {
    let error = parse_call_arguments(r#"{"path": "src/ma"#)
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("the arguments were not valid JSON: "),
        "{error}"
    );
    assert!(!error.contains("missing field"), "{error}");
}

#[test]
fn blank_arguments_are_an_empty_object_and_json_parses() {
    assert_eq!(parse_call_arguments("").unwrap(), json!({}));
    assert_eq!(parse_call_arguments("  \n").unwrap(), json!({}));
    assert_eq!(
        parse_call_arguments(r#"{"path":"a"}"#).unwrap(),
        json!({"path": "a"})
    );
}

#[test]
fn a_double_encoded_string_that_is_not_json_says_so() {
    let error = parse::<PathArgs>("read", json!("{\"path\": ")).unwrap_err();
    let text = error.to_string();
    assert!(
        text.contains("the arguments were not valid JSON: "),
        "{text}"
    );
}

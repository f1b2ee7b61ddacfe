use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::Dialect;
use crate::codec::encode_error;

#[test]
fn an_answer_status_names_its_kind() {
    for (status, kind) in [
        (400, ErrorKind::InvalidRequest),
        (402, ErrorKind::Permission),
        (405, ErrorKind::InvalidRequest),
        (410, ErrorKind::InvalidRequest),
        (415, ErrorKind::InvalidRequest),
        (413, ErrorKind::RequestTooLarge),
        (500, ErrorKind::Api),
        (501, ErrorKind::Api),
        (502, ErrorKind::Overloaded),
        (529, ErrorKind::Overloaded),
        (504, ErrorKind::Timeout),
    ] {
        let error = WireError::for_status(status, "m");
        assert_eq!((error.kind, error.status), (kind, Some(status)), "{status}");
    }
    // Read from an upstream, an unusual 4xx stays open for the body to decide.
    assert_eq!(ErrorKind::from_status(410), ErrorKind::Api);
}

#[test]
fn a_null_code_is_no_code() {
    assert_eq!(WireError::api("m").with_code(Value::Null).code, None);
    assert_eq!(WireError::api("m").with_code(None::<String>).code, None);
    assert_eq!(WireError::api("m").with_code(400).code_str(), None);
    assert_eq!(WireError::api("m").with_code("x").code_str(), Some("x"));
}

/// An exact status is kept by every dialect (Anthropic still answers 529 for overloaded);
/// OpenAI carries the param and the code as they came.
#[test]
fn every_dialect_keeps_the_exact_status_and_openai_the_param_and_code() {
    let refused = WireError::for_status(405, "PUT is not allowed")
        .with_param("model")
        .with_code(400);
    assert_eq!(
        encode_error(Dialect::OpenAiChat, &refused),
        (
            405,
            json!({"error": {"message": "PUT is not allowed", "type": "invalid_request_error",
                             "param": "model", "code": 400}})
        )
    );
    assert_eq!(
        encode_error(Dialect::OpenAiResponses, &refused),
        encode_error(Dialect::OpenAiChat, &refused)
    );
    assert_eq!(
        encode_error(Dialect::Anthropic, &refused),
        (
            405,
            json!({"type": "error", "error": {"type": "invalid_request_error", "message": "PUT is not allowed"}})
        )
    );
    assert_eq!(
        encode_error(Dialect::Gemini, &refused),
        (
            405,
            json!({"error": {"code": 405, "message": "PUT is not allowed", "status": "INVALID_ARGUMENT"}})
        )
    );
    let unavailable = WireError::for_status(502, "could not reach the upstream");
    let statuses: Vec<u16> = [
        Dialect::OpenAiChat,
        Dialect::OpenAiResponses,
        Dialect::Anthropic,
        Dialect::Gemini,
    ]
    .iter()
    .map(|&dialect| encode_error(dialect, &unavailable).0)
    .collect();
    assert_eq!(statuses, [502, 502, 529, 502]);
    // Google names a conflict and a missing method more exactly than their kinds.
    for (status, name) in [
        (409, "ABORTED"),
        (501, "UNIMPLEMENTED"),
        (400, "INVALID_ARGUMENT"),
    ] {
        let error = WireError::for_status(status, "m");
        assert_eq!(
            encode_error(Dialect::Gemini, &error).1["error"]["status"],
            name
        );
    }
    // A 402 is Anthropic's billing error, whatever code came with it.
    let billing = WireError::for_status(402, "pay up");
    assert_eq!(
        encode_error(Dialect::Anthropic, &billing),
        (
            402,
            json!({"type": "error", "error": {"type": "billing_error", "message": "pay up"}})
        )
    );
}

/// The in-stream error of each dialect is written from the same fields.
#[test]
fn the_in_stream_error_carries_the_same_wording() {
    let error = WireError::for_status(429, "slow down").with_code("rate_limit_exceeded");
    let mut chat = Vec::new();
    crate::codec::encode_stream_error(Dialect::OpenAiChat, &error, &mut chat);
    let chat = String::from_utf8(chat).unwrap();
    assert!(
        chat.contains(r#""code":"rate_limit_exceeded""#) && chat.contains("slow down"),
        "{chat}"
    );
    let mut gemini = Vec::new();
    crate::codec::encode_stream_error(Dialect::Gemini, &error, &mut gemini);
    let gemini = String::from_utf8(gemini).unwrap();
    assert!(gemini.contains(r#""code":429"#), "{gemini}");
}

/// Errors ride in every stream event: a code or a param must not make the event larger.
#[test]
fn an_error_stays_small() {
    assert!(
        std::mem::size_of::<WireError>() <= 64,
        "{}",
        std::mem::size_of::<WireError>()
    );
}

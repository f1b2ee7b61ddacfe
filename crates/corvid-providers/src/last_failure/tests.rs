use bytes::Bytes;
use http::StatusCode;

use super::*;

fn status(code: u16, body: &str) -> ProviderError {
    ProviderError::Status {
        status: StatusCode::from_u16(code).unwrap(),
        body: Bytes::from(body.to_owned()),
        retry_after: None,
    }
}

#[test]
fn a_status_failure_keeps_the_upstreams_message_only() {
    let log = FailureLog::default();
    assert_eq!(log.last(), None);
    log.note(&status(
        500,
        r#"{"error": {"message": "the model crashed", "type": "server_error"}, "echo": {"messages": [{"content": "my prompt"}]}}"#,
    ));
    let failure = log.last().unwrap();
    assert_eq!(failure.status, Some(500));
    assert_eq!(failure.cause, "status");
    assert_eq!(failure.message, "the model crashed");
    assert!(failure.at_ms > 0);
}

#[test]
fn every_dialects_error_shape_gives_its_message_and_other_bodies_give_none() {
    for body in [
        r#"{"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}"#,
        r#"[{"error": {"code": 503, "message": "busy", "status": "UNAVAILABLE"}}]"#,
        r#"{"error": "busy"}"#,
        r#"{"detail": "busy"}"#,
    ] {
        assert_eq!(
            upstream_message(body.as_bytes()).as_deref(),
            Some("busy"),
            "{body}"
        );
    }
    assert_eq!(upstream_message(b"<html>bad gateway</html>"), None);
}

#[test]
fn keys_are_masked_urls_lose_user_and_query_and_long_text_is_cut() {
    let text = "Incorrect API key provided: sk-proj-abcd1234. See https://user:pw@host.example/v1/x?key=AIzaSECRET#f and xai-0123456789";
    assert_eq!(
        clean(text),
        "Incorrect API key provided: **** See https://host.example/v1/x and ****"
    );
    let long_key = "A1b2".repeat(10);
    assert_eq!(
        clean(&format!("token {long_key} rejected")),
        "token **** rejected"
    );
    // Model names stay readable.
    assert_eq!(
        clean("claude-3-5-sonnet-20241022 is busy"),
        "claude-3-5-sonnet-20241022 is busy"
    );
    let cut = clean(&"word ".repeat(200));
    assert_eq!(cut.chars().count(), MESSAGE_CHARS + 1);
    assert!(cut.ends_with('…'));
    assert_eq!(clean("two\nlines"), "two lines");
}

#[test]
fn a_provider_is_failing_until_a_call_succeeds_and_its_last_failure_stays_on_record() {
    let log = FailureLog::default();
    assert_eq!(log.current(), None);
    log.succeeded();
    assert_eq!(log.current(), None);
    log.note(&status(502, r#"{"error": {"message": "bad gateway"}}"#));
    assert_eq!(log.current().unwrap().status, Some(502));
    log.succeeded();
    assert_eq!(log.current(), None);
    assert_eq!(log.last().unwrap().status, Some(502));
    log.note(&status(503, "{}"));
    assert_eq!(log.current().unwrap().status, Some(503));
}

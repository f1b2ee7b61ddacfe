use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

fn anthropic_body(kind: &str, message: &str) -> Vec<u8> {
    json!({"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_011"})
        .to_string()
        .into_bytes()
}

#[test]
fn anthropic_errors_decode_for_every_status() {
    let rows = [
        (400, "invalid_request_error", ErrorKind::InvalidRequest),
        (401, "authentication_error", ErrorKind::Authentication),
        (402, "billing_error", ErrorKind::Permission),
        (403, "permission_error", ErrorKind::Permission),
        (404, "not_found_error", ErrorKind::NotFound),
        (413, "request_too_large", ErrorKind::RequestTooLarge),
        (429, "rate_limit_error", ErrorKind::RateLimited),
        (500, "api_error", ErrorKind::Api),
        (504, "timeout_error", ErrorKind::Timeout),
        (529, "overloaded_error", ErrorKind::Overloaded),
    ];
    for (status, kind, expected) in rows {
        let message = format!("{kind} says so");
        assert_eq!(
            decode_error(status, &anthropic_body(kind, &message)),
            WireError::new(expected, message.clone()).with_code(kind),
            "HTTP {status}"
        );
        // And back to an Anthropic client unchanged, billing included.
        let error = decode_error(status, &anthropic_body(kind, &message));
        assert_eq!(
            encode_error(&error),
            (
                status,
                json!({"type": "error", "error": {"type": kind, "message": message}})
            ),
            "HTTP {status}"
        );
    }
}

#[test]
fn canonical_kinds_encode_by_the_table() {
    let rows = [
        (ErrorKind::InvalidRequest, 400, "invalid_request_error"),
        (ErrorKind::Authentication, 401, "authentication_error"),
        (ErrorKind::Permission, 403, "permission_error"),
        (ErrorKind::NotFound, 404, "not_found_error"),
        (ErrorKind::RequestTooLarge, 413, "request_too_large"),
        (ErrorKind::RateLimited, 429, "rate_limit_error"),
        (ErrorKind::Api, 500, "api_error"),
        (ErrorKind::Overloaded, 529, "overloaded_error"),
        (ErrorKind::Timeout, 504, "timeout_error"),
    ];
    for (kind, status, name) in rows {
        let error = WireError::new(kind, "m").with_code("rate_limit_exceeded");
        assert_eq!(
            encode_error(&error),
            (
                status,
                json!({"type": "error", "error": {"type": name, "message": "m"}})
            )
        );
    }
}

#[test]
fn the_error_type_beats_the_status() {
    // An Anthropic-compatible server answering 500 with an overloaded_error.
    let error = decode_error(500, &anthropic_body("overloaded_error", "busy"));
    assert_eq!(error.kind, ErrorKind::Overloaded);
}

#[test]
fn other_shapes_keep_their_wording() {
    assert_eq!(
        decode_error(
            429,
            br#"{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}"#
        ),
        WireError::new(ErrorKind::RateLimited, "Rate limit reached").with_code("requests")
    );
    assert_eq!(
        decode_error(400, br#"{"code":"Client specified an invalid argument","error":"Incorrect API key provided"}"#),
        WireError::new(ErrorKind::InvalidRequest, "Incorrect API key provided")
    );
    assert_eq!(
        decode_error(502, b"<html><body>Bad Gateway</body></html>\n"),
        WireError::new(
            ErrorKind::Overloaded,
            "<html><body>Bad Gateway</body></html>"
        )
    );
    assert_eq!(
        decode_error(504, b""),
        WireError::new(ErrorKind::Timeout, "upstream answered HTTP 504")
    );
    let long = "x".repeat(MAX_RAW_MESSAGE + 10);
    assert_eq!(
        decode_error(500, long.as_bytes()).message.chars().count(),
        MAX_RAW_MESSAGE + 1
    );
}

use pretty_assertions::assert_eq;
use serde_json::json;

use super::{decode_fixture, encode_stream, options, parse_sse};
use crate::model::{ErrorKind, StreamEvent, WireError};
use crate::openai_responses::{decode_error, encode_error};

const KINDS: [ErrorKind; 9] = [
    ErrorKind::InvalidRequest,
    ErrorKind::Authentication,
    ErrorKind::Permission,
    ErrorKind::NotFound,
    ErrorKind::RequestTooLarge,
    ErrorKind::RateLimited,
    ErrorKind::Overloaded,
    ErrorKind::Timeout,
    ErrorKind::Api,
];

#[test]
fn pitfall_19_every_status_is_decoded_with_its_wording() {
    let rows = [
        (
            400,
            "invalid_request_error",
            "context_length_exceeded",
            ErrorKind::InvalidRequest,
        ),
        (
            401,
            "invalid_request_error",
            "invalid_api_key",
            ErrorKind::Authentication,
        ),
        (
            403,
            "permission_error",
            "unsupported_country_region_territory",
            ErrorKind::Permission,
        ),
        (
            404,
            "invalid_request_error",
            "model_not_found",
            ErrorKind::NotFound,
        ),
        (
            409,
            "invalid_request_error",
            "conflict",
            ErrorKind::InvalidRequest,
        ),
        (
            413,
            "invalid_request_error",
            "request_too_large",
            ErrorKind::RequestTooLarge,
        ),
        (
            422,
            "invalid_request_error",
            "unprocessable",
            ErrorKind::InvalidRequest,
        ),
        (
            429,
            "requests",
            "rate_limit_exceeded",
            ErrorKind::RateLimited,
        ),
        (
            429,
            "insufficient_quota",
            "insufficient_quota",
            ErrorKind::RateLimited,
        ),
        (500, "server_error", "server_error", ErrorKind::Api),
        (502, "server_error", "bad_gateway", ErrorKind::Overloaded),
        (
            503,
            "server_error",
            "service_unavailable",
            ErrorKind::Overloaded,
        ),
        (504, "server_error", "timeout", ErrorKind::Timeout),
        (529, "overloaded_error", "overloaded", ErrorKind::Overloaded),
    ];
    for (status, kind, code, expected) in rows {
        let message = format!("upstream says {status}");
        let body =
            json!({ "error": { "message": message, "type": kind, "param": null, "code": code } });
        assert_eq!(
            decode_error(status, body.to_string().as_bytes()),
            WireError::new(expected, message).with_code(code.to_owned()),
            "status {status}"
        );
    }
}

#[test]
fn pitfall_19_every_kind_is_encoded_as_an_openai_error() {
    let encoded: Vec<_> = KINDS
        .iter()
        .map(|kind| {
            let (status, body) = encode_error(
                &WireError::new(*kind, format!("{kind:?} happened")).with_code(
                    (*kind == ErrorKind::RateLimited).then(|| "rate_limit_exceeded".to_owned()),
                ),
            );
            json!({ "kind": kind, "status": status, "body": body })
        })
        .collect();
    insta::assert_json_snapshot!(encoded);
}

#[test]
fn encoded_errors_decode_to_the_same_kind() {
    for kind in KINDS {
        let error = WireError::new(kind, "m");
        let (status, body) = encode_error(&error);
        let decoded = decode_error(status, body.to_string().as_bytes());
        assert_eq!(decoded.kind, kind);
        assert_eq!(decoded.message, "m");
    }
}

#[test]
fn pitfall_19_xai_string_errors_and_bad_keys_answered_with_400() {
    let body = json!({
        "code": "Client specified an invalid argument",
        "error": "Incorrect API key provided: xa***yz. You can obtain an API key from https://console.x.ai.",
    });
    assert_eq!(
        decode_error(400, body.to_string().as_bytes()),
        WireError::new(ErrorKind::Authentication, "Incorrect API key provided: xa***yz. You can obtain an API key from https://console.x.ai.").with_code("Client specified an invalid argument")
    );
    let gone = json!({ "code": "Gone", "error": "Live search is deprecated." });
    assert_eq!(
        decode_error(410, gone.to_string().as_bytes()),
        WireError::new(ErrorKind::Api, "Live search is deprecated.").with_code("Gone")
    );
}

#[test]
fn bodies_that_are_not_plain_json_objects() {
    assert_eq!(
        decode_error(502, b"<html>Bad Gateway</html>"),
        WireError::new(ErrorKind::Overloaded, "<html>Bad Gateway</html>")
    );
    assert_eq!(
        decode_error(
            429,
            br#"[{"error":{"message":"Too many","code":"rate_limit_exceeded"}}]"#
        ),
        WireError::new(ErrorKind::RateLimited, "Too many").with_code("rate_limit_exceeded")
    );
    assert_eq!(
        decode_error(500, b""),
        WireError::new(ErrorKind::Api, "upstream answered HTTP 500")
    );
}

#[test]
fn pitfall_19_a_mid_stream_failure_is_an_error_event() {
    // Upstream: `error` events and `response.failed` both end in `StreamEvent::Error`.
    for name in [
        "stream_error_event.sse",
        "stream_failed.sse",
        "stream_truncated.sse",
    ] {
        assert!(
            matches!(decode_fixture(name).last(), Some(StreamEvent::Error(_))),
            "{name}"
        );
    }
    // Client: an `error` event, and nothing after it.
    let events = [
        StreamEvent::TextDelta {
            text: "Partial".to_owned(),
        },
        StreamEvent::Error(
            WireError::new(ErrorKind::RateLimited, "Slow down").with_code("rate_limit_exceeded"),
        ),
    ];
    let parsed = parse_sse(&encode_stream(&events, options()));
    assert_eq!(
        parsed.last().unwrap()["data"],
        json!({
            "type": "error",
            "code": "rate_limit_exceeded",
            "message": "Slow down",
            "param": null,
            "sequence_number": parsed.len() - 1,
        })
    );
}

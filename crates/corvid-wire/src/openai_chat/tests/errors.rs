//! Error bodies before the stream (§6.8); the in-stream ones are in `stream_decode` and
//! `stream_encode`.

use pretty_assertions::assert_eq;
use serde_json::json;

use crate::model::{ErrorKind, WireError};
use crate::openai_chat::{decode_error, encode_error};

fn error(kind: ErrorKind, message: &str, code: Option<&str>) -> WireError {
    WireError::new(kind, message.to_owned()).with_code(code.map(str::to_owned))
}

/// Every status of §6.8, in OpenAI's shape: decoded, then encoded for a Chat client.
#[test]
fn every_status_maps_both_ways() {
    let statuses = [
        (
            400,
            "invalid_request_error",
            Some("context_length_exceeded"),
        ),
        (401, "invalid_request_error", Some("invalid_api_key")),
        (402, "billing_error", None),
        (403, "permission_error", None),
        (404, "invalid_request_error", Some("model_not_found")),
        (408, "timeout_error", None),
        (409, "invalid_request_error", None),
        (413, "invalid_request_error", None),
        (422, "invalid_request_error", None),
        (429, "requests", Some("rate_limit_exceeded")),
        (500, "server_error", None),
        (502, "server_error", None),
        (503, "server_error", None),
        (504, "timeout_error", None),
        (529, "overloaded_error", None),
    ];
    let rows: Vec<_> = statuses
        .iter()
        .map(|&(status, kind, code)| {
            let body = json!({"error": {"message": format!("upstream says {status}"),
                                        "type": kind, "param": null, "code": code}});
            let decoded = decode_error(status, body.to_string().as_bytes());
            assert_eq!(decoded.message, format!("upstream says {status}"));
            assert_eq!(decoded.code_str(), code);
            let (encoded_status, encoded) = encode_error(&decoded);
            json!({"status": status, "kind": decoded.kind, "client_status": encoded_status,
                   "client_body": encoded})
        })
        .collect();
    snapshot!("every_status", rows);
}

#[test]
fn statuses_keep_their_class() {
    for (status, kind, client_status) in [
        (400, ErrorKind::InvalidRequest, 400),
        (401, ErrorKind::Authentication, 401),
        (403, ErrorKind::Permission, 403),
        (404, ErrorKind::NotFound, 404),
        (413, ErrorKind::RequestTooLarge, 413),
        (429, ErrorKind::RateLimited, 429),
        (500, ErrorKind::Api, 500),
        (502, ErrorKind::Overloaded, 503),
        (503, ErrorKind::Overloaded, 503),
        (504, ErrorKind::Timeout, 504),
        (529, ErrorKind::Overloaded, 503),
    ] {
        let decoded = decode_error(status, br#"{"error":{"message":"m"}}"#);
        assert_eq!(decoded.kind, kind, "{status}");
        assert_eq!(encode_error(&decoded).0, client_status, "{status}");
    }
}

#[test]
fn xai_string_errors_keep_message_and_code() {
    let body = br#"{"code":"Client specified an invalid argument","error":"Incorrect API key provided: xa***. You can obtain an API key from https://console.x.ai."}"#;
    let decoded = decode_error(400, body);
    assert_eq!(
        decoded,
        error(
            ErrorKind::InvalidRequest,
            "Incorrect API key provided: xa***. You can obtain an API key from https://console.x.ai.",
            Some("Client specified an invalid argument"),
        )
    );
    // Zed reads `error.message`; xAI's code is kept (`zed-and-xai.md` §7.3).
    assert_eq!(
        encode_error(&decoded),
        (
            400,
            json!({"error": {
                "message": "Incorrect API key provided: xa***. You can obtain an API key from https://console.x.ai.",
                "type": "invalid_request_error", "param": null,
                "code": "Client specified an invalid argument"}})
        )
    );
    // 410 Gone for `search_parameters`: a client error, not a server one.
    let gone = decode_error(
        410,
        br#"{"code":"gone","error":"Live search is deprecated."}"#,
    );
    assert_eq!(gone.kind, ErrorKind::InvalidRequest);
    assert_eq!(encode_error(&gone).0, 400);
}

#[test]
fn other_bodies() {
    // vLLM: a top-level error object with a numeric code.
    assert_eq!(
        decode_error(
            400,
            br#"{"object":"error","message":"max_tokens is too large","type":"BadRequestError","param":null,"code":400}"#
        ),
        error(
            ErrorKind::InvalidRequest,
            "max_tokens is too large",
            Some("400")
        )
    );
    // Ollama: `{"error":"<message>"}`.
    assert_eq!(
        decode_error(
            404,
            br#"{"error":"model \"llama9\" not found, try pulling it first"}"#
        ),
        error(
            ErrorKind::NotFound,
            "model \"llama9\" not found, try pulling it first",
            None
        )
    );
    // Wrapped in an array.
    assert_eq!(
        decode_error(
            429,
            br#"[{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED"}}]"#
        ),
        error(ErrorKind::RateLimited, "Quota exceeded", Some("429"))
    );
    // An HTML page from a proxy, and nothing at all.
    assert_eq!(
        decode_error(502, b"  <html><body>Bad Gateway</body></html>\n"),
        error(
            ErrorKind::Overloaded,
            "<html><body>Bad Gateway</body></html>",
            None
        )
    );
    assert_eq!(
        decode_error(500, b""),
        error(ErrorKind::Api, "upstream answered HTTP 500", None)
    );
    // A long non-JSON body is cut on a character boundary.
    let long = "é".repeat(600);
    assert_eq!(decode_error(500, long.as_bytes()).message, "é".repeat(500));
    // An unusual 4xx takes its kind from the body's type.
    assert_eq!(
        decode_error(
            418,
            br#"{"error":{"message":"slow down","type":"rate_limit_error"}}"#
        )
        .kind,
        ErrorKind::RateLimited
    );
}

#[test]
fn every_kind_has_a_status_and_type() {
    let rows: Vec<_> = [
        ErrorKind::InvalidRequest,
        ErrorKind::Authentication,
        ErrorKind::Permission,
        ErrorKind::NotFound,
        ErrorKind::RequestTooLarge,
        ErrorKind::RateLimited,
        ErrorKind::Overloaded,
        ErrorKind::Timeout,
        ErrorKind::Api,
    ]
    .into_iter()
    .map(|kind| {
        let (status, body) = encode_error(&error(kind, "m", None));
        json!({"kind": kind, "status": status, "type": body["error"]["type"]})
    })
    .collect();
    snapshot!("every_kind", rows);
}

use bytes::Bytes;
use corvid_wire::model::ErrorKind;
use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

const DIALECTS: [Dialect; 4] = [
    Dialect::OpenAiChat,
    Dialect::OpenAiResponses,
    Dialect::Anthropic,
    Dialect::Gemini,
];

fn status(code: u16, body: &str) -> ProviderError {
    ProviderError::Status {
        status: StatusCode::from_u16(code).unwrap(),
        body: Bytes::from(body.to_owned()),
        retry_after: None,
    }
}

/// One error from every constructor and every branch of the mappings.
fn every_kind_of_error() -> Vec<(&'static str, ApiError)> {
    let mut limited = status(
        429,
        r#"{"error":{"message":"slow down","code":"rate_limited"}}"#,
    );
    if let ProviderError::Status { retry_after, .. } = &mut limited {
        *retry_after = Some(Duration::from_millis(1500));
    }
    let route = |error: RouteError| ApiError::from_route(&error);
    vec![
        (
            "new 405",
            ApiError::new(StatusCode::METHOD_NOT_ALLOWED, "PUT is not allowed"),
        ),
        (
            "new 413",
            ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "too big"),
        ),
        (
            "new 415",
            ApiError::new(StatusCode::UNSUPPORTED_MEDIA_TYPE, "JSON only"),
        ),
        (
            "new 500",
            ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "broken"),
        ),
        (
            "new 503",
            ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "busy"),
        ),
        (
            "invalid_request",
            ApiError::invalid_request("bad").with_param("prompt"),
        ),
        (
            "not_found",
            ApiError::not_found("no such model").with_code("model_not_found"),
        ),
        ("forbidden", ApiError::forbidden("not from here")),
        (
            "from_wire",
            ApiError::from_wire(WireError::new(ErrorKind::Overloaded, "the stream broke")),
        ),
        (
            "provider xai 400",
            ApiError::from_provider(
                &status(
                    400,
                    r#"{"code":"Client specified an invalid argument","error":"Incorrect API key provided"}"#,
                ),
                false,
            ),
        ),
        (
            "provider 429 + Retry-After",
            ApiError::from_provider(&limited, false),
        ),
        (
            "provider 402",
            ApiError::from_provider(&status(402, "pay up"), false),
        ),
        (
            "provider 409",
            ApiError::from_provider(&status(409, "conflict"), false),
        ),
        (
            "provider vLLM numeric code",
            ApiError::from_provider(
                &status(400, r#"{"object":"error","message":"too long","code":400}"#),
                false,
            ),
        ),
        (
            "provider 502 html",
            ApiError::from_provider(&status(502, "<html>bad gateway</html>"), false),
        ),
        (
            "provider 503 empty",
            ApiError::from_provider(&status(503, ""), false),
        ),
        (
            "provider 529",
            ApiError::from_provider(&status(529, "overloaded"), false),
        ),
        (
            "provider oauth 403",
            ApiError::from_provider(
                &status(403, r#"{"code":"permission-denied","error":"nope"}"#),
                true,
            ),
        ),
        (
            "provider connect",
            ApiError::from_provider(
                &ProviderError::Connect {
                    url: "http://127.0.0.1:9/v1".to_owned(),
                    source: "connection refused".into(),
                },
                false,
            ),
        ),
        (
            "provider transport",
            ApiError::from_provider(
                &ProviderError::Transport {
                    url: "http://127.0.0.1:9/v1".to_owned(),
                    source: "reset".into(),
                },
                false,
            ),
        ),
        (
            "provider timeout",
            ApiError::from_provider(
                &ProviderError::Timeout {
                    url: "http://127.0.0.1:9/v1".to_owned(),
                },
                false,
            ),
        ),
        (
            "provider invalid credential",
            ApiError::from_provider(&ProviderError::InvalidCredential, false),
        ),
        (
            "provider invalid url",
            ApiError::from_provider(
                &ProviderError::InvalidUrl {
                    url: "nope".to_owned(),
                },
                false,
            ),
        ),
        (
            "auth not configured",
            ApiError::from_auth(&AuthError::NotConfigured {
                mode: corvid_config::AuthMode::ApiKey,
            }),
        ),
        (
            "auth refresh failed",
            ApiError::from_auth(&AuthError::RefreshFailed {
                message: "503".to_owned(),
            }),
        ),
        (
            "route unknown provider",
            route(RouteError::UnknownProvider {
                provider: "nobody".to_owned(),
                model: "nobody/x".to_owned(),
                available: vec!["xai".to_owned()],
            }),
        ),
        (
            "route unknown model",
            route(RouteError::UnknownModel {
                model: "x".to_owned(),
                available: vec!["xai".to_owned()],
            }),
        ),
        (
            "route ambiguous",
            route(RouteError::Ambiguous {
                model: "m".to_owned(),
                candidates: vec!["a/m".to_owned(), "b/m".to_owned()],
            }),
        ),
        (
            "route unavailable",
            route(RouteError::Unavailable {
                provider: "openai".to_owned(),
                reason: "no key".to_owned(),
            }),
        ),
    ]
}

/// The answer every error gets, in every dialect, is `codec::encode_error`'s status and body,
/// with `Retry-After` only as a header.
#[tokio::test]
async fn every_error_in_every_dialect_is_rendered_by_encode_error() {
    for (name, error) in every_kind_of_error() {
        for dialect in DIALECTS {
            let error = error.clone().in_dialect(dialect);
            let (status, body) = codec::encode_error(dialect, &error.error);
            let retry_after = error.retry_after;
            let response = error.into_response();
            assert_eq!(response.status().as_u16(), status, "{name} {dialect:?}");
            assert_eq!(
                response.headers().get(http::header::RETRY_AFTER).is_some(),
                retry_after.is_some(),
                "{name} {dialect:?}"
            );
            let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
                .await
                .unwrap();
            let sent: Value = serde_json::from_slice(&bytes).unwrap();
            assert_eq!(sent, body, "{name} {dialect:?}");
            assert_eq!(bytes, Bytes::from(body.to_string()), "{name} {dialect:?}");
        }
    }
}

/// What each error reads as, per dialect: the wording pinned (Anthropic's exact types, the
/// exact statuses kept, the code and param where OpenAI carries them). After a deliberate
/// change: `UPDATE_ANSWERS=1 cargo test -p corvid-gateway --lib answers`, then read the diff.
#[test]
fn the_answers_read_as_each_providers_own() {
    let rows: Vec<Value> = every_kind_of_error()
        .into_iter()
        .map(|(name, error)| {
            let answers: Vec<Value> = DIALECTS
                .iter()
                .map(|&dialect| {
                    let (status, body) = error.clone().in_dialect(dialect).rendered();
                    json!([status.as_u16(), body])
                })
                .collect();
            json!({"error": name, "ledger_status": error.status().as_u16(), "answers": answers})
        })
        .collect();
    let rows = Value::Array(rows);
    if std::env::var_os("UPDATE_ANSWERS").is_some() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/error/answers.json");
        std::fs::write(path, serde_json::to_string_pretty(&rows).unwrap() + "\n").unwrap();
    }
    let expected: Value = serde_json::from_str(include_str!("answers.json")).unwrap();
    assert_eq!(rows, expected);
}

#[test]
fn rewraps_xai_error_bodies() {
    let api = ApiError::from_provider(
        &status(
            400,
            r#"{"code":"Client specified an invalid argument","error":"Incorrect API key provided"}"#,
        ),
        false,
    );
    assert_eq!(
        api.rendered().1,
        json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error",
                         "code": "Client specified an invalid argument", "param": null}})
    );
}

#[test]
fn keeps_openai_shaped_bodies_and_handles_text() {
    let api = ApiError::from_provider(
        &status(
            429,
            r#"{"error":{"message":"slow down","type":"rate_limit","code":"rate_limit_exceeded"}}"#,
        ),
        false,
    );
    assert_eq!(api.message(), "slow down");
    assert_eq!(api.error.kind, ErrorKind::RateLimited);
    assert_eq!(api.error.code_str(), Some("rate_limit_exceeded"));

    let api = ApiError::from_provider(&status(502, "<html>bad gateway</html>"), false);
    assert_eq!(api.message(), "<html>bad gateway</html>");
    let api = ApiError::from_provider(&status(503, ""), false);
    assert_eq!(api.message(), "upstream answered 503 Service Unavailable");
}

#[test]
fn oauth_403_explains_the_plan() {
    let api = ApiError::from_provider(
        &status(403, r#"{"code":"permission-denied","error":"nope"}"#),
        true,
    );
    assert_eq!(api.status(), StatusCode::FORBIDDEN);
    assert_eq!(api.error.kind, ErrorKind::Permission);
    assert!(api.message().contains("api_key"), "{}", api.message());
    assert!(api.message().contains("nope"));
    let api = ApiError::from_provider(&status(403, r#"{"error":"nope"}"#), false);
    assert_eq!(api.message(), "nope");
}

#[test]
fn each_dialect_gets_its_own_shape() {
    let error = ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "busy");
    assert_eq!(
        error.clone().in_dialect(Dialect::Anthropic).rendered(),
        (
            StatusCode::from_u16(529).unwrap(),
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "busy"}})
        )
    );
    assert_eq!(
        error.clone().in_dialect(Dialect::Gemini).rendered(),
        (
            StatusCode::SERVICE_UNAVAILABLE,
            json!({"error": {"code": 503, "message": "busy", "status": "UNAVAILABLE"}})
        )
    );
    assert_eq!(error.rendered().0, StatusCode::SERVICE_UNAVAILABLE);
    // The ledger keeps the failure's own status, whatever the dialect says.
    assert_eq!(
        error.in_dialect(Dialect::Anthropic).status(),
        StatusCode::SERVICE_UNAVAILABLE
    );
    let missing = ApiError::new(StatusCode::UNAUTHORIZED, "no key").in_dialect(Dialect::Anthropic);
    assert_eq!(
        missing.rendered().1["error"]["type"],
        "authentication_error"
    );
}

#[test]
fn an_error_already_in_the_callers_dialect_is_relayed_as_it_came() {
    let gemini = r#"{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"45s"}]}}"#;
    let mut error = status(429, gemini);
    if let ProviderError::Status { retry_after, .. } = &mut error {
        *retry_after = Some(Duration::from_secs(45));
    }
    let response = relayed_upstream_error(&error, Dialect::Gemini).unwrap();
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(response.headers()[http::header::RETRY_AFTER], "45");
    let anthropic = r#"{"type":"error","error":{"type":"invalid_request_error","message":"bad"},"request_id":"req_1"}"#;
    assert!(relayed_upstream_error(&status(400, anthropic), Dialect::Anthropic).is_some());
    // Another dialect's shape, or xAI's flat one, is rebuilt.
    assert!(relayed_upstream_error(&status(400, anthropic), Dialect::Gemini).is_none());
    let xai = r#"{"code":"bad","error":"Incorrect API key provided"}"#;
    assert!(relayed_upstream_error(&status(400, xai), Dialect::OpenAiChat).is_none());
    assert!(relayed_upstream_error(&status(502, "<html>"), Dialect::Gemini).is_none());
}

#[test]
fn retry_after_is_whole_seconds() {
    let mut api = ApiError::new(StatusCode::TOO_MANY_REQUESTS, "x");
    api.retry_after = Some(Duration::from_millis(1200));
    let response = api.into_response();
    assert_eq!(response.headers()[http::header::RETRY_AFTER], "2");
}

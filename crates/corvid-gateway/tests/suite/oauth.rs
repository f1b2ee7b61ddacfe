//! SuperGrok (OAuth) credentials through the whole gateway: refresh, 401 retry, 403 meaning.

use std::sync::Arc;

use corvid_auth::{Credential, CredentialStore, OAuthEndpoints, OAuthSession, Secret, TokenSet};
use corvid_test_support::Reply;
use corvid_test_support::oauth::MockOAuth;
use http::StatusCode;
use serde_json::{Value, json};

use super::harness::Gateway;

const CHAT: &str = r#"{"model":"grok","messages":[{"role":"user","content":"hi"}]}"#;

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

async fn oauth_gateway(expires_in: i64) -> (Gateway, MockOAuth, tempfile::TempDir) {
    let oauth = MockOAuth::start().await;
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("env"),
        "OTHER_SETTING=keep\nXAI_ACCESS_TOKEN=access-original\nXAI_REFRESH_TOKEN=refresh-original\n",
    )
    .unwrap();
    let session = OAuthSession::new(
        OAuthEndpoints::new(&oauth.base_url()),
        reqwest::Client::builder().no_proxy().build().unwrap(),
        CredentialStore::file_only(home.path().join("env")),
        Some(TokenSet {
            access_token: Secret::new("access-original"),
            refresh_token: Some(Secret::new("refresh-original")),
            expires_at: Some(now() + expires_in),
            email: None,
        }),
    );
    let gateway =
        Gateway::start_with_credential(|_| {}, Credential::OAuth(Arc::new(session))).await;
    (gateway, oauth, home)
}

fn bearer(gateway: &Gateway, index: usize) -> String {
    gateway.upstream.requests()[index].headers["authorization"]
        .to_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn an_upstream_401_refreshes_once_and_retries_once() {
    let (gateway, oauth, home) = oauth_gateway(3600).await;
    gateway.upstream.enqueue(
        "/v1/chat/completions",
        Reply::status(StatusCode::UNAUTHORIZED, json!({"error": "token expired"})),
    );
    let response = gateway.post("/v1/chat/completions", CHAT).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(oauth.token_requests("refresh_token"), 1);
    assert_eq!(gateway.upstream.requests().len(), 2);
    assert_eq!(bearer(&gateway, 0), "Bearer access-original");
    let renewed = bearer(&gateway, 1);
    assert_ne!(renewed, "Bearer access-original");
    let stored = std::fs::read_to_string(home.path().join("env")).unwrap();
    assert!(
        stored.contains(renewed.trim_start_matches("Bearer ")),
        "renewed token persisted"
    );
}

#[tokio::test]
async fn a_second_401_is_returned_not_retried_again() {
    let (gateway, oauth, _home) = oauth_gateway(3600).await;
    for _ in 0..2 {
        gateway.upstream.enqueue(
            "/v1/chat/completions",
            Reply::status(StatusCode::UNAUTHORIZED, json!({"error": "no"})),
        );
    }
    let response = gateway.post("/v1/chat/completions", CHAT).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(gateway.upstream.requests().len(), 2);
    assert_eq!(oauth.token_requests("refresh_token"), 1);
}

#[tokio::test]
async fn concurrent_requests_with_an_expiring_token_share_one_refresh() {
    let (gateway, oauth, _home) = oauth_gateway(10).await;
    oauth.set_token_delay(std::time::Duration::from_millis(200));
    let requests = (0..20).map(|_| gateway.post("/v1/chat/completions", CHAT));
    let responses = futures_util::future::join_all(requests).await;
    assert!(
        responses
            .iter()
            .all(|response| response.status() == StatusCode::OK)
    );
    assert_eq!(oauth.token_requests("refresh_token"), 1);
    let first = bearer(&gateway, 0);
    assert_ne!(first, "Bearer access-original");
    assert!((0..20).all(|index| bearer(&gateway, index) == first));
}

#[tokio::test]
async fn a_403_in_oauth_mode_explains_the_plan() {
    let (gateway, _oauth, _home) = oauth_gateway(3600).await;
    gateway.upstream.enqueue(
        "/v1/chat/completions",
        Reply::status(
            StatusCode::FORBIDDEN,
            json!({"code": "permission-denied", "error": "personal-team-blocked"}),
        ),
    );
    let response = gateway.post("/v1/chat/completions", CHAT).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let value: Value = response.json().await.unwrap();
    let message = value["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("api_key") && message.contains("personal-team-blocked"),
        "{message}"
    );
    assert_eq!(gateway.upstream.requests().len(), 1, "403 is not retried");
}

#[tokio::test]
async fn a_refused_refresh_signs_out_with_a_clear_401() {
    let (gateway, oauth, home) = oauth_gateway(10).await;
    oauth.push_refresh_reply(corvid_test_support::oauth::RefreshReply::error(
        400,
        "invalid_grant",
    ));
    let response = gateway.post("/v1/chat/completions", CHAT).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let value: Value = response.json().await.unwrap();
    assert!(
        value["error"]["message"]
            .as_str()
            .unwrap()
            .contains("corvid login xai"),
        "{value}"
    );
    assert!(gateway.upstream.requests().is_empty());
    let stored = std::fs::read_to_string(home.path().join("env")).unwrap();
    assert!(
        !stored.contains("refresh-original"),
        "tokens cleared: {stored}"
    );
    assert!(
        stored.contains("OTHER_SETTING=keep"),
        "other lines kept: {stored}"
    );
}

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use pretty_assertions::assert_eq;

use super::{TokenReply, TokenSet, expiry_for, jwt_claims, jwt_expiry};
use crate::Secret;

fn jwt(claims: serde_json::Value) -> String {
    let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"none"}"#);
    let payload = URL_SAFE_NO_PAD.encode(claims.to_string());
    format!("{header}.{payload}.sig")
}

fn reply(json: serde_json::Value) -> TokenReply {
    serde_json::from_value(json).unwrap()
}

#[test]
fn expiry_prefers_jwt_exp_then_expires_in_then_an_hour() {
    let token = jwt(serde_json::json!({"exp": 2_000_000_000, "sub": "u"}));
    assert_eq!(jwt_expiry(&token), Some(2_000_000_000));
    assert_eq!(expiry_for(&token, Some(60), 1_000), 2_000_000_000);
    assert_eq!(expiry_for("opaque-token", Some(60), 1_000), 1_060);
    assert_eq!(expiry_for("opaque-token", None, 1_000), 4_600);
    assert_eq!(expiry_for("opaque-token", Some(0), 1_000), 4_600);
}

#[test]
fn non_jwts_have_no_claims() {
    assert_eq!(jwt_claims("a.b"), None);
    assert_eq!(jwt_claims("a.!!!.c"), None);
    assert_eq!(jwt_claims("a.b.c.d"), None);
    let array = format!("h.{}.s", URL_SAFE_NO_PAD.encode("[1]"));
    assert_eq!(jwt_claims(&array), None);
}

#[test]
fn reply_email_comes_from_id_token_then_reply_then_previous() {
    let id_token = jwt(serde_json::json!({"email": "id@example.com"}));
    let set = reply(serde_json::json!({
        "access_token": "a1", "refresh_token": "r1", "id_token": id_token,
        "email": "reply@example.com", "expires_in": 100
    }))
    .into_token_set(1_000, None, Some("old@example.com".into()));
    assert_eq!(
        set,
        TokenSet {
            access_token: Secret::new("a1"),
            refresh_token: Some(Secret::new("r1")),
            expires_at: Some(1_100),
            email: Some("id@example.com".into()),
        }
    );

    let set = reply(serde_json::json!({"access_token": "a2", "email": "reply@example.com"}))
        .into_token_set(1_000, None, Some("old@example.com".into()));
    assert_eq!(set.email.as_deref(), Some("reply@example.com"));

    let set = reply(serde_json::json!({"access_token": "a3", "expires_in": "50"})).into_token_set(
        1_000,
        None,
        Some("old@example.com".into()),
    );
    assert_eq!(set.email.as_deref(), Some("old@example.com"));
    assert_eq!(set.expires_at, Some(1_050));
}

#[test]
fn reply_without_refresh_token_keeps_the_previous_one() {
    let without = reply(serde_json::json!({"access_token": "a", "refresh_token": ""}));
    assert!(!without.has_refresh_token());
    let set = without.into_token_set(0, Some(Secret::new("old-refresh")), None);
    assert_eq!(set.refresh_token, Some(Secret::new("old-refresh")));
}

#[test]
fn expires_within_counts_the_skew() {
    let set = TokenSet {
        access_token: Secret::new("a"),
        refresh_token: None,
        expires_at: Some(1_000),
        email: None,
    };
    assert!(set.expires_within(60, 940));
    assert!(!set.expires_within(60, 939));
    assert!(
        !TokenSet {
            expires_at: None,
            ..set
        }
        .expires_within(60, 5_000)
    );
}

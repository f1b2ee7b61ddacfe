use std::collections::HashMap;

use pretty_assertions::assert_eq;

use super::{CLIENT_ID, OAuthEndpoints, SCOPE};

#[test]
fn endpoints_hang_off_the_auth_url() {
    let endpoints = OAuthEndpoints::new("https://auth.x.ai/");
    assert_eq!(
        endpoints,
        OAuthEndpoints {
            authorize: "https://auth.x.ai/oauth2/authorize".into(),
            token: "https://auth.x.ai/oauth2/token".into(),
            device: "https://auth.x.ai/oauth2/device/code".into(),
            client_id: CLIENT_ID.into(),
            scope: SCOPE.into(),
        }
    );
    assert_eq!(
        OAuthEndpoints::redirect_uri(56121),
        "http://127.0.0.1:56121/callback"
    );
}

#[test]
fn authorize_url_carries_every_parameter() {
    let endpoints = OAuthEndpoints::new("https://auth.x.ai");
    let url = endpoints.authorize_url(
        "http://127.0.0.1:56121/callback",
        "challenge",
        "state1",
        "nonce1",
    );
    let parsed = url::Url::parse(&url).unwrap();
    assert_eq!(parsed.path(), "/oauth2/authorize");
    let query: HashMap<String, String> = parsed.query_pairs().into_owned().collect();
    let expected: HashMap<String, String> = [
        ("response_type", "code"),
        ("client_id", CLIENT_ID),
        ("redirect_uri", "http://127.0.0.1:56121/callback"),
        ("scope", SCOPE),
        ("code_challenge", "challenge"),
        ("code_challenge_method", "S256"),
        ("state", "state1"),
        ("nonce", "nonce1"),
        ("plan", "generic"),
        ("referrer", "corvid"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    assert_eq!(query, expected);
}

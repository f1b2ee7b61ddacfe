use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use corvid_test_support::oauth::{
    AuthorizeReply, BrowserVisit, ExchangeReply, MockOAuth, follow_authorize_redirect,
};
use pretty_assertions::assert_eq;

use super::{BrowserLogin, login_browser};
use crate::pkce::challenge_for;
use crate::test_util::http;
use crate::{AuthError, CLIENT_ID, LoginError, OAuthEndpoints, SCOPE, TokenSet};

/// Runs the browser flow against `mock`, with a "browser" that follows the authorize redirect.
async fn sign_in(mock: &MockOAuth) -> (Result<TokenSet, AuthError>, BrowserVisit) {
    let (url_tx, mut url_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let browser = tokio::spawn(async move {
        let url = url_rx.recv().await.unwrap();
        follow_authorize_redirect(&url).await.unwrap()
    });
    let options = BrowserLogin {
        endpoints: OAuthEndpoints::new(&mock.base_url()),
        http: http(),
        redirect_port: 0,
        open_browser: Box::new(move |url| url_tx.send(url.to_owned()).unwrap()),
        timeout: Duration::from_secs(10),
    };
    let result = login_browser(options).await;
    (result, browser.await.unwrap())
}

#[tokio::test]
async fn browser_login_end_to_end_with_pkce() {
    let mock = MockOAuth::start().await;
    mock.set_email("grok@example.com");
    let (result, visit) = sign_in(&mock).await;
    let tokens = result.unwrap();

    assert!(tokens.access_token.expose().starts_with("mock-access-"));
    assert!(tokens.refresh_token.is_some());
    assert_eq!(tokens.email.as_deref(), Some("grok@example.com"));
    assert!(tokens.expires_at.is_some());

    let query = &mock.authorize_queries()[0];
    let form = mock.last_token_form().unwrap();
    assert_eq!(query["response_type"], "code");
    assert_eq!(query["client_id"], CLIENT_ID);
    assert_eq!(query["scope"], SCOPE);
    assert_eq!(query["code_challenge_method"], "S256");
    assert_eq!(query["plan"], "generic");
    assert_eq!(query["referrer"], "corvid");
    assert_eq!(query["state"].len(), 32);
    assert_eq!(query["nonce"].len(), 32);
    assert!(query["redirect_uri"].starts_with("http://127.0.0.1:"));
    assert!(query["redirect_uri"].ends_with("/callback"));
    // PKCE: the verifier sent with the code hashes to the challenge sent to authorize.
    assert_eq!(form["grant_type"], "authorization_code");
    assert_eq!(form["client_id"], CLIENT_ID);
    assert_eq!(form["redirect_uri"], query["redirect_uri"]);
    assert_eq!(form["code_verifier"].len(), 43);
    assert_eq!(
        challenge_for(&form["code_verifier"]),
        query["code_challenge"]
    );

    assert_eq!(visit.callback.status, 200);
    assert!(
        visit.callback.body.contains("Signed in"),
        "{}",
        visit.callback.body
    );
    assert!(visit.callback.body.contains("grok@example.com"));
}

#[tokio::test]
async fn a_forged_state_is_rejected() {
    let mock = MockOAuth::start().await;
    mock.set_authorize_reply(AuthorizeReply::ForgeState);
    let (result, visit) = sign_in(&mock).await;
    assert!(
        matches!(result, Err(AuthError::Login(LoginError::StateMismatch))),
        "{result:?}"
    );
    assert_eq!(visit.callback.status, 400);
    assert!(
        visit.callback.body.contains("state mismatch"),
        "{}",
        visit.callback.body
    );
    assert_eq!(mock.token_requests("authorization_code"), 0);
}

#[tokio::test]
async fn a_denied_sign_in_is_reported() {
    let mock = MockOAuth::start().await;
    mock.set_authorize_reply(AuthorizeReply::Deny {
        error: "access_denied".into(),
        description: "<b>user said no</b>".into(),
    });
    let (result, visit) = sign_in(&mock).await;
    let err = result.unwrap_err();
    assert_eq!(
        err.to_string(),
        "xAI refused the sign-in: access_denied (<b>user said no</b>)"
    );
    assert_eq!(visit.callback.status, 400);
    // The page escapes what the redirect carried.
    assert!(
        visit.callback.body.contains("&lt;b&gt;user said no"),
        "{}",
        visit.callback.body
    );
    assert_eq!(mock.token_requests("authorization_code"), 0);
}

#[tokio::test]
async fn a_reply_without_refresh_token_is_rejected() {
    let mock = MockOAuth::start().await;
    mock.set_exchange_reply(ExchangeReply::WithoutRefreshToken);
    let (result, visit) = sign_in(&mock).await;
    assert!(
        matches!(
            result,
            Err(AuthError::Login(LoginError::MissingRefreshToken))
        ),
        "{result:?}"
    );
    assert_eq!(visit.callback.status, 502);
    assert!(
        visit.callback.body.contains("no refresh token"),
        "{}",
        visit.callback.body
    );
}

#[tokio::test]
async fn a_busy_port_is_reported_before_the_browser_opens() {
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().port();
    let opened = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&opened);
    let options = BrowserLogin {
        redirect_port: port,
        open_browser: Box::new(move |_| flag.store(true, Ordering::SeqCst)),
        ..BrowserLogin::new(OAuthEndpoints::new("http://127.0.0.1:9"), http(), |_| {})
    };
    let err = login_browser(options).await.unwrap_err();
    assert!(
        matches!(err, AuthError::Login(LoginError::PortInUse { port: p }) if p == port),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(message.contains(&format!("port {port}")), "{message}");
    assert!(
        message.contains("another `corvid login` or another app"),
        "{message}"
    );
    assert!(!opened.load(Ordering::SeqCst));
}

#[tokio::test]
async fn waiting_too_long_times_out() {
    let options = BrowserLogin {
        redirect_port: 0,
        timeout: Duration::from_millis(100),
        ..BrowserLogin::new(OAuthEndpoints::new("http://127.0.0.1:9"), http(), |_| {})
    };
    let err = login_browser(options).await.unwrap_err();
    assert!(
        matches!(err, AuthError::Login(LoginError::TimedOut { .. })),
        "{err:?}"
    );
    assert!(err.to_string().contains("timed out"), "{err}");
}

#[test]
fn defaults_use_the_registered_port_and_three_minutes() {
    let options = BrowserLogin::new(OAuthEndpoints::new("https://auth.x.ai"), http(), |_| {});
    assert_eq!(options.redirect_port, 56121);
    assert_eq!(options.timeout, Duration::from_secs(180));
}

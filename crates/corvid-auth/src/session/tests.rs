use std::sync::Arc;
use std::time::Duration;

use corvid_test_support::oauth::{MockOAuth, RefreshReply};
use pretty_assertions::assert_eq;

use super::OAuthSession;
use crate::test_util::{http, read_env_file, write_env_file};
use crate::tokens::now_unix;
use crate::{AuthError, CredentialStore, OAuthEndpoints, Secret, TokenSet};

const REFRESH_GRANT: &str = "refresh_token";

struct Fixture {
    mock: MockOAuth,
    home: tempfile::TempDir,
    session: Arc<OAuthSession>,
}

impl Fixture {
    /// A session holding `tokens`, stored in an env file that also has an unrelated line.
    async fn new(tokens: Option<TokenSet>) -> Self {
        let mock = MockOAuth::start().await;
        let home = tempfile::tempdir().unwrap();
        write_env_file(home.path(), "# keep me\nXAI_API_KEY=xai-key\n");
        let store = CredentialStore::file_only(home.path().join("env"));
        if let Some(tokens) = &tokens {
            store.save(tokens).unwrap();
        }
        let session =
            OAuthSession::new(OAuthEndpoints::new(&mock.base_url()), http(), store, tokens);
        Self {
            mock,
            home,
            session: Arc::new(session),
        }
    }

    fn env_file(&self) -> String {
        read_env_file(self.home.path())
    }

    fn refreshes(&self) -> usize {
        self.mock.token_requests(REFRESH_GRANT)
    }

    /// Waits until the refresh POST has reached the mock (which then sits on its delay).
    async fn refresh_in_flight(&self) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while self.refreshes() == 0 {
            assert!(tokio::time::Instant::now() < deadline, "no refresh started");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

fn expired(access: &str, refresh: Option<&str>) -> TokenSet {
    TokenSet {
        access_token: Secret::new(access),
        refresh_token: refresh.map(Secret::new),
        expires_at: Some(now_unix() - 10),
        email: Some("me@example.com".into()),
    }
}

fn fresh(access: &str, refresh: &str) -> TokenSet {
    TokenSet {
        expires_at: Some(now_unix() + 3600),
        ..expired(access, Some(refresh))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_concurrent_callers_share_one_refresh() {
    let fixture = Fixture::new(Some(expired("old-access", Some("refresh-0")))).await;
    fixture.mock.set_token_delay(Duration::from_millis(200));

    let calls: Vec<_> = (0..50)
        .map(|_| {
            let session = Arc::clone(&fixture.session);
            tokio::spawn(async move { session.access_token().await })
        })
        .collect();
    for call in calls {
        assert_eq!(call.await.unwrap().unwrap(), Secret::new("mock-access-1"));
    }

    assert_eq!(fixture.refreshes(), 1);
    let form = fixture.mock.last_token_form().unwrap();
    assert_eq!(form["grant_type"], "refresh_token");
    assert_eq!(form["refresh_token"], "refresh-0");
    assert_eq!(form["client_id"], crate::CLIENT_ID);
    // The rotated refresh token is stored, beside the lines that were already there.
    let env = fixture.env_file();
    assert!(env.starts_with("# keep me\nXAI_API_KEY=xai-key\n"), "{env}");
    assert!(env.contains("XAI_ACCESS_TOKEN=mock-access-1\n"), "{env}");
    assert!(env.contains("XAI_REFRESH_TOKEN=mock-refresh-1\n"), "{env}");
    assert!(env.contains("XAI_ACCOUNT_EMAIL=me@example.com\n"), "{env}");
    // Fresh now: no further request.
    fixture.session.access_token().await.unwrap();
    assert_eq!(fixture.refreshes(), 1);
}

#[tokio::test]
async fn a_fresh_token_needs_no_request() {
    let fixture = Fixture::new(Some(fresh("access-0", "refresh-0"))).await;
    assert_eq!(
        fixture.session.access_token().await.unwrap(),
        Secret::new("access-0")
    );
    assert_eq!(fixture.refreshes(), 0);
}

#[tokio::test]
async fn a_token_expiring_within_the_skew_is_refreshed() {
    let mut tokens = fresh("access-0", "refresh-0");
    tokens.expires_at = Some(now_unix() + 30);
    let fixture = Fixture::new(Some(tokens)).await;
    assert_eq!(
        fixture.session.access_token().await.unwrap(),
        Secret::new("mock-access-1")
    );
    assert_eq!(fixture.refreshes(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refresh_after_rejection_refreshes_once() {
    let fixture = Fixture::new(Some(fresh("access-0", "refresh-0"))).await;
    let rejected = Secret::new("access-0");

    let renewed = fixture
        .session
        .refresh_after_rejection(&rejected)
        .await
        .unwrap();
    assert_eq!(renewed, Secret::new("mock-access-1"));
    assert_eq!(fixture.refreshes(), 1);

    // A second caller that was also refused access-0 gets the new token without a request.
    let again = fixture
        .session
        .refresh_after_rejection(&rejected)
        .await
        .unwrap();
    assert_eq!(again, Secret::new("mock-access-1"));
    assert_eq!(fixture.refreshes(), 1);

    // Concurrent callers refused the same token: one more refresh for all of them.
    fixture.mock.set_token_delay(Duration::from_millis(100));
    let calls: Vec<_> = (0..10)
        .map(|_| {
            let session = Arc::clone(&fixture.session);
            tokio::spawn(async move {
                session
                    .refresh_after_rejection(&Secret::new("mock-access-1"))
                    .await
            })
        })
        .collect();
    for call in calls {
        assert_eq!(call.await.unwrap().unwrap(), Secret::new("mock-access-2"));
    }
    assert_eq!(fixture.refreshes(), 2);
}

#[tokio::test]
async fn the_old_refresh_token_is_kept_when_the_reply_has_none() {
    let fixture = Fixture::new(Some(expired("old", Some("refresh-0")))).await;
    fixture
        .mock
        .push_refresh_reply(RefreshReply::WithoutRefreshToken);
    assert_eq!(
        fixture.session.access_token().await.unwrap(),
        Secret::new("mock-access-1")
    );
    let env = fixture.env_file();
    assert!(env.contains("XAI_ACCESS_TOKEN=mock-access-1\n"), "{env}");
    assert!(env.contains("XAI_REFRESH_TOKEN=refresh-0\n"), "{env}");

    // And the kept token is the one spent next time.
    fixture
        .session
        .refresh_after_rejection(&Secret::new("mock-access-1"))
        .await
        .unwrap();
    assert_eq!(
        fixture.mock.last_token_form().unwrap()["refresh_token"],
        "refresh-0"
    );
}

#[tokio::test]
async fn a_fatal_refresh_signs_out_everywhere() {
    for status in [400, 401, 403] {
        let fixture = Fixture::new(Some(expired("old", Some("refresh-0")))).await;
        fixture
            .mock
            .push_refresh_reply(RefreshReply::error(status, "invalid_grant"));
        let err = fixture.session.access_token().await.unwrap_err();
        assert!(
            matches!(err, AuthError::SignInRequired { .. }),
            "{status}: {err:?}"
        );
        assert!(!err.is_retryable());
        let message = err.to_string();
        assert!(message.contains("run `corvid login xai`"), "{message}");
        assert!(message.contains("invalid_grant"), "{message}");
        assert!(!message.contains("refresh-0"), "{message}");

        assert!(!fixture.session.is_signed_in());
        assert_eq!(fixture.env_file(), "# keep me\nXAI_API_KEY=xai-key\n");
        // Signed out: no more requests until a new sign-in.
        let again = fixture.session.access_token().await.unwrap_err();
        assert!(
            matches!(again, AuthError::SignInRequired { .. }),
            "{again:?}"
        );
        assert_eq!(fixture.refreshes(), 1, "{status}");
    }
}

#[tokio::test]
async fn a_transient_refresh_failure_keeps_the_credentials() {
    let fixture = Fixture::new(Some(expired("old", Some("refresh-0")))).await;
    let before = fixture.env_file();
    fixture
        .mock
        .push_refresh_reply(RefreshReply::error(500, "server_error"));
    let err = fixture.session.access_token().await.unwrap_err();
    assert!(matches!(err, AuthError::RefreshFailed { .. }), "{err:?}");
    assert!(err.is_retryable());
    assert!(err.to_string().contains("500"), "{err}");
    assert!(fixture.session.is_signed_in());
    assert_eq!(fixture.env_file(), before);

    // The next request tries again, and succeeds.
    assert_eq!(
        fixture.session.access_token().await.unwrap(),
        Secret::new("mock-access-1")
    );
    assert_eq!(fixture.refreshes(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn callers_queued_behind_a_failed_refresh_share_its_failure() {
    let fixture = Fixture::new(Some(expired("old", Some("refresh-0")))).await;
    fixture.mock.set_token_delay(Duration::from_millis(400));
    fixture
        .mock
        .push_refresh_reply(RefreshReply::error(503, "unavailable"));
    let calls: Vec<_> = (0..10)
        .map(|_| {
            let session = Arc::clone(&fixture.session);
            tokio::spawn(async move { session.access_token().await })
        })
        .collect();
    for call in calls {
        let err = call.await.unwrap().unwrap_err();
        assert!(matches!(err, AuthError::RefreshFailed { .. }), "{err:?}");
    }
    assert_eq!(fixture.refreshes(), 1);
}

#[tokio::test]
async fn network_failures_are_transient() {
    let home = tempfile::tempdir().unwrap();
    // Nothing listens on this port once the listener is dropped.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let store = CredentialStore::file_only(home.path().join("env"));
    let tokens = expired("old", Some("refresh-0"));
    store.save(&tokens).unwrap();
    let session = OAuthSession::new(
        OAuthEndpoints::new(&format!("http://127.0.0.1:{port}")),
        http(),
        store,
        Some(tokens),
    );
    let err = session.access_token().await.unwrap_err();
    assert!(matches!(err, AuthError::RefreshFailed { .. }), "{err:?}");
    assert!(read_env_file(home.path()).contains("refresh-0"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refresh_finishing_after_sign_out_is_discarded() {
    let fixture = Fixture::new(Some(expired("old", Some("refresh-0")))).await;
    fixture.mock.set_token_delay(Duration::from_millis(300));
    let session = Arc::clone(&fixture.session);
    let call = tokio::spawn(async move { session.access_token().await });
    fixture.refresh_in_flight().await;
    assert_eq!(
        fixture.session.sign_out().unwrap(),
        vec![
            "XAI_ACCESS_TOKEN",
            "XAI_REFRESH_TOKEN",
            "XAI_TOKEN_EXPIRES_AT",
            "XAI_ACCOUNT_EMAIL"
        ]
    );

    let err = call.await.unwrap().unwrap_err();
    assert!(matches!(err, AuthError::SignInRequired { .. }), "{err:?}");
    assert_eq!(fixture.refreshes(), 1);
    assert!(!fixture.session.is_signed_in());
    assert_eq!(fixture.env_file(), "# keep me\nXAI_API_KEY=xai-key\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fatal_refresh_never_wipes_a_newer_sign_in() {
    let fixture = Fixture::new(Some(expired("old", Some("refresh-0")))).await;
    fixture.mock.set_token_delay(Duration::from_millis(300));
    fixture
        .mock
        .push_refresh_reply(RefreshReply::error(400, "invalid_grant"));
    let session = Arc::clone(&fixture.session);
    let call = tokio::spawn(async move { session.access_token().await });
    fixture.refresh_in_flight().await;
    fixture
        .session
        .sign_in(fresh("new-access", "new-refresh"))
        .unwrap();

    assert_eq!(call.await.unwrap().unwrap(), Secret::new("new-access"));
    assert!(fixture.session.is_signed_in());
    let env = fixture.env_file();
    assert!(env.contains("XAI_REFRESH_TOKEN=new-refresh\n"), "{env}");
}

#[tokio::test]
async fn a_fatal_refresh_spares_a_sign_in_stored_by_another_process() {
    let fixture = Fixture::new(Some(expired("old", Some("refresh-0")))).await;
    fixture
        .mock
        .push_refresh_reply(RefreshReply::error(401, "invalid_grant"));
    // `corvid login xai` ran in another process: the file has a newer sign-in.
    CredentialStore::file_only(fixture.home.path().join("env"))
        .save(&fresh("other-access", "other-refresh"))
        .unwrap();

    let err = fixture.session.access_token().await.unwrap_err();
    assert!(matches!(err, AuthError::SignInRequired { .. }), "{err:?}");
    assert!(fixture.env_file().contains("other-refresh"));
    // The next request picks the new sign-in up without a restart.
    assert_eq!(
        fixture.session.access_token().await.unwrap(),
        Secret::new("other-access")
    );
}

#[tokio::test]
async fn expired_without_a_refresh_token_requires_sign_in() {
    let fixture = Fixture::new(Some(expired("old", None))).await;
    let err = fixture.session.access_token().await.unwrap_err();
    assert!(matches!(err, AuthError::SignInRequired { .. }), "{err:?}");
    assert!(err.to_string().contains("no refresh token"), "{err}");
    assert_eq!(fixture.refreshes(), 0);
}

#[tokio::test]
async fn a_refresh_token_alone_refreshes_on_first_use() {
    let only_refresh = TokenSet {
        access_token: Secret::new(""),
        refresh_token: Some(Secret::new("refresh-0")),
        expires_at: Some(0),
        email: None,
    };
    let fixture = Fixture::new(None).await;
    let session = OAuthSession::new(
        OAuthEndpoints::new(&fixture.mock.base_url()),
        http(),
        CredentialStore::file_only(fixture.home.path().join("env")),
        Some(only_refresh),
    );
    assert_eq!(
        session.access_token().await.unwrap(),
        Secret::new("mock-access-1")
    );
    assert!(
        fixture
            .env_file()
            .contains("XAI_REFRESH_TOKEN=mock-refresh-1")
    );
}

#[tokio::test]
async fn a_signed_out_session_picks_up_a_stored_sign_in() {
    let fixture = Fixture::new(None).await;
    let err = fixture.session.access_token().await.unwrap_err();
    assert!(matches!(err, AuthError::SignInRequired { .. }), "{err:?}");
    fixture
        .session
        .store()
        .save(&fresh("stored-access", "stored-refresh"))
        .unwrap();
    assert_eq!(
        fixture.session.access_token().await.unwrap(),
        Secret::new("stored-access")
    );
    assert_eq!(fixture.session.email().as_deref(), Some("me@example.com"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_caller_does_not_lose_the_rotated_token() {
    let fixture = Fixture::new(Some(expired("old", Some("refresh-0")))).await;
    fixture.mock.set_token_delay(Duration::from_millis(200));
    let session = Arc::clone(&fixture.session);
    let call = tokio::spawn(async move { session.access_token().await });
    fixture.refresh_in_flight().await;
    call.abort();

    // The refresh finishes on its own and stores the rotated token.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !fixture.env_file().contains("mock-refresh-1") {
        assert!(tokio::time::Instant::now() < deadline, "never stored");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        fixture.session.access_token().await.unwrap(),
        Secret::new("mock-access-1")
    );
    assert_eq!(fixture.refreshes(), 1);
}

#[tokio::test]
async fn error_bodies_never_echo_the_refresh_token() {
    let fixture = Fixture::new(Some(expired("old", Some("refresh-0")))).await;
    fixture
        .mock
        .push_refresh_reply(RefreshReply::error(400, "token refresh-0 was revoked"));
    let message = fixture
        .session
        .access_token()
        .await
        .unwrap_err()
        .to_string();
    assert!(!message.contains("refresh-0"), "{message}");
    assert!(message.contains("token **** was revoked"), "{message}");
}

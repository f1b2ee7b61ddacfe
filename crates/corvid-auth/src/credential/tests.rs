use std::path::Path;

use corvid_config::AuthMode;
use corvid_test_support::oauth::MockOAuth;
use pretty_assertions::assert_eq;

use super::Credential;
use crate::test_util::{http, load_from, read_env_file, write_env_file};
use crate::{AuthError, LoginError, Secret, plan_lacks_api_access_message};

const BOTH: &str = "XAI_API_KEY=xai-key\nXAI_ACCESS_TOKEN=oauth-access\n\
                    XAI_REFRESH_TOKEN=oauth-refresh\nXAI_TOKEN_EXPIRES_AT=4000000000\n";

fn from_config(home: &Path, env: &[(&str, &str)]) -> Credential {
    Credential::from_config(&load_from(home, env), http())
}

#[tokio::test]
async fn api_key_mode_uses_only_the_api_key() {
    let home = tempfile::tempdir().unwrap();
    write_env_file(home.path(), BOTH);
    let credential = from_config(home.path(), &[]);
    assert!(
        matches!(&credential, Credential::ApiKey(_)),
        "{credential:?}"
    );
    assert_eq!(credential.mode(), AuthMode::ApiKey);
    assert_eq!(credential.bearer().await.unwrap(), Secret::new("xai-key"));
    assert_eq!(
        credential
            .after_unauthorized(&Secret::new("xai-key"))
            .await
            .unwrap(),
        None
    );

    // OAuth tokens do not stand in for a missing key.
    write_env_file(home.path(), "XAI_ACCESS_TOKEN=oauth-access\n");
    let credential = from_config(home.path(), &[]);
    assert!(matches!(
        credential,
        Credential::Missing {
            mode: AuthMode::ApiKey
        }
    ));
    let err = credential.bearer().await.unwrap_err();
    assert!(matches!(err, AuthError::NotConfigured { .. }));
    let message = err.to_string();
    assert!(
        message.starts_with("no xAI credential for auth_mode=api_key: set XAI_API_KEY"),
        "{message}"
    );
    assert!(message.contains("or the environment"), "{message}");
}

#[tokio::test]
async fn oauth_mode_uses_only_the_tokens() {
    let home = tempfile::tempdir().unwrap();
    write_env_file(home.path(), BOTH);
    let credential = from_config(home.path(), &[("CORVID_AUTH_MODE", "oauth")]);
    assert_eq!(credential.mode(), AuthMode::OAuth);
    assert_eq!(
        credential.bearer().await.unwrap(),
        Secret::new("oauth-access")
    );

    // The process environment beats the env file.
    let credential = from_config(
        home.path(),
        &[
            ("CORVID_AUTH_MODE", "oauth"),
            ("XAI_ACCESS_TOKEN", "env-access"),
        ],
    );
    assert_eq!(
        credential.bearer().await.unwrap(),
        Secret::new("env-access")
    );

    // An API key does not stand in for a sign-in.
    write_env_file(home.path(), "XAI_API_KEY=xai-key\n");
    let credential = from_config(home.path(), &[("SUPERGROK_ZED_AUTH_MODE", "oauth")]);
    assert!(matches!(
        credential,
        Credential::Missing {
            mode: AuthMode::OAuth
        }
    ));
    let message = credential.bearer().await.unwrap_err().to_string();
    assert!(
        message.starts_with("no xAI credential for auth_mode=oauth"),
        "{message}"
    );
    assert!(message.contains("run `corvid login xai`"), "{message}");
}

#[tokio::test]
async fn oauth_with_only_a_refresh_token_refreshes_on_first_use() {
    let mock = MockOAuth::start().await;
    let home = tempfile::tempdir().unwrap();
    write_env_file(home.path(), "XAI_REFRESH_TOKEN=refresh-0\n");
    let base = mock.base_url();
    let credential = from_config(
        home.path(),
        &[
            ("CORVID_AUTH_MODE", "oauth"),
            ("CORVID_XAI_AUTH_URL", &base),
        ],
    );
    assert_eq!(
        credential.bearer().await.unwrap(),
        Secret::new("mock-access-1")
    );
    assert_eq!(mock.token_requests("refresh_token"), 1);
    assert!(read_env_file(home.path()).contains("XAI_REFRESH_TOKEN=mock-refresh-1"));

    // An upstream 401: one forced refresh, and the new token to retry with.
    let renewed = credential
        .after_unauthorized(&Secret::new("mock-access-1"))
        .await
        .unwrap();
    assert_eq!(renewed, Some(Secret::new("mock-access-2")));
}

#[test]
fn only_transient_refresh_failures_are_retryable() {
    assert!(
        AuthError::RefreshFailed {
            message: "503".into()
        }
        .is_retryable()
    );
    for err in [
        AuthError::NotConfigured {
            mode: AuthMode::OAuth,
        },
        AuthError::SignInRequired { reason: "x".into() },
        AuthError::Login(LoginError::MissingCode),
    ] {
        assert!(!err.is_retryable(), "{err:?}");
    }
}

#[test]
fn the_plan_message_points_at_api_key_mode() {
    assert_eq!(
        plan_lacks_api_access_message(),
        "signed in, but this SuperGrok plan may not include API access; set auth_mode = \
         \"api_key\" and XAI_API_KEY from console.x.ai"
    );
}

#[test]
fn debug_output_never_shows_a_secret() {
    let home = tempfile::tempdir().unwrap();
    write_env_file(home.path(), BOTH);
    for mode in ["api_key", "oauth"] {
        let credential = from_config(home.path(), &[("CORVID_AUTH_MODE", mode)]);
        let printed = format!("{credential:?}");
        for secret in ["xai-key", "oauth-access", "oauth-refresh"] {
            assert!(!printed.contains(secret), "{mode}: {printed}");
        }
    }
}

#[tokio::test]
async fn other_providers_use_their_own_key_variables() {
    let home = tempfile::tempdir().unwrap();
    write_env_file(home.path(), "GOOGLE_API_KEY=g-key\nXAI_API_KEY=xai-key\n");
    let loaded = load_from(home.path(), &[]);
    let provider = |name: &str| loaded.config.provider(name).unwrap().clone();

    let gemini = Credential::for_provider(&provider("gemini"), &loaded, http());
    assert_eq!(
        gemini.bearer().await.unwrap(),
        Secret::new("g-key"),
        "the second variable counts"
    );
    assert!(gemini.is_available());

    let anthropic = Credential::for_provider(&provider("anthropic"), &loaded, http());
    assert!(!anthropic.is_available());
    let message = anthropic.bearer().await.unwrap_err().to_string();
    assert!(
        message.contains("`anthropic`") && message.contains("ANTHROPIC_API_KEY"),
        "{message}"
    );

    let xai = Credential::for_provider(&provider("xai"), &loaded, http());
    assert_eq!(xai.bearer().await.unwrap(), Secret::new("xai-key"));

    let ollama = Credential::for_provider(&provider("ollama"), &loaded, http());
    assert!(ollama.is_none() && ollama.is_available());
    assert!(
        !format!("{gemini:?}").contains("g-key"),
        "Debug never shows a key"
    );
}

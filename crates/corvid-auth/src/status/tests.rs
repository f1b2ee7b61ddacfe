use pretty_assertions::assert_eq;

use super::{AuthStatus, describe_duration, describe_expiry, format_utc};
use crate::CredentialStore;
use crate::store::TokenSource;
use crate::test_util::{load_from, write_env_file};

#[test]
fn utc_formatting() {
    assert_eq!(format_utc(0), "1970-01-01 00:00 UTC");
    assert_eq!(format_utc(951_782_400), "2000-02-29 00:00 UTC");
    assert_eq!(format_utc(1_900_000_000), "2030-03-17 17:46 UTC");
    assert_eq!(format_utc(-60), "1969-12-31 23:59 UTC");
}

#[test]
fn durations_and_expiry() {
    assert_eq!(describe_duration(1), "1 second");
    assert_eq!(describe_duration(59), "59 seconds");
    assert_eq!(describe_duration(60), "1 minute");
    assert_eq!(describe_duration(3_120), "52 minutes");
    assert_eq!(describe_duration(7_200), "2 hours");
    assert_eq!(describe_duration(200_000), "2 days");
    assert_eq!(
        describe_expiry(1_900_000_000, 1_900_000_000 - 3_120),
        "2030-03-17 17:46 UTC (in 52 minutes)"
    );
    assert_eq!(
        describe_expiry(1_900_000_000, 1_900_000_000 + 10_800),
        "2030-03-17 17:46 UTC (expired 3 hours ago)"
    );
}

#[test]
fn status_reports_without_secrets() {
    let home = tempfile::tempdir().unwrap();
    write_env_file(
        home.path(),
        "XAI_API_KEY=xai-secret-key\nXAI_ACCESS_TOKEN=secret-access\nXAI_REFRESH_TOKEN=secret-refresh\n\
         XAI_TOKEN_EXPIRES_AT=1900000000\nXAI_ACCOUNT_EMAIL=me@example.com\n",
    );
    let loaded = load_from(home.path(), &[("CORVID_AUTH_MODE", "oauth")]);
    let status = AuthStatus::with_store(
        &loaded,
        &CredentialStore::file_only(home.path().join("env")),
    );
    assert_eq!(
        status,
        AuthStatus {
            mode: corvid_config::AuthMode::OAuth,
            signed_in: true,
            email: Some("me@example.com".into()),
            expires_at: Some(1_900_000_000),
            has_access_token: true,
            has_refresh_token: true,
            has_api_key: true,
            token_source: Some(TokenSource::EnvFile),
            backend: "env file only",
            env_file: home.path().join("env"),
        }
    );
    let printed = format!("{status:?}");
    assert!(!printed.contains("secret"), "{printed}");
}

#[test]
fn status_when_signed_out() {
    let home = tempfile::tempdir().unwrap();
    let loaded = load_from(home.path(), &[]);
    let status = AuthStatus::from_loaded(&loaded);
    assert_eq!(status.mode, corvid_config::AuthMode::ApiKey);
    assert!(!status.signed_in);
    assert!(!status.has_api_key);
    assert_eq!(status.token_source, None);
    assert_eq!(status.backend, "env file only");
}

#[test]
fn rendered_status_in_oauth_mode() {
    let home = tempfile::tempdir().unwrap();
    write_env_file(
        home.path(),
        "XAI_API_KEY=xai-secret-key\nXAI_ACCESS_TOKEN=secret-access\nXAI_REFRESH_TOKEN=secret-refresh\n\
         XAI_TOKEN_EXPIRES_AT=1900000000\nXAI_ACCOUNT_EMAIL=me@example.com\n",
    );
    let loaded = load_from(home.path(), &[("CORVID_AUTH_MODE", "oauth")]);
    let store = CredentialStore::file_only(home.path().join("env"));
    let status = AuthStatus::with_store(&loaded, &store);
    let env_file = home.path().join("env").display().to_string();
    assert_eq!(
        status.render(1_900_000_000 - 3_120),
        format!(
            "auth mode:     oauth\n\
             xAI sign-in:   signed in as me@example.com (from the env file)\n\
             access token:  expires 2030-03-17 17:46 UTC (in 52 minutes)\n\
             refresh token: stored\n\
             xAI API key:   set, but unused while auth_mode = \"oauth\"\n\
             env file:      {env_file}\n"
        )
    );
    assert!(status.render(1_900_000_000 + 7_200).contains(
        "access token:  expired 2 hours ago (2030-03-17 17:46 UTC); refreshed on next use\n"
    ));
    assert!(!status.render(0).contains("secret-"));
}

#[test]
fn rendered_status_in_api_key_mode() {
    let home = tempfile::tempdir().unwrap();
    write_env_file(home.path(), "XAI_REFRESH_TOKEN=secret-refresh\n");
    let loaded = load_from(home.path(), &[]);
    let store = CredentialStore::file_only(home.path().join("env"));
    let text = AuthStatus::with_store(&loaded, &store).render(0);
    let env_file = home.path().join("env").display().to_string();
    assert_eq!(
        text,
        format!(
            "auth mode:     api_key\n\
             xAI API key:   not set (XAI_API_KEY in {env_file} or the environment)\n\
             xAI sign-in:   signed in (from the env file)\n\
             \x20              (unused while auth_mode = \"api_key\"; set auth_mode = \"oauth\" to use it)\n\
             env file:      {env_file}\n"
        )
    );
}

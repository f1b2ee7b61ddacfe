use std::sync::Arc;

use pretty_assertions::assert_eq;

use super::{CredentialStore, TokenSource, token_set_from, tokens_from_loaded};
use crate::keyring::tests::fake_secret_tool;
use crate::test_util::{load_from, read_env_file, write_env_file};
use crate::{Secret, TokenSet};

fn tokens(access: &str, refresh: &str) -> TokenSet {
    TokenSet {
        access_token: Secret::new(access),
        refresh_token: Some(Secret::new(refresh)),
        expires_at: Some(1_900_000_000),
        email: Some("me@example.com".into()),
    }
}

#[test]
fn save_writes_the_env_file_0600_and_keeps_other_lines() {
    let home = tempfile::tempdir().unwrap();
    write_env_file(
        home.path(),
        "# my keys\nXAI_API_KEY=xai-key\nXAI_ACCESS_TOKEN=stale\nOTHER='x y'\n",
    );
    let store = CredentialStore::file_only(home.path().join("env"));
    store.save(&tokens("acc-1", "ref-1")).unwrap();
    assert_eq!(
        read_env_file(home.path()),
        "# my keys\nXAI_API_KEY=xai-key\nXAI_ACCESS_TOKEN=acc-1\nOTHER='x y'\n\
         XAI_REFRESH_TOKEN=ref-1\nXAI_TOKEN_EXPIRES_AT=1900000000\nXAI_ACCOUNT_EMAIL=me@example.com\n"
    );
    corvid_test_support::modes::assert_owner_only(&home.path().join("env"));
    assert_eq!(
        store.load().unwrap(),
        Some((tokens("acc-1", "ref-1"), TokenSource::EnvFile))
    );
    assert_eq!(store.backend(), "env file only");
}

#[test]
fn save_creates_a_missing_file_and_directory() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("nested/dir/env");
    let store = CredentialStore::file_only(path.clone());
    let mut set = tokens("a", "r");
    set.email = None;
    set.expires_at = None;
    store.save(&set).unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "XAI_ACCESS_TOKEN=a\nXAI_REFRESH_TOKEN=r\n"
    );
}

#[test]
fn clear_removes_only_the_sign_in() {
    let home = tempfile::tempdir().unwrap();
    write_env_file(home.path(), "XAI_API_KEY=k\n");
    let store = CredentialStore::file_only(home.path().join("env"));
    store.save(&tokens("a", "r")).unwrap();
    assert_eq!(
        store.clear().unwrap(),
        vec![
            "XAI_ACCESS_TOKEN",
            "XAI_REFRESH_TOKEN",
            "XAI_TOKEN_EXPIRES_AT",
            "XAI_ACCOUNT_EMAIL"
        ]
    );
    assert_eq!(read_env_file(home.path()), "XAI_API_KEY=k\n");
    assert_eq!(store.clear().unwrap(), Vec::<&str>::new());
    assert_eq!(store.load().unwrap(), None);
}

#[test]
fn clear_if_refresh_token_spares_a_newer_sign_in() {
    let home = tempfile::tempdir().unwrap();
    let store = CredentialStore::file_only(home.path().join("env"));
    store.save(&tokens("new-access", "new-refresh")).unwrap();
    assert!(
        !store
            .clear_if_refresh_token(&Secret::new("old-refresh"))
            .unwrap()
    );
    assert!(read_env_file(home.path()).contains("new-refresh"));
    assert!(
        store
            .clear_if_refresh_token(&Secret::new("new-refresh"))
            .unwrap()
    );
    assert_eq!(read_env_file(home.path()), "");
}

#[test]
fn the_keyring_gets_a_copy_and_is_the_fallback() {
    let home = tempfile::tempdir().unwrap();
    let tools = tempfile::tempdir().unwrap();
    let keyring = Arc::new(fake_secret_tool(tools.path()));
    let store = CredentialStore::new(home.path().join("env"), Some(keyring));
    assert_eq!(store.backend(), "Secret Service (secret-tool)");
    store.save(&tokens("a", "r")).unwrap();
    assert!(tools.path().join("items/xai-oauth").exists());

    // The env file loses the sign-in (edited by hand): the keyring copy still has it.
    write_env_file(home.path(), "");
    assert_eq!(
        store.load().unwrap(),
        Some((tokens("a", "r"), TokenSource::Keyring))
    );
    let loaded = load_from(home.path(), &[]);
    assert_eq!(
        tokens_from_loaded(&loaded, &store),
        Some((tokens("a", "r"), TokenSource::Keyring))
    );

    store.clear().unwrap();
    assert!(!tools.path().join("items/xai-oauth").exists());
    assert_eq!(store.load().unwrap(), None);
}

#[test]
fn a_refresh_token_alone_is_a_sign_in_that_refreshes_first() {
    let set = token_set_from(|name| (name == "XAI_REFRESH_TOKEN").then(|| "r".to_owned())).unwrap();
    assert_eq!(set.access_token, Secret::new(""));
    assert_eq!(set.refresh_token, Some(Secret::new("r")));
    assert!(set.expires_within(60, 0));
    assert_eq!(token_set_from(|_| Some("  ".to_owned())), None);
}

#[test]
fn tokens_from_loaded_names_the_source() {
    let home = tempfile::tempdir().unwrap();
    write_env_file(
        home.path(),
        "XAI_ACCESS_TOKEN=file-a\nXAI_REFRESH_TOKEN=file-r\nXAI_TOKEN_EXPIRES_AT=123\n",
    );
    let store = CredentialStore::file_only(home.path().join("env"));
    let loaded = load_from(home.path(), &[]);
    let (set, source) = tokens_from_loaded(&loaded, &store).unwrap();
    assert_eq!(source, TokenSource::EnvFile);
    assert_eq!(set.expires_at, Some(123));

    let loaded = load_from(home.path(), &[("XAI_ACCESS_TOKEN", "env-a")]);
    let (set, source) = tokens_from_loaded(&loaded, &store).unwrap();
    assert_eq!(source, TokenSource::Environment);
    assert_eq!(set.access_token, Secret::new("env-a"));
    assert_eq!(set.refresh_token, Some(Secret::new("file-r")));
}

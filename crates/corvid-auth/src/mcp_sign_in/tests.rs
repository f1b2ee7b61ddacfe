use std::sync::Arc;

use pretty_assertions::assert_eq;

use super::*;
use crate::test_util::{MemoryKeyring, read_env_file, write_env_file};

#[test]
fn sign_ins_are_kept_apart_by_key_in_the_env_file_and_the_keyring() {
    let home = tempfile::tempdir().unwrap();
    write_env_file(home.path(), "# mine\nXAI_API_KEY=k\n");
    let keyring = Arc::new(MemoryKeyring::default());
    let store = McpSignInStore::new(home.path().join("env"), Some(keyring.clone()));
    store
        .save("aa11", &Secret::new(r#"{"t":"one's"}"#))
        .unwrap();
    store.save("bb22", &Secret::new(r#"{"t":"two"}"#)).unwrap();
    assert_eq!(
        store.load("aa11").unwrap().unwrap().expose(),
        r#"{"t":"one's"}"#
    );
    assert_eq!(
        store.load("bb22").unwrap().unwrap().expose(),
        r#"{"t":"two"}"#
    );
    assert!(store.load("cc33").unwrap().is_none());
    let text = read_env_file(home.path());
    assert!(text.starts_with("# mine\nXAI_API_KEY=k\n"), "{text}");
    assert!(text.contains("CORVID_MCP_OAUTH_AA11="), "{text}");
    corvid_test_support::modes::assert_owner_only(&home.path().join("env"));
    assert_eq!(
        keyring
            .0
            .lock()
            .unwrap()
            .get("mcp-oauth-aa11")
            .map(String::as_str),
        Some(r#"{"t":"one's"}"#)
    );

    assert!(store.forget("aa11").unwrap());
    assert!(store.load("aa11").unwrap().is_none());
    assert!(!store.forget("aa11").unwrap(), "nothing left to remove");
    assert!(keyring.0.lock().unwrap().get("mcp-oauth-aa11").is_none());
    assert!(store.load("bb22").unwrap().is_some(), "the other stays");
    assert!(read_env_file(home.path()).contains("XAI_API_KEY=k"));
}

#[test]
fn the_keyring_copy_is_read_when_the_env_file_has_none() {
    let home = tempfile::tempdir().unwrap();
    let keyring = Arc::new(MemoryKeyring::default());
    keyring
        .0
        .lock()
        .unwrap()
        .insert("mcp-oauth-aa11".to_owned(), "{}".to_owned());
    let store = McpSignInStore::new(home.path().join("env"), Some(keyring));
    assert_eq!(store.load("aa11").unwrap().unwrap().expose(), "{}");
}

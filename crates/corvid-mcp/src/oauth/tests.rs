use std::path::Path;

use corvid_config::{McpScope, parse_mcp_json};
use pretty_assertions::assert_eq;

use super::*;

fn server(scope: McpScope, name: &str, url: &str) -> McpServer {
    let json = serde_json::json!({"mcpServers": {name: {"type": "http", "url": url}}});
    parse_mcp_json(&json.to_string(), Path::new("/p/.corvid/mcp.json"), scope)
        .unwrap()
        .servers
        .remove(0)
}

fn credentials(client_id: &str, refresh: Option<&str>) -> StoredCredentials {
    let mut tokens =
        serde_json::json!({"access_token": "at-1", "token_type": "bearer", "expires_in": 60});
    if let Some(refresh) = refresh {
        tokens["refresh_token"] = refresh.into();
    }
    StoredCredentials::new(
        client_id.to_owned(),
        Some(serde_json::from_value(tokens).unwrap()),
        vec!["read".to_owned()],
        Some(1),
    )
}

#[test]
fn keys_differ_by_configuration_name_and_url() {
    let one = tempfile::tempdir().unwrap();
    let two = tempfile::tempdir().unwrap();
    let global = server(McpScope::Global, "docs", "https://a.example/mcp");
    let project = server(McpScope::Project, "docs", "https://a.example/mcp");
    let key_of = |server: &McpServer, folder: &Path, url: &str| {
        key(&owner(server, folder), &server.name, url)
    };
    let keys = [
        key_of(&global, one.path(), "https://a.example/mcp"),
        key_of(&global, one.path(), "https://b.example/mcp"),
        key_of(&project, one.path(), "https://a.example/mcp"),
        key_of(&project, two.path(), "https://a.example/mcp"),
        key_of(
            &server(McpScope::Global, "other", "https://a.example/mcp"),
            one.path(),
            "https://a.example/mcp",
        ),
    ];
    for (i, a) in keys.iter().enumerate() {
        assert_eq!(a.len(), 24);
        for b in &keys[i + 1..] {
            assert_ne!(a, b);
        }
    }
    // A global server's sign-in does not depend on the project a session runs in.
    assert_eq!(
        key_of(&global, one.path(), "https://a.example/mcp"),
        key_of(&global, two.path(), "https://a.example/mcp")
    );
}

#[tokio::test]
async fn a_sign_in_is_used_only_by_the_definition_it_was_made_for() {
    let home = tempfile::tempdir().unwrap();
    let store = OAuthStore::new(McpSignInStore::file_only(home.path().join("env")));
    let docs = server(McpScope::Global, "docs", "https://a.example/mcp");
    let sign_in = SignIn::new(
        store.store.clone(),
        &docs,
        home.path(),
        "https://a.example/mcp",
    );
    sign_in
        .save(credentials("client-1", Some("rt-1")))
        .await
        .unwrap();
    assert!(store.is_signed_in(&docs, home.path(), "https://a.example/mcp"));
    assert!(!store.is_signed_in(&docs, home.path(), "https://b.example/mcp"));
    let project = server(McpScope::Project, "docs", "https://a.example/mcp");
    assert!(!store.is_signed_in(&project, home.path(), "https://a.example/mcp"));

    // A record copied under another definition's key is not taken for it.
    let other = SignIn::new(
        store.store.clone(),
        &project,
        home.path(),
        "https://a.example/mcp",
    );
    let text = store.store.load(&sign_in.key).unwrap().unwrap();
    store.store.save(&other.key, &text).unwrap();
    assert!(other.load().await.unwrap().is_none());
}

#[tokio::test]
async fn a_refused_refresh_drops_the_tokens_and_keeps_the_client() {
    let home = tempfile::tempdir().unwrap();
    let store = McpSignInStore::file_only(home.path().join("env"));
    let docs = server(McpScope::Global, "docs", "https://a.example/mcp");
    let sign_in = SignIn::new(store, &docs, home.path(), "https://a.example/mcp");
    sign_in
        .save(credentials("client-1", Some("rt-new")))
        .await
        .unwrap();
    // A refusal of an older refresh token (another process signed in since) changes nothing.
    sign_in
        .on_refresh_token_rejected(&credentials("client-1", Some("rt-old")))
        .await
        .unwrap();
    assert!(sign_in.has_tokens());
    sign_in
        .on_refresh_token_rejected(&credentials("client-1", Some("rt-new")))
        .await
        .unwrap();
    assert!(!sign_in.has_tokens());
    let kept = sign_in.load().await.unwrap().unwrap();
    assert_eq!(kept.client_id, "client-1");
}

#[test]
fn no_token_reaches_debug_output() {
    let home = tempfile::tempdir().unwrap();
    let text = format!("{:?}", credentials("client-1", Some("rt-secret")));
    assert!(
        !text.contains("at-1") && !text.contains("rt-secret"),
        "{text}"
    );
    let store = OAuthStore::new(McpSignInStore::file_only(home.path().join("env")));
    assert!(!format!("{store:?}").contains("rt-secret"));
}

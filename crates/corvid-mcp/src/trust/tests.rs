use std::path::Path;

use corvid_config::{McpScope, McpServer, parse_mcp_json};

use super::{TrustStore, fingerprint};

fn server(scope: McpScope, command: &str) -> McpServer {
    let text = serde_json::json!({"mcpServers": {"docs": {"command": command, "args": ["serve"]}}});
    let mut file =
        parse_mcp_json(&text.to_string(), Path::new("/p/.corvid/mcp.json"), scope).unwrap();
    file.servers.remove(0)
}

#[test]
fn a_project_server_is_untrusted_until_trusted_and_again_when_its_command_changes() {
    let data = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    let store = TrustStore::in_data_dir(data.path());
    let original = server(McpScope::Project, "docs-server");
    assert!(!store.is_trusted(project.path(), &original));

    store.trust(project.path(), &original).unwrap();
    assert!(store.is_trusted(project.path(), &original));
    // Per project: the same definition elsewhere asks again.
    assert!(!store.is_trusted(other.path(), &original));
    // A changed command is a new definition.
    let changed = server(McpScope::Project, "curl-to-somewhere");
    assert_ne!(fingerprint(&original), fingerprint(&changed));
    assert!(!store.is_trusted(project.path(), &changed));
    // Kept in corvid's data folder, not in the project.
    assert!(data.path().join("mcp-trust.json").exists());
    assert!(std::fs::read_dir(project.path()).unwrap().next().is_none());
}

#[test]
fn the_users_own_and_the_editors_servers_need_no_trust() {
    let data = tempfile::tempdir().unwrap();
    let store = TrustStore::in_data_dir(data.path());
    for scope in [McpScope::Global, McpScope::Editor] {
        assert!(store.is_trusted(Path::new("/p"), &server(scope, "docs-server")));
    }
}

#[test]
fn a_broken_trust_file_trusts_nothing() {
    let data = tempfile::tempdir().unwrap();
    std::fs::write(data.path().join("mcp-trust.json"), "{not json").unwrap();
    let store = TrustStore::in_data_dir(data.path());
    assert!(!store.is_trusted(Path::new("/p"), &server(McpScope::Project, "docs-server")));
    assert!(
        store
            .trust(Path::new("/p"), &server(McpScope::Project, "docs-server"))
            .is_err()
    );
}

#[test]
fn other_entries_share_the_store_without_touching_servers() {
    let data = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let store = TrustStore::in_data_dir(data.path());
    let docs = server(McpScope::Project, "docs-server");
    store.trust(project.path(), &docs).unwrap();

    let key = "hooks:.claude/settings.json";
    assert!(!store.is_trusted_entry(project.path(), key, "abc"));
    store.trust_entry(project.path(), key, "abc").unwrap();
    assert!(store.is_trusted_entry(project.path(), key, "abc"));
    assert!(!store.is_trusted_entry(project.path(), key, "changed"));
    assert!(store.is_trusted(project.path(), &docs));
}

//! A project's own servers (`.corvid/mcp.json`, perhaps from a cloned repository) start only
//! once the user trusts them; config.toml's start without asking. No MCP server is needed: a
//! "server" that leaves a mark when it runs shows whether it was started.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use corvid_config::{McpScope, read_project_mcp};
use corvid_mcp::{McpPlugin, ServerState, TrustStore};
use corvid_tools::{Sandbox, TrustServerError};
use serde_json::json;

/// A project whose `.corvid/mcp.json` defines `marker`, a program that creates `mark` in
/// `folder` when it runs (and then exits, so it fails as an MCP server).
fn project_with_marker(folder: &Path) -> tempfile::TempDir {
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join(".corvid")).unwrap();
    let mark = folder.join("mark");
    std::fs::write(
        project.path().join(".corvid/mcp.json"),
        json!({"mcpServers": {"marker": {
            "command": "sh",
            "args": ["-c", format!("touch '{}'", mark.display())],
            "startup_timeout_sec": 10
        }}})
        .to_string(),
    )
    .unwrap();
    project
}

fn plugin() -> McpPlugin {
    McpPlugin::new(Vec::new(), 100, Arc::new(|_: &str| None))
}

async fn look(plugin: &McpPlugin, project: &Path) -> (ServerState, Vec<String>) {
    let (manager, mut notices) = plugin.manager(project, Sandbox::off());
    manager.start();
    let tools = tokio::time::timeout(Duration::from_secs(30), manager.tools(&|_| false))
        .await
        .unwrap();
    assert!(tools.is_empty());
    notices.extend(manager.take_notices());
    let state = manager.statuses().remove(0).state;
    manager.shutdown().await;
    (state, notices)
}

#[tokio::test(flavor = "multi_thread")]
async fn an_untrusted_project_server_is_never_started_and_the_notice_says_how_to_trust_it() {
    let marks = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let project = project_with_marker(marks.path());
    let plugin = plugin().with_trust(TrustStore::in_data_dir(data.path()));

    let (state, notices) = look(&plugin, project.path()).await;
    assert_eq!(state, ServerState::Untrusted);
    assert!(!marks.path().join("mark").exists(), "the server ran");
    let notice = notices.join("\n");
    assert!(notice.contains("`marker`"), "{notice}");
    assert!(notice.contains("runs `sh -c touch"), "{notice}");
    assert!(notice.contains(".corvid/mcp.json"), "{notice}");
    assert!(notice.contains("corvid mcp trust marker"), "{notice}");

    // Without any store nothing is trusted either.
    let (state, _) = look(&self::plugin(), project.path()).await;
    assert_eq!(state, ServerState::Untrusted);
    assert!(!marks.path().join("mark").exists(), "the server ran");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_trusted_project_server_starts_until_its_definition_changes() {
    let marks = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let project = project_with_marker(marks.path());
    let store = TrustStore::in_data_dir(data.path());
    let server = read_project_mcp(project.path()).unwrap().servers.remove(0);
    assert_eq!(server.origin.scope, McpScope::Project);
    store.trust(project.path(), &server).unwrap();
    let plugin = plugin().with_trust(store);

    let (state, notices) = look(&plugin, project.path()).await;
    assert!(matches!(state, ServerState::Failed(_)), "{state:?}");
    // Only that it failed (it is no MCP server): nothing about trust.
    assert!(
        !notices.iter().any(|notice| notice.contains("trust")),
        "{notices:?}"
    );
    assert!(
        marks.path().join("mark").exists(),
        "the trusted server did not run"
    );

    // The repository changes the command: asked again, not started.
    std::fs::remove_file(marks.path().join("mark")).unwrap();
    let text = std::fs::read_to_string(project.path().join(".corvid/mcp.json")).unwrap();
    std::fs::write(
        project.path().join(".corvid/mcp.json"),
        text.replace("touch", "touch -m"),
    )
    .unwrap();
    let (state, _) = look(&plugin, project.path()).await;
    assert_eq!(state, ServerState::Untrusted);
    assert!(
        !marks.path().join("mark").exists(),
        "the changed server ran"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn trusting_a_held_server_in_the_session_keeps_the_trust_and_starts_it_once() {
    let marks = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let project = project_with_marker(marks.path());
    let store = TrustStore::in_data_dir(data.path());
    let plugin = plugin().with_trust(store.clone());
    let (manager, _) = plugin.manager(project.path(), Sandbox::off());
    manager.start();
    assert_eq!(manager.statuses()[0].state, ServerState::Untrusted);
    assert!(
        manager
            .take_notices()
            .iter()
            .any(|notice| notice.contains("`/mcp trust marker` starts it now")),
    );

    // A failed keep starts nothing.
    let refused = manager.admit("marker", |_| {
        Err(TrustServerError::Keep("the disk is full".into()))
    });
    assert_eq!(refused.unwrap_err().to_string(), "the disk is full");
    assert_eq!(manager.statuses()[0].state, ServerState::Untrusted);

    let server = read_project_mcp(project.path()).unwrap().servers.remove(0);
    manager
        .admit("marker", |held| {
            store
                .trust(project.path(), held)
                .map_err(|error| TrustServerError::Keep(Box::new(error)))
        })
        .unwrap();
    assert!(store.is_trusted(project.path(), &server));
    // It started (the marker ran), and the notice about trust is gone.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !marks.path().join("mark").exists() {
        assert!(std::time::Instant::now() < deadline, "the server never ran");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let _ = tokio::time::timeout(Duration::from_secs(30), manager.tools(&|_| false)).await;
    assert!(
        !manager
            .take_notices()
            .iter()
            .any(|notice| notice.contains("/mcp trust")),
    );
    // Only a held server can be admitted, once.
    let again = manager.admit("marker", |_| Ok(())).unwrap_err();
    assert!(
        matches!(&again, TrustServerError::NotWaiting { name } if name == "marker"),
        "{again}"
    );
    let unknown = manager.admit("nobody", |_| Ok(())).unwrap_err();
    assert!(
        unknown.to_string().contains("no MCP server `nobody`"),
        "{unknown}"
    );
    manager.shutdown().await;
}

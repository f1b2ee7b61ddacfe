//! No token in any log line (see the binary's docs).

use std::time::Duration;

use corvid_mcp::oauth::login;
use corvid_mcp::{McpManager, ServerState};
use serde_json::json;

use super::oauth_support::{
    Fixture, browser, call, env_text, environment, global_server, state_of,
};
use super::support::python;

#[tokio::test]
async fn no_token_reaches_a_log_line() {
    let Some(python) = python() else { return };
    let captured = corvid_test_support::logs::capture("trace");
    let fixture = Fixture::start(&python, &["--access-ttl", "2"]).await;
    let home = tempfile::tempdir().unwrap();
    let server = global_server(&fixture.url(), json!({}));
    let environment = environment(home.path(), home.path());
    login(&server, &environment, browser(None)).await.unwrap();
    let mut tokens = tokens_in(&env_text(home.path()));
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let manager = McpManager::new(vec![server], 100, environment);
    assert_eq!(state_of(&manager).await, ServerState::Ready);
    let output = call(&manager, "mcp__docs__echo", json!({"text": "x"})).await;
    assert_eq!(output.text, "x");
    manager.shutdown().await;
    tokens.extend(tokens_in(&env_text(home.path())));
    assert!(fixture.count("token", Some("refresh_token")) >= 1);
    assert_eq!(tokens.len(), 4, "two sign-ins' tokens: {tokens:?}");

    let logs = captured.text();
    assert!(logs.lines().count() > 20, "the logs were captured: {logs}");
    for token in &tokens {
        let line = logs.lines().find(|line| line.contains(token.as_str()));
        assert!(line.is_none(), "a token in a log line: {line:?}");
    }
}

/// The access and refresh tokens in an env file's text (the fixture's start `at-` / `rt-`).
fn tokens_in(text: &str) -> Vec<String> {
    text.split(['"', '\''])
        .filter(|part| part.starts_with("at-") || part.starts_with("rt-"))
        .map(str::to_owned)
        .collect()
}

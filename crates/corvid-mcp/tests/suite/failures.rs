//! A server on the official Python SDK that hangs, crashes, fails, floods and changes its tools.

use std::time::{Duration, Instant};

use corvid_mcp::ServerState;
use corvid_tools::Cancellation;
use serde_json::{Value, json};

use super::support::{fixture, manager, manager_with, names, python, servers, tools};

fn fixture_server(python: &std::path::Path, mode: &str, extra: Value) -> Value {
    let mut entry = json!({"command": python, "args": [fixture(), mode]});
    if let (Some(entry), Some(extra)) = (entry.as_object_mut(), extra.as_object()) {
        entry.extend(extra.clone());
    }
    entry
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_hangs_at_start_is_left_out_with_a_notice_and_blocks_nothing_else() {
    let Some(python) = python() else { return };
    let project = tempfile::tempdir().unwrap();
    let manager = manager(
        servers(&json!({"mcpServers": {
            "stuck": fixture_server(&python, "hang", json!({"startup_timeout_ms": 1500})),
            "fine": fixture_server(&python, "serve", json!({})),
        }})),
        project.path(),
        &[],
    );
    let started = Instant::now();
    manager.start();
    let offered = names(&tools(&manager).await);
    let waited = started.elapsed();
    assert!(waited < Duration::from_secs(15), "{waited:?}");
    assert!(waited >= Duration::from_millis(1400), "{waited:?}");
    assert!(
        offered.iter().any(|name| name == "mcp__fine__echo"),
        "{offered:?}"
    );
    assert!(
        !offered.iter().any(|name| name.starts_with("mcp__stuck__")),
        "{offered:?}"
    );
    let notices = manager.take_notices();
    assert!(
        notices
            .iter()
            .any(|notice| notice.contains("`stuck`")
                && notice.contains("did not start within 1.5 s")),
        "{notices:?}"
    );
    assert!(matches!(
        manager.statuses()[0].state,
        ServerState::Failed(_)
    ));
    // The next turn does not wait for it again; the notice stays while it holds.
    let again = Instant::now();
    tools(&manager).await;
    assert!(again.elapsed() < Duration::from_secs(1));
    assert_eq!(manager.take_notices(), notices);
    manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crash_mid_call_is_reported_and_the_server_is_restarted() {
    let Some(python) = python() else { return };
    let project = tempfile::tempdir().unwrap();
    let manager = manager(
        servers(&json!({"mcpServers": {"fixture": fixture_server(&python, "serve", json!({}))}})),
        project.path(),
        &[],
    );
    tools(&manager).await;
    let first = manager
        .call("mcp__fixture__pid", json!({}), Cancellation::never())
        .await;
    assert!(!first.is_error, "{}", first.text);
    let output = manager
        .call("mcp__fixture__crash", json!({}), Cancellation::never())
        .await;
    assert!(output.is_error);
    assert!(
        output.text.contains("stopped during the call"),
        "{}",
        output.text
    );
    assert!(
        output.text.contains("crashing on purpose"),
        "{}",
        output.text
    );
    let offered = names(&tools(&manager).await);
    assert!(
        offered.iter().any(|name| name == "mcp__fixture__pid"),
        "{offered:?}"
    );
    let second = manager
        .call("mcp__fixture__pid", json!({}), Cancellation::never())
        .await;
    assert!(!second.is_error, "{}", second.text);
    assert_ne!(first.text, second.text, "a new process");
    let notices = manager.take_notices();
    assert!(
        notices.iter().any(|notice| notice.contains("restarting")),
        "{notices:?}"
    );
    manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn errors_huge_output_and_slow_tools_come_back_as_results() {
    let Some(python) = python() else { return };
    let project = tempfile::tempdir().unwrap();
    let manager = manager(
        servers(
            &json!({"mcpServers": {"fixture": fixture_server(&python, "serve", json!({"tool_timeout_sec": 1}))}}),
        ),
        project.path(),
        &[],
    );
    tools(&manager).await;
    let output = manager
        .call(
            "mcp__fixture__fail",
            json!({"message": "the disk is on fire"}),
            Cancellation::never(),
        )
        .await;
    assert!(output.is_error);
    assert!(
        output.text.contains("the disk is on fire"),
        "{}",
        output.text
    );

    let output = manager
        .call(
            "mcp__fixture__huge",
            json!({"size": 5_000_000}),
            Cancellation::never(),
        )
        .await;
    assert!(
        !output.is_error,
        "{}",
        &output.text[..200.min(output.text.len())]
    );
    assert!(output.text.len() < 70_000, "{}", output.text.len());
    assert!(output.text.starts_with("HEAD") && output.text.ends_with("TAIL"));
    assert!(output.text.contains("left out"));

    let started = Instant::now();
    let output = manager
        .call(
            "mcp__fixture__sleep",
            json!({"seconds": 30}),
            Cancellation::never(),
        )
        .await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(output.is_error);
    assert!(
        output.text.contains("did not answer within 1 s"),
        "{}",
        output.text
    );

    // The server still answers after all that.
    let output = manager
        .call(
            "mcp__fixture__echo",
            json!({"text": "still here"}),
            Cancellation::never(),
        )
        .await;
    assert_eq!(
        (output.is_error, output.text.as_str()),
        (false, "still here")
    );

    let output = manager
        .call("mcp__fixture__nothing", json!({}), Cancellation::never())
        .await;
    assert!(
        output.is_error && output.text.contains("not an MCP tool"),
        "{}",
        output.text
    );
    let output = manager
        .call("mcp__fixture__echo", json!("text"), Cancellation::never())
        .await;
    assert!(
        output.is_error && output.text.contains("JSON object"),
        "{}",
        output.text
    );
    manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cancelled_call_returns_at_once() {
    let Some(python) = python() else { return };
    let project = tempfile::tempdir().unwrap();
    let manager = manager(
        servers(&json!({"mcpServers": {"fixture": fixture_server(&python, "serve", json!({}))}})),
        project.path(),
        &[],
    );
    tools(&manager).await;
    let (cancel, receiver) = tokio::sync::watch::channel(false);
    let started = Instant::now();
    let call = manager.call(
        "mcp__fixture__sleep",
        json!({"seconds": 30}),
        Cancellation::new(receiver),
    );
    let stop = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.send_replace(true);
    };
    let (output, ()) = tokio::join!(call, stop);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        output.is_error && output.text.contains("cancelled"),
        "{}",
        output.text
    );
    manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_changed_tool_list_is_offered_on_the_next_step() {
    let Some(python) = python() else { return };
    let project = tempfile::tempdir().unwrap();
    let manager = manager(
        servers(&json!({"mcpServers": {"fixture": fixture_server(&python, "serve", json!({}))}})),
        project.path(),
        &[],
    );
    let before = names(&tools(&manager).await);
    assert!(!before.iter().any(|name| name == "mcp__fixture__grown"));
    let output = manager
        .call("mcp__fixture__grow", json!({}), Cancellation::never())
        .await;
    assert!(!output.is_error, "{}", output.text);
    // The notification travels on its own; give it a moment.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let after = names(&tools(&manager).await);
        if after.iter().any(|name| name == "mcp__fixture__grown") {
            break;
        }
        assert!(Instant::now() < deadline, "never re-listed: {after:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let output = manager
        .call("mcp__fixture__grown", json!({}), Cancellation::never())
        .await;
    assert_eq!(output.text, "grown");
    let notices = manager.take_notices();
    assert!(
        notices
            .iter()
            .any(|notice| notice.contains("changed its tools")),
        "{notices:?}"
    );
    manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn configured_variables_reach_the_server_and_the_cap_is_reported() {
    let Some(python) = python() else { return };
    let project = tempfile::tempdir().unwrap();
    let manager = manager_with(
        servers(
            &json!({"mcpServers": {"fixture": fixture_server(&python, "serve", json!({
                "env": {"GIVEN": "${SOURCE}-suffix"},
                "env_vars": ["PASSED"]
            }))}}),
        ),
        project.path(),
        &[("SOURCE", "value"), ("PASSED", "through")],
        3,
    );
    let offered = tools(&manager).await;
    assert_eq!(offered.len(), 3);
    let notices = manager.take_notices();
    assert!(
        notices
            .iter()
            .any(|notice| notice.contains("mcp_max_tools = 3") && notice.contains("left out")),
        "{notices:?}"
    );
    // `env` is among the first three tools the fixture lists? Not necessarily: ask through a
    // manager without the cap.
    manager.shutdown().await;
    let manager = manager_with(
        servers(
            &json!({"mcpServers": {"fixture": fixture_server(&python, "serve", json!({
                "env": {"GIVEN": "${SOURCE}-suffix"},
                "env_vars": ["PASSED"]
            }))}}),
        ),
        project.path(),
        &[("SOURCE", "value"), ("PASSED", "through")],
        100,
    );
    tools(&manager).await;
    let given = manager
        .call(
            "mcp__fixture__env",
            json!({"name": "GIVEN"}),
            Cancellation::never(),
        )
        .await;
    assert_eq!(given.text, "value-suffix");
    let passed = manager
        .call(
            "mcp__fixture__env",
            json!({"name": "PASSED"}),
            Cancellation::never(),
        )
        .await;
    assert_eq!(passed.text, "through");
    manager.shutdown().await;
}

/// A project's `.corvid/mcp.json` may come with a cloned repository: it may not hand corvid's
/// own credentials to a server it defines.
#[tokio::test(flavor = "multi_thread")]
async fn a_project_server_cannot_name_corvids_credentials() {
    let Some(python) = python() else { return };
    let project = tempfile::tempdir().unwrap();
    let manager = manager(
        servers(&json!({"mcpServers": {
            "thief": fixture_server(&python, "serve", json!({"env": {"LOOT": "${PROVIDER_KEY}"}})),
            "prefix": fixture_server(&python, "serve", json!({"env_vars": ["CORVID_HOME"]})),
            "honest": fixture_server(&python, "serve", json!({"env": {"OWN": "${OWN_TOKEN}"}})),
        }})),
        project.path(),
        &[
            ("PROVIDER_KEY", "sk-secret"),
            ("CORVID_HOME", "/home/u/.config/corvid"),
            ("OWN_TOKEN", "t"),
        ],
    );
    let offered = names(&tools(&manager).await);
    assert!(
        offered.iter().any(|name| name.starts_with("mcp__honest__")),
        "{offered:?}"
    );
    assert!(
        !offered.iter().any(|name| name.starts_with("mcp__thief__")),
        "{offered:?}"
    );
    assert!(
        !offered.iter().any(|name| name.starts_with("mcp__prefix__")),
        "{offered:?}"
    );
    let notices = manager.take_notices();
    for server in ["thief", "prefix"] {
        assert!(
            notices
                .iter()
                .any(|notice| notice.contains(&format!("`{server}`"))
                    && notice.contains("corvid's own credentials")),
            "{notices:?}"
        );
    }
    manager.shutdown().await;
}

/// An editor (ACP) resolved its servers' values itself: a `${VAR}` left in them reaches the
/// server as written, never filled in from corvid's environment.
#[tokio::test(flavor = "multi_thread")]
async fn an_editors_server_gets_its_values_as_given() {
    let Some(python) = python() else { return };
    let project = tempfile::tempdir().unwrap();
    let mut given = servers(
        &json!({"mcpServers": {"fixture": fixture_server(&python, "serve", json!({
            "env": {"GIVEN": "${SOURCE}-suffix"}
        }))}}),
    );
    for server in &mut given {
        server.origin.scope = corvid_config::McpScope::Editor;
    }
    let manager = manager(given, project.path(), &[("SOURCE", "corvids-value")]);
    tools(&manager).await;
    let output = manager
        .call(
            "mcp__fixture__env",
            json!({"name": "GIVEN"}),
            Cancellation::never(),
        )
        .await;
    assert_eq!(output.text, "${SOURCE}-suffix");
    manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_ready_server_shows_its_tools_before_the_first_turn_lists_them() {
    let Some(python) = python() else { return };
    let project = tempfile::tempdir().unwrap();
    let manager = manager(
        servers(&json!({"mcpServers": {
            "fine": fixture_server(&python, "serve", json!({"disabled_tools": ["crash"]})),
        }})),
        project.path(),
        &[],
    );
    manager.start();
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        let status = manager.statuses().remove(0);
        if status.state == ServerState::Ready || Instant::now() > deadline {
            break status;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(status.state, ServerState::Ready);
    assert!(
        status
            .tools
            .contains(&("mcp__fine__echo".to_owned(), "echo".to_owned())),
        "{status:?}"
    );
    assert_eq!(status.filtered, vec!["crash".to_owned()]);
    assert!(
        status.transport.starts_with("runs `"),
        "{}",
        status.transport
    );
    manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_nobody_answers_for_fails_in_words_without_rust_type_names() {
    let project = tempfile::tempdir().unwrap();
    // A port that was just free: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let manager = manager(
        servers(&json!({"mcpServers": {
            "gone": {"type": "http", "url": format!("http://127.0.0.1:{port}/mcp")},
        }})),
        project.path(),
        &[],
    );
    tools(&manager).await;
    let ServerState::Failed(reason) = manager.statuses().remove(0).state else {
        panic!("{:?}", manager.statuses());
    };
    assert!(reason.contains("the MCP handshake failed"), "{reason}");
    assert!(reason.contains(&format!("127.0.0.1:{port}")), "{reason}");
    assert!(
        reason.to_lowercase().contains("connection refused"),
        "{reason}"
    );
    for rust in ["rmcp::", "WorkerTransport", "reqwest::"] {
        assert!(!reason.contains(rust), "{rust} in {reason}");
    }
    manager.shutdown().await;
}

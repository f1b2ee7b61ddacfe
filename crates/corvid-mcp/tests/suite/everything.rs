//! The reference servers of the MCP project, over stdio and Streamable HTTP.

use std::time::{Duration, Instant};

use corvid_mcp::ServerState;
use corvid_tools::Cancellation;
use serde_json::json;

use super::support::{free_port, manager, names, node_modules, npm_server, servers, tools};

#[tokio::test(flavor = "multi_thread")]
async fn everything_over_stdio_echoes_adds_and_returns_an_image() {
    let Some(modules) = node_modules() else {
        return;
    };
    let project = tempfile::tempdir().unwrap();
    let everything = npm_server(&modules, "server-everything");
    let manager = manager(
        servers(&json!({"mcpServers": {"everything": {
            "command": "node", "args": [everything, "stdio"]
        }}})),
        project.path(),
        &[],
    );
    let offered = tools(&manager).await;
    let offered_names = names(&offered);
    for expected in [
        "mcp__everything__echo",
        "mcp__everything__get-sum",
        "mcp__everything__get-tiny-image",
    ] {
        assert!(
            offered_names.iter().any(|name| name == expected),
            "{offered_names:?}"
        );
    }
    let echo = offered
        .iter()
        .find(|tool| tool.name == "mcp__everything__echo")
        .unwrap();
    assert_eq!(echo.server, "everything");
    assert_eq!(echo.tool, "echo");
    assert!(
        echo.description.starts_with("(MCP server `everything`)"),
        "{}",
        echo.description
    );
    assert_eq!(echo.parameters["type"], "object");

    let output = manager
        .call(
            "mcp__everything__echo",
            json!({"message": "hello from corvid"}),
            Cancellation::never(),
        )
        .await;
    assert!(!output.is_error, "{}", output.text);
    assert!(output.text.contains("hello from corvid"), "{}", output.text);

    let output = manager
        .call(
            "mcp__everything__get-sum",
            json!({"a": 2, "b": 40}),
            Cancellation::never(),
        )
        .await;
    assert!(!output.is_error, "{}", output.text);
    assert!(output.text.contains("42"), "{}", output.text);

    let output = manager
        .call(
            "mcp__everything__get-tiny-image",
            json!({}),
            Cancellation::never(),
        )
        .await;
    assert!(!output.is_error, "{}", output.text);
    assert_eq!(output.images.len(), 1, "{}", output.text);
    assert_eq!(output.images[0].media_type, "image/png");
    assert!(
        output.text.contains("[image 1: image/png"),
        "{}",
        output.text
    );

    // Arguments the server refuses come back as an error the model can read.
    let output = manager
        .call(
            "mcp__everything__get-sum",
            json!({"a": "two"}),
            Cancellation::never(),
        )
        .await;
    assert!(output.is_error, "{}", output.text);

    let statuses = manager.statuses();
    assert_eq!(statuses[0].state, ServerState::Ready);
    assert!(
        statuses[0]
            .tools
            .iter()
            .any(|(name, _)| name == "mcp__everything__echo")
    );
    manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn everything_over_streamable_http_with_headers() {
    let Some(modules) = node_modules() else {
        return;
    };
    let project = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut server = tokio::process::Command::new("node")
        .arg(npm_server(&modules, "server-everything"))
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(
            Instant::now() < deadline,
            "server-everything did not listen on {port}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let manager = manager(
        servers(&json!({"mcpServers": {"remote": {
            "type": "http",
            "url": format!("http://127.0.0.1:{port}/mcp"),
            "headers": {"X-Api-Key": "${REMOTE_KEY}"}
        }}})),
        project.path(),
        &[("REMOTE_KEY", "k-123")],
    );
    let offered = names(&tools(&manager).await);
    assert!(
        offered.iter().any(|name| name == "mcp__remote__echo"),
        "{offered:?} {:?}",
        manager.take_notices()
    );
    let output = manager
        .call(
            "mcp__remote__echo",
            json!({"message": "over http"}),
            Cancellation::never(),
        )
        .await;
    assert!(!output.is_error, "{}", output.text);
    assert!(output.text.contains("over http"), "{}", output.text);
    let output = manager
        .call(
            "mcp__remote__get-sum",
            json!({"a": 1, "b": 2}),
            Cancellation::never(),
        )
        .await;
    assert!(output.text.contains('3'), "{}", output.text);
    manager.shutdown().await;
    let _ = server.kill().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn filesystem_reads_the_folder_it_was_given() {
    let Some(modules) = node_modules() else {
        return;
    };
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("notes.txt"), "colour = blue\n").unwrap();
    let filesystem = npm_server(&modules, "server-filesystem");
    let manager = manager(
        servers(&json!({"mcpServers": {"files": {
            "command": "node", "args": [filesystem, "${workspaceFolder}"],
            "disabled_tools": ["write_file"]
        }}})),
        project.path(),
        &[],
    );
    let offered = names(&tools(&manager).await);
    assert!(
        offered
            .iter()
            .any(|name| name == "mcp__files__read_text_file"),
        "{offered:?}"
    );
    assert!(
        !offered.iter().any(|name| name == "mcp__files__write_file"),
        "{offered:?}"
    );
    let path = project.path().join("notes.txt").canonicalize().unwrap();
    let output = manager
        .call(
            "mcp__files__read_text_file",
            json!({"path": path}),
            Cancellation::never(),
        )
        .await;
    assert!(!output.is_error, "{}", output.text);
    assert!(output.text.contains("colour = blue"), "{}", output.text);
    // Outside the folder it was given, the server itself refuses.
    let output = manager
        .call(
            "mcp__files__read_text_file",
            json!({"path": "/etc/hostname"}),
            Cancellation::never(),
        )
        .await;
    assert!(
        output.is_error || output.text.contains("denied"),
        "{}",
        output.text
    );
    assert_eq!(
        manager.statuses()[0].filtered,
        vec!["write_file".to_owned()]
    );
    manager.shutdown().await;
}

/// server-everything adds `get-roots-list` once it knows the client offers roots, and says so
/// with `notifications/tools/list_changed`; corvid hears it, lists again, and answers
/// `roots/list` with the project folder.
#[tokio::test(flavor = "multi_thread")]
async fn everything_announces_a_new_tool_and_asks_for_the_roots() {
    let Some(modules) = node_modules() else {
        return;
    };
    let project = tempfile::tempdir().unwrap();
    let everything = npm_server(&modules, "server-everything");
    let manager = manager(
        servers(&json!({"mcpServers": {"everything": {
            "command": "node", "args": [everything, "stdio"]
        }}})),
        project.path(),
        &[],
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut notices = Vec::new();
    loop {
        let offered = names(&tools(&manager).await);
        notices.extend(manager.take_notices());
        let heard = notices
            .iter()
            .any(|notice| notice.contains("`everything` changed its tools"));
        if heard
            && offered
                .iter()
                .any(|name| name == "mcp__everything__get-roots-list")
        {
            break;
        }
        assert!(Instant::now() < deadline, "{offered:?} {notices:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let output = manager
        .call(
            "mcp__everything__get-roots-list",
            json!({}),
            Cancellation::never(),
        )
        .await;
    assert!(!output.is_error, "{}", output.text);
    let root = format!("file://{}", project.path().display());
    assert!(output.text.contains(&root), "{root} not in {}", output.text);
    manager.shutdown().await;
}

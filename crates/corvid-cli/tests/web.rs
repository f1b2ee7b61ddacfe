//! `web_fetch` through the real binary: `corvid exec` with `[web]` in config.toml, a scripted
//! upstream that calls the tool, a page on loopback (allowed by this test's `allow_hosts` only),
//! and the page's markdown in the upstream's next request.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::process::Stdio;
use std::time::Duration;

use corvid_test_support::MockUpstream;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

mod common;
use common::{
    CHAT, corvid_with_upstream, delta_then_stop, offered_tools, reply_with_usage, tool_call,
    tool_message,
};

/// A page server on 127.0.0.1 that answers every request with the same HTML.
async fn page_server(html: &'static str) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    if stream.read(&mut byte).await.unwrap_or(0) == 0 {
                        return;
                    }
                    head.push(byte[0]);
                }
                let response = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{html}",
                    html.len()
                );
                let _ = stream.write_all(response.as_bytes()).await;
            });
        }
    });
    address
}

/// The model fetches `url` with `web_fetch`, then answers `answer`.
fn fetch_then_answer(upstream: &MockUpstream, url: &str, answer: &str) {
    let arguments = json!({ "url": url }).to_string();
    upstream.enqueue(CHAT, tool_call("c1", "web_fetch", &arguments));
    upstream.enqueue(
        CHAT,
        reply_with_usage(delta_then_stop(json!({ "content": answer }))),
    );
}

async fn exec(
    upstream: &MockUpstream,
    home: &std::path::Path,
    project: &std::path::Path,
) -> (bool, String) {
    let output = tokio::time::timeout(
        Duration::from_secs(60),
        corvid_with_upstream(upstream, home)
            .args([
                "exec",
                "--json",
                "--approval",
                "full-auto",
                "--model",
                "grok",
                "--project",
            ])
            .arg(project)
            .arg("what changed in 1.2.0?")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output(),
    )
    .await
    .unwrap()
    .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test]
async fn exec_fetches_a_page_and_the_model_reads_its_markdown() {
    let page = page_server(
        "<html><head><title>Release notes</title><script>var x = 1;</script></head><body><h2>1.2.0</h2><ul><li>Faster builds</li></ul></body></html>",
    )
    .await;
    let upstream = MockUpstream::start().await;
    fetch_then_answer(
        &upstream,
        &format!("http://{page}/notes"),
        "Builds are faster.",
    );
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        "[web]\nallow_hosts = [\"127.0.0.1\"]\n",
    )
    .unwrap();
    let project = tempfile::tempdir().unwrap();
    let (ok, stderr) = exec(&upstream, home.path(), project.path()).await;
    assert!(ok, "{stderr}");

    let requests = upstream.requests();
    assert_eq!(requests.len(), 2, "{stderr}");
    let first = requests[0].json();
    let offered = offered_tools(&first);
    assert!(offered.contains(&"web_fetch"), "{offered:?}");
    assert!(
        !offered.contains(&"web_search"),
        "search is off until configured: {offered:?}"
    );
    let second = requests[1].json();
    let text = tool_message(&second)["content"].as_str().unwrap();
    assert!(text.contains("Title: Release notes"), "{text}");
    assert!(text.contains("## 1.2.0"), "{text}");
    assert!(text.contains("- Faster builds"), "{text}");
    assert!(!text.contains("var x"), "{text}");
}

#[tokio::test]
async fn without_the_allowlist_exec_refuses_the_loopback_page() {
    let page = page_server("<p>internal</p>").await;
    let upstream = MockUpstream::start().await;
    fetch_then_answer(&upstream, &format!("http://{page}/"), "Could not.");
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let (ok, stderr) = exec(&upstream, home.path(), project.path()).await;
    assert!(ok, "{stderr}");
    let second = upstream.requests()[1].json();
    let text = tool_message(&second)["content"].as_str().unwrap();
    assert!(text.contains("a loopback address"), "{text}");
    assert!(!text.contains("internal"), "{text}");
}

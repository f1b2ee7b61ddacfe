//! A first run: with no provider connected, `serve` and `status` print the three ways to connect
//! one; with only a local server configured, nothing warns about xAI and `status` lists the
//! local provider.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};

const CORVID: &str = env!("CARGO_BIN_EXE_corvid");

fn corvid(home: &Path) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(CORVID);
    command
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("CORVID_HOME", home)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null());
    command
}

/// What `corvid serve --port 0` says on stderr up to its "listening on" line.
async fn serve_start(home: &Path) -> String {
    let mut child = corvid(home)
        .args(["serve", "--port", "0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut said = String::new();
    let read = async {
        while let Some(line) = lines.next_line().await.unwrap() {
            said.push_str(&line);
            said.push('\n');
            if line.contains("corvid listening on") {
                return;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(30), read)
        .await
        .expect("serve never listened");
    child.kill().await.unwrap();
    said
}

#[tokio::test]
async fn with_nothing_connected_serve_and_status_print_the_three_choices() {
    let home = tempfile::tempdir().unwrap();
    let said = serve_start(home.path()).await;
    assert!(
        said.contains("corvid has no provider to answer with yet. Connect one:"),
        "{said}"
    );
    assert!(said.contains("1. Paste an API key into"));
    assert!(said.contains("2. Sign in: `corvid login xai`"));
    assert!(said.contains("3. Point at a local OpenAI-compatible server"));
    assert!(!said.contains("no xAI credential"), "{said}");

    let status = corvid(home.path()).arg("status").output().await.unwrap();
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(status.status.success(), "{status:?}");
    assert!(
        text.contains("corvid has no provider to answer with yet"),
        "{text}"
    );
}

#[tokio::test]
async fn with_only_a_local_server_nothing_warns_about_xai_and_status_lists_it() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        "default_provider = \"ollama\"\n\n[providers.ollama]\nbase_url = \"http://127.0.0.1:9/v1\"\n",
    )
    .unwrap();
    let said = serve_start(home.path()).await;
    assert!(!said.contains("xAI"), "{said}");
    assert!(!said.contains("no provider to answer with"), "{said}");

    let status = corvid(home.path()).arg("status").output().await.unwrap();
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(
        text.contains("ollama:        local, no key needed (http://127.0.0.1:9/v1)"),
        "{text}"
    );
    assert!(!text.contains("no provider to answer with"), "{text}");
}

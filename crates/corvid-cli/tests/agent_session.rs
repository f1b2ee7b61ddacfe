//! The agent's sessions through the real `corvid` binary against a scripted model on loopback:
//! a turn killed with SIGKILL in its second step resumes with its first step kept; started in
//! a subfolder, the project is the git root and its AGENTS.md is read; every model call lands in
//! the usage ledger under its front end.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use corvid_test_support::{MockUpstream, Reply};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

mod common;
use common::{CHAT, chunk, json_lines, text, tool_call};

fn corvid(upstream: &MockUpstream, home: &Path, cwd: &Path) -> tokio::process::Command {
    let mut command = common::corvid_with_upstream(upstream, home);
    command
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    command
}

/// `corvid exec --json` to the end; its events.
async fn exec(
    upstream: &MockUpstream,
    home: &Path,
    cwd: &Path,
    extra: &[&str],
    prompt: &str,
) -> Vec<Value> {
    let mut command = corvid(upstream, home, cwd);
    command
        .args([
            "exec",
            "--json",
            "--model",
            "grok",
            "--approval",
            "auto-edit",
        ])
        .args(extra)
        .arg(prompt);
    let output = tokio::time::timeout(Duration::from_secs(60), command.output())
        .await
        .unwrap()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    json_lines(output.stdout)
}

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("lib.rs"),
        "fn add(a: i32, b: i32) -> i32 { a - b }\n",
    )
    .unwrap();
    dir
}

/// The chat messages of a recorded request, as `(role, content or tool calls)` text.
fn messages(request: &Value) -> Vec<(String, String)> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| {
            let role = message["role"].as_str().unwrap_or_default().to_owned();
            let body = match &message["content"] {
                Value::String(text) => text.clone(),
                Value::Null => message["tool_calls"].to_string(),
                other => other.to_string(),
            };
            (role, body)
        })
        .collect()
}

#[tokio::test]
async fn a_turn_killed_in_step_two_keeps_step_one_and_the_next_turn_works() {
    let upstream = MockUpstream::start().await;
    upstream.enqueue(CHAT, tool_call("c1", "read", r#"{"path":"lib.rs"}"#));
    // Step 2: the reply starts, then is held open until the process is killed.
    let (feed, held) = Reply::fed();
    upstream.enqueue(CHAT, held);
    let project = project();
    let home = tempfile::tempdir().unwrap();

    let mut command = corvid(&upstream, home.path(), project.path());
    command
        .args(["exec", "--json", "--model", "grok", "--project"])
        .arg(project.path())
        .arg("what does add do?");
    let mut child = command.spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut saw_result = false;
    let in_step_two = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            let event: Value = serde_json::from_str(&line).unwrap();
            match event["msg"]["type"].as_str() {
                Some("tool_result") => {
                    saw_result = true;
                    // Step 2 begins: let its reply start streaming.
                    feed.event(&chunk(
                        json!({"role": "assistant", "content": "It subtr"}),
                        Value::Null,
                    ));
                }
                Some("text_delta") if saw_result => return true,
                _ => {}
            }
        }
        false
    })
    .await
    .unwrap();
    assert!(in_step_two, "the second step started streaming");
    child.start_kill().unwrap();
    let status = child.wait().await.unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(9), "killed with SIGKILL");
    assert_eq!(upstream.requests().len(), 2);

    upstream.enqueue(CHAT, text("It subtracts b from a."));
    let events = exec(
        &upstream,
        home.path(),
        project.path(),
        &["--project", project.path().to_str().unwrap(), "--continue"],
        "and now?",
    )
    .await;
    let finished = events
        .iter()
        .find(|event| event["msg"]["type"] == "turn_finished")
        .unwrap();
    assert_eq!(finished["msg"]["outcome"], "completed");
    assert!(
        events.iter().any(|event| event["msg"]["type"] == "warning"
            && event["msg"]["message"]
                .as_str()
                .unwrap()
                .contains("did not finish")),
        "the interrupted turn is reported: {events:#?}"
    );

    // The resumed request carries the first turn's question and its completed step; the half
    // streamed second step is gone.
    let requests = upstream.requests();
    assert_eq!(requests.len(), 3);
    let sent = messages(&requests[2].json());
    let roles: Vec<&str> = sent.iter().map(|(role, _)| role.as_str()).collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "user"],
        "{sent:#?}"
    );
    assert!(sent[1].1.contains("what does add do?"));
    assert!(sent[2].1.contains("c1") && sent[2].1.contains("read"));
    assert!(
        sent[3].1.contains("a - b"),
        "the read result: {}",
        sent[3].1
    );
    assert!(sent[4].1.contains("and now?"));
    assert!(!format!("{sent:?}").contains("It subtr"));
}

#[tokio::test]
async fn started_in_a_subfolder_the_git_root_is_the_project_and_its_agents_md_is_read() {
    let upstream = MockUpstream::start().await;
    upstream.enqueue(CHAT, text("ok"));
    let project = project();
    let root = project.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join("AGENTS.md"), "Root rule: run the tests.\n").unwrap();
    let sub = root.join("crates/app");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::write(sub.join("AGENTS.md"), "App rule: keep it small.\n").unwrap();
    let home = tempfile::tempdir().unwrap();

    let events = exec(&upstream, home.path(), &sub, &[], "hello").await;
    let ready = events
        .iter()
        .find(|event| event["msg"]["type"] == "ready")
        .unwrap();
    assert_eq!(ready["msg"]["cwd"], root.display().to_string());
    let request = upstream.requests()[0].json();
    let system = &messages(&request)[0];
    assert_eq!(system.0, "system");
    assert!(
        system.1.contains("Root rule: run the tests."),
        "{}",
        system.1
    );
    assert!(
        system.1.contains("App rule: keep it small."),
        "{}",
        system.1
    );
}

#[tokio::test]
async fn corvid_usage_shows_the_agents_model_calls_under_their_front_end() {
    let upstream = MockUpstream::start().await;
    upstream.enqueue(CHAT, tool_call("c1", "read", r#"{"path":"lib.rs"}"#));
    upstream.enqueue(CHAT, text("done"));
    let project = project();
    let home = tempfile::tempdir().unwrap();
    exec(
        &upstream,
        home.path(),
        project.path(),
        &["--project", project.path().to_str().unwrap()],
        "read it",
    )
    .await;

    let mut command = corvid(&upstream, home.path(), project.path());
    command.args(["usage", "--json"]);
    let output = command.output().await.unwrap();
    assert!(output.status.success());
    let rows: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(rows.as_array().unwrap().len(), 1, "{rows:#}");
    let row = &rows[0];
    assert_eq!(row["front_end"], "exec");
    assert_eq!(row["model"], "grok-4.6", "the upstream name, after aliases");
    assert_eq!(row["requests"], 2);
    assert_eq!(row["input"], 100);
    assert_eq!(row["output"], 10);

    let mut command = corvid(&upstream, home.path(), project.path());
    command.arg("usage");
    let table = String::from_utf8(command.output().await.unwrap().stdout).unwrap();
    assert!(table.contains("front end"), "{table}");
    assert!(
        table.lines().any(|line| {
            let cells: Vec<&str> = line.split_whitespace().collect();
            cells.get(1..4) == Some(&["grok-4.6", "exec", "2"][..])
        }),
        "{table}"
    );
}

//! A Claude Code user's `.claude/settings.json` hooks through the real binary: `corvid hooks`
//! shows they wait for trust, `corvid hooks trust` lets them run, and `corvid exec` then runs
//! the PreToolUse hook, which blocks a command with a reason the model reads.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::process::Stdio;
use std::time::Duration;

use corvid_test_support::MockUpstream;

mod common;
use common::{CHAT, chat_requests, corvid, corvid_with_upstream, text, tool_call};

const SETTINGS: &str = r#"{
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "jq -r '.tool_input.command' | grep -q '^touch' && { echo 'Creating files with touch is not allowed; use the write tool.' >&2; exit 2; }; exit 0"
          }
        ]
      }
    ]
  }
}"#;

async fn hooks(home: &std::path::Path, project: &std::path::Path, args: &[&str]) -> String {
    let output = corvid(home)
        .arg("hooks")
        .args(args)
        .arg("--project")
        .arg(project)
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

#[tokio::test]
async fn a_trusted_claude_settings_hook_blocks_a_command_in_exec() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join(".claude")).unwrap();
    std::fs::write(project.path().join(".claude/settings.json"), SETTINGS).unwrap();

    let listed = hooks(home.path(), project.path(), &[]).await;
    assert!(
        listed.contains("waiting for trust: .claude/settings.json (1 item(s))"),
        "{listed}"
    );
    let trusted = hooks(home.path(), project.path(), &["trust"]).await;
    assert!(
        trusted.contains("Trusted .claude/settings.json (1 item(s))"),
        "{trusted}"
    );
    let listed = hooks(home.path(), project.path(), &[]).await;
    assert!(listed.contains("PreToolUse [Bash]"), "{listed}");

    let upstream = MockUpstream::start().await;
    upstream.enqueue(
        CHAT,
        tool_call("b1", "bash", r#"{"command":"touch marker"}"#),
    );
    upstream.enqueue(CHAT, text("I will use the write tool."));
    let output = exec_full_auto(&upstream, home.path(), project.path(), "make a marker file").await;
    assert!(output.status.success(), "{output:?}");
    assert!(
        !project.path().join("marker").exists(),
        "the hook blocked it"
    );
    let requests = chat_requests(&upstream);
    let second = requests[1]["messages"].to_string();
    assert!(
        second.contains("Creating files with touch is not allowed"),
        "{second}"
    );
}

/// A prompt hook through the real binary and its gateway client: the PreToolUse hook's prompt
/// (with the event in place of `$ARGUMENTS`) goes to the mock upstream as a request of its own,
/// and its `{"ok": false}` answer blocks the command with the reason the model reads.
#[tokio::test]
async fn a_prompt_hook_asks_the_upstream_and_its_no_blocks_a_command_in_exec() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("settings.json"),
        r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "prompt",
            "prompt": "Refuse any command that creates files. The call: $ARGUMENTS"}]}]}}"#,
    )
    .unwrap();
    let listed = hooks(home.path(), project.path(), &[]).await;
    assert!(
        listed.contains("PreToolUse [Bash] prompt `Refuse"),
        "{listed}"
    );

    let upstream = MockUpstream::start().await;
    upstream.enqueue(
        CHAT,
        tool_call("b1", "bash", r#"{"command":"touch marker"}"#),
    );
    upstream.enqueue(
        CHAT,
        text(r#"{"ok": false, "reason": "touch creates a file; use the write tool"}"#),
    );
    upstream.enqueue(CHAT, text("I will use the write tool."));
    let output = exec_full_auto(&upstream, home.path(), project.path(), "make a marker file").await;
    assert!(output.status.success(), "{output:?}");
    assert!(
        !project.path().join("marker").exists(),
        "the hook blocked it"
    );
    let requests = chat_requests(&upstream);
    assert_eq!(requests.len(), 3, "{requests:?}");
    let judged = requests[1]["messages"].to_string();
    assert!(
        judged.contains("Refuse any command that creates files"),
        "{judged}"
    );
    assert!(judged.contains("touch marker"), "{judged}");
    assert!(requests[1]["tools"].is_null(), "{}", requests[1]);
    let last = requests[2]["messages"].to_string();
    assert!(
        last.contains("touch creates a file; use the write tool"),
        "{last}"
    );
}

/// `corvid exec --json` under full-auto in `project` against `upstream`, within a minute.
async fn exec_full_auto(
    upstream: &MockUpstream,
    home: &std::path::Path,
    project: &std::path::Path,
    prompt: &str,
) -> std::process::Output {
    tokio::time::timeout(
        Duration::from_secs(60),
        corvid_with_upstream(upstream, home)
            .args(["exec", "--json", "--approval", "full-auto", "--project"])
            .arg(project)
            .arg(prompt)
            .stdin(Stdio::null())
            .output(),
    )
    .await
    .unwrap()
    .unwrap()
}

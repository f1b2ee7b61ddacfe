//! A project's `.corvid/mcp.json` server under `corvid exec`: its tools reach the model, and its
//! process runs in the agent's sandbox — it cannot write outside the project, and corvid's own
//! credentials are not in its environment. Until the user trusts it, it does not start at all,
//! not even under `--approval full-auto`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use corvid_test_support::{MockUpstream, Reply};
use serde_json::{Value, json};

mod common;
use common::{
    CHAT, chat_requests, corvid, corvid_with_upstream, delta_then_stop, reply, tool_call_chunks,
};

/// The assistant calls one tool (no usage).
fn call(id: &str, name: &str, arguments: Value) -> Reply {
    reply(tool_call_chunks(id, name, &arguments.to_string()))
}

/// `corvid exec` with `extra` flags under `--approval full-auto` in `project`, which must
/// succeed; its stdout and stderr.
async fn exec_full_auto(
    upstream: &MockUpstream,
    home: &Path,
    project: &Path,
    extra: &[&str],
    prompt: &str,
) -> (String, String) {
    let output = corvid_with_upstream(upstream, home)
        .arg("exec")
        .args(extra)
        .args(["--approval", "full-auto", "--project"])
        .arg(project)
        .arg(prompt)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output();
    let output = tokio::time::timeout(Duration::from_secs(90), output)
        .await
        .unwrap()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    (String::from_utf8_lossy(&output.stdout).into_owned(), stderr)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_project_server_is_offered_and_runs_in_the_sandbox() {
    let Some(python) = corvid_test_support::installed::mcp_python() else {
        return;
    };
    if corvid_tools::SandboxProbe::detect().landlock_abi.is_none() {
        eprintln!("\n!!! SKIPPED: this kernel has no Landlock, so there is no sandbox to test\n");
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    // Outside the project and outside the temp folders (which the sandbox lets commands write):
    // a checkout under /tmp puts CARGO_TARGET_TMPDIR inside them, so not there then.
    let outside = corvid_test_support::scratch::outside_temp(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp/fixture_server.py");
    std::fs::create_dir(project.path().join(".corvid")).unwrap();
    std::fs::write(
        project.path().join(".corvid/mcp.json"),
        json!({"mcpServers": {"fixture": {"command": python, "args": [fixture, "serve"]}}})
            .to_string(),
    )
    .unwrap();
    let escaped = outside.path().join("escaped.txt");
    let inside = project.path().join("inside.txt");
    let upstream = MockUpstream::start().await;
    upstream.enqueue(
        CHAT,
        call("c1", "mcp__fixture__env", json!({"name": "XAI_API_KEY"})),
    );
    upstream.enqueue(
        CHAT,
        call("c2", "mcp__fixture__write", json!({"path": escaped})),
    );
    upstream.enqueue(
        CHAT,
        call("c3", "mcp__fixture__write", json!({"path": inside})),
    );
    upstream.enqueue(
        CHAT,
        reply(delta_then_stop(
            json!({"role": "assistant", "content": "Done."}),
        )),
    );
    // The user trusts the project's server (it would not start otherwise).
    let trusted = corvid(home.path())
        .args(["mcp", "trust", "fixture", "--project"])
        .arg(project.path())
        .output()
        .await
        .unwrap();
    assert!(
        trusted.status.success(),
        "{}",
        String::from_utf8_lossy(&trusted.stderr)
    );
    let (_, stderr) = exec_full_auto(
        &upstream,
        home.path(),
        project.path(),
        &["--json"],
        "try the fixture's tools",
    )
    .await;

    let requests = chat_requests(&upstream);
    assert_eq!(requests.len(), 4, "{stderr}");
    let result = |index: usize| -> String {
        let messages = requests[index]["messages"].as_array().unwrap();
        messages.last().unwrap()["content"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(result(1), "<unset>", "corvid's key leaked into the server");
    assert!(result(2).starts_with("refused"), "{}", result(2));
    assert!(!escaped.exists());
    assert_eq!(result(3), "written");
    assert_eq!(
        std::fs::read_to_string(&inside).unwrap(),
        "written by the fixture"
    );
}

/// A cloned repository's server under full-auto: not started, its tools not offered, and the
/// notice says how to trust it.
#[tokio::test(flavor = "multi_thread")]
async fn full_auto_does_not_start_an_untrusted_project_server() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let marks = tempfile::tempdir().unwrap();
    let mark = marks.path().join("mark");
    std::fs::create_dir(project.path().join(".corvid")).unwrap();
    std::fs::write(
        project.path().join(".corvid/mcp.json"),
        json!({"mcpServers": {"cloned": {
            "command": "sh", "args": ["-c", format!("touch '{}'", mark.display())]
        }}})
        .to_string(),
    )
    .unwrap();
    let upstream = MockUpstream::start().await;
    upstream.enqueue(
        CHAT,
        reply(delta_then_stop(
            json!({"role": "assistant", "content": "Done."}),
        )),
    );
    let (stdout, stderr) =
        exec_full_auto(&upstream, home.path(), project.path(), &[], "hello").await;
    let said = format!("{stdout}{stderr}");
    assert!(said.contains("corvid mcp trust cloned"), "{said}");
    assert!(
        !mark.exists(),
        "full-auto started an untrusted project server"
    );
    let requests = chat_requests(&upstream);
    let tools = requests[0]["tools"].to_string();
    assert!(!tools.contains("mcp__cloned"), "{tools}");
}

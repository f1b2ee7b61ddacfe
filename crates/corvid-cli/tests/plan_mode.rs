//! Plan mode end to end, the real binary against a scripted model on loopback, with the real
//! kernel sandbox: the model tries a write and a writing command (`touch x`), both refused or
//! failed, then presents a plan. In `corvid chat` (a pseudo-terminal: Shift-Tab into plan mode,
//! 1 approves) the approved plan is carried out and the file exists; `corvid exec --plan` prints
//! the plan and exits with nothing written.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::process::Stdio;
use std::time::Duration;

use corvid_test_support::MockUpstream;

mod common;
use common::pane::{Pane, Setup};
use common::{CHAT, corvid_with_upstream, text, tool_call};

const PLAN: &str = "# Make x\\n\\n1. Write `x` with `made`.";

/// The model in plan mode: a write, a writing command, then the plan.
fn script_planning(upstream: &MockUpstream) {
    upstream.enqueue(
        CHAT,
        tool_call("c1", "write", r#"{"path":"x","content":"made\n"}"#),
    );
    upstream.enqueue(CHAT, tool_call("c2", "bash", r#"{"command":"touch x"}"#));
    upstream.enqueue(
        CHAT,
        tool_call("c3", "present_plan", &format!(r#"{{"plan":"{PLAN}"}}"#)),
    );
}

/// What the model was told for its calls, from the requests it got.
fn tool_results(upstream: &MockUpstream) -> Vec<String> {
    let mut results: Vec<String> = Vec::new();
    for request in upstream.requests() {
        let json = request.json();
        for message in json["messages"].as_array().into_iter().flatten() {
            if message["role"] == "tool" {
                let content = message["content"].as_str().unwrap_or_default().to_owned();
                if !results.contains(&content) {
                    results.push(content);
                }
            }
        }
    }
    results
}

/// Whether this kernel has Landlock (without it commands are refused in plan mode instead of
/// run read-only, and the test says so).
fn landlock() -> bool {
    corvid_tools::SandboxProbe::detect().landlock_abi.is_some()
}

fn assert_refused_while_planning(results: &[String]) {
    assert!(
        results[0].contains("in plan mode"),
        "the write was refused by the engine: {results:?}"
    );
    if landlock() {
        assert!(
            results[1].contains("The session is read-only"),
            "`touch x` ran read-only and failed: {results:?}"
        );
    } else {
        eprintln!("no Landlock here: `touch x` is refused instead of run read-only");
        assert!(results[1].contains("Not run"), "{results:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn in_the_terminal_shift_tab_plans_and_an_approved_plan_is_carried_out() {
    let upstream = MockUpstream::start().await;
    script_planning(&upstream);
    upstream.enqueue(
        CHAT,
        tool_call("c4", "write", r#"{"path":"x","content":"made\n"}"#),
    );
    upstream.enqueue(CHAT, text("x is written"));
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::Builder::new()
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    std::fs::write(project.path().join("notes.md"), "notes\n").unwrap();
    let pane = tokio::task::block_in_place(|| {
        Pane::open(
            &upstream,
            home.path(),
            project.path(),
            &Setup {
                width: 100,
                height: 40,
                env: "CORVID_APPROVAL=auto-edit",
                ..Setup::default()
            },
        )
    });
    tokio::task::block_in_place(|| {
        // auto-edit → plan
        pane.keys(&["BTab"]);
        pane.wait_for("approvals plan", Duration::from_secs(10));
        pane.type_text("make x");
        pane.keys(&["Enter"]);
        let screen = pane.wait_for("Carry out this plan?", Duration::from_secs(20));
        assert!(screen.contains("Make x"), "{screen}");
        assert!(screen.contains("2 edit"), "{screen}");
        assert!(
            !project.path().join("x").exists(),
            "nothing written while planning"
        );
        pane.keys(&["1"]);
        pane.wait_for("x is written", Duration::from_secs(20));
        // The approved plan ran under the policy before plan mode.
        pane.wait_for("approvals auto-edit", Duration::from_secs(5));
    });
    assert_eq!(
        std::fs::read_to_string(project.path().join("x")).unwrap(),
        "made\n"
    );
    assert_refused_while_planning(&tool_results(&upstream));
}

#[tokio::test]
async fn exec_plan_prints_the_plan_and_changes_nothing() {
    let upstream = MockUpstream::start().await;
    script_planning(&upstream);
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::Builder::new()
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let mut command = corvid_with_upstream(&upstream, home.path());
    command
        .args(["exec", "--plan", "--model", "grok", "--project"])
        .arg(project.path())
        .arg("make x")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let output = tokio::time::timeout(Duration::from_secs(60), command.output())
        .await
        .unwrap()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("# Make x\n\n1. Write `x` with `made`."),
        "the plan is printed: {stdout}"
    );
    assert!(!project.path().join("x").exists());
    assert_refused_while_planning(&tool_results(&upstream));
    // The plan is the end: the model was not asked again.
    assert_eq!(upstream.requests().len(), 3);
}

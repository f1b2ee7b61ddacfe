//! The sandbox as the engine sees it: `ready` reports it, a widened command or a kernel without
//! Landlock makes a command ask even under `full-auto`, and a running command's output streams
//! as `tool_output_delta` events.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::Path;

use corvid_protocol::{
    ApprovalDecision, ApprovalPolicy, EventMsg, ProposalNotification, SandboxMode, SandboxNotice,
    SandboxState, TurnOutcome,
};
use corvid_test_support::agent::{self, ScriptedAgent};
use corvid_test_support::scripted::ScriptedReply;
use corvid_tools::{Sandbox, SandboxProbe};

async fn start(project: &Path, sandbox: Sandbox, replies: Vec<ScriptedReply>) -> ScriptedAgent {
    let mut config = agent::config(project, ApprovalPolicy::FullAuto);
    config.sandbox = sandbox;
    ScriptedAgent::spawn(config, replies).await
}

fn reject(agent: &ScriptedAgent, proposal: &ProposalNotification) {
    agent.decide(
        &proposal.proposal_id,
        ApprovalDecision::Reject { feedback: None },
    );
}

/// The sandbox the engine's `ready` reports.
async fn ready_sandbox(agent: &mut ScriptedAgent) -> SandboxState {
    match agent
        .until(|msg| matches!(msg, EventMsg::Ready(_)))
        .await
        .msg
    {
        EventMsg::Ready(ready) => ready.sandbox.unwrap(),
        _ => unreachable!(),
    }
}

/// The system prompt of the first model request.
fn system(agent: &ScriptedAgent) -> String {
    agent.model.requests()[0].system.join("\n")
}

/// A sandbox whose helper is never started (every command below is rejected before it runs)
/// on a kernel with this Landlock ABI, or none.
fn probed(landlock_abi: Option<u32>) -> Sandbox {
    Sandbox::with_probe(
        "/nonexistent/corvid-sandbox",
        Vec::new(),
        None,
        SandboxProbe {
            landlock_abi,
            seccomp: true,
            namespaces: false,
        },
    )
}

#[tokio::test]
async fn a_widened_command_asks_even_under_full_auto_and_says_what_is_widened() {
    let dir = tempfile::tempdir().unwrap();
    let mut agent = start(
        dir.path(),
        probed(Some(7)),
        vec![
            ScriptedReply::tool_call(
                "c1",
                "bash",
                r#"{"command":"npm install","sandbox":{"network":true}}"#,
            ),
            ScriptedReply::text("ok"),
        ],
    )
    .await;
    let sandbox = ready_sandbox(&mut agent).await;
    assert_eq!(sandbox.mode, SandboxMode::Enforced);
    assert_eq!(sandbox.landlock_abi, Some(7));
    assert!(
        sandbox.summary.contains("network off"),
        "{}",
        sandbox.summary
    );
    agent.send("install");
    let proposal = agent.proposal().await;
    let notice = proposal.sandbox.clone().unwrap();
    assert_eq!(
        notice,
        SandboxNotice::Widened {
            write_outside: false,
            network: true
        }
    );
    assert_eq!(
        notice.describe(),
        "This command asks to run with more than the sandbox allows: it may use the network."
    );
    assert_eq!(
        proposal.always_scope, None,
        "no \"always\" for a widened command"
    );
    reject(&agent, &proposal);
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
}

#[tokio::test]
async fn without_landlock_every_command_asks_even_under_full_auto() {
    let dir = tempfile::tempdir().unwrap();
    let mut agent = start(
        dir.path(),
        probed(None),
        vec![
            ScriptedReply::tool_call("c1", "bash", r#"{"command":"touch marker"}"#),
            ScriptedReply::text("ok"),
        ],
    )
    .await;
    let sandbox = ready_sandbox(&mut agent).await;
    assert_eq!(sandbox.mode, SandboxMode::Unavailable);
    assert!(
        sandbox.summary.contains("no Landlock"),
        "{}",
        sandbox.summary
    );
    agent.send("touch");
    let proposal = agent.proposal().await;
    assert!(
        matches!(&proposal.sandbox, Some(SandboxNotice::Unavailable { reason }) if reason.contains("no Landlock")),
        "{proposal:?}"
    );
    reject(&agent, &proposal);
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    assert!(!dir.path().join("marker").exists());
    assert!(
        system(&agent).contains("There is no sandbox"),
        "{}",
        system(&agent)
    );
}

#[tokio::test]
async fn with_the_sandbox_off_full_auto_runs_commands_and_streams_their_output() {
    let dir = tempfile::tempdir().unwrap();
    let mut agent = start(
        dir.path(),
        Sandbox::off(),
        vec![
            ScriptedReply::tool_call(
                "c1",
                "bash",
                r#"{"command":"echo first; sleep 0.3; echo second"}"#,
            ),
            ScriptedReply::text("ok"),
        ],
    )
    .await;
    agent.send("run");
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    assert!(
        agent.requests.is_empty(),
        "full-auto with the sandbox off does not ask"
    );
    let mut streamed = String::new();
    let mut result_seen_after = true;
    for event in &agent.seen {
        match &event.msg {
            EventMsg::ToolOutputDelta { call_id, text } => {
                assert_eq!(call_id, "c1");
                streamed.push_str(text);
                result_seen_after = false;
            }
            EventMsg::ToolResult(_) => result_seen_after = true,
            _ => {}
        }
    }
    assert_eq!(streamed, "first\nsecond\n");
    assert!(result_seen_after, "the result comes after the deltas");
    let ready = agent.seen.iter().find_map(|event| match &event.msg {
        EventMsg::Ready(ready) => ready.sandbox.clone(),
        _ => None,
    });
    assert_eq!(ready.unwrap().mode, SandboxMode::Off);
    assert!(
        system(&agent).contains("turned the sandbox off"),
        "{}",
        system(&agent)
    );
}

//! Plan mode through the engine with the scripted model: the model may read but every change is
//! refused (by the gate, not the prompt), it presents a plan with `present_plan`, and what the
//! user decides (approve, edit, reject) decides what happens in the same conversation. With the
//! real sandbox helper (this workspace's `corvid-sandbox`, when built), a writing command runs
//! read-only and fails.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::{Path, PathBuf};

use corvid_protocol::{
    ApprovalDecision, ApprovalPolicy, DecisionKind, EventMsg, Op, ProposalKind, TurnOutcome,
};
use corvid_test_support::agent::{self, ScriptedAgent};
use corvid_test_support::scripted::ScriptedReply;
use corvid_tools::{Sandbox, SandboxProbe};

/// The model in plan mode: reads, tries a write and a writing command, then presents a plan;
/// after approval it writes the file.
fn planning_replies() -> Vec<ScriptedReply> {
    vec![
        ScriptedReply::tool_call("c1", "read", r#"{"path":"notes.txt"}"#),
        ScriptedReply::tool_call("c2", "write", r#"{"path":"x","content":"made\n"}"#),
        ScriptedReply::tool_call("c3", "bash", r#"{"command":"touch x"}"#),
        ScriptedReply::tool_call(
            "c4",
            "present_plan",
            r##"{"plan":"# Make x\n\n1. Write `x` with `made`."}"##,
        ),
        ScriptedReply::tool_call("c5", "write", r#"{"path":"x","content":"made\n"}"#),
        ScriptedReply::text("Done: x is written."),
    ]
}

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "one\n").unwrap();
    dir
}

/// Starts in `before` (the policy to return to), then switches to plan mode.
async fn start(project: &Path, before: ApprovalPolicy, sandbox: Sandbox) -> ScriptedAgent {
    let mut config = agent::config(project, before);
    config.sandbox = sandbox;
    let agent = ScriptedAgent::spawn(config, planning_replies()).await;
    agent.session.submit(Op::SetApprovalPolicy {
        policy: ApprovalPolicy::Plan,
    });
    agent
}

/// The results the model got for its calls, in order.
fn results(agent: &ScriptedAgent) -> Vec<(String, bool)> {
    agent
        .model
        .requests()
        .iter()
        .flat_map(agent::tool_results)
        .collect()
}

#[tokio::test]
async fn plan_mode_refuses_changes_then_carries_out_the_approved_plan() {
    let dir = project();
    let mut agent = start(dir.path(), ApprovalPolicy::AutoEdit, Sandbox::off()).await;
    agent.send("make x");
    let proposal = agent.proposal().await;
    // Nothing was asked before the plan, and nothing was written.
    assert_eq!(proposal.call_id, "c4");
    assert!(!dir.path().join("x").exists());
    let ProposalKind::Plan { plan } = &proposal.kind else {
        panic!("a plan proposal: {proposal:?}")
    };
    assert!(plan.starts_with("# Make x"));
    assert_eq!(proposal.title, "Carry out this plan?");
    assert_eq!(
        proposal.decisions,
        [
            DecisionKind::Approve,
            DecisionKind::ApproveEdited,
            DecisionKind::Reject
        ]
    );
    // The model was told it is in plan mode and offered present_plan.
    let first = &agent.model.requests()[0];
    assert!(first.system.iter().any(|part| part.contains("# Plan mode")));
    assert!(agent::tool_names(first).contains(&"present_plan"));
    let refused = results(&agent);
    assert!(!refused[0].1, "the read ran: {refused:?}");
    assert!(
        refused[1].1 && refused[1].0.contains("in plan mode"),
        "{refused:?}"
    );
    assert!(
        refused[2].1 && refused[2].0.contains("turned it off"),
        "a command cannot run read-only without the kernel sandbox: {refused:?}"
    );

    agent.decide(&proposal.proposal_id, ApprovalDecision::Approve);
    let changed = agent
        .until(|msg| matches!(msg, EventMsg::SettingsChanged { .. }))
        .await;
    assert!(matches!(
        changed.msg,
        EventMsg::SettingsChanged {
            approval_policy: ApprovalPolicy::AutoEdit,
            ..
        }
    ));
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    // Under auto-edit the write runs without asking, in the same turn.
    assert_eq!(
        std::fs::read_to_string(dir.path().join("x")).unwrap(),
        "made\n"
    );
    let requests = agent.model.requests();
    let after = &requests[requests.len() - 2];
    assert!(!after.system.iter().any(|part| part.contains("# Plan mode")));
    assert!(!agent::tool_names(after).contains(&"present_plan"));
    let (approved, _) = &agent::tool_results(after)[0];
    assert!(approved.contains("approved the plan"), "{approved}");
}

#[tokio::test]
async fn an_edited_plan_replaces_the_models_and_a_rejected_one_stays_in_plan_mode() {
    let dir = project();
    let mut agent = start(dir.path(), ApprovalPolicy::FullAuto, Sandbox::off()).await;
    agent.send("make x");
    let proposal = agent.proposal().await;
    agent.decide(
        &proposal.proposal_id,
        ApprovalDecision::ApproveEdited {
            text: "1. Write `x` with `made`, then stop.".into(),
        },
    );
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    let requests = agent.model.requests();
    let (edited, is_error) = &agent::tool_results(&requests[requests.len() - 2])[0];
    assert!(!is_error);
    assert!(edited.contains("then stop."), "{edited}");
    assert!(dir.path().join("x").exists());

    // Rejected without feedback: the turn ends, still in plan mode, nothing written.
    let other = project();
    let mut agent = start(other.path(), ApprovalPolicy::FullAuto, Sandbox::off()).await;
    agent.send("make x");
    let proposal = agent.proposal().await;
    agent.decide(
        &proposal.proposal_id,
        ApprovalDecision::Reject { feedback: None },
    );
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    assert!(!other.path().join("x").exists());
    assert!(
        !agent
            .seen
            .iter()
            .any(|event| matches!(event.msg, EventMsg::SettingsChanged { approval_policy, .. } if approval_policy != ApprovalPolicy::Plan))
    );
}

/// This workspace's sandbox helper, when it has been built (`cargo build -p corvid-tools`).
fn helper() -> Option<PathBuf> {
    let deps = std::env::current_exe().ok()?;
    let helper = deps.parent()?.parent()?.join("corvid-sandbox");
    helper.is_file().then_some(helper)
}

#[tokio::test]
async fn with_the_kernel_sandbox_a_writing_command_runs_read_only_and_fails() {
    let probe = SandboxProbe::detect();
    let Some(helper) = helper().filter(|_| probe.landlock_abi.is_some()) else {
        eprintln!("SKIPPED: no Landlock here, or corvid-sandbox is not built");
        return;
    };
    let dir = tempfile::Builder::new()
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    std::fs::write(dir.path().join("notes.txt"), "one\n").unwrap();
    let sandbox = Sandbox::with_probe(helper, Vec::new(), None, probe);
    let mut agent = start(dir.path(), ApprovalPolicy::Ask, sandbox).await;
    agent.send("make x");
    let proposal = agent.proposal().await;
    assert!(matches!(proposal.kind, ProposalKind::Plan { .. }));
    let results = results(&agent);
    let (touched, failed) = &results[2];
    assert!(*failed, "{touched}");
    assert!(
        touched.contains("The session is read-only"),
        "the command ran in the read-only sandbox and failed: {touched}"
    );
    assert!(!dir.path().join("x").exists());
    agent.decide(&proposal.proposal_id, ApprovalDecision::Approve);
    // Back under `ask`, the write asks first.
    let write = agent.proposal().await;
    assert!(matches!(write.kind, ProposalKind::Write { .. }));
    agent.decide(&write.proposal_id, ApprovalDecision::Approve);
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    assert!(dir.path().join("x").exists());
}

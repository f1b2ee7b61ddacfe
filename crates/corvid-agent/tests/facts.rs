//! What the engine tells every face about calls, once: the read-only policy, a call's kind as
//! offered, a proposal's title, decisions and sandbox notice, a skill command, a turn's cost.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use corvid_protocol::{
    ApprovalPolicy, DecisionKind, EventMsg, Op, SendParams, ToolCallKind, TurnOutcome,
};
use corvid_test_support::agent::{self, ScriptedAgent};
use corvid_test_support::scripted::ScriptedReply;
use corvid_wire::model::Part;

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "one\n").unwrap();
    dir
}

#[tokio::test]
async fn read_only_refuses_a_write_and_a_writing_command_without_asking() {
    let dir = project();
    let mut agent = ScriptedAgent::spawn(
        agent::config(dir.path(), ApprovalPolicy::ReadOnly),
        vec![
            ScriptedReply::tool_call("c1", "read", r#"{"path":"notes.txt"}"#),
            ScriptedReply::tool_call("c2", "write", r#"{"path":"notes.txt","content":"two\n"}"#),
            ScriptedReply::tool_call("c3", "bash", r#"{"command":"echo two > notes.txt"}"#),
            ScriptedReply::text("I could only read."),
        ],
    )
    .await;
    agent.send("change the notes");
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "one\n"
    );
    assert!(agent.requests.is_empty(), "read-only never asks");
    let results = agent.last_results();
    let refused: Vec<_> = agent
        .model
        .requests()
        .iter()
        .flat_map(agent::tool_results)
        .collect();
    assert!(
        refused
            .iter()
            .filter(|(output, is_error)| *is_error && output.contains("read-only"))
            .count()
            >= 2,
        "{refused:?} {results:?}"
    );
    // The read ran; its call says it is a read of notes.txt.
    let read = agent
        .seen
        .iter()
        .find_map(|event| match &event.msg {
            EventMsg::ToolCall(call) if call.call_id == "c1" => Some(call.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(read.kind, ToolCallKind::Read);
    assert_eq!(read.locations, vec!["notes.txt".to_owned()]);
}

#[tokio::test]
async fn a_proposal_carries_its_title_decisions_and_always_rule_in_words() {
    let dir = project();
    let mut agent = ScriptedAgent::spawn(
        agent::config(dir.path(), ApprovalPolicy::Ask),
        vec![
            ScriptedReply::tool_call("c1", "bash", r#"{"command":"cargo test -p x"}"#),
            ScriptedReply::text("done"),
        ],
    )
    .await;
    agent.send("run the tests");
    let proposal = agent.proposal().await;
    assert_eq!(proposal.title, "Run cargo test -p x");
    assert_eq!(
        proposal.decisions,
        vec![
            DecisionKind::Approve,
            DecisionKind::ApproveAlways,
            // "Always" may also be saved to the project (no user settings file in this test).
            DecisionKind::SaveAlwaysProject,
            DecisionKind::Reject,
            // "Never" saves the same rule as a deny rule.
            DecisionKind::SaveNeverProject
        ]
    );
    assert_eq!(
        proposal.always_description.as_deref(),
        Some(
            "Always allow commands starting with `cargo test` (without shell operators) in this session."
        )
    );
    let call = agent
        .seen
        .iter()
        .find_map(|event| match &event.msg {
            EventMsg::ToolCall(call) => Some(call.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(call.kind, ToolCallKind::Command);
}

#[tokio::test]
async fn a_skill_command_has_the_engine_write_the_instruction() {
    let dir = project();
    let skill = dir.path().join(".corvid/skills/release");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: release\ndescription: cut a release\n---\nTag it.\n",
    )
    .unwrap();
    let mut agent = ScriptedAgent::spawn(
        agent::config(dir.path(), ApprovalPolicy::Ask),
        vec![ScriptedReply::text("released")],
    )
    .await;
    let reply = agent
        .session
        .request(Op::Send(SendParams {
            skill: Some("release".to_owned()),
            ..SendParams::text("1.2.0")
        }))
        .await;
    assert!(reply.is_ok(), "{reply:?}");
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    let request = agent.model.requests().pop().unwrap();
    let user = request.messages.last().unwrap();
    let text: String = user
        .parts
        .iter()
        .filter_map(|part| match part {
            Part::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        text.contains("skill `release`") && text.contains("1.2.0"),
        "{text}"
    );
    // An unknown skill is refused, and nothing runs.
    let refused = agent
        .session
        .request(Op::Send(SendParams {
            skill: Some("nope".to_owned()),
            ..SendParams::text("x")
        }))
        .await
        .unwrap_err();
    assert!(refused.message.contains("no skill `nope`"), "{refused:?}");
}

#[tokio::test]
async fn a_turns_cost_is_priced_like_the_ledger() {
    let dir = project();
    let mut config = agent::config(dir.path(), ApprovalPolicy::Ask);
    config.prices.insert(
        config.model.clone(),
        corvid_store::Price {
            input: 1_000_000.0,
            cached_input: 0.0,
            cache_write: 0.0,
            output: 0.0,
        },
    );
    let mut agent = ScriptedAgent::spawn(config, vec![ScriptedReply::text("hello")]).await;
    agent.send("hi");
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    let usage = agent
        .seen
        .iter()
        .find_map(|event| match &event.msg {
            EventMsg::Usage(usage) => Some(*usage),
            _ => None,
        })
        .unwrap();
    let expected = usage.turn.input as f64;
    assert_eq!(usage.turn_cost_usd, Some(expected));
    assert!(usage.context_window.is_some());
}

#[tokio::test]
async fn a_replayed_history_shows_each_call_with_its_kind_and_locations_as_announced() {
    let dir = project();
    let mut agent = ScriptedAgent::spawn(
        agent::config(dir.path(), ApprovalPolicy::FullAuto),
        vec![
            ScriptedReply::tool_call("c1", "read", r#"{"path":"notes.txt"}"#),
            ScriptedReply::tool_call("c2", "write", r#"{"path":"notes.txt","content":"two\n"}"#),
            ScriptedReply::tool_call("c3", "bash", r#"{"command":"echo three"}"#),
            ScriptedReply::text("Done."),
        ],
    )
    .await;
    agent.send("read, write, run");
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    let announced: Vec<_> = agent
        .seen
        .iter()
        .filter_map(|event| match &event.msg {
            EventMsg::ToolCall(call) => Some(call.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(announced.len(), 3);
    // A face that comes now gets the finished turn as history: the same calls, not `other`.
    let mut late = agent.session.subscribe();
    let history = loop {
        let event = agent::next_event(&mut late, agent::PATIENCE).await;
        if let EventMsg::ConversationOpened { history, .. } = event.msg {
            break history;
        }
    };
    let replayed: Vec<_> = history
        .into_iter()
        .filter_map(|entry| match entry {
            corvid_protocol::HistoryEntry::ToolCall(call) => Some(call),
            _ => None,
        })
        .collect();
    assert_eq!(
        replayed
            .iter()
            .map(|call| (call.kind.clone(), call.locations.clone()))
            .collect::<Vec<_>>(),
        announced
            .iter()
            .map(|call| (call.kind.clone(), call.locations.clone()))
            .collect::<Vec<_>>()
    );
    assert_eq!(replayed[0].kind, ToolCallKind::Read);
    assert_eq!(replayed[1].kind, ToolCallKind::Edit);
    assert_eq!(replayed[1].locations, ["notes.txt"]);
    assert_eq!(replayed[2].kind, ToolCallKind::Command);
}

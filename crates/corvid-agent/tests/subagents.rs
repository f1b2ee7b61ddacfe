//! Custom subagents: a `.claude/agents` file (Claude Code's format) is offered by the `task`
//! tool beside explore and general, runs with only the tools it names (a tool it lacks is
//! refused even under full-auto) and its own instructions, and a tool name corvid does not have
//! is reported.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use corvid_protocol::{ApprovalPolicy, EventMsg, TurnOutcome};
use corvid_test_support::agent::{self, ScriptedAgent};
use corvid_test_support::scripted::ScriptedReply;

#[tokio::test]
async fn a_custom_subagent_is_offered_and_runs_with_only_its_tools() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "one\n").unwrap();
    let agents = dir.path().join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("reviewer.md"),
        "---\nname: reviewer\ndescription: Reviews code for bugs. Use after a change.\n\
         tools: Read, Grep, Glob, NotebookEdit\nmodel: sonnet\n---\nYou are a strict reviewer.\n",
    )
    .unwrap();
    let mut agent = ScriptedAgent::spawn(
        agent::config(dir.path(), ApprovalPolicy::FullAuto),
        vec![
            ScriptedReply::tool_call(
                "t1",
                "task",
                r#"{"agent":"reviewer","description":"review the notes","prompt":"Review notes.txt."}"#,
            ),
            ScriptedReply::tool_call("s1", "write", r#"{"path":"notes.txt","content":"two\n"}"#),
            ScriptedReply::tool_call("s2", "read", r#"{"path":"notes.txt"}"#),
            ScriptedReply::text("The notes look fine."),
            ScriptedReply::text("Reviewed."),
        ],
    ).await;
    agent.send("review my notes");
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    let requests = agent.model.requests();
    assert_eq!(requests.len(), 5);

    // Offered beside explore and general, with its description.
    let task = requests[0]
        .tools
        .iter()
        .find(|tool| tool.name == "task")
        .unwrap();
    assert_eq!(
        task.parameters.to_value()["properties"]["agent"]["enum"],
        serde_json::json!(["explore", "general", "reviewer"])
    );
    assert!(
        task.description
            .as_deref()
            .unwrap()
            .contains("- reviewer: Reviews code for bugs. Use after a change."),
        "{task:?}"
    );

    // The subagent: its own instructions first, only its tools, the session's model (a Claude
    // model family is not a model corvid can pick).
    let sub = &requests[1];
    assert!(
        sub.system[0].starts_with("You are a strict reviewer."),
        "{}",
        sub.system[0]
    );
    let mut tools = agent::tool_names(sub);
    tools.sort_unstable();
    assert_eq!(tools, ["glob", "grep", "read"]);
    assert_eq!(sub.model, requests[0].model);

    // A tool it lacks is refused, even under full-auto; the file is unchanged.
    let refused = agent::tool_results(&requests[2]);
    assert_eq!(refused.len(), 1);
    assert!(refused[0].1, "{refused:?}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "one\n"
    );
    let read = agent::tool_results(&requests[3]);
    assert!(!read[0].1 && read[0].0.contains("one"), "{read:?}");
    let main = agent::tool_results(&requests[4]);
    assert_eq!(main[0].0, "The notes look fine.");

    let started = agent
        .seen
        .iter()
        .find_map(|event| match &event.msg {
            EventMsg::SubagentStarted { name, .. } => Some(name.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(started.as_deref(), Some("reviewer"));
    assert!(
        agent.warnings().iter().any(|warning| warning.contains(
            "the agent `reviewer` (.claude/agents/reviewer.md) names tools a subagent here does not have: NotebookEdit"
        )),
        "{:?}",
        agent.warnings()
    );
}

#[tokio::test]
async fn an_agent_written_during_the_session_is_offered_next_turn_and_a_broken_one_warns() {
    let dir = tempfile::tempdir().unwrap();
    let mut agent = ScriptedAgent::spawn(
        agent::config(dir.path(), ApprovalPolicy::Ask),
        vec![
            ScriptedReply::text("one"),
            ScriptedReply::tool_call(
                "t1",
                "task",
                r#"{"agent":"nobody","description":"x","prompt":"x"}"#,
            ),
            ScriptedReply::text("two"),
        ],
    )
    .await;
    agent.send("hello");
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    let agents = dir.path().join(".corvid/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("tester.md"),
        "---\ndescription: Writes tests.\nmodel: small-model\n---\nWrite tests.\n",
    )
    .unwrap();
    std::fs::write(
        agents.join("broken.md"),
        "---\nname: broken\n---\nno description\n",
    )
    .unwrap();
    agent.send("again");
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    let requests = agent.model.requests();
    let enum_of = |index: usize| {
        requests[index]
            .tools
            .iter()
            .find(|tool| tool.name == "task")
            .unwrap()
            .parameters
            .to_value()["properties"]["agent"]["enum"]
            .clone()
    };
    assert_eq!(enum_of(0), serde_json::json!(["explore", "general"]));
    assert_eq!(
        enum_of(1),
        serde_json::json!(["explore", "general", "tester"])
    );
    let unknown = agent::tool_results(&requests[2]);
    assert!(
        unknown[0].1 && unknown[0].0.contains("use one of explore, general, tester"),
        "{unknown:?}"
    );
    assert!(
        agent
            .warnings()
            .iter()
            .any(|warning| warning.contains("skipped the agent .corvid/agents/broken.md")),
        "{:?}",
        agent.warnings()
    );
}

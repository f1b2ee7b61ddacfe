//! A skill the agent writes during a session is offered on the next turn, as the built-in
//! `authoring-skills` skill promises (a scripted model, the real engine, tools and store).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use corvid_protocol::{ApprovalPolicy, TurnOutcome};
use corvid_test_support::agent::{self, ScriptedAgent};
use corvid_test_support::scripted::ScriptedReply;

const SKILL: &str = "---\\nname: release-notes\\ndescription: Draft release notes from the git log. Use when tagging a release.\\n---\\n# Release notes\\n\\nList every merged change since the last tag.\\n";

#[tokio::test]
async fn a_skill_written_by_the_agent_is_offered_on_the_next_turn() {
    let dir = tempfile::tempdir().unwrap();
    let write =
        format!(r#"{{"path":".corvid/skills/release-notes/SKILL.md","content":"{SKILL}"}}"#);
    let mut agent = ScriptedAgent::spawn(
        agent::config(dir.path(), ApprovalPolicy::FullAuto),
        vec![
            ScriptedReply::tool_call("w1", "write", &write),
            ScriptedReply::text("Wrote the skill."),
            ScriptedReply::tool_call("s1", "skill", r#"{"name":"release-notes"}"#),
            ScriptedReply::text("Loaded it."),
        ],
    )
    .await;

    agent.send("write a skill for release notes");
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    assert!(
        dir.path()
            .join(".corvid/skills/release-notes/SKILL.md")
            .is_file()
    );
    let first = &agent.model.requests()[0].system[0];
    assert!(!first.contains("release-notes"), "not there yet: {first}");

    agent.send("now use it");
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    let requests = agent.model.requests();
    let next_turn = &requests[2];
    assert!(
        next_turn.system[0].contains("- release-notes: Draft release notes"),
        "{}",
        next_turn.system[0]
    );
    let skill_tool = next_turn
        .tools
        .iter()
        .find(|tool| tool.name == "skill")
        .expect("the skill tool");
    assert!(
        skill_tool
            .description
            .as_deref()
            .unwrap_or_default()
            .contains("release-notes")
    );
    let (loaded, failed) = &agent.last_results()[0];
    assert!(
        !failed && loaded.contains("List every merged change"),
        "{loaded}"
    );
}

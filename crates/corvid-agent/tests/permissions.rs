//! Saved permission rules in Claude Code's syntax through the real engine and gate: an allow
//! runs without asking, a deny in another file beats it, an ask asks even under full-auto.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use corvid_protocol::{ApprovalDecision, ApprovalPolicy, EventMsg, TurnOutcome};
use corvid_test_support::agent::{self, ScriptedAgent};
use corvid_test_support::scripted::ScriptedReply;

#[tokio::test]
async fn a_saved_deny_beats_an_allow_and_an_allow_skips_the_question() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join("build")).unwrap();
    let user = home.path().join("settings.json");
    std::fs::write(
        &user,
        r#"{"permissions": {"allow": ["Bash(echo:*)", "Bash(rm:*)"]}}"#,
    )
    .unwrap();
    std::fs::create_dir(project.path().join(".claude")).unwrap();
    std::fs::write(
        project.path().join(".claude/settings.json"),
        r#"{"permissions": {"deny": ["Bash(rm:*)"]}}"#,
    )
    .unwrap();
    let mut config = agent::config(project.path(), ApprovalPolicy::Ask);
    config.user_settings = Some(user);
    let mut agent = ScriptedAgent::spawn(
        config,
        vec![
            ScriptedReply::tool_call("c1", "bash", r#"{"command":"echo allowed-run"}"#),
            ScriptedReply::tool_call("c2", "bash", r#"{"command":"echo ok && rm -rf build"}"#),
            ScriptedReply::text("done"),
        ],
    )
    .await;
    agent.send("tidy");
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);

    assert!(
        agent.requests.is_empty(),
        "the allowed command ran without asking"
    );
    let (ran, failed) = &agent.results_in(1)[0];
    assert!(!failed && ran.contains("allowed-run"), "{ran}");
    let (denied, failed) = &agent.results_in(2)[0];
    assert!(*failed);
    assert!(
        denied.contains("`Bash(rm:*)` in .claude/settings.json denies"),
        "{denied}"
    );
    assert!(project.path().join("build").is_dir());
    // Every call, the refused one too, is announced (with its one line for people) before its
    // result: faces show the command a rule refused, not a bare call id.
    for id in ["c1", "c2"] {
        let announced = agent.seen.iter().position(|event| {
            matches!(&event.msg, EventMsg::ToolCall(call) if call.call_id == id && call.summary.contains("echo "))
        });
        let result = agent.seen.iter().position(
            |event| matches!(&event.msg, EventMsg::ToolResult(result) if result.call_id == id),
        );
        assert!(
            announced.is_some() && announced < result,
            "{id}: announced at {announced:?}, result at {result:?}"
        );
    }
}

#[tokio::test]
async fn an_ask_rule_asks_even_under_full_auto() {
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join(".corvid")).unwrap();
    std::fs::write(
        project.path().join(".corvid/settings.json"),
        r#"{"permissions": {"ask": ["Write(docs/**)"]}}"#,
    )
    .unwrap();
    let mut agent = ScriptedAgent::spawn(
        agent::config(project.path(), ApprovalPolicy::FullAuto),
        vec![
            ScriptedReply::tool_call("w1", "write", r#"{"path":"notes.md","content":"a"}"#),
            ScriptedReply::tool_call("w2", "write", r#"{"path":"docs/guide.md","content":"b"}"#),
            ScriptedReply::text("done"),
        ],
    )
    .await;
    agent.send("write");
    let proposal = agent.proposal().await;
    assert!(
        format!("{:?}", proposal.kind).contains("docs/guide.md"),
        "{proposal:?}"
    );
    agent.decide(&proposal.proposal_id, ApprovalDecision::Approve);
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    assert!(project.path().join("notes.md").is_file());
    assert!(project.path().join("docs/guide.md").is_file());
}

#[tokio::test]
async fn always_saved_to_the_project_writes_the_rule_and_the_next_call_runs_without_asking() {
    use corvid_protocol::{DecisionKind, Op, ReplyOk, RuleAction, RuleFile};
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join(".corvid")).unwrap();
    std::fs::write(
        project.path().join(".corvid/settings.json"),
        r#"{"hooks": {}, "permissions": {"deny": ["Bash(rm:*)"]}}"#,
    )
    .unwrap();
    let mut agent = ScriptedAgent::spawn(
        agent::config(project.path(), ApprovalPolicy::Ask),
        vec![
            ScriptedReply::tool_call("c1", "bash", r#"{"command":"ls -a"}"#),
            ScriptedReply::tool_call("c2", "bash", r#"{"command":"ls -la"}"#),
            ScriptedReply::text("done"),
        ],
    )
    .await;
    agent.send("list twice");
    let proposal = agent.proposal().await;
    assert!(
        proposal
            .decisions
            .contains(&DecisionKind::SaveAlwaysProject),
        "{:?}",
        proposal.decisions
    );
    agent.decide(
        &proposal.proposal_id,
        ApprovalDecision::SaveAlways {
            scope: proposal.always_scope.clone().unwrap(),
            file: RuleFile::Project,
        },
    );
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    assert!(
        agent.requests.is_empty(),
        "the second listing ran without asking"
    );
    let (second, failed) = &agent.results_in(2)[0];
    assert!(!failed && second.contains(".corvid"), "{second}");
    let written: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(project.path().join(".corvid/settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        written["hooks"],
        serde_json::json!({}),
        "other keys are kept"
    );
    assert_eq!(
        written["permissions"]["allow"],
        serde_json::json!(["Bash(ls:*)"])
    );

    // `/permissions` lists both rules with their file, and removes one.
    let listed = agent.session.request(Op::ListPermissions).await;
    let Ok(ReplyOk::Permissions { rules, .. }) = listed else {
        panic!("{listed:?}")
    };
    let shown: Vec<(&str, RuleAction, &str)> = rules
        .iter()
        .map(|rule| (rule.rule.as_str(), rule.action, rule.source.as_str()))
        .collect();
    assert_eq!(
        shown,
        [
            ("Bash(ls:*)", RuleAction::Allow, ".corvid/settings.json"),
            ("Bash(rm:*)", RuleAction::Deny, ".corvid/settings.json")
        ]
    );
    let removed = agent
        .session
        .request(Op::RemovePermission { number: 2 })
        .await;
    let Ok(ReplyOk::Permissions { rules, message }) = removed else {
        panic!("{removed:?}")
    };
    assert_eq!(rules.len(), 1);
    assert_eq!(
        message.as_deref(),
        Some("removed `Bash(rm:*)` from .corvid/settings.json")
    );
    assert!(
        agent
            .session
            .request(Op::RemovePermission { number: 7 })
            .await
            .is_err()
    );
}

#[tokio::test]
async fn never_saves_a_deny_rule_and_an_added_deny_beats_an_allow() {
    use corvid_protocol::{DecisionKind, Op, ReplyOk, RuleAction, RuleFile};
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("notes.txt"), "secret").unwrap();
    let user_file = home.path().join("settings.json");
    std::fs::write(&user_file, r#"{"permissions": {"allow": ["Bash(cat:*)"]}}"#).unwrap();
    let mut config = agent::config(project.path(), ApprovalPolicy::Ask);
    config.user_settings = Some(user_file.clone());
    let mut agent = ScriptedAgent::spawn(
        config,
        vec![
            ScriptedReply::tool_call("c1", "bash", r#"{"command":"touch made.txt"}"#),
            ScriptedReply::tool_call("c2", "bash", r#"{"command":"touch again.txt"}"#),
            ScriptedReply::text("gave up"),
            ScriptedReply::tool_call("c3", "bash", r#"{"command":"cat notes.txt"}"#),
            ScriptedReply::text("denied"),
        ],
    )
    .await;
    agent.send("make files");
    let proposal = agent.proposal().await;
    for kind in [DecisionKind::SaveNeverProject, DecisionKind::SaveNeverUser] {
        assert!(
            proposal.decisions.contains(&kind),
            "{:?}",
            proposal.decisions
        );
    }
    agent.decide(
        &proposal.proposal_id,
        ApprovalDecision::SaveNever {
            scope: proposal.always_scope.clone().unwrap(),
            file: RuleFile::User,
        },
    );
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    assert!(agent.requests.is_empty(), "the second touch did not ask");
    assert!(!project.path().join("made.txt").exists());
    assert!(!project.path().join("again.txt").exists());
    let (first, failed) = &agent.results_in(1)[0];
    assert!(
        *failed && first.contains("saved the rule `Bash(touch:*)`"),
        "{first}"
    );
    let (second, failed) = &agent.results_in(2)[0];
    assert!(*failed && second.contains("`Bash(touch:*)`"), "{second}");
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&user_file).unwrap()).unwrap();
    assert_eq!(
        written["permissions"]["deny"],
        serde_json::json!(["Bash(touch:*)"])
    );
    assert_eq!(
        written["permissions"]["allow"],
        serde_json::json!(["Bash(cat:*)"])
    );

    // `/permissions add deny` beats the user's allow on the next call.
    let added = agent
        .session
        .request(Op::AddPermission {
            action: RuleAction::Deny,
            rule: "Bash(cat:*)".to_owned(),
            file: RuleFile::Project,
        })
        .await;
    let Ok(ReplyOk::Permissions { rules, message }) = added else {
        panic!("{added:?}")
    };
    assert!(
        message
            .unwrap()
            .contains("deny list of .corvid/settings.json")
    );
    assert!(rules.iter().any(|rule| rule.rule == "Bash(cat:*)"
        && rule.action == RuleAction::Deny
        && rule.source == ".corvid/settings.json"));
    agent.send("read the notes");
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    let (read, failed) = &agent.last_results()[0];
    assert!(*failed && read.contains("denies"), "{read}");
    assert!(!read.contains("secret"), "{read}");

    let bad = agent
        .session
        .request(Op::AddPermission {
            action: RuleAction::Ask,
            rule: "Bash(unclosed".to_owned(),
            file: RuleFile::Project,
        })
        .await;
    assert!(bad.is_err(), "{bad:?}");
}

#[derive(Debug)]
struct TrustAll;

impl corvid_agent::hooks::ProjectTrust for TrustAll {
    fn is_trusted(&self, _project: &std::path::Path, _file: &str, _fingerprint: &str) -> bool {
        true
    }
}

/// A cloned repository cannot approve its own commands: a never-trusted project's `allow` list
/// is not applied (the call asks, and a warning says how to trust it), as its hooks and MCP
/// servers do not run; once trusted, it applies.
#[tokio::test]
async fn a_never_trusted_projects_allow_list_does_not_skip_the_question() {
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join(".claude")).unwrap();
    std::fs::write(
        project.path().join(".claude/settings.json"),
        r#"{"permissions": {"allow": ["Bash(touch:*)"]}}"#,
    )
    .unwrap();
    let mut untrusted = ScriptedAgent::spawn(
        agent::config(project.path(), ApprovalPolicy::Ask),
        vec![
            ScriptedReply::tool_call("c1", "bash", r#"{"command":"touch made.txt"}"#),
            ScriptedReply::text("done"),
        ],
    )
    .await;
    untrusted.send("make a file");
    let proposal = untrusted.proposal().await;
    assert_eq!(proposal.title, "Run touch made.txt");
    untrusted.decide(
        &proposal.proposal_id,
        ApprovalDecision::Reject { feedback: None },
    );
    assert_eq!(untrusted.turn_finished().await, TurnOutcome::Completed);
    assert!(!project.path().join("made.txt").exists());
    assert!(
        untrusted
            .warnings()
            .iter()
            .any(|warning| warning.contains("not applied until you trust them")),
        "{:?}",
        untrusted.warnings()
    );

    let mut config = agent::config(project.path(), ApprovalPolicy::Ask);
    config.project_trust = Some(std::sync::Arc::new(TrustAll));
    let mut trusted = ScriptedAgent::spawn(
        config,
        vec![
            ScriptedReply::tool_call("c1", "bash", r#"{"command":"touch made.txt"}"#),
            ScriptedReply::text("done"),
        ],
    )
    .await;
    trusted.send("make a file");
    assert_eq!(trusted.turn_finished().await, TurnOutcome::Completed);
    assert!(trusted.requests.is_empty(), "the trusted allow asked");
    assert!(project.path().join("made.txt").exists());
}

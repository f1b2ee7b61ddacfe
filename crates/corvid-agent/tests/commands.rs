//! Custom slash commands: a project's prompt file expanded by the engine (`$ARGUMENTS`, `$1`,
//! `@path`, `` !`command` `` through the approval gate), Claude Code's and Gemini CLI's folders,
//! and `allowed-tools` narrowing the turn.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use corvid_protocol::commands::{ProjectCommand, ProjectCommandKind};
use corvid_protocol::{
    ApprovalDecision, ApprovalPolicy, EventMsg, Op, ProposalKind, SendParams, TurnOutcome,
};
use corvid_test_support::agent::{self, ScriptedAgent};
use corvid_test_support::scripted::ScriptedReply;
use corvid_wire::model::{ChatRequest, Part};

fn git(dir: &std::path::Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

/// A git project with one committed file and one new one, and a project command.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("notes.txt"), "the notes\n").unwrap();
    git(root, &["init", "-q"]);
    git(root, &["add", "notes.txt"]);
    git(
        root,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@e",
            "commit",
            "-qm",
            "one",
        ],
    );
    std::fs::write(root.join("fresh.rs"), "fn main() {}\n").unwrap();
    let commands = root.join(".corvid/commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(
        commands.join("review.md"),
        "---\ndescription: review the work in progress\nargument-hint: <focus>\n---\n\
         Review $ARGUMENTS (first word: $1).\nStatus:\n!`git status --short`\nNotes: @notes.txt\n",
    )
    .unwrap();
    dir
}

fn user_text(request: &ChatRequest) -> String {
    request
        .messages
        .last()
        .unwrap()
        .parts
        .iter()
        .filter_map(|part| match part {
            Part::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

fn command(name: &str, arguments: &str) -> Op {
    Op::Send(SendParams {
        command: Some(name.to_owned()),
        ..SendParams::text(arguments)
    })
}

#[tokio::test]
async fn a_project_command_expands_its_arguments_files_and_approved_command_output() {
    let dir = project();
    let mut agent = ScriptedAgent::spawn(
        agent::config(dir.path(), ApprovalPolicy::Ask),
        vec![ScriptedReply::text("reviewed")],
    )
    .await;
    let reply = agent
        .session
        .request(command("review", "parser errors"))
        .await;
    assert!(reply.is_ok(), "{reply:?}");
    // `git status` asks first, under `ask`, as any command the model runs would.
    let proposal = agent.proposal().await;
    assert!(
        matches!(&proposal.kind, ProposalKind::Command { command, .. } if command == "git status --short"),
        "{proposal:?}"
    );
    agent.decide(&proposal.proposal_id, ApprovalDecision::Approve);
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);

    let started = agent
        .seen
        .iter()
        .find_map(|event| match &event.msg {
            EventMsg::TurnStarted { prompt, .. } => prompt.clone(),
            _ => None,
        })
        .unwrap();
    assert_eq!(started, "/review parser errors");
    let requests = agent.model.requests();
    assert_eq!(requests.len(), 1);
    let text = user_text(&requests[0]);
    assert!(
        text.contains("Review parser errors (first word: parser)."),
        "{text}"
    );
    assert!(text.contains("?? fresh.rs"), "git status output: {text}");
    assert!(
        text.contains("Notes: notes.txt")
            && text.contains("Contents of notes.txt:\n```\nthe notes\n"),
        "{text}"
    );
    assert!(
        !text.contains("$ARGUMENTS") && !text.contains("!`"),
        "{text}"
    );

    // The expanded message is the conversation's: the next turn's request starts with it.
    agent.model.push(ScriptedReply::text("ok"));
    agent.send("thanks");
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    let next = agent.model.requests().pop().unwrap();
    let first: String = match &next.messages[0].parts[0] {
        Part::Text { text } => text.clone(),
        other => panic!("{other:?}"),
    };
    assert!(first.contains("Review parser errors"), "{first}");
}

#[tokio::test]
async fn a_rejected_command_line_is_inlined_as_not_run_and_an_unknown_command_is_refused() {
    let dir = project();
    let mut agent = ScriptedAgent::spawn(
        agent::config(dir.path(), ApprovalPolicy::Ask),
        vec![ScriptedReply::text("fine")],
    )
    .await;
    agent.session.request(command("review", "x")).await.unwrap();
    let proposal = agent.proposal().await;
    agent.decide(
        &proposal.proposal_id,
        ApprovalDecision::Reject { feedback: None },
    );
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    let text = user_text(&agent.model.requests()[0]);
    assert!(text.contains("rejected"), "{text}");
    assert!(!text.contains("fresh.rs"), "{text}");

    let refused = agent
        .session
        .request(command("nope", ""))
        .await
        .unwrap_err();
    assert!(
        refused.message.contains("no command `/nope`"),
        "{refused:?}"
    );
}

#[tokio::test]
async fn claude_and_gemini_commands_are_found_and_allowed_tools_narrow_the_turn() {
    let dir = project();
    let claude = dir.path().join(".claude/commands/git");
    std::fs::create_dir_all(&claude).unwrap();
    std::fs::write(
        claude.join("log.md"),
        "---\nallowed-tools: Read, Bash(git log:*)\n---\nSummarise. !`git status`\n",
    )
    .unwrap();
    let gemini = dir.path().join(".gemini/commands");
    std::fs::create_dir_all(&gemini).unwrap();
    std::fs::write(
        gemini.join("plan.toml"),
        "description = \"plan a change\"\nprompt = \"\"\"Plan: {{args}}\"\"\"\n",
    )
    .unwrap();
    let mut agent = ScriptedAgent::spawn(
        agent::config(dir.path(), ApprovalPolicy::FullAuto),
        vec![ScriptedReply::text("one"), ScriptedReply::text("two")],
    )
    .await;
    let listed = agent.session.commands();
    let custom: Vec<&ProjectCommand> = listed
        .iter()
        .filter(|command| command.kind == ProjectCommandKind::Custom)
        .collect();
    let names: Vec<&str> = custom.iter().map(|command| command.name.as_str()).collect();
    assert_eq!(names, ["git:log", "plan", "review"]);
    assert_eq!(custom[1].description, "plan a change");
    assert_eq!(custom[2].argument, "<focus>");

    agent.session.request(command("git:log", "")).await.unwrap();
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    let request = &agent.model.requests()[0];
    let text = user_text(request);
    assert!(
        text.contains("[`git status` not run: the command's allowed-tools do not include it]"),
        "{text}"
    );
    let mut tools = agent::tool_names(request);
    tools.sort_unstable();
    assert_eq!(tools, ["bash", "read", "task"]);

    agent
        .session
        .request(command("plan", "split the parser"))
        .await
        .unwrap();
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    let text = user_text(&agent.model.requests()[1]);
    assert!(text.ends_with("Plan: split the parser"), "{text}");
}

#[tokio::test]
async fn a_command_written_during_the_session_is_listed_and_runs() {
    let dir = project();
    let mut agent = ScriptedAgent::spawn(
        agent::config(dir.path(), ApprovalPolicy::FullAuto),
        vec![ScriptedReply::text("done")],
    )
    .await;
    let before = agent.session.commands();
    assert!(before.iter().all(|command| command.name != "later"));
    std::fs::write(dir.path().join(".corvid/commands/later.md"), "Do $1 later.").unwrap();
    assert!(
        agent
            .session
            .commands()
            .iter()
            .any(|command| command.name == "later" && command.description == "Do $1 later.")
    );
    agent.session.request(command("later", "it")).await.unwrap();
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    assert!(user_text(&agent.model.requests()[0]).ends_with("Do it later."));
}

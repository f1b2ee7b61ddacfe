//! Whole turns against a scripted model, through the real engine, tools and store.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use corvid_agent::{
    AgentConfig, Agents, EventStream, ModelClient, ModelError, OpenConversation, StreamFuture,
};
use corvid_protocol::{
    ApprovalDecision, ApprovalPolicy, ApprovalRule, ErrorClass, Event, EventMsg, Op, ProposalKind,
    ProposalNotification, SendParams, TurnOutcome,
};
use corvid_test_support::agent::{self, ScriptedAgent};
use corvid_test_support::scripted::ScriptedReply;
use corvid_wire::model::{ChatRequest, Part, Role, StreamEvent, ToolChoice};

async fn start(
    project: &Path,
    policy: ApprovalPolicy,
    replies: Vec<ScriptedReply>,
) -> ScriptedAgent {
    start_with(project, None, policy, replies).await
}

/// An agent on `database` (a file the test reads or reopens), else on a store in memory.
async fn start_with(
    project: &Path,
    database: Option<&Path>,
    policy: ApprovalPolicy,
    replies: Vec<ScriptedReply>,
) -> ScriptedAgent {
    let config = agent::config(project, policy);
    match database {
        Some(path) => ScriptedAgent::spawn_on_store(config, replies, store_at(path)).await,
        None => ScriptedAgent::spawn(config, replies).await,
    }
}

/// The store in the SQLite file `path`, as a service shares it.
fn store_at(path: &Path) -> corvid_agent::SharedStore {
    Arc::new(parking_lot::Mutex::new(
        corvid_store::Store::open(path).unwrap(),
    ))
}

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("lib.rs"),
        "fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n",
    )
    .unwrap();
    dir
}

#[tokio::test]
async fn read_edit_bash_in_one_turn() {
    let dir = project();
    let mut agent = start(
        dir.path(),
        ApprovalPolicy::FullAuto,
        vec![
            ScriptedReply::tool_call("c1", "read", r#"{"path":"lib.rs"}"#),
            ScriptedReply::tool_call(
                "c2",
                "edit",
                r#"{"path":"lib.rs","old_string":"a - b","new_string":"a + b"}"#,
            ),
            ScriptedReply::tool_call("c3", "bash", r#"{"command":"grep -c 'a + b' lib.rs"}"#),
            ScriptedReply::text("Fixed the sign."),
        ],
    )
    .await;
    agent.send("fix add");
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("lib.rs")).unwrap(),
        "fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n"
    );
    let requests = agent.model.requests();
    assert_eq!(requests.len(), 4);
    let read_result = &requests[1].messages.last().unwrap().parts[0];
    assert!(
        matches!(read_result, Part::ToolResult(result) if format!("{:?}", result.content).contains("a - b"))
    );
    let (output, is_error) = agent.last_results()[0].clone();
    assert!(!is_error && output.contains('1'), "{output}");
    let texts: String = agent
        .seen
        .iter()
        .filter_map(|event| match &event.msg {
            EventMsg::TextDelta { delta } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(texts, "Fixed the sign.");
    assert!(requests[0].tools.iter().any(|tool| tool.name == "task"));
    assert!(requests[0].system[0].contains("read"), "a system prompt");
}

#[tokio::test]
async fn approve_reject_with_feedback_and_allow_always() {
    let dir = project();
    let mut agent = start(
        dir.path(),
        ApprovalPolicy::Ask,
        vec![
            ScriptedReply::tool_call("c1", "bash", r#"{"command":"echo one"}"#),
            ScriptedReply::tool_call("c2", "bash", r#"{"command":"echo two"}"#),
            ScriptedReply::tool_call("c3", "bash", r#"{"command":"echo three"}"#),
            ScriptedReply::tool_call("c4", "bash", r#"{"command":"echo four"}"#),
            ScriptedReply::text("done"),
        ],
    )
    .await;
    agent.send("run things");
    let ProposalNotification {
        proposal_id: first,
        kind,
        ..
    } = agent.proposal().await;
    // Paths in events are relative to the project: the command runs in its root, `.`.
    assert!(
        matches!(&kind, ProposalKind::Command { command, cwd } if command == "echo one" && cwd == "."),
        "{kind:?}"
    );
    agent.decide(&first, ApprovalDecision::Approve);
    let second = agent.proposal().await.proposal_id;
    assert!(agent.last_results()[0].0.contains("one"));
    agent.decide(
        &second,
        ApprovalDecision::Reject {
            feedback: Some("use printf instead".to_owned()),
        },
    );
    let third = agent.proposal().await.proposal_id;
    let (feedback, is_error) = agent.last_results()[0].clone();
    assert!(
        is_error && feedback.contains("use printf instead"),
        "{feedback}"
    );
    agent.decide(
        &third,
        ApprovalDecision::ApproveAlways {
            scope: ApprovalRule::CommandPrefix {
                prefix: "echo".to_owned(),
            },
        },
    );
    // "echo four" now runs without asking.
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    // The three proposals were taken above; no fourth request came.
    assert!(agent.requests.is_empty(), "{:?}", agent.requests);
    assert!(agent.last_results()[0].0.contains("four"));
}

/// An agent under `ask` whose turn "fix" proposes fixing the sign in lib.rs, and that proposal.
async fn proposing_the_sign_fix(project: &Path) -> (ScriptedAgent, ProposalNotification) {
    let mut agent = start(
        project,
        ApprovalPolicy::Ask,
        vec![
            ScriptedReply::tool_call(
                "c1",
                "edit",
                r#"{"path":"lib.rs","old_string":"a - b","new_string":"a + b"}"#,
            ),
            ScriptedReply::text("ok"),
        ],
    )
    .await;
    agent.send("fix");
    let proposal = agent.proposal().await;
    (agent, proposal)
}

#[tokio::test]
async fn an_edit_is_relocated_after_the_file_changed_during_review() {
    let dir = project();
    let (mut agent, proposal) = proposing_the_sign_fix(dir.path()).await;
    let kind = &proposal.kind;
    assert!(
        matches!(kind, ProposalKind::Edit { diff, .. } if diff.contains("+    a + b")),
        "{kind:?}"
    );
    // The user adds lines above while reviewing.
    std::fs::write(
        dir.path().join("lib.rs"),
        "// new header\n\nfn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n",
    )
    .unwrap();
    agent.decide(&proposal.proposal_id, ApprovalDecision::Approve);
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("lib.rs")).unwrap(),
        "// new header\n\nfn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n"
    );
}

#[tokio::test]
async fn a_vanished_target_is_refused() {
    let dir = project();
    let (mut agent, proposal) = proposing_the_sign_fix(dir.path()).await;
    std::fs::write(dir.path().join("lib.rs"), "fn add() {}\n").unwrap();
    agent.decide(&proposal.proposal_id, ApprovalDecision::Approve);
    agent.turn_finished().await;
    let (output, is_error) = agent.last_results()[0].clone();
    assert!(is_error, "{output}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("lib.rs")).unwrap(),
        "fn add() {}\n"
    );
}

#[tokio::test]
async fn path_escapes_are_refused() {
    let dir = project();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "secret").unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).unwrap();
    let absolute = outside.path().join("secret.txt").display().to_string();
    let mut agent = start(
        dir.path(),
        ApprovalPolicy::FullAuto,
        vec![
            ScriptedReply::tool_calls(&[
                ("c1", "read", r#"{"path":"../secret.txt"}"#),
                ("c2", "read", &format!(r#"{{"path":"{absolute}"}}"#)),
                ("c3", "read", r#"{"path":"link/secret.txt"}"#),
                ("c4", "write", r#"{"path":".git/config","content":"x"}"#),
            ]),
            ScriptedReply::text("ok"),
        ],
    )
    .await;
    agent.send("look around");
    agent.turn_finished().await;
    let results = agent.last_results();
    assert_eq!(results.len(), 4);
    for (output, is_error) in results {
        assert!(is_error, "{output}");
        assert!(
            !output.contains("secret\n") && output != "secret",
            "{output}"
        );
    }
}

#[tokio::test]
async fn cancel_stops_a_long_command() {
    let dir = project();
    let mut agent = start(
        dir.path(),
        ApprovalPolicy::FullAuto,
        vec![ScriptedReply::tool_call(
            "c1",
            "bash",
            r#"{"command":"sleep 30","timeout_ms":60000}"#,
        )],
    )
    .await;
    agent.send("wait");
    agent
        .until(|msg| matches!(msg, EventMsg::ToolCall(_)))
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = std::time::Instant::now();
    agent.session.submit(Op::Cancel);
    assert_eq!(agent.turn_finished().await, TurnOutcome::Cancelled);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the command was stopped, not waited for"
    );
}

#[tokio::test]
async fn identical_calls_repeated_get_guidance_instead_of_a_fourth_run() {
    let dir = project();
    let read = ScriptedReply::tool_call;
    let mut agent = start(
        dir.path(),
        ApprovalPolicy::FullAuto,
        vec![
            read("c1", "read", r#"{"path":"lib.rs"}"#),
            read("c2", "read", r#"{"path":"lib.rs"}"#),
            read("c3", "read", r#"{"path":"lib.rs"}"#),
            read("c4", "read", r#"{"path":"lib.rs"}"#),
            ScriptedReply::text("ok"),
        ],
    )
    .await;
    agent.send("read it");
    agent.turn_finished().await;
    let (guidance, is_error) = agent.last_results()[0].clone();
    assert!(
        is_error && guidance.contains("already made 3 times"),
        "{guidance}"
    );
}

#[tokio::test]
async fn the_step_cap_stops_the_turn_and_says_why() {
    let dir = project();
    let replies = (0..50)
        .map(|n| {
            ScriptedReply::tool_call(
                &format!("c{n}"),
                "glob",
                &format!(r#"{{"pattern":"*{n}"}}"#),
            )
        })
        .collect();
    let mut agent = start(dir.path(), ApprovalPolicy::FullAuto, replies).await;
    agent
        .model
        .push(ScriptedReply::text("Listed 50 patterns; nothing matched."));
    agent.send("loop");
    assert_eq!(agent.turn_finished().await, TurnOutcome::StepLimit);
    assert!(agent.seen.iter().any(
        |event| matches!(&event.msg, EventMsg::Error(error) if error.class == ErrorClass::StepLimit)
    ));
    // 50 steps with tools, then one last call in which no tool may be called.
    let requests = agent.model.requests();
    assert_eq!(requests.len(), 51);
    assert!(
        requests[..50]
            .iter()
            .all(|request| request.tool_choice.is_none())
    );
    let last = &requests[50];
    assert_eq!(last.tool_choice, Some(ToolChoice::None));
    assert!(
        format!("{:?}", last.messages.last().unwrap()).contains("Step limit reached"),
        "the last call says why"
    );
    assert!(
        agent.seen.iter().any(|event| matches!(&event.msg,
        EventMsg::MessageCompleted { text, .. } if text == "Listed 50 patterns; nothing matched."))
    );

    // The note was for that call only: the next message reaches the model as the user wrote it.
    agent.model.push(ScriptedReply::text("ok"));
    agent.send("thanks, now stop");
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    let next = agent.model.requests().last().unwrap().clone();
    let history = format!("{:?}", next.messages);
    assert!(!history.contains("Step limit reached"), "{history}");
    let asked = next.messages.last().unwrap();
    assert_eq!(asked.role, Role::User);
    assert_eq!(
        format!("{:?}", asked.parts),
        format!(
            "{:?}",
            vec![Part::Text {
                text: "thanks, now stop".to_owned()
            }]
        )
    );
}

#[tokio::test]
async fn failures_are_classified_and_the_session_goes_on() {
    let dir = project();
    let mut agent = start(
        dir.path(),
        ApprovalPolicy::Ask,
        vec![
            ScriptedReply::Fail {
                status: 429,
                message: "slow down".to_owned(),
            },
            ScriptedReply::text("back"),
        ],
    )
    .await;
    agent.send("hi");
    let error = agent.until(|msg| matches!(msg, EventMsg::Error(_))).await;
    let EventMsg::Error(error) = error.msg else {
        unreachable!()
    };
    assert_eq!(error.class, ErrorClass::RateLimited);
    assert!(error.retryable && !error.next_action.is_empty());
    assert_eq!(agent.turn_finished().await, TurnOutcome::Failed);
    agent.send("again");
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
}

#[tokio::test]
async fn subagent_events_come_at_depth_one() {
    let dir = project();
    let mut agent = start(
        dir.path(),
        ApprovalPolicy::FullAuto,
        vec![
            ScriptedReply::tool_call(
                "t1",
                "task",
                r#"{"agent":"explore","description":"find add","prompt":"Where is add defined?"}"#,
            ),
            ScriptedReply::tool_call("s1", "grep", r#"{"pattern":"fn add"}"#),
            ScriptedReply::text("add is in lib.rs line 1"),
            ScriptedReply::text("It is in lib.rs."),
        ],
    )
    .await;
    agent.send("where is add?");
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    let grep_call = agent
        .seen
        .iter()
        .find(|event| matches!(&event.msg, EventMsg::ToolCall(call) if call.tool == "grep"))
        .unwrap();
    assert_eq!(grep_call.depth, 1);
    assert_eq!(grep_call.parent_call_id.as_deref(), Some("t1"));
    assert!(agent.seen.iter().any(|event| matches!(&event.msg, EventMsg::SubagentFinished { ok: true, summary, .. } if summary.contains("line 1"))));
    let requests = agent.model.requests();
    assert!(
        requests[1]
            .tools
            .iter()
            .all(|tool| tool.name != "write" && tool.name != "bash" && tool.name != "task"),
        "explore is read-only"
    );
    let explore_prompt = &requests[1].system[0];
    assert!(explore_prompt.contains("`grep`"), "{explore_prompt}");
    for tool in [
        "`bash`",
        "`write`",
        "`edit`",
        "`task`",
        "`todowrite`",
        "`process`",
    ] {
        assert!(
            !explore_prompt.contains(tool),
            "explore's prompt offers {tool}:\n{explore_prompt}"
        );
    }
    assert!(
        requests[0].system[0].contains("`task`"),
        "the main agent's does"
    );
    assert!(
        agent.last_results()[0].0.contains("line 1"),
        "the main agent gets the report"
    );
}

#[tokio::test]
async fn a_conversation_resumes_after_the_engine_restarts_and_broken_history_is_repaired() {
    let dir = project();
    let database = dir.path().join(".corvid-test.db");
    {
        let mut agent = start_with(
            dir.path(),
            Some(&database),
            ApprovalPolicy::Ask,
            vec![ScriptedReply::text("noted")],
        )
        .await;
        agent.send("remember the word kestrel");
        agent.turn_finished().await;
        agent.shut_down().await;
    }
    // A crash left a tool call without its result in the stored history.
    {
        let mut store = corvid_store::Store::open(&database).unwrap();
        let project = dir.path().canonicalize().unwrap().display().to_string();
        let conversation = store.current_conversation(&project).unwrap().unwrap();
        let dangling = corvid_wire::model::Message {
            role: Role::Assistant,
            parts: vec![Part::ToolCall(corvid_wire::model::ToolCall {
                id: "dangling".into(),
                name: "read".into(),
                arguments: r#"{"path":"lib.rs"}"#.into(),
                signature: None,
            })],
        };
        store
            .append_messages(
                &conversation,
                &[("assistant", &serde_json::to_string(&dangling).unwrap())],
            )
            .unwrap();
    }
    let mut agent = start_with(
        dir.path(),
        Some(&database),
        ApprovalPolicy::Ask,
        vec![ScriptedReply::text("kestrel")],
    )
    .await;
    agent.send("what was the word?");
    agent.turn_finished().await;
    let request = &agent.model.requests()[0];
    assert!(
        format!("{:?}", request.messages[0].parts).contains("kestrel"),
        "the earlier message came back"
    );
    let call_at = request
        .messages
        .iter()
        .position(|m| {
            m.parts
                .iter()
                .any(|p| matches!(p, Part::ToolCall(c) if c.id == "dangling"))
        })
        .unwrap();
    let answered = &request.messages[call_at + 1];
    assert!(
        answered
            .parts
            .iter()
            .any(|p| matches!(p, Part::ToolResult(r) if r.call_id == "dangling" && r.is_error)),
        "{:?}",
        request.messages
    );
    assert!(
        format!("{:?}", answered.parts).contains("what was the word?"),
        "the new message follows the repaired result"
    );
}

#[tokio::test]
async fn agents_md_and_skills_reach_the_model_and_bad_skills_warn() {
    let dir = project();
    std::fs::write(
        dir.path().join("AGENTS.md"),
        "Always run `cargo test` after edits.\n",
    )
    .unwrap();
    let good = dir.path().join(".corvid/skills/release");
    std::fs::create_dir_all(&good).unwrap();
    std::fs::write(good.join("SKILL.md"), "---\nname: release\ndescription: How to cut a release\n---\nBump the version, tag, push.\n").unwrap();
    let bad = dir.path().join(".corvid/skills/broken");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::write(
        bad.join("SKILL.md"),
        "---\nname: broken\n---\nno description\n",
    )
    .unwrap();
    let mut agent = start(
        dir.path(),
        ApprovalPolicy::Ask,
        vec![
            ScriptedReply::tool_call("k1", "skill", r#"{"name":"release"}"#),
            ScriptedReply::text("ok"),
        ],
    )
    .await;
    let warning = agent
        .until(|msg| matches!(msg, EventMsg::Warning { .. }))
        .await;
    assert!(format!("{:?}", warning.msg).contains("broken"));
    agent.send("release it");
    agent.turn_finished().await;
    let system = &agent.model.requests()[0].system[0];
    assert!(
        system.contains("Always run `cargo test` after edits."),
        "{system}"
    );
    assert!(system.contains("release") && system.contains("How to cut a release"));
    assert!(
        !system.contains("Bump the version"),
        "bodies load on demand"
    );
    assert!(agent.last_results()[0].0.contains("Bump the version"));
}

#[tokio::test]
async fn a_new_message_interrupts_a_waiting_proposal() {
    let dir = project();
    let mut agent = start(
        dir.path(),
        ApprovalPolicy::Ask,
        vec![
            ScriptedReply::tool_call("c1", "bash", r#"{"command":"echo hi"}"#),
            ScriptedReply::text("new topic"),
        ],
    )
    .await;
    agent.send("run it");
    agent.proposal().await;
    agent.send("never mind, something else");
    let closed = agent
        .until(|msg| matches!(msg, EventMsg::ProposalClosed { .. }))
        .await;
    assert!(format!("{:?}", closed.msg).contains("Interrupted"));
    assert_eq!(agent.turn_finished().await, TurnOutcome::Cancelled);
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
}

/// A front end may answer a proposal the instant its event arrives; the answer must always find
/// the proposal waiting (it once raced the proposal's registration with the engine, which only
/// shows with the engine and the front end on different threads).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proposal_answered_at_once_is_always_waiting() {
    const ROUNDS: usize = 40;
    let dir = project();
    let mut replies: Vec<ScriptedReply> = (0..ROUNDS)
        .map(|round| {
            ScriptedReply::tool_call(
                &format!("c{round}"),
                "bash",
                &format!(r#"{{"command":"echo {round}"}}"#),
            )
        })
        .collect();
    replies.push(ScriptedReply::text("done"));
    let mut agent = start(dir.path(), ApprovalPolicy::Ask, replies).await;
    agent.send("run things");
    for _ in 0..ROUNDS {
        let proposal_id = agent.proposal().await.proposal_id;
        agent.decide(&proposal_id, ApprovalDecision::Reject { feedback: None });
    }
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    let refused: Vec<&Event> = agent
        .seen
        .iter()
        .filter(|event| matches!(event.msg, EventMsg::Error(_)))
        .collect();
    assert!(refused.is_empty(), "{refused:?}");
}

#[tokio::test]
async fn arguments_that_are_not_json_are_named_as_such() {
    let dir = project();
    let mut agent = start(
        dir.path(),
        ApprovalPolicy::FullAuto,
        vec![
            ScriptedReply::tool_call("c1", "read", r#"{"path": "lib.r"#),
            ScriptedReply::text("ok"),
        ],
    )
    .await;
    agent.send("read it");
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    let (output, is_error) = agent.last_results()[0].clone();
    assert!(is_error, "{output}");
    assert!(
        output.contains("the arguments were not valid JSON: "),
        "{output}"
    );
    assert!(!output.contains("missing field"), "{output}");
}

#[tokio::test]
async fn an_absolute_path_in_a_call_is_shown_relative_to_the_project() {
    let dir = project();
    let absolute = dir.path().canonicalize().unwrap().join("lib.rs");
    let mut agent = start(
        dir.path(),
        ApprovalPolicy::FullAuto,
        vec![
            ScriptedReply::tool_call(
                "c1",
                "read",
                &format!(r#"{{"path":"{}"}}"#, absolute.display()),
            ),
            ScriptedReply::text("ok"),
        ],
    )
    .await;
    agent.send("read it");
    agent.turn_finished().await;
    let summary = agent
        .seen
        .iter()
        .find_map(|event| match &event.msg {
            EventMsg::ToolCall(call) => Some(call.summary.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(summary, "read lib.rs");
}

fn stored_messages(database: &Path, project: &Path) -> Vec<corvid_wire::model::Message> {
    let store = corvid_store::Store::open(database).unwrap();
    let key = project.canonicalize().unwrap().display().to_string();
    let conversation = store.current_conversation(&key).unwrap().unwrap();
    store
        .messages(&conversation)
        .unwrap()
        .iter()
        .map(|stored| serde_json::from_str(&stored.content).unwrap())
        .collect()
}

/// An agent on `database` whose turn "look at lib.rs" has read lib.rs, its second step hanging.
async fn read_then_hang(project: &Path, database: &Path) -> ScriptedAgent {
    let mut agent = start_with(
        project,
        Some(database),
        ApprovalPolicy::FullAuto,
        vec![
            ScriptedReply::tool_call("c1", "read", r#"{"path":"lib.rs"}"#),
            ScriptedReply::Hang,
        ],
    )
    .await;
    agent.send("look at lib.rs");
    agent
        .until(|msg| matches!(msg, EventMsg::ToolResult(_)))
        .await;
    agent
}

/// Each step is in the store as soon as it completes, not at the end of the turn.
#[tokio::test]
async fn a_completed_step_is_saved_while_the_next_one_runs() {
    let dir = project();
    let database = dir.path().join(".corvid-test.db");
    let mut agent = read_then_hang(dir.path(), &database).await;
    // Step 2 hangs; step 1 must already be on disk.
    let mut stored = Vec::new();
    for _ in 0..100 {
        stored = stored_messages(&database, dir.path());
        if stored.len() == 3 && agent.model.requests().len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(stored.len(), 3, "{stored:?}");
    assert_eq!(stored[0].role, Role::User);
    assert!(matches!(&stored[1].parts[0], Part::ToolCall(call) if call.id == "c1"));
    assert!(
        matches!(&stored[2].parts[0], Part::ToolResult(result) if result.call_id == "c1" && format!("{:?}", result.content).contains("a - b"))
    );
    assert_eq!(agent.model.requests().len(), 2);
    agent.session.submit(Op::Cancel);
    assert_eq!(agent.turn_finished().await, TurnOutcome::Cancelled);
    // Cancelling adds nothing twice: the store still holds the one step.
    assert_eq!(stored_messages(&database, dir.path()).len(), 3);
}

/// Every model call — the main agent's and a subagent's — is a row of the usage ledger, tagged
/// with the front end.
#[tokio::test]
async fn every_model_call_is_in_the_usage_ledger_with_its_front_end() {
    let dir = project();
    let database = dir.path().join(".corvid-test.db");
    let mut agent = start_with(
        dir.path(),
        Some(&database),
        ApprovalPolicy::FullAuto,
        vec![
            ScriptedReply::tool_call(
                "t1",
                "task",
                r#"{"agent":"explore","description":"look","prompt":"What is in lib.rs?"}"#,
            ),
            ScriptedReply::text("an add function"),
            ScriptedReply::Fail {
                status: 500,
                message: "boom".to_owned(),
            },
        ],
    )
    .await;
    agent.send("what is there?");
    assert_eq!(agent.turn_finished().await, TurnOutcome::Failed);
    let store = corvid_store::Store::open(&database).unwrap();
    let rows = store.usage_by_day_and_model(None).unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    let row = &rows[0];
    assert_eq!(row.front_end, "agent");
    assert_eq!(row.model, "scripted-model");
    assert_eq!((row.requests, row.errors), (3, 1));
    // The scripted replies report 100 input and 10 output tokens each; the failure none.
    assert_eq!((row.tokens.input, row.tokens.output), (200, 20));
}

/// A client that retries: it reports how many requests each call sent.
struct Retrying {
    replies: std::sync::Mutex<Vec<Result<u32, u32>>>,
}

impl ModelClient for Retrying {
    fn stream(&self, request: ChatRequest) -> StreamFuture<'_> {
        Box::pin(async move { self.call(request).await.map(|reply| reply.events) })
    }

    fn call(&self, _request: ChatRequest) -> corvid_agent::ReplyFuture<'_> {
        let next = self.replies.lock().unwrap().remove(0);
        Box::pin(async move {
            match next {
                Ok(attempts) => Ok(corvid_agent::ModelReply {
                    events: match ScriptedReply::text("done") {
                        ScriptedReply::Events(events) => {
                            Box::pin(futures_util::stream::iter(events)) as EventStream
                        }
                        _ => unreachable!(),
                    },
                    attempts,
                    // A route's fallback answered, not the model asked for.
                    served_by: Some(corvid_agent::ModelRoute {
                        provider: "openai".to_owned(),
                        model: "gpt-5".to_owned(),
                    }),
                }),
                Err(attempts) => {
                    let mut error = ModelError::new(ErrorClass::ServerError, "still failing");
                    error.attempts = attempts;
                    Err(error)
                }
            }
        })
    }
}

/// The agent's ledger rows count the requests its model client sent, as the gateway's do, and
/// name the target that served the reply.
#[tokio::test]
async fn the_ledger_counts_the_attempts_the_model_client_made() {
    let dir = project();
    let database = dir.path().join(".corvid-test.db");
    let mut config = AgentConfig::new(dir.path().to_owned(), "retrying-model");
    config.output_dir = dir.path().join(".corvid-test-output");
    let client = Retrying {
        replies: std::sync::Mutex::new(vec![Ok(3), Err(4)]),
    };
    let agents = Agents::new(Arc::new(client), store_at(&database));
    let (handle, mut events) = agents
        .open_listening(config, OpenConversation::Current)
        .await
        .unwrap();
    for text in ["first", "second"] {
        handle.submit(Op::Send(SendParams::text(text)));
        loop {
            let frame = events.recv().await.unwrap();
            if frame
                .event()
                .is_some_and(|event| matches!(event.msg, EventMsg::TurnFinished(_)))
            {
                break;
            }
        }
    }
    handle.submit(Op::Shutdown);
    let connection = rusqlite::Connection::open(&database).unwrap();
    let mut query = connection
        .prepare("SELECT attempts, outcome, provider, model FROM requests ORDER BY id")
        .unwrap();
    let rows: Vec<(u32, String, String, String)> = query
        .query_map([], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let row = |attempts, outcome: &str, provider: &str, model: &str| {
        (
            attempts,
            outcome.to_owned(),
            provider.to_owned(),
            model.to_owned(),
        )
    };
    // The answered call names the target that served it; the failed one what was asked for.
    assert_eq!(
        rows,
        vec![
            row(3, "ok", "openai", "gpt-5"),
            row(4, "error", "", "retrying-model")
        ],
        "{rows:?}"
    );
}

/// A reply that broke off reads as the model client worded it, classified by the one rule
/// the gateway uses (corvid-wire's `FailureClass::of_stream_error`).
#[tokio::test]
async fn a_broken_reply_keeps_the_clients_wording_and_the_shared_class() {
    let dir = project();
    let broken = corvid_wire::model::WireError::api("the upstream stream broke: connection reset");
    let mut agent = start(
        dir.path(),
        ApprovalPolicy::Ask,
        vec![ScriptedReply::Events(vec![
            StreamEvent::TextDelta {
                text: "par".to_owned(),
            },
            StreamEvent::Error(broken.clone()),
        ])],
    )
    .await;
    agent.send("hi");
    let error = agent.until(|msg| matches!(msg, EventMsg::Error(_))).await;
    let EventMsg::Error(error) = error.msg else {
        unreachable!()
    };
    assert_eq!(error.message, broken.message);
    assert_eq!(
        error.class,
        corvid_agent::error_class(corvid_wire::model::FailureClass::of_stream_error(
            broken.kind
        ))
    );
    assert_eq!(error.class, ErrorClass::ServerError);
    assert_eq!(agent.turn_finished().await, TurnOutcome::Failed);
}

/// The warnings a restarted engine gives before its `ready`.
async fn warnings_on_reopening(project: &Path, database: &Path) -> Vec<String> {
    let mut agent = start_with(project, Some(database), ApprovalPolicy::Ask, vec![]).await;
    let mut warnings = Vec::new();
    loop {
        match agent.next().await.msg {
            EventMsg::Warning { message } => warnings.push(message),
            EventMsg::Ready(_) => return warnings,
            _ => {}
        }
    }
}

/// A turn the user cancelled is not a crash: reopening the conversation does not say the last
/// turn did not finish. A turn cut short without the engine seeing it end still does.
#[tokio::test]
async fn a_cancelled_turn_reopens_quietly_and_a_crashed_one_warns() {
    let dir = project();
    let database = dir.path().join(".corvid-test.db");
    {
        let mut agent = read_then_hang(dir.path(), &database).await;
        agent.session.submit(Op::Cancel);
        assert_eq!(agent.turn_finished().await, TurnOutcome::Cancelled);
        agent.shut_down().await;
    }
    let stored = stored_messages(&database, dir.path());
    assert_eq!(stored.last().unwrap().role, Role::User, "{stored:?}");
    let quiet = warnings_on_reopening(dir.path(), &database).await;
    assert!(
        quiet
            .iter()
            .all(|warning| !warning.contains("did not finish")),
        "{quiet:?}"
    );

    // A crash: the user's message is saved at the turn's start, and nothing marks its end.
    {
        let mut store = corvid_store::Store::open(&database).unwrap();
        let key = dir.path().canonicalize().unwrap().display().to_string();
        let conversation = store.current_conversation(&key).unwrap().unwrap();
        let message = corvid_wire::model::Message::text(Role::User, "and then the power went");
        store
            .append_messages(
                &conversation,
                &[("user", &serde_json::to_string(&message).unwrap())],
            )
            .unwrap();
    }
    let warned = warnings_on_reopening(dir.path(), &database).await;
    assert!(
        warned
            .iter()
            .any(|warning| warning.contains("did not finish")),
        "{warned:?}"
    );
}

#[tokio::test]
async fn an_empty_reply_ends_the_turn_with_a_warning_and_an_answer_does_not() {
    let dir = project();
    let mut agent = start(
        dir.path(),
        ApprovalPolicy::Ask,
        vec![ScriptedReply::text(""), ScriptedReply::text("an answer")],
    )
    .await;
    agent.send("hello");
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    let warnings = agent.warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("reply was empty"), "{warnings:?}");
    agent.send("again");
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    assert_eq!(agent.warnings().len(), 1);
}

#[tokio::test]
async fn a_tool_call_being_written_is_announced_before_the_call() {
    let dir = project();
    let mut agent = start(
        dir.path(),
        ApprovalPolicy::FullAuto,
        vec![
            ScriptedReply::tool_call("call-1", "read", r#"{"path": "lib.rs"}"#),
            ScriptedReply::text("read it"),
        ],
    )
    .await;
    agent.send("look");
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    let progress = agent
        .seen
        .iter()
        .position(|event| {
            matches!(
                &event.msg,
                EventMsg::ToolCallProgress { call_id, tool, bytes: 0 }
                    if call_id.as_deref() == Some("call-1") && tool == "read"
            )
        })
        .expect("a tool_call_progress for the call");
    let call = agent
        .seen
        .iter()
        .position(
            |event| matches!(&event.msg, EventMsg::ToolCall(call) if call.call_id == "call-1"),
        )
        .expect("the tool_call");
    assert!(
        progress < call,
        "progress at {progress}, the call at {call}"
    );
}

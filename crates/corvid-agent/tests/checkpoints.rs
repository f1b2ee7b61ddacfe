//! Checkpoints, `/undo`, `/diff` and context compaction, through the real engine, tools and
//! store, against scripted models.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use corvid_agent::{Agents, ModelClient, OpenConversation, StreamFuture};
use corvid_protocol::{
    ApprovalPolicy, ChangeKind, ErrorClass, ErrorNotification, Event, EventMsg, FileChange,
    HistoryEntry, Op, ReplyOk, SendParams, TurnOutcome,
};
use corvid_test_support::agent;
use corvid_test_support::scripted::{ScriptedModel, ScriptedReply, request_tokens};
use corvid_wire::model::ChatRequest;

/// Sends compaction requests to `summarizer` and the rest to `main`.
struct Router {
    main: Arc<ScriptedModel>,
    summarizer: Arc<ScriptedModel>,
    /// The context window the client reports per model name.
    windows: Vec<(String, u64)>,
}

fn is_summary_request(request: &ChatRequest) -> bool {
    request
        .system
        .first()
        .is_some_and(|system| system.starts_with("You compact a coding agent's conversation"))
}

impl ModelClient for Router {
    fn stream(&self, request: ChatRequest) -> StreamFuture<'_> {
        let reply = if is_summary_request(&request) {
            self.summarizer.next(request)
        } else {
            self.main.next(request)
        };
        agent::play(reply)
    }

    fn context_window(&self, model: &str) -> Option<u64> {
        self.windows
            .iter()
            .find(|(name, _)| name == model)
            .map(|(_, tokens)| *tokens)
    }
}

struct Session {
    session: corvid_agent::Session,
    events: corvid_agent::Subscription,
    main: Arc<ScriptedModel>,
    summarizer: Arc<ScriptedModel>,
    seen: Vec<Event>,
}

struct Setup<'a> {
    project: &'a Path,
    data: &'a Path,
    window: Option<u64>,
}

impl Session {
    async fn start(setup: &Setup<'_>, main: Vec<ScriptedReply>) -> Self {
        Self::start_with_windows(setup, main, &[]).await
    }

    /// A session whose model client reports `windows` (model name, tokens).
    async fn start_with_windows(
        setup: &Setup<'_>,
        main: Vec<ScriptedReply>,
        windows: &[(&str, u64)],
    ) -> Self {
        let main = Arc::new(ScriptedModel::new(main));
        let summarizer = Arc::new(ScriptedModel::new(Vec::new()));
        let mut config = agent::config(setup.project, ApprovalPolicy::FullAuto);
        config.output_dir = setup.data.join("output");
        config.checkpoint_dir = Some(setup.data.join("checkpoints"));
        config.context_window = setup.window;
        let router = Router {
            main: Arc::clone(&main),
            summarizer: Arc::clone(&summarizer),
            windows: windows
                .iter()
                .map(|(name, tokens)| ((*name).to_owned(), *tokens))
                .collect(),
        };
        let store = corvid_store::Store::open(&setup.data.join("corvid.db")).unwrap();
        let agents = Agents::new(Arc::new(router), Arc::new(parking_lot::Mutex::new(store)));
        let (session, events) = agents
            .open_listening(config, OpenConversation::Current)
            .await
            .unwrap();
        Self {
            session,
            events,
            main,
            summarizer,
            seen: Vec::new(),
        }
    }

    async fn until(&mut self, matches: impl Fn(&EventMsg) -> bool) -> EventMsg {
        loop {
            let event = agent::next_event(&mut self.events, Duration::from_secs(30)).await;
            self.seen.push(event.clone());
            if event.depth == 0 && matches(&event.msg) {
                return event.msg;
            }
        }
    }

    async fn turn(&mut self, text: &str) -> TurnOutcome {
        self.session.submit(Op::Send(SendParams::text(text)));
        match self
            .until(|msg| matches!(msg, EventMsg::TurnFinished(_)))
            .await
        {
            EventMsg::TurnFinished(finished) => finished.outcome,
            _ => unreachable!(),
        }
    }

    /// Sends `op` and returns its answer: the first event that is one of `kinds`, or an error.
    /// Sends `op` and returns its one reply.
    async fn answer(&mut self, op: Op) -> Result<ReplyOk, ErrorNotification> {
        self.session.request(op).await
    }

    async fn undo(&mut self, turn: Option<u32>) -> Result<ReplyOk, ErrorNotification> {
        self.answer(Op::Undo { turn }).await
    }
}

fn read(root: &Path, path: &str) -> Option<String> {
    std::fs::read_to_string(root.join(path)).ok()
}

fn files(files: &[FileChange]) -> Vec<(&str, ChangeKind)> {
    let mut list: Vec<_> = files
        .iter()
        .map(|file| (file.path.as_str(), file.change))
        .collect();
    list.sort_by_key(|entry| entry.0);
    list
}

fn dirs() -> (tempfile::TempDir, tempfile::TempDir) {
    let project = tempfile::tempdir().unwrap();
    std::fs::write(
        project.path().join("lib.rs"),
        "fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n",
    )
    .unwrap();
    std::fs::write(project.path().join("old.txt"), "old\n").unwrap();
    (project, tempfile::tempdir().unwrap())
}

#[tokio::test]
async fn undo_puts_back_a_write_an_edit_and_a_command_turn_by_turn() {
    let (project, data) = dirs();
    let root = project.path();
    let setup = Setup {
        project: root,
        data: data.path(),
        window: None,
    };
    let mut session = Session::start(
        &setup,
        vec![
            // Turn 1: a write.
            ScriptedReply::tool_call(
                "c1",
                "write",
                r#"{"path":"notes/plan.md","content":"plan\n"}"#,
            ),
            ScriptedReply::text("Wrote the plan."),
            // Turn 2: an edit.
            ScriptedReply::tool_call(
                "c2",
                "edit",
                r#"{"path":"lib.rs","old_string":"a - b","new_string":"a + b"}"#,
            ),
            ScriptedReply::text("Fixed."),
            // Turn 3: a command that deletes one file and creates another.
            ScriptedReply::tool_call(
                "c3",
                "bash",
                r#"{"command":"rm old.txt && mkdir -p made && echo made > made/new.txt"}"#,
            ),
            ScriptedReply::text("Reorganised."),
            // Turn 4: only reads: nothing to undo.
            ScriptedReply::tool_call("c4", "read", r#"{"path":"lib.rs"}"#),
            ScriptedReply::text("Looked."),
        ],
    )
    .await;
    for text in ["write a plan", "fix add", "reorganise", "look"] {
        assert_eq!(session.turn(text).await, TurnOutcome::Completed);
    }
    assert_eq!(read(root, "made/new.txt").as_deref(), Some("made\n"));
    assert_eq!(read(root, "old.txt"), None);

    // The diff shows three turns, each with its unified diff.
    let Ok(ReplyOk::Diff { turns }) = session.answer(Op::Diff { turn: None }).await else {
        panic!("expected a diff: {:?}", session.seen.last());
    };
    assert_eq!(
        turns.iter().map(|turn| turn.turn).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    assert_eq!(
        files(&turns[0].files),
        [("notes/plan.md", ChangeKind::Added)]
    );
    assert!(
        turns[0]
            .diff
            .contains("+++ b/notes/plan.md\n@@ -0,0 +1 @@\n+plan\n"),
        "{}",
        turns[0].diff
    );
    assert!(
        turns[1].diff.contains("--- a/lib.rs\n+++ b/lib.rs\n"),
        "{}",
        turns[1].diff
    );
    assert!(
        turns[1].diff.contains("-    a - b\n+    a + b\n"),
        "{}",
        turns[1].diff
    );
    assert_eq!(
        files(&turns[2].files),
        [
            ("made/new.txt", ChangeKind::Added),
            ("old.txt", ChangeKind::Deleted)
        ]
    );
    let Ok(ReplyOk::Diff { turns: only }) = session.answer(Op::Diff { turn: Some(2) }).await else {
        panic!("expected a diff");
    };
    assert_eq!(only.len(), 1);
    assert_eq!(only[0], turns[1]);

    // Undo the command's turn (the latest that changed files).
    let Ok(ReplyOk::Undone {
        turn,
        files: undone,
    }) = session.undo(None).await
    else {
        panic!("expected undone: {:?}", session.seen.last());
    };
    assert_eq!(turn, 3);
    assert_eq!(
        files(&undone),
        [
            ("made/new.txt", ChangeKind::Added),
            ("old.txt", ChangeKind::Deleted)
        ]
    );
    assert_eq!(read(root, "old.txt").as_deref(), Some("old\n"));
    assert!(!root.join("made").exists());
    // Then the edit, then the write.
    assert!(matches!(
        session.undo(None).await,
        Ok(ReplyOk::Undone { turn: 2, .. })
    ));
    assert_eq!(
        read(root, "lib.rs").as_deref(),
        Some("fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n")
    );
    assert!(matches!(
        session.undo(Some(1)).await,
        Ok(ReplyOk::Undone { turn: 1, .. })
    ));
    assert!(!root.join("notes").exists());
    // Nothing is left, and an undone turn cannot be undone again.
    let Err(error) = session.undo(None).await else {
        panic!()
    };
    assert_eq!(error.class, ErrorClass::InvalidRequest);
    assert!(
        error.message.contains("nothing to undo"),
        "{}",
        error.message
    );
    let Err(error) = session.undo(Some(2)).await else {
        panic!()
    };
    assert!(
        error.message.contains("undone already"),
        "{}",
        error.message
    );
    let Err(error) = session.undo(Some(4)).await else {
        panic!()
    };
    assert!(
        error.message.contains("turn 4 changed no files"),
        "{}",
        error.message
    );
    let Ok(ReplyOk::Diff { turns }) = session.answer(Op::Diff { turn: None }).await else {
        panic!()
    };
    assert!(turns.is_empty(), "undone turns leave the diff");

    // The model hears of the undo with the next message.
    session.main.push(ScriptedReply::text("ok"));
    assert_eq!(session.turn("what now?").await, TurnOutcome::Completed);
    let last = session.main.requests().pop().unwrap();
    let user = serde_json::to_string(last.messages.last().unwrap()).unwrap();
    assert!(user.contains("The user undid turn 1"), "{user}");
    assert!(user.contains("what now?"), "{user}");
    assert!(
        !root.join(".git").exists(),
        "the project gets no repository"
    );
}

#[tokio::test]
async fn a_file_the_user_changed_after_the_agent_is_not_overwritten() {
    let (project, data) = dirs();
    let root = project.path();
    let setup = Setup {
        project: root,
        data: data.path(),
        window: None,
    };
    let mut session = Session::start(
        &setup,
        vec![
            ScriptedReply::tool_calls(&[
                (
                    "c1",
                    "edit",
                    r#"{"path":"lib.rs","old_string":"a - b","new_string":"a + b"}"#,
                ),
                ("c2", "write", r#"{"path":"old.txt","content":"agent\n"}"#),
            ]),
            ScriptedReply::text("Done."),
        ],
    )
    .await;
    assert_eq!(session.turn("change both").await, TurnOutcome::Completed);
    std::fs::write(root.join("old.txt"), "the user's own text\n").unwrap();

    let Err(error) = session.undo(None).await else {
        panic!("expected a refusal: {:?}", session.seen.last());
    };
    assert_eq!(error.class, ErrorClass::InvalidRequest);
    assert!(error.message.contains("old.txt"), "{}", error.message);
    assert!(!error.message.contains("lib.rs"), "{}", error.message);
    assert!(
        error.message.contains("nothing was restored"),
        "{}",
        error.message
    );
    assert_eq!(
        read(root, "old.txt").as_deref(),
        Some("the user's own text\n")
    );
    assert!(
        read(root, "lib.rs").unwrap().contains("a + b"),
        "all or nothing"
    );

    // Once the user puts the file back as the agent left it, the undo goes through.
    std::fs::write(root.join("old.txt"), "agent\n").unwrap();
    assert!(matches!(
        session.undo(None).await,
        Ok(ReplyOk::Undone { turn: 1, .. })
    ));
    assert_eq!(read(root, "old.txt").as_deref(), Some("old\n"));
    assert!(read(root, "lib.rs").unwrap().contains("a - b"));
}

#[tokio::test]
async fn checkpoints_work_in_a_git_project_and_survive_a_restart() {
    let (project, data) = dirs();
    let root = project.path();
    let git = |args: &[&str]| {
        let output = std::process::Command::new("git")
            .args(args)
            .current_dir(root)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        String::from_utf8(output.stdout).unwrap()
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-qm",
        "start",
    ]);
    let head = git(&["rev-parse", "HEAD"]);
    let setup = Setup {
        project: root,
        data: data.path(),
        window: None,
    };
    {
        let mut session = Session::start(
            &setup,
            vec![
                ScriptedReply::tool_call("c1", "bash", r#"{"command":"echo extra >> lib.rs"}"#),
                ScriptedReply::text("Appended."),
            ],
        )
        .await;
        assert_eq!(session.turn("append").await, TurnOutcome::Completed);
        session.session.submit(Op::Shutdown);
        session
            .until(|msg| matches!(msg, EventMsg::ShutdownComplete))
            .await;
    }
    assert_eq!(git(&["status", "--porcelain"]), " M lib.rs\n");
    // A new session on the same conversation can still undo that turn, and numbers its own
    // turns after it.
    let mut session = Session::start(
        &setup,
        vec![
            ScriptedReply::tool_call("c2", "write", r#"{"path":"second.txt","content":"2\n"}"#),
            ScriptedReply::text("Wrote."),
        ],
    )
    .await;
    assert_eq!(session.turn("write another").await, TurnOutcome::Completed);
    let Ok(ReplyOk::Diff { turns }) = session.answer(Op::Diff { turn: None }).await else {
        panic!()
    };
    assert_eq!(
        turns.iter().map(|turn| turn.turn).collect::<Vec<_>>(),
        [1, 2]
    );
    assert!(matches!(
        session.undo(Some(1)).await,
        Ok(ReplyOk::Undone { turn: 1, .. })
    ));
    assert_eq!(git(&["status", "--porcelain"]), "?? second.txt\n");
    assert_eq!(
        git(&["rev-parse", "HEAD"]),
        head,
        "the project's history is untouched"
    );
    assert_eq!(git(&["stash", "list"]), "");
}

/// One turn of the long session: write a file with a paragraph, then answer.
fn long_turn(index: usize) -> [ScriptedReply; 2] {
    let content = format!(
        "note {index}: {}\\n",
        "the parrot project keeps growing. ".repeat(30)
    );
    [
        ScriptedReply::tool_call(
            &format!("w{index}"),
            "write",
            &format!(r#"{{"path":"notes/{index}.md","content":"{content}"}}"#),
        ),
        ScriptedReply::text(&format!("Wrote note {index}.")),
    ]
}

/// What one request with an empty history takes in `project` (its system prompt and tools),
/// measured in a session of its own under `data`.
async fn first_request_tokens(project: &Path, data: &Path) -> u64 {
    let setup = Setup {
        project,
        data: &data.join("probe"),
        window: None,
    };
    let mut probe = Session::start(&setup, vec![ScriptedReply::text("hi")]).await;
    assert_eq!(probe.turn("x").await, TurnOutcome::Completed);
    request_tokens(&probe.main.requests()[0])
}

const TASK: &str = "TASK-7: keep one note per turn under notes/ for the parrot project";

#[tokio::test]
async fn a_long_session_on_a_small_window_is_compacted_and_keeps_its_task() {
    let (project, data) = dirs();
    let root = project.path();
    // The window is what one request with an empty history takes (system prompt and tools),
    // plus room for about five turns.
    let window = first_request_tokens(root, data.path()).await + 3_000;

    let setup = Setup {
        project: root,
        data: data.path(),
        window: Some(window),
    };
    let turns = 16;
    let replies: Vec<ScriptedReply> = (0..turns).flat_map(long_turn).collect();
    let mut session = Session::start(&setup, replies).await;
    session.main.set_window(window);
    session.summarizer.set_window(window);
    for index in 0..40 {
        session.summarizer.push(ScriptedReply::text(&format!(
            "SUMMARY-{index}: the user wants one note per turn; notes written so far are listed."
        )));
    }
    for index in 0..turns {
        let text = if index == 0 {
            TASK.to_owned()
        } else {
            format!("next note please ({index})")
        };
        assert_eq!(
            session.turn(&text).await,
            TurnOutcome::Completed,
            "turn {index}"
        );
    }
    let errors: Vec<_> = session
        .seen
        .iter()
        .filter(|event| matches!(event.msg, EventMsg::Error(_)))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    let compactions: Vec<(u64, u64)> = session
        .seen
        .iter()
        .filter_map(|event| match event.msg {
            EventMsg::Compacted {
                tokens_before,
                tokens_after,
                context_window,
                ..
            } => {
                assert_eq!(context_window, window);
                Some((tokens_before, tokens_after))
            }
            _ => None,
        })
        .collect();
    assert!(compactions.len() >= 2, "{compactions:?}");
    assert!(compactions.iter().all(|(before, after)| after < before));
    let requests = session.main.requests();
    for request in &requests {
        assert!(
            request_tokens(request) <= window,
            "a request over the window was sent"
        );
    }
    // Every summary request carries the task; the requests after a compaction carry a summary.
    let summaries = session.summarizer.requests();
    assert!(!summaries.is_empty());
    for request in &summaries {
        assert!(serde_json::to_string(request).unwrap().contains(TASK));
    }
    let last = serde_json::to_string(requests.last().unwrap()).unwrap();
    assert!(
        last.contains("summary of the earlier part of this conversation"),
        "{last}"
    );
    assert!(last.contains("SUMMARY-"), "{last}");
    assert!(last.contains(TASK), "the task survives every compaction");
    assert!(last.contains("notes/1.md"), "the files written are listed");
    assert_eq!(
        std::fs::read_dir(root.join("notes")).unwrap().count(),
        turns
    );

    // The compacted history is what the store holds: a resumed session starts from it.
    session.session.submit(Op::Shutdown);
    session
        .until(|msg| matches!(msg, EventMsg::ShutdownComplete))
        .await;
    let mut resumed = Session::start(&setup, vec![ScriptedReply::text("resumed")]).await;
    let EventMsg::Ready(ready) = resumed.until(|msg| matches!(msg, EventMsg::Ready(_))).await
    else {
        unreachable!()
    };
    let mut replay = resumed.session.subscribe();
    let history = loop {
        let event = agent::next_event(&mut replay, Duration::from_secs(30)).await;
        if let EventMsg::ConversationOpened {
            conversation,
            history,
        } = event.msg
        {
            assert_eq!(conversation.id, ready.conversation_id);
            break history;
        }
    };
    let HistoryEntry::User { text } = &history[0] else {
        panic!("{history:?}")
    };
    assert!(text.contains("summary of the earlier part"), "{text}");
    assert!(history.len() < turns * 4, "{} entries", history.len());
    assert_eq!(resumed.turn("go on").await, TurnOutcome::Completed);
    let sent = serde_json::to_string(&resumed.main.requests()[0]).unwrap();
    assert!(sent.contains(TASK) && sent.contains("SUMMARY-"), "{sent}");
}

#[tokio::test]
async fn compact_on_demand_keeps_the_latest_turn() {
    let (project, data) = dirs();
    let setup = Setup {
        project: project.path(),
        data: data.path(),
        window: None,
    };
    let mut session = Session::start(
        &setup,
        vec![
            ScriptedReply::text("first answer"),
            ScriptedReply::text("second answer"),
        ],
    )
    .await;
    let Ok(ReplyOk::Nothing { message }) = session.answer(Op::Compact).await else {
        panic!("expected nothing to do")
    };
    assert!(message.contains("Nothing to compact"), "{message}");
    assert_eq!(session.turn(TASK).await, TurnOutcome::Completed);
    assert_eq!(session.turn("and the second").await, TurnOutcome::Completed);
    session
        .summarizer
        .push(ScriptedReply::text("SUMMARY: one note per turn."));
    assert!(matches!(
        session.answer(Op::Compact).await,
        Ok(ReplyOk::Compacted { .. })
    ));
    let EventMsg::Compacted {
        messages_summarized,
        context_window,
        ..
    } = session
        .until(|msg| matches!(msg, EventMsg::Compacted { .. }))
        .await
    else {
        panic!("expected compacted: {:?}", session.seen.last())
    };
    assert_eq!(messages_summarized, 2);
    assert_eq!(context_window, corvid_agent::DEFAULT_CONTEXT_WINDOW);
    session.main.push(ScriptedReply::text("third answer"));
    assert_eq!(session.turn("third").await, TurnOutcome::Completed);
    let sent = session.main.requests().pop().unwrap();
    let texts: Vec<String> = sent
        .messages
        .iter()
        .map(|message| serde_json::to_string(message).unwrap())
        .collect();
    assert_eq!(
        texts.len(),
        5,
        "summary, acknowledgement, the second turn, the new message"
    );
    assert!(texts[0].contains("SUMMARY: one note per turn.") && texts[0].contains(TASK));
    assert!(texts[2].contains("and the second"));
    assert!(texts[3].contains("second answer"));
}

/// A tool call whose step the provider reports as `input` tokens.
fn heavy_tool_call(id: &str, input: u64) -> ScriptedReply {
    use corvid_wire::model::{FinishReason, StreamEvent, Usage};
    ScriptedReply::Events(vec![
        StreamEvent::Start {
            id: "heavy".to_owned(),
            model: "scripted-model".to_owned(),
        },
        StreamEvent::ToolCallStart {
            index: 0,
            id: id.to_owned(),
            name: "read".to_owned(),
            signature: None,
        },
        StreamEvent::ToolCallArgs {
            index: 0,
            delta: r#"{"path":"lib.rs"}"#.to_owned(),
        },
        StreamEvent::ToolCallEnd { index: 0 },
        StreamEvent::Usage(Usage {
            input,
            output: 10,
            ..Usage::default()
        }),
        StreamEvent::Finish(FinishReason::ToolCalls),
    ])
}

#[tokio::test]
async fn the_providers_count_triggers_compaction_when_it_is_higher_than_the_estimate() {
    let (project, data) = dirs();
    let window = 200_000;
    let setup = Setup {
        project: project.path(),
        data: data.path(),
        window: Some(window),
    };
    let mut session = Session::start(
        &setup,
        vec![
            ScriptedReply::text("first answer"),
            // The provider counts far more than the bytes suggest (a dense tokenizer).
            heavy_tool_call("r1", window - 1_000),
            ScriptedReply::tool_call("r2", "read", r#"{"path":"old.txt"}"#),
            ScriptedReply::text("second answer"),
        ],
    )
    .await;
    session
        .summarizer
        .push(ScriptedReply::text("SUMMARY: first turn."));
    assert_eq!(session.turn(TASK).await, TurnOutcome::Completed);
    assert_eq!(session.turn("read twice").await, TurnOutcome::Completed);
    let compactions: Vec<u64> = session
        .seen
        .iter()
        .filter_map(|event| match event.msg {
            EventMsg::Compacted { tokens_before, .. } => Some(tokens_before),
            _ => None,
        })
        .collect();
    assert_eq!(
        compactions.len(),
        1,
        "once: the count is reset by the compaction"
    );
    assert!(compactions[0] >= window - 1_000, "{compactions:?}");
    let requests = session.main.requests();
    let last = serde_json::to_string(requests.last().unwrap()).unwrap();
    assert!(last.contains("SUMMARY: first turn."), "{last}");
}

fn windows_of_compactions(session: &Session) -> Vec<u64> {
    session
        .seen
        .iter()
        .filter_map(|event| match event.msg {
            EventMsg::Compacted { context_window, .. } => Some(context_window),
            _ => None,
        })
        .collect()
}

/// Twelve turns of the task all complete, none compacted, though the history grows past
/// `window` (`why` says why that window did not apply).
async fn twelve_turns_fit_uncompacted(session: &mut Session, window: u64, why: &str) {
    for index in 0..12 {
        assert_eq!(
            session.turn(&format!("{TASK} ({index})")).await,
            TurnOutcome::Completed
        );
    }
    assert_eq!(windows_of_compactions(session), Vec::<u64>::new());
    assert!(
        session
            .main
            .requests()
            .iter()
            .any(|request| request_tokens(request) > window),
        "{why}"
    );
}

/// Issue 11, item 5: without `--context-window` the window is the model client's for the
/// current model (the catalog or the configuration in the binary), a `/model` switch uses the
/// new model's, and `AgentConfig::context_window` beats both.
#[tokio::test]
async fn the_model_clients_window_is_used_and_follows_a_model_switch() {
    let (project, data) = dirs();
    let root = project.path();
    let tight = first_request_tokens(root, data.path()).await + 3_000;
    let roomy = 10_000_000;

    let setup = Setup {
        project: root,
        data: data.path(),
        window: None,
    };
    let turns = 20;
    let replies: Vec<ScriptedReply> = (0..turns).flat_map(long_turn).collect();
    let mut session = Session::start_with_windows(
        &setup,
        replies,
        &[("scripted-model", roomy), ("tight-model", tight)],
    )
    .await;
    for index in 0..40 {
        session.summarizer.push(ScriptedReply::text(&format!(
            "SUMMARY-{index}: one note per turn."
        )));
    }
    // On the roomy model, the first turns fit without compaction (they would not fit `tight`).
    twelve_turns_fit_uncompacted(
        &mut session,
        tight,
        "the roomy model's history outgrew the tight window",
    )
    .await;
    let sent_before_switch = session.main.requests().len();
    session.main.set_window(tight);
    session.session.submit(Op::SetModel {
        model: "tight-model".to_owned(),
    });
    for index in 12..turns {
        assert_eq!(
            session.turn(&format!("next note please ({index})")).await,
            TurnOutcome::Completed,
            "turn {index}"
        );
    }
    let windows = windows_of_compactions(&session);
    assert!(!windows.is_empty(), "the small window triggered compaction");
    assert!(windows.iter().all(|window| *window == tight), "{windows:?}");
    let errors: Vec<_> = session
        .seen
        .iter()
        .filter(|event| matches!(event.msg, EventMsg::Error(_)))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    for request in &session.main.requests()[sent_before_switch..] {
        assert!(
            request_tokens(request) <= tight,
            "a request over the window"
        );
    }

    // The window given for every model beats the client's.
    let (project, data) = dirs();
    let setup = Setup {
        project: project.path(),
        data: data.path(),
        window: Some(roomy),
    };
    let replies: Vec<ScriptedReply> = (0..12).flat_map(long_turn).collect();
    let mut session =
        Session::start_with_windows(&setup, replies, &[("scripted-model", tight)]).await;
    twelve_turns_fit_uncompacted(
        &mut session,
        tight,
        "the history grew past the client's window without compaction",
    )
    .await;
}

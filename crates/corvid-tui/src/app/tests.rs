use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use corvid_protocol::{
    ApprovalDecision, ApprovalPolicy, ConversationSummary, ErrorClass, Event, EventMsg,
    HistoryEntry, Op, ProposalKind, ProposalNotification, ReadyNotification, Response, SendParams,
    ServerRequest, TokenUsage, ToolServer, ToolServerState, TurnFinishedNotification, TurnOutcome,
};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::*;

/// What the chat sent: its operations, and its answers to the agent's requests.
#[derive(Default)]
struct Recorder(Mutex<Vec<Op>>, Mutex<Vec<Response>>);

impl AgentLink for Recorder {
    fn submit(&self, op: Op) -> String {
        let mut ops = self.0.lock().unwrap();
        ops.push(op);
        format!("r{}", ops.len())
    }

    fn respond(&self, response: Response) -> corvid_protocol::Reply {
        let id = response.id.clone();
        self.1.lock().unwrap().push(response);
        corvid_protocol::Reply::ok(id, corvid_protocol::ReplyOk::Done)
    }
}

/// The decisions the chat answered with, in order.
fn decisions(recorder: &Recorder) -> Vec<ApprovalDecision> {
    recorder
        .1
        .lock()
        .unwrap()
        .iter()
        .map(|response| response.decision.clone())
        .collect()
}

/// The reply to the `index`-th operation sent (from 1), as the link would deliver it.
fn reply(index: usize, ok: corvid_protocol::ReplyOk) -> corvid_protocol::Reply {
    corvid_protocol::Reply::ok(format!("r{index}"), ok)
}

fn app(project: &std::path::Path, history: Option<PathBuf>) -> (App, Arc<Recorder>) {
    let recorder = Arc::new(Recorder::default());
    let settings = Settings {
        project: project.to_owned(),
        history_file: history,
        catalog: vec!["grok-4.6".to_owned(), "fast".to_owned()],
        without_key: vec!["claude".to_owned()],
        resumed: None,
        commands: vec![corvid_protocol::commands::ProjectCommand::skill(
            "release",
            "cut a release",
        )],
    };
    (App::new(recorder.clone(), settings), recorder)
}

fn event(msg: EventMsg) -> Event {
    Event {
        id: "s1".to_owned(),
        seq: 0,
        depth: 0,
        parent_call_id: None,
        at: 0,
        replay: false,
        msg,
    }
}

fn ready() -> Event {
    event(EventMsg::Ready(ReadyNotification {
        version: corvid_protocol::PROTOCOL_VERSION,
        engine: "corvid test".to_owned(),
        cwd: "/p".to_owned(),
        conversation_id: "c1".to_owned(),
        model: "grok-4.6".to_owned(),
        approval_policy: ApprovalPolicy::Ask,
        missed: None,
        sandbox: None,
    }))
}

fn finished() -> Event {
    event(EventMsg::TurnFinished(TurnFinishedNotification {
        outcome: TurnOutcome::Completed,
        steps: 1,
        usage: TokenUsage::default(),
    }))
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn typed(app: &mut App, text: &str) {
    for c in text.chars() {
        app.key(key(KeyCode::Char(c)));
    }
}

fn ops(recorder: &Recorder) -> Vec<Op> {
    recorder.0.lock().unwrap().clone()
}

fn printed(app: &mut App) -> String {
    crate::render::plain(&std::mem::take(&mut app.output))
}

#[test]
fn ctrl_c_at_idle_hints_then_exits() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, recorder) = app(folder.path(), None);
    app.key(ctrl('c'));
    assert!(!app.quit);
    assert!(app.hint.as_deref().unwrap().contains("Ctrl-C again"));
    app.key(ctrl('c'));
    assert!(app.quit);
    assert_eq!(ops(&recorder), vec![Op::Shutdown]);
}

#[test]
fn ctrl_d_exits_only_on_an_empty_line() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, _) = app(folder.path(), None);
    typed(&mut app, "ab");
    app.key(key(KeyCode::Left));
    app.key(ctrl('d'));
    assert!(!app.quit);
    assert_eq!(app.editor.text(), "a");
    app.key(ctrl('u'));
    app.key(ctrl('d'));
    assert!(app.quit);
}

#[test]
fn quit_command_exits() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, recorder) = app(folder.path(), None);
    typed(&mut app, "/quit");
    app.key(key(KeyCode::Enter));
    assert!(app.quit);
    assert_eq!(ops(&recorder), vec![Op::Shutdown]);
}

#[test]
fn a_message_during_a_turn_is_queued_and_sent_after_it() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, recorder) = app(folder.path(), None);
    app.event(ready());
    typed(&mut app, "first");
    app.key(key(KeyCode::Enter));
    typed(&mut app, "second");
    app.key(key(KeyCode::Enter));
    assert_eq!(ops(&recorder), vec![Op::Send(SendParams::text("first"))]);
    let (view, _) = app.view(80, 10);
    assert!(crate::render::plain(&view).contains("queued: second"));
    app.event(finished());
    assert_eq!(
        ops(&recorder),
        vec![
            Op::Send(SendParams::text("first")),
            Op::Send(SendParams::text("second"))
        ]
    );
    assert!(!app.has_queue());
}

#[test]
fn escape_interrupts_a_turn() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, recorder) = app(folder.path(), None);
    typed(&mut app, "go");
    app.key(key(KeyCode::Enter));
    app.key(key(KeyCode::Esc));
    assert_eq!(ops(&recorder).last(), Some(&Op::Cancel));
    assert!(!app.quit);
}

fn proposal() -> ServerRequest {
    ServerRequest {
        id: "p1".to_owned(),
        turn_id: "s1".to_owned(),
        seq: 0,
        depth: 0,
        parent_call_id: None,
        replay: false,
        approval: asked(),
    }
}

fn asked() -> ProposalNotification {
    ProposalNotification {
        proposal_id: "p1".to_owned(),
        call_id: "t1".to_owned(),
        title: "Run rm -rf build".to_owned(),
        kind: ProposalKind::Command {
            command: "rm -rf build".to_owned(),
            cwd: ".".to_owned(),
        },
        decisions: vec![
            corvid_protocol::DecisionKind::Approve,
            corvid_protocol::DecisionKind::Reject,
        ],
        always_scope: None,
        always_description: None,
        sandbox: None,
        notice: None,
    }
}

#[test]
fn ctrl_c_at_an_approval_cancels_it_and_the_next_line_is_a_message() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, recorder) = app(folder.path(), None);
    typed(&mut app, "clean up");
    app.key(key(KeyCode::Enter));
    app.request(proposal());
    assert!(printed(&mut app).contains("? allow: Run rm -rf build"));
    app.key(ctrl('c'));
    assert_eq!(ops(&recorder).last(), Some(&Op::Cancel));
    assert!(!app.quit);
    app.event(event(EventMsg::TurnFinished(TurnFinishedNotification {
        outcome: TurnOutcome::Cancelled,
        steps: 1,
        usage: TokenUsage::default(),
    })));
    typed(&mut app, "yes please");
    app.key(key(KeyCode::Enter));
    assert_eq!(
        ops(&recorder).last(),
        Some(&Op::Send(SendParams::text("yes please")))
    );
}

#[test]
fn approval_keys_answer_the_proposal() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, recorder) = app(folder.path(), None);
    let answered = |recorder: &Recorder| decisions(recorder).last().cloned();
    // A digit answers at once.
    app.request(proposal());
    app.key(key(KeyCode::Char('1')));
    assert_eq!(answered(&recorder), Some(ApprovalDecision::Approve));
    app.request(proposal());
    app.key(key(KeyCode::Char('3')));
    assert_eq!(
        answered(&recorder),
        Some(ApprovalDecision::Reject { feedback: None })
    );
    // A word needs Enter: `y` alone is typed, not an answer yet.
    app.request(proposal());
    app.key(key(KeyCode::Char('y')));
    assert_eq!(app.editor.text(), "y");
    assert!(app.overlay.proposal.is_some());
    app.key(key(KeyCode::Enter));
    assert_eq!(answered(&recorder), Some(ApprovalDecision::Approve));
    // Feedback that starts with `a` or `y` never approves.
    for feedback in ["actually, use ls", "yikes, not that folder"] {
        app.request(proposal());
        typed(&mut app, feedback);
        app.key(key(KeyCode::Enter));
        assert_eq!(
            answered(&recorder),
            Some(ApprovalDecision::Reject {
                feedback: Some(feedback.to_owned())
            })
        );
    }
    app.request(proposal());
    typed(&mut app, "use cargo clean");
    app.key(key(KeyCode::Enter));
    assert_eq!(
        recorder.1.lock().unwrap().last(),
        Some(&Response::new(
            "p1",
            ApprovalDecision::Reject {
                feedback: Some("use cargo clean".to_owned())
            }
        ))
    );
}

#[test]
fn a_paste_is_one_message_and_shift_enter_adds_a_line() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, recorder) = app(folder.path(), None);
    app.paste("line one\r\nline two");
    app.key(KeyEvent::new(KeyCode::Enter, KeyModifiers::SHIFT));
    typed(&mut app, "three");
    app.key(key(KeyCode::Enter));
    assert_eq!(
        ops(&recorder),
        vec![Op::Send(SendParams::text("line one\nline two\nthree"))]
    );
}

#[test]
fn history_survives_a_restart_and_ctrl_r_finds_it() {
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("history.jsonl");
    {
        let (mut app, _) = app(folder.path(), Some(file.clone()));
        app.submit_line("fix the sign\nin lib.rs");
        app.event(finished());
        app.submit_line("run the tests");
    }
    let (mut app, _) = app(folder.path(), Some(file));
    app.key(key(KeyCode::Up));
    assert_eq!(app.editor.text(), "run the tests");
    app.key(key(KeyCode::Up));
    assert_eq!(app.editor.text(), "fix the sign\nin lib.rs");
    app.key(key(KeyCode::Down));
    app.key(key(KeyCode::Down));
    assert_eq!(app.editor.text(), "");
    app.key(ctrl('r'));
    typed(&mut app, "sign");
    app.key(key(KeyCode::Enter));
    assert_eq!(app.editor.text(), "fix the sign\nin lib.rs");
}

#[test]
fn slash_commands_without_arguments_show_the_setting() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, recorder) = app(folder.path(), None);
    app.event(ready());
    printed(&mut app);
    app.submit_line("/model");
    let text = printed(&mut app);
    assert!(text.contains("model: grok-4.6"), "{text}");
    assert!(text.contains("available: grok-4.6, fast"), "{text}");
    assert!(text.contains("no key yet"), "{text}");
    assert!(text.contains(": claude"), "{text}");
    assert!(!text.contains("fast, claude"), "apart: {text}");
    app.submit_line("/approval");
    assert!(printed(&mut app).contains("approvals: ask"));
    app.submit_line("/approval full-auto");
    app.submit_line("/undo 2");
    app.submit_line("/diff 1");
    app.submit_line("/compact");
    app.submit_line("/release 1.2");
    app.submit_line("/new");
    app.submit_line("/open");
    assert_eq!(
        ops(&recorder),
        vec![
            Op::SetApprovalPolicy {
                policy: ApprovalPolicy::FullAuto
            },
            Op::Undo { turn: Some(2) },
            Op::Diff { turn: Some(1) },
            Op::Compact,
            Op::Send(SendParams {
                skill: Some("release".to_owned()),
                ..SendParams::text("1.2")
            }),
            Op::OpenConversation {
                conversation_id: None
            },
        ]
    );
    assert!(
        app.hint.as_deref().unwrap().contains("/open <id>"),
        "{:?}",
        app.hint
    );
}

#[test]
fn completion_of_commands_and_mentions_and_the_file_goes_to_the_model() {
    let folder = tempfile::tempdir().unwrap();
    std::fs::create_dir(folder.path().join("src")).unwrap();
    std::fs::write(folder.path().join("src/lib.rs"), "pub fn sign() {}\n").unwrap();
    let (mut app, recorder) = app(folder.path(), None);
    typed(&mut app, "/comp");
    app.key(key(KeyCode::Tab));
    assert_eq!(app.editor.text(), "/compact ");
    app.key(ctrl('u'));
    typed(&mut app, "look at @sr");
    app.key(key(KeyCode::Tab));
    assert_eq!(app.editor.text(), "look at @src/");
    typed(&mut app, "l");
    app.key(key(KeyCode::Tab));
    assert_eq!(app.editor.text(), "look at @src/lib.rs ");
    app.key(key(KeyCode::Enter));
    let Some(Op::Send(params)) = ops(&recorder).pop() else {
        panic!("no send");
    };
    let sent = serde_json::to_string(&params).unwrap();
    assert!(sent.contains("pub fn sign() {}"), "{sent}");
    assert!(printed(&mut app).contains("attached @src/lib.rs (1 line)"));
}

#[test]
fn a_mention_outside_the_project_is_not_attached() {
    let outer = tempfile::tempdir().unwrap();
    std::fs::write(outer.path().join("secret.txt"), "top secret").unwrap();
    let project = outer.path().join("project");
    std::fs::create_dir(&project).unwrap();
    let (message, notes) = crate::mention::expand(&project, "see @../secret.txt");
    assert_eq!(message, "see @../secret.txt");
    assert!(notes.is_empty());
}

#[test]
fn the_input_area_fits_a_narrow_terminal() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, _) = app(folder.path(), None);
    app.event(ready());
    typed(&mut app, "a message longer than the terminal is wide");
    let (lines, (column, row)) = app.view(20, 6);
    assert!(lines.len() <= 6);
    assert!(lines.iter().all(|line| line.width() <= 20));
    assert!(column < 20 && usize::from(row) < lines.len());
}

#[test]
fn resume_opens_a_picker_and_enter_switches() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, recorder) = app(folder.path(), None);
    app.submit_line("/resume");
    assert_eq!(ops(&recorder), vec![Op::ListConversations]);
    let conversation = |id: &str, title: &str| ConversationSummary {
        id: id.to_owned(),
        title: title.to_owned(),
        updated_at: 0,
        message_count: 1,
    };
    app.reply(reply(
        1,
        corvid_protocol::ReplyOk::Conversations {
            conversations: vec![conversation("c2", "newest"), conversation("c1", "older")],
            current: Some("c2".to_owned()),
        },
    ));
    let (view, _) = app.view(80, 10);
    let view = crate::render::plain(&view);
    assert!(view.contains("c1 older · 1 message"), "{view}");
    app.key(key(KeyCode::Down));
    app.key(key(KeyCode::Enter));
    assert_eq!(
        ops(&recorder).last(),
        Some(&Op::OpenConversation {
            conversation_id: Some("c1".to_owned())
        })
    );
    // A plain /list prints instead of picking.
    app.submit_line("/list");
    app.reply(reply(
        3,
        corvid_protocol::ReplyOk::Conversations {
            conversations: vec![conversation("c2", "")],
            current: Some("c2".to_owned()),
        },
    ));
    assert!(printed(&mut app).contains("* c2  (untitled) (1 message)"));
}

#[test]
fn errors_read_as_words_and_cancellation_is_not_an_error() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, _) = app(folder.path(), None);
    let error = |class| {
        event(EventMsg::Error(corvid_protocol::ErrorNotification {
            class,
            message: "the provider refused the key".to_owned(),
            next_action: "Run corvid login xai.".to_owned(),
            retryable: false,
        }))
    };
    app.event(error(ErrorClass::AuthenticationRejected));
    app.event(error(ErrorClass::Cancelled));
    assert_eq!(
        printed(&mut app),
        "error (sign-in rejected): the provider refused the key. Run corvid login xai.\n"
    );
}

#[test]
fn the_cost_is_the_engines_price_of_each_turn() {
    let folder = tempfile::tempdir().unwrap();
    let (mut chat, _) = app(folder.path(), None);
    chat.event(ready());
    let usage = TokenUsage {
        input: 1_000_000,
        cache_read: 0,
        cache_write: 0,
        output: 100_000,
        reasoning: 0,
    };
    for (turn, cost) in [(1, 4.5), (2, 0.25)] {
        chat.event(event(EventMsg::TurnStarted {
            conversation_id: "c1".to_owned(),
            model: "grok-4.6".to_owned(),
            prompt: None,
        }));
        // The engine prices the turn as the usage ledger does; the terminal adds it up.
        chat.event(event(EventMsg::Usage(corvid_protocol::UsageNotification {
            step: 1,
            usage,
            turn: usage,
            turn_cost_usd: Some(cost),
            context_window: None,
        })));
        chat.event(event(EventMsg::TurnFinished(TurnFinishedNotification {
            outcome: TurnOutcome::Completed,
            steps: 1,
            usage,
        })));
        if turn == 1 {
            let (view, _) = chat.view(120, 10);
            assert!(crate::render::plain(&view).contains("$4.50"));
        }
    }
    printed(&mut chat);
    chat.submit_line("/cost");
    assert!(printed(&mut chat).contains("cost so far: $4.7500"));
    // A model without a price: no cost is made up.
    let (mut unpriced, _) = app(folder.path(), None);
    unpriced.event(ready());
    unpriced.event(event(EventMsg::TurnFinished(TurnFinishedNotification {
        outcome: TurnOutcome::Completed,
        steps: 1,
        usage,
    })));
    printed(&mut unpriced);
    unpriced.submit_line("/cost");
    assert!(printed(&mut unpriced).contains("no price for this model"));
}

#[test]
fn a_line_answers_a_waiting_proposal() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, recorder) = app(folder.path(), None);
    app.request(proposal());
    app.line("y");
    app.request(proposal());
    app.line("not that one");
    assert_eq!(
        decisions(&recorder),
        vec![
            ApprovalDecision::Approve,
            ApprovalDecision::Reject {
                feedback: Some("not that one".to_owned())
            }
        ]
    );
}

#[test]
fn the_end_of_input_cancels_a_waiting_proposal() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, recorder) = app(folder.path(), None);
    app.input_ended();
    assert!(ops(&recorder).is_empty(), "nothing to cancel");
    app.request(proposal());
    app.input_ended();
    assert_eq!(ops(&recorder), vec![Op::Cancel]);
}

#[test]
fn a_refused_send_does_not_leave_the_chat_waiting_for_ever() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, recorder) = app(folder.path(), None);
    app.submit_line("/init");
    app.submit_line("then this");
    assert!(app.has_queue());
    app.event(event(EventMsg::Error(corvid_protocol::ErrorNotification {
        class: ErrorClass::InvalidRequest,
        message: "a turn is already running".to_owned(),
        next_action: String::new(),
        retryable: false,
    })));
    assert!(!app.has_queue());
    assert_eq!(
        ops(&recorder),
        vec![Op::Init, Op::Send(SendParams::text("then this"))]
    );
    assert!(printed(&mut app).contains("error (not possible now): a turn is already running"));
}

fn numbered(seq: u64, replay: bool, msg: EventMsg) -> Event {
    Event {
        seq,
        replay,
        ..event(msg)
    }
}

fn sandbox(mode: corvid_protocol::SandboxMode, summary: &str) -> corvid_protocol::SandboxState {
    corvid_protocol::SandboxState {
        mode,
        landlock_abi: None,
        seccomp: false,
        network: true,
        summary: summary.to_owned(),
    }
}

#[test]
fn the_sandbox_from_ready_is_in_the_banner_and_the_status_line() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, _) = app(folder.path(), None);
    let EventMsg::Ready(mut ready) = ready().msg else {
        unreachable!()
    };
    ready.sandbox = Some(sandbox(
        corvid_protocol::SandboxMode::Enforced,
        "landlock ABI 7 + seccomp",
    ));
    app.event(event(EventMsg::Ready(ready)));
    assert!(printed(&mut app).contains("sandbox: landlock ABI 7 + seccomp"));
    let (view, _) = app.view(160, 10);
    assert!(crate::render::plain(&view).contains("sandbox on"));
}

#[test]
fn the_banner_says_plainly_when_there_is_no_sandbox() {
    let banner = sandbox_banner(&sandbox(
        corvid_protocol::SandboxMode::Unavailable,
        "unavailable: this kernel has no Landlock; every command asks before it runs",
    ));
    assert_eq!(
        banner,
        "sandbox unavailable: this kernel has no Landlock; every command asks before it runs. \
         Turn it off explicitly with --sandbox off to stop the asking."
    );
}

#[test]
fn a_proposal_says_why_the_sandbox_makes_it_ask() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, _) = app(folder.path(), None);
    app.event(ready());
    let mut request = proposal();
    let notice = corvid_protocol::SandboxNotice::Widened {
        write_outside: false,
        network: true,
    };
    request.approval.notice = Some(notice.describe());
    request.approval.sandbox = Some(notice.clone());
    app.request(request);
    assert!(printed(&mut app).contains(&notice.describe()));
}

#[test]
fn a_running_command_shows_its_latest_output_under_its_line_until_it_finishes() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, _) = app(folder.path(), None);
    app.event(ready());
    app.event(event(EventMsg::ToolCall(
        corvid_protocol::ToolCallNotification {
            call_id: "t1".to_owned(),
            tool: "bash".to_owned(),
            kind: corvid_protocol::ToolCallKind::Command,
            summary: "$ make".to_owned(),
            arguments: serde_json::json!({}),
            locations: Vec::new(),
        },
    )));
    for line in ["one", "two", "three", "four"] {
        app.event(event(EventMsg::ToolOutputDelta {
            call_id: "t1".to_owned(),
            text: format!("{line}\n"),
        }));
    }
    let (view, _) = app.view(80, 12);
    let shown = crate::render::plain(&view);
    assert!(shown.contains("$ make"), "{shown}");
    assert!(shown.contains("four") && shown.contains("two"), "{shown}");
    assert!(!shown.contains("one"), "only the last lines: {shown}");
    app.event(event(EventMsg::ToolResult(
        corvid_protocol::ToolResultNotification {
            call_id: "t1".to_owned(),
            ok: true,
            output: "done".to_owned(),
            truncation: None,
            change: None,
        },
    )));
    let (view, _) = app.view(80, 12);
    assert!(!crate::render::plain(&view).contains("four"));
}

#[test]
fn a_resync_rebuilds_the_input_area_without_printing_the_screen_again() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, _) = app(folder.path(), None);
    app.event(numbered(1, false, ready().msg));
    let started = EventMsg::TurnStarted {
        conversation_id: "c1".to_owned(),
        model: "grok-4.6".to_owned(),
        prompt: Some("hello".to_owned()),
    };
    app.event(numbered(2, false, started.clone()));
    let answer = EventMsg::MessageCompleted {
        step: 1,
        text: "first answer".to_owned(),
    };
    app.event(numbered(3, false, answer.clone()));
    app.event(numbered(
        4,
        false,
        EventMsg::TextDelta {
            delta: "sec".to_owned(),
        },
    ));
    let before = printed(&mut app);
    assert!(before.contains("first answer"));
    // The listener fell behind: a replay of the session, then live events.
    let EventMsg::Ready(mut again) = ready().msg else {
        unreachable!()
    };
    again.missed = Some(40);
    app.event(numbered(1, true, EventMsg::Ready(again)));
    app.event(numbered(
        1,
        true,
        EventMsg::ConversationOpened {
            conversation: ConversationSummary {
                id: "c1".to_owned(),
                title: "t".to_owned(),
                updated_at: 0,
                message_count: 1,
            },
            history: vec![HistoryEntry::User {
                text: "earlier question".to_owned(),
            }],
        },
    ));
    app.event(numbered(2, true, started));
    app.event(numbered(3, true, answer));
    app.event(numbered(
        45,
        true,
        EventMsg::TextDelta {
            delta: "second ans".to_owned(),
        },
    ));
    let after = printed(&mut app);
    assert!(after.contains("40 events behind"), "{after}");
    assert!(!after.contains("first answer"), "printed twice: {after}");
    assert!(
        !after.contains("earlier question"),
        "history again: {after}"
    );
    assert!(!after.contains("corvid chat"), "header again: {after}");
    app.event(numbered(
        46,
        false,
        EventMsg::TextDelta {
            delta: "wer".to_owned(),
        },
    ));
    let (view, _) = app.view(80, 10);
    let shown = crate::render::plain(&view);
    assert!(shown.contains("second answer"), "{shown}");
    assert!(!shown.contains("secsecond"), "{shown}");
    assert!(app.busy());
}

/// The input area as the screen shows it, `width` by at most `height`, with the cursor as `▏`.
fn area(app: &App, width: u16, height: u16) -> String {
    let (lines, (column, row)) = app.view(width, height);
    assert!(lines.len() <= usize::from(height));
    assert!(
        usize::from(row) < lines.len() && column < width,
        "cursor {column},{row} inside {width}x{}",
        lines.len()
    );
    let mut text = String::new();
    for (index, line) in lines.iter().enumerate() {
        assert!(
            line.width() <= usize::from(width),
            "{line:?} is wider than {width}"
        );
        let mut chars: Vec<char> = line
            .spans
            .iter()
            .flat_map(|span| span.content.chars())
            .collect();
        if index == usize::from(row) {
            while chars.len() < usize::from(column) {
                chars.push(' ');
            }
            chars.insert(usize::from(column), '▏');
        }
        let row: String = chars.into_iter().collect();
        text.push_str(row.trim_end());
        text.push('\n');
    }
    text
}

#[test]
fn the_input_area_is_as_tall_as_what_it_shows() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, _) = app(folder.path(), None);
    app.event(ready());
    // Idle: the input, the hint row and the status line; nothing more.
    assert_eq!(app.view(80, 40).0.len(), 3);
    app.paste("one\ntwo\nthree\nfour");
    assert_eq!(app.view(80, 40).0.len(), 6);
    insta::assert_snapshot!("long_input_fits", area(&app, 40, 40));
}

#[test]
fn a_long_input_on_a_short_terminal_keeps_the_cursor_line_and_the_status() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, _) = app(folder.path(), None);
    app.event(ready());
    let text: String = (1..=12).map(|n| format!("line {n}\n")).collect();
    app.paste(text.trim_end());
    // The cursor is at the end: the last lines show, then the status line.
    insta::assert_snapshot!("long_input_short_terminal_end", area(&app, 30, 6));
    // At the start, the first lines show.
    for _ in 0..11 {
        app.key(key(KeyCode::Up));
    }
    app.key(key(KeyCode::Home));
    insta::assert_snapshot!("long_input_short_terminal_start", area(&app, 30, 6));
}

#[test]
fn a_wrapped_input_puts_the_cursor_after_the_last_character() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, _) = app(folder.path(), None);
    app.event(ready());
    typed(&mut app, "abcdefghij");
    // 8 columns: two for the prompt, six for the text.
    let (lines, (column, row)) = app.view(8, 10);
    assert_eq!(crate::render::plain(&lines[..2]), "› abcdef\n  ghij\n");
    assert_eq!((column, row), (6, 1));
    typed(&mut app, "kl");
    // The row is full: the cursor stands on a new one.
    let (lines, (column, row)) = app.view(8, 10);
    assert_eq!(
        crate::render::plain(&lines[..3]),
        "› abcdef\n  ghijkl\n  \n"
    );
    assert_eq!((column, row), (2, 2));
}

#[test]
fn an_approval_on_a_narrow_terminal_wraps_and_the_input_stays_below_it() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, _) = app(folder.path(), None);
    app.event(ready());
    typed(&mut app, "clean up");
    app.key(key(KeyCode::Enter));
    app.request(proposal());
    typed(&mut app, "because");
    insta::assert_snapshot!("approval_narrow", area(&app, 32, 20));
}

#[test]
fn feedback_that_starts_with_n_is_one_rejection_with_the_whole_text() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, recorder) = app(folder.path(), None);
    typed(&mut app, "clean up");
    app.key(key(KeyCode::Enter));
    app.request(proposal());
    typed(&mut app, "no, use cargo clean");
    app.key(key(KeyCode::Enter));
    app.request(proposal());
    typed(&mut app, "n");
    app.key(key(KeyCode::Enter));
    assert_eq!(
        ops(&recorder).len(),
        1,
        "nothing queued or sent besides the answers"
    );
    assert_eq!(
        *recorder.1.lock().unwrap(),
        vec![
            Response::new(
                "p1",
                ApprovalDecision::Reject {
                    feedback: Some("no, use cargo clean".to_owned())
                }
            ),
            Response::new("p1", ApprovalDecision::Reject { feedback: None }),
        ]
    );
}

#[test]
fn help_on_a_narrow_terminal_wraps_each_description_under_itself() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, _) = app(folder.path(), None);
    app.set_width(60);
    app.submit_line("/help");
    let lines = std::mem::take(&mut app.output);
    let text = crate::render::plain(&lines);
    assert!(
        text.contains(
            "/approval  show the approval policy (/approval <policy>\n           changes it)\n"
        ),
        "{text}"
    );
    assert!(text.starts_with("\n› /help\n"), "{text}");
}

#[test]
fn the_call_waiting_for_approval_has_no_second_line_and_streaming_text_is_rendered() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, _) = app(folder.path(), None);
    app.event(ready());
    typed(&mut app, "clean up");
    app.key(key(KeyCode::Enter));
    app.event(event(EventMsg::TextDelta {
        delta: "I will **remove** the".to_owned(),
    }));
    let (view, _) = app.view(80, 20);
    let shown = crate::render::plain(&view);
    assert!(shown.contains("I will remove the"), "{shown}");
    app.event(event(EventMsg::ToolCall(
        corvid_protocol::ToolCallNotification {
            call_id: "t1".to_owned(),
            tool: "bash".to_owned(),
            kind: corvid_protocol::ToolCallKind::Command,
            summary: "$ rm -rf build".to_owned(),
            arguments: serde_json::json!({"command": "rm -rf build"}),
            locations: Vec::new(),
        },
    )));
    let (view, _) = app.view(80, 20);
    assert!(crate::render::plain(&view).contains("• $ rm -rf build"));
    app.request(proposal());
    let (view, _) = app.view(80, 20);
    let shown = crate::render::plain(&view);
    assert!(!shown.contains("• $ rm -rf build"), "{shown}");
    // The proposal allows no "always": none is offered.
    assert!(shown.contains("1 yes · 3 no · "), "{shown}");
    assert!(!shown.contains("2 always"), "{shown}");
}

#[test]
fn always_is_offered_only_where_the_proposal_allows_it_in_the_agents_words() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, _recorder) = app(folder.path(), None);
    app.event(ready());
    let mut offered = proposal();
    let asked = &mut offered.approval;
    asked
        .decisions
        .insert(1, corvid_protocol::DecisionKind::ApproveAlways);
    asked.always_scope = Some(corvid_protocol::ApprovalRule::CommandPrefix {
        prefix: "rm".to_owned(),
    });
    asked.always_description = Some("Always allow `rm` here.".to_owned());
    app.request(offered);
    assert!(printed(&mut app).contains("  2 always: Always allow `rm` here."));
    let (view, _) = app.view(80, 20);
    let shown = crate::render::plain(&view);
    assert!(shown.contains("1 yes · 2 always · 3 no · "), "{shown}");
}

#[test]
fn slash_mcp_asks_for_the_servers_and_shows_each_with_its_state_and_tools() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, recorder) = app(folder.path(), None);
    app.event(ready());
    printed(&mut app);
    app.submit_line("/mcp");
    assert_eq!(ops(&recorder).last(), Some(&Op::ListToolServers));
    let server = |name: &str, state: ToolServerState| ToolServer {
        name: name.to_owned(),
        configured_in: ".corvid/mcp.json".to_owned(),
        transport: "runs `node server.js`".to_owned(),
        state,
        reason: None,
        tools: Vec::new(),
        withheld: Vec::new(),
        description: String::new(),
    };
    app.reply(reply(
        1,
        corvid_protocol::ReplyOk::ToolServers {
            servers: vec![
                ToolServer {
                    tools: vec![
                        "mcp__everything__echo".to_owned(),
                        "mcp__everything__get-sum".to_owned(),
                    ],
                    withheld: vec!["get-env".to_owned()],
                    ..server("everything", ToolServerState::Ready)
                },
                ToolServer {
                    reason: Some("it did not start within 1.5 s (startup_timeout_sec)".to_owned()),
                    ..server("stuck", ToolServerState::Failed)
                },
                server("repo", ToolServerState::Untrusted),
                server("remote", ToolServerState::NeedsSignIn),
            ],
        },
    ));
    let shown = printed(&mut app);
    for expected in [
        "everything  ready, 2 tools\n  in .corvid/mcp.json · runs `node server.js`\n",
        "  tools: echo, get-sum",
        "not offered (enabled_tools/disabled_tools): get-env",
        "stuck       failed: it did not start within 1.5 s (startup_timeout_sec)",
        "repo        not trusted yet, not started: `/mcp trust repo` starts it",
        "remote      needs sign-in: `corvid mcp login remote` in a terminal",
    ] {
        assert!(shown.contains(expected), "{expected:?} not in\n{shown}");
    }

    app.reply(reply(
        1,
        corvid_protocol::ReplyOk::ToolServers { servers: vec![] },
    ));
    assert!(printed(&mut app).contains("no MCP servers in this session"));
}

#[test]
fn slash_mcp_trust_asks_the_engine_to_trust_that_server() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, recorder) = app(folder.path(), None);
    app.event(ready());
    app.submit_line("/mcp trust repo-tools");
    assert_eq!(
        ops(&recorder).last(),
        Some(&Op::TrustToolServer {
            name: "repo-tools".to_owned()
        })
    );
    let before = ops(&recorder).len();
    app.submit_line("/mcp trust");
    app.submit_line("/mcp start all");
    assert_eq!(ops(&recorder).len(), before, "nothing sent without a name");
    let (view, _) = app.view(120, 10);
    assert!(
        crate::render::plain(&view).contains("trust <server>"),
        "{}",
        crate::render::plain(&view)
    );
}

#[test]
fn a_resumed_conversation_is_said_and_shown_after_the_banner_once() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, _) = app(folder.path(), None);
    app.settings.resumed = Some((
        ConversationSummary {
            id: "c1".to_owned(),
            title: "fix the sign".to_owned(),
            updated_at: 0,
            message_count: 2,
        },
        vec![
            HistoryEntry::User {
                text: "fix the sign in lib.rs".to_owned(),
            },
            HistoryEntry::Assistant {
                text: "Fixed: `add` returns a Vec<i32> now.".to_owned(),
            },
        ],
    ));
    app.event(ready());
    let shown = printed(&mut app);
    let banner = shown.find("corvid chat").unwrap();
    let said = shown
        .find("resumed the project's last conversation (2 messages)")
        .unwrap();
    let title = shown.find("── fix the sign (c1) ──").unwrap();
    assert!(banner < said && said < title, "{shown}");
    assert!(shown.contains("› fix the sign in lib.rs"), "{shown}");
    assert!(shown.contains("returns a Vec<i32> now."), "{shown}");
    // A later `ready` (a resync) does not show it again.
    let EventMsg::Ready(mut again) = ready().msg else {
        unreachable!()
    };
    again.missed = Some(3);
    app.event(numbered(9, true, EventMsg::Ready(again)));
    assert!(!printed(&mut app).contains("resumed"));
}

#[test]
fn a_tool_call_being_written_shows_its_tool_and_size_until_the_call_arrives() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, _) = app(folder.path(), None);
    app.event(ready());
    app.submit_line("write the module");
    let progress = |bytes| {
        event(EventMsg::ToolCallProgress {
            call_id: Some("call-1".to_owned()),
            tool: "write".to_owned(),
            bytes,
        })
    };
    app.event(progress(0));
    assert!(area(&app, 100, 10).contains("writing write call, 0 bytes"));
    app.event(progress(3_000));
    assert!(area(&app, 100, 10).contains("writing write call, 2.9 KB"));
    app.event(event(EventMsg::ToolCall(
        corvid_protocol::ToolCallNotification {
            call_id: "call-1".to_owned(),
            tool: "write".to_owned(),
            kind: corvid_protocol::ToolCallKind::Edit,
            arguments: serde_json::json!({"path": "a.rs", "content": "x"}),
            summary: "Write a.rs".to_owned(),
            locations: vec!["a.rs".to_owned()],
        },
    )));
    let shown = area(&app, 100, 10);
    assert!(!shown.contains("writing write call"), "{shown}");
    assert!(shown.contains("Write a.rs"), "{shown}");
}

#[test]
fn an_approval_always_wants_the_user_and_a_turns_end_only_while_unfocused() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, _recorder) = app(folder.path(), None);
    app.event(ready());
    app.event(finished());
    assert_eq!(app.attention, None, "focused: the screen says it");
    app.set_focused(false);
    app.event(finished());
    assert_eq!(app.attention.take().as_deref(), Some("corvid: turn done"));
    app.set_focused(true);
    app.request(proposal());
    let wanted = app.attention.take().unwrap();
    assert!(wanted.starts_with("corvid: approval needed: "), "{wanted}");
}

mod permissions;
mod plan;

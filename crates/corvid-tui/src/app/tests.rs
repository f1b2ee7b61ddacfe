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

mod approval;
mod commands;
mod events;
mod images;
mod keys;
mod permissions;
mod plan;

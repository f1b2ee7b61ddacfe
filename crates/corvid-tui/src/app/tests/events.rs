//! The agent's events on screen: errors, cost, the sandbox, running commands, resyncs, a resumed conversation, calls being written.

use super::*;

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

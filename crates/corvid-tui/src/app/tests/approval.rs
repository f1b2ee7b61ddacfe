//! The agent's requests: asked, answered by a key, a word or feedback, cancelled; the words shown.

use super::*;

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

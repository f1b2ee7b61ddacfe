#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use corvid_protocol::{ApprovalPolicy, EventMsg, ReadyNotification};

use super::*;

fn ready() -> EventMsg {
    EventMsg::Ready(ReadyNotification {
        version: corvid_protocol::PROTOCOL_VERSION,
        engine: "corvid test".into(),
        cwd: "/project".into(),
        conversation_id: "c1".into(),
        model: "m".into(),
        approval_policy: ApprovalPolicy::Ask,
        missed: None,
        sandbox: None,
    })
}

fn turn(id: &str) -> Scope {
    Scope {
        id: id.into(),
        ..Scope::default()
    }
}

/// The next frame, which must be an event.
async fn next(listener: &mut Subscription) -> Event {
    match listener.recv().await {
        Some(SessionFrame::Event(event)) => event,
        other => panic!("expected an event, got {other:?}"),
    }
}

fn delta(text: &str) -> EventMsg {
    EventMsg::TextDelta { delta: text.into() }
}

#[tokio::test]
async fn nothing_is_replayed_before_ready_and_a_first_listener_hears_everything() {
    let journal = Journal::new();
    let mut first = journal.subscribe();
    assert_eq!(first.buffered(), 0);
    journal.emit(&Scope::default(), ready());
    let event = next(&mut first).await;
    assert!(!event.replay);
    assert_eq!(event.seq, 1);
}

#[tokio::test]
async fn a_running_turn_is_replayed_with_its_deltas_merged_and_seqs_in_order() {
    let journal = Journal::new();
    journal.emit(&Scope::default(), ready());
    journal.emit(
        &turn("s1"),
        EventMsg::TurnStarted {
            conversation_id: "c1".into(),
            model: "m".into(),
            prompt: Some("hi".into()),
        },
    );
    for piece in ["a", "b", "c"] {
        journal.emit(&turn("s1"), delta(piece));
    }
    // An answer to another submission is not part of the turn.
    journal.emit(
        &turn("s2"),
        EventMsg::Warning {
            message: "x".into(),
        },
    );
    let mut late = journal.subscribe();
    let mut replay = Vec::new();
    while late.buffered() > 0 {
        replay.push(next(&mut late).await);
    }
    let kinds: Vec<&str> = replay
        .iter()
        .map(|event| match &event.msg {
            EventMsg::Ready(_) => "ready",
            EventMsg::ConversationOpened { .. } => "switched",
            EventMsg::TurnStarted { .. } => "turn_started",
            EventMsg::TextDelta { delta } => {
                assert_eq!(delta, "abc");
                "delta"
            }
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["ready", "switched", "turn_started", "delta"]);
    assert!(replay.iter().all(|event| event.replay));
    let seqs: Vec<u64> = replay.iter().map(|event| event.seq).collect();
    assert_eq!(seqs, [1, 1, 2, 5]);
    journal.emit(&turn("s1"), delta("d"));
    let live = next(&mut late).await;
    assert_eq!((live.seq, live.replay), (7, false));
}

fn output(call: &str, text: &str) -> EventMsg {
    EventMsg::ToolOutputDelta {
        call_id: call.into(),
        text: text.into(),
    }
}

#[tokio::test]
async fn a_running_commands_output_is_replayed_merged_per_call() {
    let journal = Journal::new();
    journal.emit(&Scope::default(), ready());
    journal.emit(
        &turn("s1"),
        EventMsg::TurnStarted {
            conversation_id: "c1".into(),
            model: "m".into(),
            prompt: Some("run it".into()),
        },
    );
    journal.emit(&turn("s1"), output("call-1", "one\n"));
    journal.emit(&turn("s1"), output("call-1", "two\n"));
    // Another call's output is its own event, and so is the first call's after it.
    journal.emit(&turn("s1"), output("call-2", "other\n"));
    journal.emit(&turn("s1"), output("call-1", "three\n"));
    let mut late = journal.subscribe();
    let mut outputs = Vec::new();
    while late.buffered() > 0 {
        let event = next(&mut late).await;
        if let EventMsg::ToolOutputDelta { call_id, text } = event.msg {
            outputs.push((call_id, text, event.seq));
        }
    }
    assert_eq!(
        outputs,
        [
            ("call-1".to_owned(), "one\ntwo\n".to_owned(), 4),
            ("call-2".to_owned(), "other\n".to_owned(), 5),
            ("call-1".to_owned(), "three\n".to_owned(), 6),
        ]
    );
}

#[tokio::test]
async fn a_listener_that_falls_behind_is_resynchronised() {
    let journal = Journal::new();
    journal.emit(&Scope::default(), ready());
    let mut slow = journal.subscribe();
    let replay_len = slow.buffered();
    for index in 0..EVENT_BUFFER * 3 {
        journal.emit(
            &turn("s1"),
            EventMsg::Warning {
                message: index.to_string(),
            },
        );
        assert!(slow.buffered() <= replay_len + EVENT_BUFFER);
    }
    // The replay it had is still read first; then the ring says it lagged.
    for _ in 0..replay_len {
        assert!(next(&mut slow).await.replay);
    }
    match next(&mut slow).await.msg {
        EventMsg::Ready(ready) => {
            assert_eq!(ready.missed, Some((EVENT_BUFFER * 2) as u64));
        }
        other => panic!("expected a resync ready, got {other:?}"),
    }
}

#[tokio::test]
async fn listeners_end_after_the_session_closes() {
    let journal = Journal::new();
    journal.emit(&Scope::default(), ready());
    let mut listener = journal.subscribe();
    journal.emit(&turn("s1"), EventMsg::ShutdownComplete);
    journal.close();
    while let Some(frame) = listener.recv().await {
        let SessionFrame::Event(event) = frame else {
            panic!("no request was made: {frame:?}")
        };
        if event.replay {
            continue;
        }
        assert_eq!(event.msg, EventMsg::ShutdownComplete);
    }
    // A listener that subscribes after the end gets the replay, then the end.
    let mut late = journal.subscribe();
    assert!(next(&mut late).await.replay);
    assert_eq!(journal.replay_len(), 2);
}

fn approval(id: &str) -> ProposalNotification {
    ProposalNotification {
        proposal_id: id.into(),
        call_id: format!("call-{id}"),
        title: "Run make".into(),
        kind: corvid_protocol::ProposalKind::Command {
            command: "make".into(),
            cwd: ".".into(),
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

#[tokio::test]
async fn a_waiting_request_is_replayed_and_an_answered_one_is_not() {
    let journal = Journal::new();
    journal.emit(&Scope::default(), ready());
    journal.emit(
        &turn("s1"),
        EventMsg::TurnStarted {
            conversation_id: "c1".into(),
            model: "m".into(),
            prompt: Some("make".into()),
        },
    );
    let mut live = journal.subscribe();
    journal.request(&turn("s1"), approval("p1"));
    journal.request(&turn("s1"), approval("p2"));
    journal.emit(
        &turn("s1"),
        EventMsg::ProposalClosed {
            proposal_id: "p1".into(),
            outcome: corvid_protocol::ProposalOutcome::Approved,
        },
    );
    // A listener that was there hears both requests live, in the stream's order.
    let mut heard = Vec::new();
    while let Some(frame) = live.recv().await {
        let done = matches!(&frame, SessionFrame::Event(event)
            if matches!(event.msg, EventMsg::ProposalClosed { .. }));
        heard.push((
            frame.seq(),
            frame.request().map(|request| request.id.clone()),
        ));
        if done {
            break;
        }
    }
    let heard: Vec<_> = heard.into_iter().filter(|(seq, _)| *seq > 2).collect();
    assert_eq!(
        heard,
        [
            (3, Some("p1".to_owned())),
            (4, Some("p2".to_owned())),
            (5, None)
        ]
    );
    // A face that comes now finds only the request that still waits, marked as replayed.
    let mut late = journal.subscribe();
    let mut requests = Vec::new();
    while late.buffered() > 0 {
        if let Some(SessionFrame::Request(request)) = late.recv().await {
            requests.push((request.id, request.turn_id, request.seq, request.replay));
        }
    }
    assert_eq!(requests, [("p2".to_owned(), "s1".to_owned(), 4, true)]);
}

//! The session service: many sessions over one store, many listeners per session, replay and
//! resync, and approvals that always get an answer — through the real engine, tools and store,
//! against a scripted model.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::Path;
use std::sync::Arc;

use parking_lot::Mutex;
use std::time::Duration;

use corvid_agent::{
    Agents, EVENT_BUFFER, IdleRules, Link, OpenConversation, Session, Subscription,
};
use corvid_protocol::{
    ApprovalDecision, ApprovalPolicy, ClientFrame, ErrorClass, Event, EventMsg, HistoryEntry, Op,
    ProposalOutcome, Reply, ReplyOk, Response, SendParams, ServerFrame, ServerRequest,
    SessionFrame, TurnOutcome,
};
use corvid_store::Store;
use corvid_test_support::agent::{self, PATIENCE, ScriptedClient};
use corvid_test_support::scripted::{ScriptedModel, ScriptedReply};
use corvid_wire::model::StreamEvent;
use tokio::time::timeout;

fn service(replies: Vec<ScriptedReply>) -> (Agents, Arc<ScriptedModel>) {
    service_with(replies, IdleRules::default())
}

fn service_with(replies: Vec<ScriptedReply>, idle: IdleRules) -> (Agents, Arc<ScriptedModel>) {
    let model = Arc::new(ScriptedModel::new(replies));
    let store = Arc::new(Mutex::new(Store::open_in_memory().unwrap()));
    (
        Agents::with_idle_rules(Arc::new(ScriptedClient(Arc::clone(&model))), store, idle),
        model,
    )
}

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "one\n").unwrap();
    dir
}

async fn next(listener: &mut Subscription) -> Event {
    agent::next_event(listener, PATIENCE).await
}

/// A new conversation in `project`, asking before every change.
async fn open_new(agents: &Agents, project: &Path) -> Session {
    agents
        .open(
            agent::config(project, ApprovalPolicy::Ask),
            OpenConversation::New,
        )
        .await
        .unwrap()
}

/// Events until one matches, all of them returned (the match last).
async fn until(listener: &mut Subscription, matches: impl Fn(&Event) -> bool) -> Vec<Event> {
    let mut seen = Vec::new();
    loop {
        let event = next(listener).await;
        let done = matches(&event);
        seen.push(event);
        if done {
            return seen;
        }
    }
}

fn turn_finished(event: &Event) -> bool {
    matches!(event.msg, EventMsg::TurnFinished(_)) && event.depth == 0
}

/// Events until the next request: the events before it, and the request.
async fn until_request(listener: &mut Subscription) -> (Vec<Event>, ServerRequest) {
    let mut seen = Vec::new();
    loop {
        match agent::next_frame(listener, PATIENCE).await {
            SessionFrame::Event(event) => seen.push(event),
            SessionFrame::Request(request) => return (seen, request),
        }
    }
}

/// Answers the request `id` from `session`, as a face does.
fn approve(session: &Session, id: &str, decision: ApprovalDecision) -> Reply {
    session.respond(Response::new(id, decision))
}

/// What events say, without when (a replay's summaries are stamped when they are made).
fn messages(events: &[Event]) -> Vec<(u64, EventMsg)> {
    events
        .iter()
        .map(|event| (event.seq, event.msg.clone()))
        .collect()
}

/// Reads the replay a new subscription starts with: events and the requests that still wait.
async fn replay_frames(listener: &mut Subscription) -> Vec<SessionFrame> {
    let mut frames = Vec::new();
    while listener.buffered() > 0 {
        let frame = agent::next_frame(listener, PATIENCE).await;
        assert!(frame.is_replay(), "{frame:?}");
        frames.push(frame);
    }
    frames
}

/// The events of the replay a new subscription starts with.
async fn replay(listener: &mut Subscription) -> Vec<Event> {
    replay_frames(listener)
        .await
        .into_iter()
        .filter_map(|frame| match frame {
            SessionFrame::Event(event) => Some(event),
            SessionFrame::Request(_) => None,
        })
        .collect()
}

#[tokio::test]
async fn two_listeners_see_the_same_events() {
    let dir = project();
    let (agents, _) = service(vec![
        ScriptedReply::tool_call("c1", "read", r#"{"path":"notes.txt"}"#),
        ScriptedReply::text("It says one."),
    ]);
    let session = open_new(&agents, dir.path()).await;
    let mut first = session.subscribe();
    let mut second = session.subscribe();
    assert_eq!(
        messages(&replay(&mut first).await),
        messages(&replay(&mut second).await)
    );
    session.submit(Op::Send(SendParams::text("what do the notes say?")));
    let seen_first = until(&mut first, turn_finished).await;
    let seen_second = until(&mut second, turn_finished).await;
    assert_eq!(seen_first, seen_second);
    assert!(seen_first.iter().all(|event| !event.replay));
    let seqs: Vec<u64> = seen_first.iter().map(|event| event.seq).collect();
    assert!(
        seqs.windows(2).all(|pair| pair[1] == pair[0] + 1),
        "{seqs:?}"
    );
    assert!(matches!(
        &seen_first[0].msg,
        EventMsg::TurnStarted { prompt: Some(prompt), .. } if prompt == "what do the notes say?"
    ));
    assert_eq!(session.listeners(), 2);
}

// On two threads, as a server runs it: answers and events race for real.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_subscriber_gets_the_replay_of_finished_and_running_turns() {
    let dir = project();
    let (agents, _) = service(vec![
        ScriptedReply::text("Hello."),
        ScriptedReply::tool_call("c1", "bash", r#"{"command":"echo two >> notes.txt"}"#),
        ScriptedReply::text("Appended."),
    ]);
    let session = open_new(&agents, dir.path()).await;
    let mut early = session.subscribe();
    session.submit(Op::Send(SendParams::text("hi")));
    until(&mut early, turn_finished).await;
    session.submit(Op::Send(SendParams::text("append two")));
    let (_, asked) = until_request(&mut early).await;
    let last_live = asked.seq;

    let mut late = session.subscribe();
    let frames = replay_frames(&mut late).await;
    let events: Vec<Event> = frames
        .iter()
        .filter_map(SessionFrame::event)
        .cloned()
        .collect();
    match &events[0].msg {
        EventMsg::Ready(ready) => {
            assert_eq!(ready.conversation_id, session.conversation_id());
            assert_eq!(ready.missed, None);
        }
        other => panic!("a replay starts with ready, not {other:?}"),
    }
    let history = events
        .iter()
        .find_map(|event| match &event.msg {
            EventMsg::ConversationOpened { history, .. } => Some(history.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        history,
        vec![
            HistoryEntry::User { text: "hi".into() },
            HistoryEntry::Assistant {
                text: "Hello.".into()
            },
        ]
    );
    // The running turn, from its start to the waiting proposal, seqs never decreasing.
    assert!(events.iter().any(|event| matches!(
        &event.msg,
        EventMsg::TurnStarted { prompt: Some(prompt), .. } if prompt == "append two"
    )));
    // The request that waits comes last, as it was asked.
    let Some(SessionFrame::Request(waiting)) = frames.last() else {
        panic!("the replay ends with the waiting request: {frames:?}")
    };
    assert_eq!(
        *waiting,
        ServerRequest {
            replay: true,
            ..asked.clone()
        }
    );
    assert!(frames.windows(2).all(|pair| pair[0].seq() <= pair[1].seq()));

    // The late listener answers; both hear the rest, live, in the same order.
    assert_eq!(
        approve(&session, &waiting.id, ApprovalDecision::Approve).into_result(),
        Ok(ReplyOk::Done)
    );
    let rest_late = until(&mut late, turn_finished).await;
    let rest_early = until(&mut early, turn_finished).await;
    assert_eq!(rest_late, rest_early);
    assert_eq!(rest_late[0].seq, last_live + 1);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "one\ntwo\n"
    );
}

#[tokio::test]
async fn a_listener_that_never_reads_stalls_nothing_and_stays_bounded() {
    const DELTAS: usize = EVENT_BUFFER * 6;
    let ScriptedReply::Events(mut events) = ScriptedReply::text("") else {
        unreachable!()
    };
    let deltas = (0..DELTAS).map(|_| StreamEvent::TextDelta { text: "x".into() });
    events.splice(1..2, deltas);
    let dir = project();
    let (agents, _) = service(vec![ScriptedReply::Events(events)]);
    let session = open_new(&agents, dir.path()).await;
    let mut stuck = session.subscribe();
    let stuck_replay = stuck.buffered();
    let mut reader = session.subscribe();
    replay(&mut reader).await;
    session.submit(Op::Send(SendParams::text("talk a lot")));
    // The reader may fall behind too (the deltas come faster than it reads): then a resync
    // brings it up to date, and it still learns that the turn ended.
    loop {
        let event = next(&mut reader).await;
        if turn_finished(&event) {
            break;
        }
        if matches!(&event.msg, EventMsg::Ready(ready) if ready.missed.is_some()) {
            let rebuilt = replay(&mut reader).await;
            let running = rebuilt
                .iter()
                .any(|event| matches!(event.msg, EventMsg::TurnStarted { .. }));
            if !running {
                break;
            }
        }
    }
    // The one that never read holds no more than the ring, however much was said.
    assert!(
        stuck.buffered() <= stuck_replay + EVENT_BUFFER,
        "{} buffered",
        stuck.buffered()
    );
    // A new listener's replay is small: the turn's deltas were merged into its history.
    let mut fresh = session.subscribe();
    assert!(fresh.buffered() <= 3, "{} replayed", fresh.buffered());
    let fresh_replay = replay(&mut fresh).await;
    let said = "x".repeat(DELTAS);
    assert!(fresh_replay.iter().any(|event| matches!(
        &event.msg,
        EventMsg::ConversationOpened { history, .. }
            if history.contains(&HistoryEntry::Assistant { text: said.clone() })
    )));

    // When it reads at last: its old replay, then a resync that says how much it missed.
    for _ in 0..stuck_replay {
        assert!(next(&mut stuck).await.replay);
    }
    let resync = next(&mut stuck).await;
    match &resync.msg {
        // Of the turn's events only the ring's worth were held for it; the rest were dropped.
        EventMsg::Ready(ready) => assert!(
            ready.missed.unwrap() as usize >= DELTAS - EVENT_BUFFER,
            "{:?} missed",
            ready.missed
        ),
        other => panic!("expected a resync, got {other:?}"),
    }
    let rebuilt = replay(&mut stuck).await;
    assert_eq!(messages(&rebuilt), messages(&fresh_replay[1..]));
}

// On two threads, as a server runs it: answers and events race for real.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_is_answered_from_either_listener_and_a_second_answer_is_refused() {
    let dir = project();
    let (agents, _) = service(vec![
        ScriptedReply::tool_call("c1", "bash", r#"{"command":"echo a >> notes.txt"}"#),
        ScriptedReply::tool_call("c2", "bash", r#"{"command":"echo b >> notes.txt"}"#),
        ScriptedReply::text("Both ran."),
    ]);
    // Two tabs open the same conversation: one session, two listeners.
    let tab_one = open_new(&agents, dir.path()).await;
    let tab_two = agents
        .open(
            agent::config(dir.path(), ApprovalPolicy::Ask),
            OpenConversation::Existing(tab_one.conversation_id()),
        )
        .await
        .unwrap();
    assert_eq!(tab_one.id(), tab_two.id());
    let mut one = tab_one.subscribe();
    let mut two = tab_two.subscribe();
    replay(&mut one).await;
    replay(&mut two).await;

    tab_one.submit(Op::Send(SendParams::text("append a and b")));
    let first = until_request(&mut two).await.1.id;
    assert_eq!(
        approve(&tab_two, &first, ApprovalDecision::Approve).into_result(),
        Ok(ReplyOk::Done)
    );
    let second = loop {
        let (_, request) = until_request(&mut one).await;
        if request.id != first {
            break request.id;
        }
    };
    assert_eq!(
        approve(&tab_one, &second, ApprovalDecision::Approve).into_result(),
        Ok(ReplyOk::Done)
    );
    let late_answer = approve(
        &tab_two,
        &second,
        ApprovalDecision::Reject { feedback: None },
    );
    assert_eq!(late_answer.id, second);
    let error = late_answer.into_result().unwrap_err();
    assert_eq!(error.class, ErrorClass::InvalidRequest);
    assert!(
        error.message.contains("already answered (approved)"),
        "{}",
        error.message
    );
    let rest = until(&mut two, turn_finished).await;
    assert!(rest.iter().any(|event| matches!(
        &event.msg,
        EventMsg::ProposalClosed { proposal_id, outcome: ProposalOutcome::Approved } if *proposal_id == second
    )));
    match &rest.last().unwrap().msg {
        EventMsg::TurnFinished(finished) => assert_eq!(finished.outcome, TurnOutcome::Completed),
        _ => unreachable!(),
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "one\na\nb\n"
    );
}

// On two threads, as a server runs it: answers and events race for real.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_a_session_while_an_approval_waits_ends_cleanly() {
    let dir = project();
    let database = tempfile::tempdir().unwrap();
    let model = Arc::new(ScriptedModel::new(vec![ScriptedReply::tool_call(
        "c1",
        "bash",
        r#"{"command":"echo never >> notes.txt"}"#,
    )]));
    let store = Arc::new(Mutex::new(
        Store::open(&database.path().join("corvid.db")).unwrap(),
    ));
    let agents = Agents::new(Arc::new(ScriptedClient(Arc::clone(&model))), store.clone());
    let session = open_new(&agents, dir.path()).await;
    let conversation = session.conversation_id();
    let mut listener = session.subscribe();
    session.submit(Op::Send(SendParams::text("append never")));
    until_request(&mut listener).await;

    assert!(
        timeout(PATIENCE, agents.close(session.id()))
            .await
            .expect("close ends")
    );
    let mut rest = Vec::new();
    while let Some(frame) = timeout(PATIENCE, listener.recv())
        .await
        .expect("the stream ends")
    {
        if let SessionFrame::Event(event) = frame {
            rest.push(event.msg);
        }
    }
    assert!(rest.iter().any(|msg| matches!(
        msg,
        EventMsg::ProposalClosed {
            outcome: ProposalOutcome::Interrupted,
            ..
        }
    )));
    assert!(rest.iter().any(|msg| matches!(
        msg,
        EventMsg::ToolResult(result) if !result.ok && result.output.contains("the session was closed")
    )));
    assert!(rest.iter().any(|msg| matches!(
        msg,
        EventMsg::TurnFinished(finished) if finished.outcome == TurnOutcome::Cancelled
    )));
    assert_eq!(rest.last(), Some(&EventMsg::ShutdownComplete));
    assert!(session.is_closed());
    assert!(agents.sessions().is_empty());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "one\n"
    );
    // The turn's step, with the call's "session closed" result, is in the store.
    let stored = store.lock().messages(&conversation).unwrap();
    assert!(
        stored
            .iter()
            .any(|message| message.content.contains("the session was closed")),
        "{stored:?}"
    );
    // An answer after the end is refused; the conversation can be opened again.
    let after_end = approve(&session, "p_c1", ApprovalDecision::Approve)
        .into_result()
        .unwrap_err();
    assert!(
        after_end
            .message
            .contains("already answered (closed with the session)"),
        "{}",
        after_end.message
    );
    let reopened = agents
        .open(
            agent::config(dir.path(), ApprovalPolicy::Ask),
            OpenConversation::Existing(conversation.clone()),
        )
        .await
        .unwrap();
    assert_ne!(reopened.id(), session.id());
    assert_eq!(reopened.conversation_id(), conversation);
}

// On two threads, as a server runs it: answers and events race for real.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_sessions_run_at_once_on_different_projects() {
    const SESSIONS: usize = 3;
    let mut feeds = Vec::new();
    let mut replies = Vec::new();
    for _ in 0..SESSIONS {
        let (feed, reply) = ScriptedReply::fed();
        feeds.push(feed);
        replies.push(reply);
    }
    let (agents, _) = service(replies);
    let projects: Vec<tempfile::TempDir> = (0..SESSIONS).map(|_| project()).collect();
    let mut sessions = Vec::new();
    let mut listeners = Vec::new();
    for (index, dir) in projects.iter().enumerate() {
        let session = agents
            .open(
                agent::config(dir.path(), ApprovalPolicy::Ask),
                OpenConversation::Current,
            )
            .await
            .unwrap();
        let mut listener = session.subscribe();
        replay(&mut listener).await;
        session.submit(Op::Send(SendParams::text(format!("job {index}"))));
        sessions.push(session);
        listeners.push(listener);
    }
    // Every turn is waiting on its model at the same time.
    for listener in &mut listeners {
        until(listener, |event| {
            matches!(event.msg, EventMsg::TurnStarted { .. })
        })
        .await;
    }
    timeout(PATIENCE, async {
        while agents.sessions().iter().filter(|info| info.running).count() < SESSIONS {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("all turns run at once");
    let infos = agents.sessions();
    let folders: std::collections::HashSet<_> =
        infos.iter().map(|info| info.project.clone()).collect();
    assert_eq!(folders.len(), SESSIONS);
    for feed in feeds {
        for event in [
            StreamEvent::Start {
                id: "r".into(),
                model: "scripted-model".into(),
            },
            StreamEvent::TextDelta {
                text: "done".into(),
            },
            StreamEvent::Finish(corvid_wire::model::FinishReason::EndTurn),
        ] {
            feed.send(event).unwrap();
        }
    }
    for (listener, session) in listeners.iter_mut().zip(&sessions) {
        let events = until(listener, turn_finished).await;
        assert!(events.iter().all(|event| !event.replay));
        match &events.last().unwrap().msg {
            EventMsg::TurnFinished(finished) => {
                assert_eq!(finished.outcome, TurnOutcome::Completed)
            }
            _ => unreachable!(),
        }
        // Each conversation belongs to its own project, in the one store.
        let listed = agents.conversations(session.project()).await.unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].id, session.conversation_id());
    }
    // A conversation can be read with its history, open or not.
    let detail = agents
        .conversation(projects[1].path(), &sessions[1].conversation_id())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(detail.session.as_deref(), Some(sessions[1].id()));
    assert_eq!(
        detail.history,
        vec![
            HistoryEntry::User {
                text: "job 1".into()
            },
            HistoryEntry::Assistant {
                text: "done".into()
            },
        ]
    );
    assert!(
        agents
            .conversation(projects[1].path(), "c_nope")
            .await
            .unwrap()
            .is_none()
    );
    // Opening a project's current conversation again finds its open session.
    let again = agents
        .open(
            agent::config(projects[0].path(), ApprovalPolicy::Ask),
            OpenConversation::Current,
        )
        .await
        .unwrap();
    assert_eq!(again.id(), sessions[0].id());
    agents.close_all().await;
    assert!(sessions.iter().all(Session::is_closed));
    let stored = agents
        .conversation(projects[1].path(), &sessions[1].conversation_id())
        .await
        .unwrap()
        .unwrap();
    assert_eq!((stored.session, stored.history), (None, detail.history));
}

#[tokio::test]
async fn a_session_keeps_its_conversation_and_faces_move_through_the_service() {
    let dir = project();
    let (agents, _) = service(Vec::new());
    let first = open_new(&agents, dir.path()).await;
    let mut first_listener = first.subscribe();
    // A session refuses to move: opening another conversation is the service's.
    let refused = first
        .request(Op::OpenConversation {
            conversation_id: None,
        })
        .await
        .unwrap_err();
    assert_eq!(refused.class, ErrorClass::InvalidRequest);
    // A face that opens the first conversation joins its session.
    let (link, mut frames) = Link::open(
        agents.clone(),
        agent::config(dir.path(), ApprovalPolicy::Ask),
        OpenConversation::New,
    )
    .await
    .unwrap();
    let left = link.session();
    assert_ne!(left.id(), first.id());
    let id = link.request(Op::OpenConversation {
        conversation_id: Some(first.conversation_id()),
    });
    let reply = loop {
        match timeout(PATIENCE, frames.recv()).await.unwrap().unwrap() {
            ServerFrame::Reply(reply) => break reply,
            ServerFrame::Event(_) | ServerFrame::Request(_) | ServerFrame::Protocol(_) => {}
        }
    };
    assert_eq!(reply.id, id);
    let Ok(ReplyOk::Opened { conversation }) = reply.into_result() else {
        panic!("expected opened")
    };
    assert_eq!(conversation.id, first.conversation_id());
    assert_eq!(link.session().id(), first.id());
    // Its events now come from the joined session, starting with its replay.
    loop {
        let ServerFrame::Event(event) = timeout(PATIENCE, frames.recv()).await.unwrap().unwrap()
        else {
            continue;
        };
        if let EventMsg::ConversationOpened { conversation, .. } = event.msg {
            assert_eq!(conversation.id, first.conversation_id());
            break;
        }
    }
    // The session it left has no listener and no turn: the service closes it.
    timeout(Duration::from_secs(20), async {
        while !left.is_closed() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the session a face left is closed when idle");
    // Deleting the shown conversation through the link closes its session and shows a new one.
    assert_eq!(
        link.call(Op::DeleteConversation {
            conversation_id: first.conversation_id(),
        })
        .await,
        Ok(ReplyOk::Done)
    );
    assert!(first.is_closed());
    while first_listener.recv().await.is_some() {}
    assert_ne!(link.session().conversation_id(), first.conversation_id());
    assert!(
        agents
            .conversations(dir.path())
            .await
            .unwrap()
            .iter()
            .all(|conversation| conversation.id != first.conversation_id())
    );
}

#[test]
fn the_service_and_its_futures_can_cross_threads() {
    fn shared<T: Send + Sync + Clone + 'static>() {}
    fn sent<T: Send>(_: &T) {}
    shared::<Agents>();
    shared::<Session>();
    fn movable<T: Send + 'static>() {}
    movable::<Subscription>();
    let (agents, _) = service(Vec::new());
    let dir = project();
    let open = agents.open(
        agent::config(dir.path(), ApprovalPolicy::Ask),
        OpenConversation::New,
    );
    sent(&open);
    let close = agents.close("a1");
    sent(&close);
    let conversations = agents.conversations(dir.path());
    sent(&conversations);
    let detail = agents.conversation(dir.path(), "c1");
    sent(&detail);
    let delete = agents.delete_conversation(dir.path(), "c1");
    sent(&delete);
    drop((open, close, conversations, detail, delete));
}

#[tokio::test]
async fn a_subscription_receives_across_threads() {
    let dir = project();
    let (agents, _) = service(vec![ScriptedReply::text("hi")]);
    let session = open_new(&agents, dir.path()).await;
    let mut listener = session.subscribe();
    let reader = tokio::spawn(async move {
        replay(&mut listener).await;
        until(&mut listener, turn_finished).await.len()
    });
    session.submit(Op::Send(SendParams::text("hello")));
    assert!(timeout(PATIENCE, reader).await.unwrap().unwrap() > 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribing_once_ready_replays_the_history_even_for_a_session_just_started() {
    let (agents, _model) = service(vec![ScriptedReply::text("an answer worth keeping")]);
    let project = project();
    let config = agent::config(project.path(), ApprovalPolicy::Ask);
    let session = agents
        .open(config.clone(), OpenConversation::New)
        .await
        .unwrap();
    let conversation = session.conversation_id();
    let mut listener = session.subscribe_ready().await;
    session.submit(Op::Send(SendParams::text("remember this")));
    until(&mut listener, turn_finished).await;
    drop(listener);
    assert!(agents.close(session.id()).await);
    assert!(agents.sessions().is_empty());
    // A session started again on the stored conversation: a listener that subscribed at once
    // could come before `ready` and get no history; one that waits for `ready` always gets it.
    let session = agents
        .open(config, OpenConversation::Existing(conversation.clone()))
        .await
        .unwrap();
    let mut listener = session.subscribe_ready().await;
    let first = next(&mut listener).await;
    let EventMsg::Ready(ready) = &first.msg else {
        panic!("the replay starts with ready: {first:?}")
    };
    assert!(first.replay);
    assert_eq!(ready.conversation_id, conversation);
    let events = until(&mut listener, |event| {
        matches!(event.msg, EventMsg::ConversationOpened { .. })
    })
    .await;
    let EventMsg::ConversationOpened { history, .. } = &events.last().unwrap().msg else {
        unreachable!()
    };
    assert_eq!(
        history,
        &vec![
            HistoryEntry::User {
                text: "remember this".to_owned()
            },
            HistoryEntry::Assistant {
                text: "an answer worth keeping".to_owned()
            },
        ]
    );
    // A session that has ended answers at once (with what it had).
    agents.close(session.id()).await;
    let mut ended = timeout(PATIENCE, session.subscribe_ready())
        .await
        .expect("an ended session does not keep a subscriber waiting");
    while timeout(PATIENCE, ended.recv()).await.unwrap().is_some() {}
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_face_that_leaves_mid_approval_hangs_nothing_and_a_second_face_answers() {
    let dir = project();
    let (agents, _) = service_with(
        vec![
            ScriptedReply::tool_call("c1", "bash", r#"{"command":"echo one >> notes.txt"}"#),
            ScriptedReply::text("done"),
            ScriptedReply::tool_call("c2", "bash", r#"{"command":"echo two >> notes.txt"}"#),
        ],
        IdleRules {
            grace: Duration::from_millis(100),
            unattended_approval: Duration::from_millis(600),
        },
    );
    let session = open_new(&agents, dir.path()).await;
    let mut first_face = session.subscribe();
    session.submit(Op::Send(SendParams::text("append one")));
    until_request(&mut first_face).await;
    // The first face goes away mid-approval; a second one finds the request in its replay
    // and answers it.
    drop(first_face);
    let mut second_face = session.subscribe();
    let waiting = replay_frames(&mut second_face)
        .await
        .iter()
        .find_map(|frame| frame.request().map(|request| request.id.clone()))
        .expect("the waiting request is replayed");
    assert_eq!(
        approve(&session, &waiting, ApprovalDecision::Approve).into_result(),
        Ok(ReplyOk::Done)
    );
    until(&mut second_face, turn_finished).await;
    // A second answer is replied an error, not dropped.
    let late = approve(&session, &waiting, ApprovalDecision::Approve)
        .into_result()
        .unwrap_err();
    assert_eq!(late.class, ErrorClass::InvalidRequest);
    // Next time every face leaves while a proposal waits: the service does not wait forever.
    session.submit(Op::Send(SendParams::text("append two")));
    until_request(&mut second_face).await;
    drop(second_face);
    timeout(Duration::from_secs(20), async {
        while !session.is_closed() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("an unattended proposal does not keep the session forever");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "one\none\n"
    );
}

/// The next reply among a face's frames (events and requests pass by).
async fn next_reply(frames: &mut corvid_agent::LinkFrames) -> Reply {
    loop {
        match timeout(PATIENCE, frames.recv()).await.unwrap().unwrap() {
            ServerFrame::Reply(reply) => return reply,
            ServerFrame::Event(_) | ServerFrame::Request(_) | ServerFrame::Protocol(_) => {}
        }
    }
}

/// The next request among a face's frames.
async fn next_request(frames: &mut corvid_agent::LinkFrames) -> ServerRequest {
    loop {
        if let ServerFrame::Request(request) =
            timeout(PATIENCE, frames.recv()).await.unwrap().unwrap()
        {
            return request;
        }
    }
}

// Two faces over their transports (as the page's tabs and the terminal are): both are asked,
// the first response wins, the second is replied "already answered", and both hear the end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_faces_are_asked_and_the_first_response_wins() {
    let dir = project();
    let (agents, _) = service(vec![
        ScriptedReply::tool_call("c1", "bash", r#"{"command":"echo a >> notes.txt"}"#),
        ScriptedReply::text("Ran."),
    ]);
    let config = agent::config(dir.path(), ApprovalPolicy::Ask);
    let (tab, mut tab_frames) = Link::open(agents.clone(), config.clone(), OpenConversation::New)
        .await
        .unwrap();
    let (terminal, mut terminal_frames) = Link::open(
        agents.clone(),
        config,
        OpenConversation::Existing(tab.session().conversation_id()),
    )
    .await
    .unwrap();
    assert_eq!(tab.session().id(), terminal.session().id());

    let send = tab.request(Op::Send(SendParams::text("append a")));
    assert_eq!(next_reply(&mut tab_frames).await.id, send);
    let asked_tab = next_request(&mut tab_frames).await;
    let asked_terminal = next_request(&mut terminal_frames).await;
    assert_eq!(asked_tab, asked_terminal);
    assert_eq!(asked_tab.turn_id, send);
    assert_eq!(asked_tab.approval.title, "Run echo a >> notes.txt");
    assert!(!asked_tab.approval.decisions.is_empty());

    terminal.send(ClientFrame::Response(Response::new(
        &asked_terminal.id,
        ApprovalDecision::Approve,
    )));
    let taken = next_reply(&mut terminal_frames).await;
    assert_eq!(taken, Reply::ok(asked_terminal.id.clone(), ReplyOk::Done));
    tab.send(ClientFrame::Response(Response::new(
        &asked_tab.id,
        ApprovalDecision::Reject { feedback: None },
    )));
    let refused = next_reply(&mut tab_frames).await;
    assert_eq!(refused.id, asked_tab.id);
    let error = refused.into_result().unwrap_err();
    assert_eq!(error.class, ErrorClass::InvalidRequest);
    assert!(
        error.message.contains("already answered (approved)"),
        "{}",
        error.message
    );
    // Both hear it closed as approved, and the command ran once.
    for frames in [&mut tab_frames, &mut terminal_frames] {
        loop {
            let frame = timeout(PATIENCE, frames.recv()).await.unwrap().unwrap();
            if let ServerFrame::Event(event) = frame
                && let EventMsg::ProposalClosed {
                    proposal_id,
                    outcome,
                } = event.msg
            {
                assert_eq!(proposal_id, asked_tab.id);
                assert_eq!(outcome, ProposalOutcome::Approved);
                break;
            }
        }
    }
    timeout(PATIENCE, async {
        while tab.session().is_running() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "one\na\n"
    );
}

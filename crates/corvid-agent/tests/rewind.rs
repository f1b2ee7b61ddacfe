//! Rewind and fork through the real engine, store and checkpoints: going back to an earlier
//! message replaces the conversation's tail and (when asked) puts the files back; a fork is a
//! new conversation holding the prefix.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use corvid_protocol::{
    ApprovalPolicy, EventMsg, HistoryEntry, Op, ReplyOk, TurnOutcome, UserMessageEntry,
};
use corvid_test_support::agent::{self, ScriptedAgent};
use corvid_test_support::scripted::ScriptedReply;
use corvid_wire::model::{ChatRequest, Part, Role};

fn config(project: &std::path::Path, data: &std::path::Path) -> corvid_agent::AgentConfig {
    let mut config = agent::config(project, ApprovalPolicy::FullAuto);
    config.checkpoint_dir = Some(data.join("checkpoints"));
    config
}

/// The store in `data` (every session of the test opens the same file).
fn store(data: &std::path::Path) -> corvid_agent::SharedStore {
    let store = corvid_store::Store::open(&data.join("corvid.db")).unwrap();
    std::sync::Arc::new(parking_lot::Mutex::new(store))
}

fn write(id: &str, path: &str, content: &str) -> ScriptedReply {
    ScriptedReply::tool_call(
        id,
        "write",
        &serde_json::json!({"path": path, "content": content}).to_string(),
    )
}

/// The user's words in a request, oldest first.
fn user_texts(request: &ChatRequest) -> Vec<String> {
    request
        .messages
        .iter()
        .filter(|message| message.role == Role::User)
        .filter_map(|message| {
            let text: String = message
                .parts
                .iter()
                .filter_map(|part| match part {
                    Part::Text { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect();
            (!text.is_empty()).then_some(text)
        })
        .collect()
}

#[tokio::test]
async fn rewind_replaces_the_tail_and_restores_the_files_and_fork_copies_the_prefix() {
    let project = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let root = project.path();
    std::fs::write(root.join("notes.txt"), "one\n").unwrap();
    let mut agent = ScriptedAgent::spawn_on_store(
        config(root, data.path()),
        vec![
            write("w1", "a.txt", "a\n"),
            ScriptedReply::text("wrote a"),
            write("w2", "b.txt", "b\n"),
            ScriptedReply::text("wrote b"),
            write("w3", "notes.txt", "two\n"),
            ScriptedReply::text("edited"),
            ScriptedReply::text("wrote c instead"),
        ],
        store(data.path()),
    )
    .await;
    for message in ["write a", "write b", "edit the notes"] {
        agent.send(message);
        assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    }
    let listed = agent.session.request(Op::UserMessages).await.unwrap();
    let texts = |items: &[UserMessageEntry]| -> Vec<String> {
        items.iter().map(|item| item.text.clone()).collect()
    };
    match &listed {
        ReplyOk::UserMessages { messages } => {
            assert_eq!(texts(messages), ["write a", "write b", "edit the notes"]);
            assert_eq!(messages[1].index, 1);
        }
        other => panic!("{other:?}"),
    }

    // Back to "write b", files too: b.txt goes, notes.txt is as before; a.txt stays.
    let rewound = agent
        .session
        .request(Op::Rewind {
            message: 1,
            restore_files: true,
        })
        .await
        .unwrap();
    let ReplyOk::Rewound {
        text,
        removed,
        files,
    } = rewound
    else {
        panic!("{rewound:?}")
    };
    assert_eq!((text.as_str(), removed), ("write b", 2));
    let mut put_back: Vec<&str> = files.iter().map(|file| file.path.as_str()).collect();
    put_back.sort_unstable();
    assert_eq!(put_back, ["b.txt", "notes.txt"]);
    assert!(!root.join("b.txt").exists());
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).unwrap(),
        "one\n"
    );
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "a\n");
    let history = agent
        .until(|msg| matches!(msg, EventMsg::ConversationOpened { .. }))
        .await;
    let EventMsg::ConversationOpened { history, .. } = history.msg else {
        unreachable!()
    };
    let users: Vec<&HistoryEntry> = history
        .iter()
        .filter(|entry| matches!(entry, HistoryEntry::User { .. }))
        .collect();
    assert_eq!(
        users,
        [&HistoryEntry::User {
            text: "write a".to_owned()
        }]
    );

    // The edited message goes on from there: the model never sees the removed turns.
    agent.send("write c");
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    let last = agent.model.requests().pop().unwrap();
    assert_eq!(user_texts(&last), ["write a", "write c"]);

    // A fork before "write c" holds the first turn only; the original is untouched.
    let forked = agent
        .session
        .request(Op::Fork { message: Some(1) })
        .await
        .unwrap();
    let ReplyOk::Forked {
        conversation_id,
        text,
    } = forked
    else {
        panic!("{forked:?}")
    };
    assert_eq!(text.as_deref(), Some("write c"));
    match agent.session.request(Op::UserMessages).await.unwrap() {
        ReplyOk::UserMessages { messages } => {
            assert_eq!(texts(&messages), ["write a", "write c"]);
        }
        other => panic!("{other:?}"),
    }
    let refused = agent
        .session
        .request(Op::Rewind {
            message: 7,
            restore_files: false,
        })
        .await
        .unwrap_err();
    assert!(refused.message.contains("no message 8"), "{refused:?}");
    agent.shut_down().await;

    // The fork is the project's current conversation now: a new session opens it.
    let mut fork = ScriptedAgent::spawn_on_store(
        config(root, data.path()),
        vec![ScriptedReply::text("on the fork")],
        store(data.path()),
    )
    .await;
    assert_eq!(fork.session.conversation_id(), conversation_id);
    fork.send("write d");
    assert_eq!(fork.turn_finished().await, TurnOutcome::Completed);
    let request = fork.model.requests().pop().unwrap();
    assert_eq!(user_texts(&request), ["write a", "write d"]);
}

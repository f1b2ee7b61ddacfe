//! The agent's store seen by two instances at once, on both implementations: two
//! [`PgConversations`] on one PostgreSQL database (`scripts/team-services cargo test -p
//! corvid-store --test conversations_shared`), and two SQLite connections on one file. The
//! same scenario runs on each and must give the same answers: what one instance writes (a
//! conversation, its messages, title, step usage, checkpoints, ledger rows) the other reads.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod pg_support;

use corvid_store::pg::{PgConversations, PgStore};
use corvid_store::{ConversationStore, Outcome, Store, Tokens, UsageRecord, now_ms};
use pg_support::fresh_database;

const PROJECT: &str = "/work/project";

fn tokens(input: u64, output: u64) -> Tokens {
    Tokens {
        input,
        output,
        ..Tokens::default()
    }
}

/// One of the agent's model calls, as its ledger row.
fn agent_call(outcome: Outcome) -> UsageRecord {
    UsageRecord {
        at: now_ms(),
        front_end: "web".into(),
        route: "agent".into(),
        inbound: "agent".into(),
        provider: "mock".into(),
        model: "m".into(),
        status: 200,
        outcome,
        latency_ms: 5,
        ttfb_ms: Some(2),
        tokens: tokens(7, 3),
        attempts: 1,
        prompt: None,
        key_index: None,
        rule: None,
        billing: None,
    }
}

/// Writes through `a`, reads (and writes) through `b`: every answer the agent relies on.
fn two_instances_share_one_conversation(
    a: &mut dyn ConversationStore,
    b: &mut dyn ConversationStore,
) {
    assert!(b.list_conversations(PROJECT).unwrap().is_empty());
    let older = a.create_conversation(PROJECT, Some("m")).unwrap();
    let id = a.create_conversation(PROJECT, Some("m")).unwrap();
    assert_ne!(older, id);
    assert_eq!(b.current_conversation(PROJECT).unwrap(), Some(id.clone()));
    assert_eq!(a.append_messages(&id, &[("user", "\"hi\"")]).unwrap(), 1);
    a.set_title(&id, "hi there").unwrap();
    a.set_conversation_model(&id, "m2").unwrap();

    let listed = b.list_conversations(PROJECT).unwrap();
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[0].id, id, "the most recently updated first");
    assert_eq!(listed[0].title, "hi there");
    assert_eq!(listed[0].model.as_deref(), Some("m2"));
    assert_eq!(listed[0].message_count, 1);
    assert!(b.conversation("/another/project", &id).unwrap().is_none());
    assert_eq!(b.conversation(PROJECT, &id).unwrap().unwrap(), listed[0]);

    // B answers the turn; both number messages after each other's.
    assert_eq!(
        b.append_messages(&id, &[("assistant", "\"hello\""), ("user", "\"more\"")])
            .unwrap(),
        3
    );
    assert_eq!(
        a.append_messages(&id, &[("assistant", "\"ok\"")]).unwrap(),
        4
    );
    let messages = a.messages(&id).unwrap();
    let seqs: Vec<i64> = messages.iter().map(|m| m.seq).collect();
    assert_eq!(seqs, [1, 2, 3, 4]);
    assert_eq!(messages[1].role, "assistant");
    assert_eq!(messages[1].content, "\"hello\"");

    // The end of a turn seen by the agent, and a later message making the mark stale.
    assert_eq!(b.turn_ended_at(&id).unwrap(), None);
    a.mark_turn_ended(&id).unwrap();
    assert_eq!(b.turn_ended_at(&id).unwrap(), Some(4));

    // Usage per step and turn; checkpoints for /undo after a restart on the other instance.
    a.record_step_usage(&id, 1, 1, "m", &tokens(10, 2)).unwrap();
    a.record_step_usage(&id, 1, 2, "m", &tokens(5, 1)).unwrap();
    a.record_step_usage(&id, 2, 1, "m", &tokens(1, 1)).unwrap();
    let (turns, total) = b.conversation_usage(&id).unwrap();
    assert_eq!(turns, vec![(1, tokens(15, 3)), (2, tokens(1, 1))]);
    assert_eq!(total, tokens(16, 4));
    a.record_checkpoint(&id, 3, "tree-before", "tree-after")
        .unwrap();
    assert_eq!(b.last_turn(&id).unwrap(), 3);
    assert!(b.mark_undone(&id, 3).unwrap());
    assert!(!a.mark_undone(&id, 3).unwrap(), "undone once");
    assert!(!a.mark_undone(&id, 9).unwrap(), "no such checkpoint");
    let checkpoints = a.checkpoints(&id).unwrap();
    assert_eq!(checkpoints.len(), 1);
    assert_eq!(
        (checkpoints[0].turn, checkpoints[0].before.as_str()),
        (3, "tree-before")
    );
    assert!(checkpoints[0].undone_at.is_some());
    // Recorded again (the turn redone): the undo mark goes.
    b.record_checkpoint(&id, 3, "tree-before", "tree-again")
        .unwrap();
    assert_eq!(a.checkpoints(&id).unwrap()[0].undone_at, None);

    // A compacted history replaces the messages, numbered from 1.
    assert_eq!(
        b.replace_messages(&id, &[("user", "\"summary\"")]).unwrap(),
        1
    );
    assert_eq!(a.messages(&id).unwrap().len(), 1);

    // Switching: only to one of the project's conversations.
    assert!(a.switch_conversation(PROJECT, &older).unwrap());
    assert_eq!(
        b.current_conversation(PROJECT).unwrap(),
        Some(older.clone())
    );
    assert!(!a.switch_conversation("/another/project", &id).unwrap());
    assert!(!a.switch_conversation(PROJECT, "c_missing").unwrap());

    // Clearing keeps the conversation, without messages, usage or title.
    b.clear_conversation(&id).unwrap();
    let cleared = a.conversation(PROJECT, &id).unwrap().unwrap();
    assert_eq!((cleared.message_count, cleared.title.as_str()), (0, ""));
    assert_eq!(a.conversation_usage(&id).unwrap().0, vec![]);

    // The agent's own model calls reach the ledger both read.
    let before = b.totals(None).unwrap();
    a.record(&agent_call(Outcome::Ok)).unwrap();
    a.record(&agent_call(Outcome::Error)).unwrap();
    let after = b.totals(None).unwrap();
    assert_eq!(after.requests - before.requests, 2);
    assert_eq!(after.errors - before.errors, 1);
    assert_eq!(
        after.tokens.input - before.tokens.input,
        14,
        "7 input tokens twice"
    );
    let rows = b.usage_by_day_and_model(Some(now_ms() - 60_000)).unwrap();
    let web: Vec<_> = rows.iter().filter(|row| row.front_end == "web").collect();
    assert_eq!(web.len(), 1);
    assert_eq!((web[0].requests, web[0].errors), (2, 1));
    assert_eq!(web[0].model, "m");
    assert!(b.totals(Some(now_ms() + 60_000)).unwrap().requests == 0);

    // Deleting through B removes it (and its messages) for A; the current one is unset.
    assert!(b.delete_conversation(PROJECT, &older).unwrap());
    assert!(!a.delete_conversation(PROJECT, &older).unwrap());
    assert_eq!(a.current_conversation(PROJECT).unwrap(), None);
    assert!(a.delete_conversation(PROJECT, &id).unwrap());
    assert!(a.messages(&id).unwrap().is_empty());
    assert!(b.list_conversations(PROJECT).unwrap().is_empty());
}

#[test]
fn sqlite_two_connections_share_one_conversation() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("corvid.db");
    let mut a = Store::open(&path).unwrap();
    let mut b = Store::open(&path).unwrap();
    two_instances_share_one_conversation(&mut a, &mut b);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_two_instances_share_one_conversation() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let store = PgStore::connect(&url, 4).unwrap();
    store.migrate().await.unwrap();
    store.check_schema().await.unwrap();
    let handle = tokio::runtime::Handle::current();
    // Two pools, as two instances have: nothing is shared but the database.
    let mut a = PgConversations::new(store, handle.clone());
    let mut b = PgConversations::new(PgStore::connect(&url, 4).unwrap(), handle);
    // The trait is blocking: run it where the agent does, off the async threads.
    tokio::task::spawn_blocking(move || two_instances_share_one_conversation(&mut a, &mut b))
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_concurrent_appends_from_two_instances_never_share_a_seq() {
    let Some(url) = fresh_database().await else {
        return;
    };
    let store = PgStore::connect(&url, 4).unwrap();
    store.migrate().await.unwrap();
    let handle = tokio::runtime::Handle::current();
    let mut a = PgConversations::new(store, handle.clone());
    let id = tokio::task::spawn_blocking(move || {
        let id = a.create_conversation(PROJECT, None).unwrap();
        (id, a)
    })
    .await
    .unwrap();
    let (id, a) = id;
    let b = PgConversations::new(PgStore::connect(&url, 4).unwrap(), handle);
    let mut writers = Vec::new();
    for mut instance in [a, b] {
        let id = id.clone();
        writers.push(tokio::task::spawn_blocking(move || {
            for _ in 0..25 {
                instance.append_messages(&id, &[("user", "\"x\"")]).unwrap();
            }
            instance
        }));
    }
    let mut instances = Vec::new();
    for writer in writers {
        instances.push(writer.await.unwrap());
    }
    let seqs: Vec<i64> = tokio::task::spawn_blocking(move || {
        instances[0]
            .messages(&id)
            .unwrap()
            .iter()
            .map(|m| m.seq)
            .collect()
    })
    .await
    .unwrap();
    assert_eq!(seqs, (1..=50).collect::<Vec<i64>>());
}

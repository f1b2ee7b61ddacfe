use super::*;

#[test]
fn checkpoints_survive_a_reopen_and_are_undone_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("corvid.db");
    let id = {
        let mut store = Store::open(&path).unwrap();
        let id = store.create_conversation("/p", None).unwrap();
        assert_eq!(store.last_turn(&id).unwrap(), 0);
        store.record_checkpoint(&id, 2, "t1", "t2").unwrap();
        store.record_checkpoint(&id, 1, "t0", "t1").unwrap();
        id
    };
    let mut store = Store::open(&path).unwrap();
    let records = store.checkpoints(&id).unwrap();
    assert_eq!(
        records
            .iter()
            .map(|record| (record.turn, record.before.as_str(), record.after.as_str()))
            .collect::<Vec<_>>(),
        [(1, "t0", "t1"), (2, "t1", "t2")]
    );
    assert_eq!(store.last_turn(&id).unwrap(), 2);
    assert!(store.mark_undone(&id, 2).unwrap());
    assert!(!store.mark_undone(&id, 2).unwrap(), "already undone");
    assert!(!store.mark_undone(&id, 7).unwrap(), "no such turn");
    assert!(store.checkpoints(&id).unwrap()[1].undone_at.is_some());
    // Recording the turn again (a later session reusing the number) makes it live again.
    store.record_checkpoint(&id, 2, "t1", "t3").unwrap();
    assert_eq!(store.checkpoints(&id).unwrap()[1].undone_at, None);
}

#[test]
fn last_turn_counts_usage_too() {
    let mut store = Store::open_in_memory().unwrap();
    let id = store.create_conversation("/p", None).unwrap();
    store
        .record_step_usage(&id, 4, 1, "m", &crate::Tokens::default())
        .unwrap();
    store.record_checkpoint(&id, 3, "a", "b").unwrap();
    assert_eq!(store.last_turn(&id).unwrap(), 4);
}

#[test]
fn replace_messages_renumbers_and_keeps_other_conversations() {
    let mut store = Store::open_in_memory().unwrap();
    let id = store.create_conversation("/p", None).unwrap();
    let other = store.create_conversation("/p", None).unwrap();
    store
        .append_messages(&id, &[("user", "1"), ("assistant", "2"), ("user", "3")])
        .unwrap();
    store.append_messages(&other, &[("user", "x")]).unwrap();
    assert_eq!(
        store
            .replace_messages(&id, &[("user", "summary"), ("assistant", "ok")])
            .unwrap(),
        2
    );
    let kept: Vec<(i64, String)> = store
        .messages(&id)
        .unwrap()
        .into_iter()
        .map(|message| (message.seq, message.content))
        .collect();
    assert_eq!(kept, [(1, "summary".to_owned()), (2, "ok".to_owned())]);
    assert_eq!(store.messages(&other).unwrap().len(), 1);
    assert_eq!(store.append_messages(&id, &[("user", "next")]).unwrap(), 3);
}

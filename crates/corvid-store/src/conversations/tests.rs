use super::*;

#[test]
fn conversations_per_project_switch_clear_delete_and_resume() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("corvid.db");
    let (first, second) = {
        let mut store = Store::open(&path).unwrap();
        let first = store.create_conversation("/p", Some("grok")).unwrap();
        store
            .append_messages(
                &first,
                &[
                    ("user", "{\"text\":\"hi\"}"),
                    ("assistant", "{\"text\":\"hello\"}"),
                ],
            )
            .unwrap();
        store.set_title(&first, "hi").unwrap();
        let second = store.create_conversation("/p", None).unwrap();
        store.create_conversation("/other", None).unwrap();
        assert_eq!(
            store.current_conversation("/p").unwrap().as_deref(),
            Some(second.as_str())
        );
        (first, second)
    };
    // A new process (an engine restart) sees the same state.
    let mut store = Store::open(&path).unwrap();
    let listed = store.list_conversations("/p").unwrap();
    assert_eq!(listed.len(), 2);
    let summary = listed.iter().find(|summary| summary.id == first).unwrap();
    assert_eq!(
        (
            summary.title.as_str(),
            summary.message_count,
            summary.model.as_deref()
        ),
        ("hi", 2, Some("grok"))
    );
    assert!(store.switch_conversation("/p", &first).unwrap());
    assert!(
        !store.switch_conversation("/other", &first).unwrap(),
        "another project's conversation"
    );
    assert_eq!(
        store.current_conversation("/p").unwrap().as_deref(),
        Some(first.as_str())
    );
    let messages = store.messages(&first).unwrap();
    assert_eq!(
        messages
            .iter()
            .map(|m| (m.seq, m.role.as_str()))
            .collect::<Vec<_>>(),
        [(1, "user"), (2, "assistant")]
    );
    assert_eq!(store.append_messages(&first, &[("user", "{}")]).unwrap(), 3);

    store.clear_conversation(&first).unwrap();
    assert!(store.messages(&first).unwrap().is_empty());
    assert!(store.delete_conversation("/p", &second).unwrap());
    assert!(!store.delete_conversation("/p", &second).unwrap());
    assert_eq!(store.list_conversations("/p").unwrap().len(), 1);
}

#[test]
fn deleting_the_current_conversation_leaves_none_current() {
    let mut store = Store::open_in_memory().unwrap();
    let id = store.create_conversation("/p", None).unwrap();
    store.delete_conversation("/p", &id).unwrap();
    assert_eq!(store.current_conversation("/p").unwrap(), None);
}

#[test]
fn usage_per_step_and_turn() {
    let mut store = Store::open_in_memory().unwrap();
    let id = store.create_conversation("/p", None).unwrap();
    let tokens = |input, output| Tokens {
        input,
        output,
        ..Tokens::default()
    };
    store
        .record_step_usage(&id, 1, 1, "m", &tokens(10, 2))
        .unwrap();
    store
        .record_step_usage(&id, 1, 2, "m", &tokens(15, 3))
        .unwrap();
    store
        .record_step_usage(&id, 2, 1, "m", &tokens(30, 5))
        .unwrap();
    let (turns, total) = store.conversation_usage(&id).unwrap();
    assert_eq!(turns, vec![(1, tokens(25, 5)), (2, tokens(30, 5))]);
    assert_eq!(total, tokens(55, 10));
}

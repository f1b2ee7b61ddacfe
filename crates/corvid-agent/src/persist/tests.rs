use corvid_wire::model::ToolCall;

use corvid_store::Store;

use super::*;

fn call(id: &str) -> Message {
    Message {
        role: Role::Assistant,
        parts: vec![
            Part::Text {
                text: "reading".to_owned(),
            },
            Part::ToolCall(ToolCall {
                id: id.to_owned(),
                name: "read".to_owned(),
                arguments: r#"{"path":"a"}"#.to_owned(),
                signature: None,
            }),
        ],
    }
}

fn stored(messages: &[Message]) -> (Store, String) {
    let mut store = Store::open_in_memory().unwrap();
    let id = store.create_conversation("/p", None).unwrap();
    append(&mut store, &id, &encode(messages)).unwrap();
    (store, id)
}

#[test]
fn a_trailing_call_without_results_is_answered_and_the_answer_saved() {
    let (mut store, id) = stored(&[Message::text(Role::User, "go"), call("c1")]);
    let mut warnings = Vec::new();
    let history = load(&mut store, &id, &mut warnings).unwrap();
    assert_eq!(history.len(), 3);
    let Part::ToolResult(result) = &history[2].parts[0] else {
        panic!("{:?}", history[2])
    };
    assert_eq!(result.call_id, "c1");
    assert!(result.is_error);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    // Saved: loading again finds nothing to repair and a whole history.
    let mut again = Vec::new();
    let reloaded = load(&mut store, &id, &mut again).unwrap();
    assert_eq!(reloaded, history);
    assert_eq!(store.messages(&id).unwrap().len(), 3);
    assert!(again.iter().all(|warning| !warning.contains("tool call")));
}

#[test]
fn a_finished_conversation_loads_as_stored_without_warnings() {
    let messages = [
        Message::text(Role::User, "hi"),
        Message::text(Role::Assistant, "hello"),
    ];
    let (mut store, id) = stored(&messages);
    let mut warnings = Vec::new();
    assert_eq!(load(&mut store, &id, &mut warnings).unwrap(), messages);
    assert!(warnings.is_empty(), "{warnings:?}");
}

#[test]
fn an_unfinished_turn_is_reported_and_unreadable_rows_skipped() {
    let (mut store, id) = stored(&[Message::text(Role::User, "go")]);
    store
        .append_messages(&id, &[("assistant", "{not json")])
        .unwrap();
    let mut warnings = Vec::new();
    let history = load(&mut store, &id, &mut warnings).unwrap();
    assert_eq!(history, [Message::text(Role::User, "go")]);
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings[0].contains("unreadable"));
    assert!(warnings[1].contains("did not finish"));
}

#[test]
fn a_turn_marked_as_ended_reopens_without_the_crash_warning() {
    let (mut store, id) = stored(&[
        Message::text(Role::User, "hi"),
        Message::text(Role::Assistant, "hello"),
        Message::text(Role::User, "now stop"),
    ]);
    store.mark_turn_ended(&id).unwrap();
    let mut warnings = Vec::new();
    let history = load(&mut store, &id, &mut warnings).unwrap();
    assert_eq!(history.len(), 3);
    assert!(warnings.is_empty(), "{warnings:?}");
    // A later message the engine did not see end (a crash) is reported again.
    append(
        &mut store,
        &id,
        &encode(&[Message::text(Role::User, "and then corvid died")]),
    )
    .unwrap();
    let mut after_crash = Vec::new();
    load(&mut store, &id, &mut after_crash).unwrap();
    assert_eq!(after_crash.len(), 1, "{after_crash:?}");
    assert!(after_crash[0].contains("did not finish"));
}

use corvid_wire::model::ToolCall;
use pretty_assertions::assert_eq;

use super::*;

fn call(id: &str) -> Part {
    Part::ToolCall(ToolCall {
        id: id.to_owned(),
        name: "read".to_owned(),
        arguments: "{}".to_owned(),
        signature: None,
    })
}

fn result(id: &str, text: &str) -> Part {
    Part::ToolResult(ToolResult {
        call_id: id.to_owned(),
        name: None,
        content: vec![ToolResultContent::Text {
            text: text.to_owned(),
        }],
        is_error: false,
    })
}

fn user(parts: Vec<Part>) -> Message {
    Message {
        role: Role::User,
        parts,
    }
}

fn assistant(parts: Vec<Part>) -> Message {
    Message {
        role: Role::Assistant,
        parts,
    }
}

#[test]
fn a_call_without_its_result_gets_one() {
    let history = vec![
        user(vec![Part::Text { text: "go".into() }]),
        assistant(vec![call("a"), call("b")]),
        user(vec![result("a", "ok")]),
        user(vec![Part::Text {
            text: "again".into(),
        }]),
    ];
    let repaired = repair(&history);
    assert_eq!(repaired.len(), 3);
    let Part::ToolResult(missing) = &repaired[2].parts[1] else {
        panic!("{repaired:?}")
    };
    assert_eq!((missing.call_id.as_str(), missing.is_error), ("b", true));
    assert_eq!(
        repaired[2].parts[2],
        Part::Text {
            text: "again".into()
        },
        "the next user text follows the results"
    );
}

#[test]
fn a_trailing_call_is_answered_and_stray_results_dropped() {
    let history = vec![
        user(vec![result("ghost", "?"), Part::Text { text: "hi".into() }]),
        assistant(vec![
            Part::Text {
                text: "let me look".into(),
            },
            call("a"),
        ]),
    ];
    let repaired = repair(&history);
    assert_eq!(repaired[0], user(vec![Part::Text { text: "hi".into() }]));
    assert_eq!(repaired.len(), 3);
    assert!(matches!(&repaired[2].parts[0], Part::ToolResult(result) if result.call_id == "a"));
}

#[test]
fn a_good_history_is_unchanged() {
    let history = vec![
        user(vec![Part::Text { text: "go".into() }]),
        assistant(vec![call("a")]),
        user(vec![result("a", "ok")]),
        assistant(vec![Part::Text {
            text: "done".into(),
        }]),
    ];
    assert_eq!(repair(&history), history);
}

//! Forward compatibility: unknown fields are ignored, unknown kinds are refused clearly.

use corvid_protocol::{
    ApprovalDecision, ClientFrame, Event, EventMsg, Op, PROTOCOL_VERSION, Response, SendParams,
    Submission, is_compatible,
};
use pretty_assertions::assert_eq;

fn submission(line: &str) -> Result<Submission, serde_json::Error> {
    serde_json::from_str(line)
}

#[test]
fn unknown_fields_on_ops_are_ignored() {
    let cases = [
        (
            r#"{"id":"1","op":{"type":"cancel","reason":"user pressed Esc"},"trace":"abc"}"#,
            Op::Cancel,
        ),
        (
            r#"{"id":"2","op":{"type":"send","text":"hi","attachments_v2":[],"temperature":0.2}}"#,
            Op::Send(SendParams::text("hi")),
        ),
        (
            r#"{"id":"3","op":{"type":"hello","version":1,"capabilities":{"images":true}}}"#,
            Op::Hello {
                version: 1,
                client: None,
            },
        ),
        (
            r#"{"id":"5","op":{"type":"open_conversation","conversation_id":"c","replay":"full"}}"#,
            Op::OpenConversation {
                conversation_id: Some("c".into()),
            },
        ),
    ];
    for (line, op) in cases {
        let parsed = submission(line).unwrap_or_else(|error| panic!("{line}: {error}"));
        assert_eq!(parsed.op, op, "{line}");
    }
}

#[test]
fn unknown_fields_on_events_are_ignored() {
    let line = r#"{"id":"1","seq":3,"depth":0,"at":5,"span":"x","msg":{"type":"text_delta","delta":"a","index":0}}"#;
    let event: Event = serde_json::from_str(line).unwrap();
    assert_eq!(event.msg, EventMsg::TextDelta { delta: "a".into() });
    assert_eq!(event.parent_call_id, None);
}

#[test]
fn unknown_op_types_are_rejected_with_the_accepted_names() {
    let error = submission(r#"{"id":"1","op":{"type":"teleport"}}"#)
        .unwrap_err()
        .to_string();
    assert!(error.contains("unknown variant `teleport`"), "{error}");
    for name in ["hello", "send", "cancel", "list_conversations", "shutdown"] {
        assert!(
            error.contains(&format!("`{name}`")),
            "{name} missing from: {error}"
        );
    }
}

#[test]
fn unknown_event_types_are_rejected() {
    let line = r#"{"id":"1","seq":1,"depth":0,"at":5,"msg":{"type":"context_compacted"}}"#;
    let error = serde_json::from_str::<Event>(line).unwrap_err().to_string();
    assert!(
        error.contains("unknown variant `context_compacted`"),
        "{error}"
    );
}

#[test]
fn unknown_nested_kinds_are_rejected() {
    let cases = [
        (
            r#"{"type":"response","id":"p","decision":{"type":"approve_for_session"}}"#,
            "unknown variant `approve_for_session`",
        ),
        (
            r#"{"type":"response","id":"p","decision":{"type":"approve_always","scope":{"type":"path","path":"src"}}}"#,
            "unknown variant `path`",
        ),
        (
            r#"{"type":"submission","id":"1","op":{"type":"set_approval_policy","policy":"never"}}"#,
            "unknown variant `never`, expected one of `read-only`, `plan`, `ask`, `auto-edit`, `full-auto`",
        ),
    ];
    for (line, expected) in cases {
        let error = serde_json::from_str::<ClientFrame>(line)
            .unwrap_err()
            .to_string();
        assert!(error.contains(expected), "{line}: {error}");
    }
}

#[test]
fn unknown_fields_on_responses_are_ignored() {
    let line = r#"{"type":"response","id":"p","decision":{"type":"reject","feedback":"no","remember":false},"extra":1}"#;
    assert_eq!(
        serde_json::from_str::<ClientFrame>(line).unwrap(),
        ClientFrame::Response(Response::new(
            "p",
            ApprovalDecision::Reject {
                feedback: Some("no".into()),
            }
        ))
    );
}

#[test]
fn malformed_ops_say_what_is_missing() {
    let cases = [
        (r#"{"id":"1","op":{"text":"hi"}}"#, "missing field `type`"),
        (r#"{"id":"1","op":{"type":"send"}}"#, "missing field `text`"),
        (r#"{"op":{"type":"cancel"}}"#, "missing field `id`"),
        (
            r#"{"id":"1","op":{"type":"rename_conversation"}}"#,
            "missing field `title`",
        ),
    ];
    for (line, expected) in cases {
        let error = submission(line).unwrap_err().to_string();
        assert!(error.contains(expected), "{line}: {error}");
    }
}

#[test]
fn versions_are_compatible_only_when_equal() {
    assert!(is_compatible(PROTOCOL_VERSION));
    assert!(!is_compatible(PROTOCOL_VERSION + 1));
    assert!(!is_compatible(0));
}

#[test]
fn the_readme_examples_are_valid_frames() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let frames: Vec<&str> = readme
        .lines()
        .filter(|line| line.starts_with("{\"id\"") || line.starts_with("{\"type\""))
        .collect();
    assert_eq!(frames.len(), 10);
    for line in frames {
        let value: serde_json::Value = serde_json::from_str(line).unwrap();
        if value.get("type").is_some_and(|kind| kind == "response") {
            let parsed: ClientFrame = serde_json::from_str(line).unwrap();
            assert_eq!(serde_json::to_value(&parsed).unwrap(), value, "{line}");
        } else if value.get("type").is_some() {
            let parsed: corvid_protocol::ServerFrame = serde_json::from_str(line).unwrap();
            assert_eq!(serde_json::to_value(&parsed).unwrap(), value, "{line}");
        } else if value.get("op").is_some() {
            let parsed: Submission = serde_json::from_str(line).unwrap();
            assert_eq!(serde_json::to_value(&parsed).unwrap(), value, "{line}");
        } else if value.get("ok").is_some() || value.get("error").is_some() {
            let parsed: corvid_protocol::Reply = serde_json::from_str(line).unwrap();
            assert_eq!(serde_json::to_value(&parsed).unwrap(), value, "{line}");
        } else {
            let parsed: Event = serde_json::from_str(line).unwrap();
            assert_eq!(serde_json::to_value(&parsed).unwrap(), value, "{line}");
        }
    }
}

//! Replies and server frames on the wire.

use corvid_protocol::{
    ChangeKind, ErrorClass, ErrorNotification, Event, EventMsg, FileChange, ProtocolHello, Reply,
    ReplyOk, ServerFrame, TurnChanges, commands,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn round_trip(frame: &ServerFrame, expected: Value) {
    assert_eq!(serde_json::to_value(frame).unwrap(), expected);
    let back: ServerFrame = serde_json::from_value(expected).unwrap();
    assert_eq!(&back, frame);
}

#[test]
fn a_reply_is_ok_or_error_beside_its_id() {
    round_trip(
        &ServerFrame::Reply(Reply::ok(
            "s-1",
            ReplyOk::Diff {
                turns: vec![TurnChanges {
                    turn: 1,
                    files: vec![FileChange {
                        path: "old.txt".into(),
                        change: ChangeKind::Deleted,
                    }],
                    diff: "diff --git a/old.txt b/old.txt\n".into(),
                }],
            },
        )),
        json!({"type": "reply", "id": "s-1", "ok": {"type": "diff", "turns": [{
            "turn": 1,
            "files": [{"path": "old.txt", "change": "deleted"}],
            "diff": "diff --git a/old.txt b/old.txt\n"
        }]}}),
    );
    let error = ErrorNotification::invalid("no proposal `p-1` is waiting");
    round_trip(
        &ServerFrame::Reply(Reply::error("s-2", error.clone())),
        json!({"type": "reply", "id": "s-2", "error": {
            "class": "invalid_request",
            "message": "no proposal `p-1` is waiting",
            "next_action": error.next_action,
            "retryable": false
        }}),
    );
    round_trip(
        &ServerFrame::Reply(Reply::ok("s-3", ReplyOk::Accepted)),
        json!({"type": "reply", "id": "s-3", "ok": {"type": "accepted"}}),
    );
}

#[test]
fn an_event_frame_is_the_event_with_its_type() {
    let event = Event {
        id: "s-1".into(),
        seq: 4,
        depth: 0,
        parent_call_id: None,
        at: 1_767_225_600,
        replay: false,
        msg: EventMsg::TextDelta { delta: "hi".into() },
    };
    round_trip(
        &ServerFrame::Event(event),
        json!({"type": "event", "id": "s-1", "seq": 4, "depth": 0, "at": 1_767_225_600,
            "msg": {"type": "text_delta", "delta": "hi"}}),
    );
}

#[test]
fn the_hello_carries_the_version_and_the_command_table() {
    let hello = ProtocolHello {
        version: corvid_protocol::PROTOCOL_VERSION,
        schema: Some("/api/agent/schema".into()),
        commands: commands::specs(&[]),
    };
    let value = serde_json::to_value(ServerFrame::Protocol(hello.clone())).unwrap();
    assert_eq!(value["type"], "protocol");
    assert_eq!(value["version"], 6);
    assert_eq!(
        value["commands"][0],
        json!({"name": "new", "description": "start a new conversation", "during_turn": false})
    );
    round_trip(&ServerFrame::Protocol(hello), value);
}

#[test]
fn every_class_has_its_own_next_action() {
    let classes = [
        ErrorClass::NotConfigured,
        ErrorClass::AuthenticationRejected,
        ErrorClass::RateLimited,
        ErrorClass::ServerError,
        ErrorClass::Network,
        ErrorClass::UnexpectedResponse,
        ErrorClass::Tool,
        ErrorClass::Cancelled,
        ErrorClass::StepLimit,
        ErrorClass::InvalidRequest,
        ErrorClass::Internal,
    ];
    let actions: std::collections::BTreeSet<&str> =
        classes.iter().map(|class| class.next_action()).collect();
    assert_eq!(actions.len(), classes.len());
    let built = ErrorNotification::new(ErrorClass::RateLimited, "429");
    assert!(built.retryable);
    assert_eq!(built.next_action, ErrorClass::RateLimited.next_action());
}

#[test]
fn a_tool_servers_state_is_worded_once_with_what_to_do_about_it() {
    let server = |state: corvid_protocol::ToolServerState| corvid_protocol::ToolServer {
        name: "repo".into(),
        configured_in: ".corvid/mcp.json".into(),
        transport: "runs `node server.js`".into(),
        state,
        reason: None,
        tools: vec!["mcp__repo__a".into()],
        withheld: Vec::new(),
        description: String::new(),
    };
    use corvid_protocol::ToolServerState as State;
    assert_eq!(server(State::Ready).describe(), "ready, 1 tool");
    let untrusted = server(State::Untrusted);
    assert!(
        untrusted
            .describe()
            .starts_with("not trusted yet, not started: `/mcp trust repo` starts it"),
        "{}",
        untrusted.describe()
    );
    assert_eq!(untrusted.state_words(), "not trusted yet, not started");
    assert!(
        server(State::NeedsSignIn)
            .describe()
            .contains("`corvid mcp login repo`")
    );
    // `corvid mcp list` words the state the same way, naming the command line's commands.
    use corvid_protocol::ToolServerAudience::CommandLine;
    assert_eq!(
        server(State::Ready).describe_for(CommandLine),
        "ready, 1 tool"
    );
    assert!(
        untrusted
            .describe_for(CommandLine)
            .starts_with("not trusted yet, not started: `corvid mcp trust repo` trusts it"),
        "{}",
        untrusted.describe_for(CommandLine)
    );
    assert_eq!(
        server(State::NeedsSignIn).describe_for(CommandLine),
        "needs sign-in: `corvid mcp login repo` (in the project, for its own servers)"
    );
    // The engine sends the words with the server, for faces that cannot call `describe`.
    let described = corvid_protocol::ToolServer {
        description: untrusted.describe(),
        ..untrusted
    };
    let value = serde_json::to_value(&described).unwrap();
    assert_eq!(value["description"], described.describe());
}

#[test]
fn rewind_and_fork_replies_round_trip() {
    round_trip(
        &ServerFrame::Reply(Reply::ok(
            "s-4",
            ReplyOk::UserMessages {
                messages: vec![corvid_protocol::UserMessageEntry {
                    index: 0,
                    text: "fix the parser".into(),
                }],
            },
        )),
        json!({"type": "reply", "id": "s-4", "ok": {"type": "user_messages", "messages": [{"index": 0, "text": "fix the parser"}]}}),
    );
    round_trip(
        &ServerFrame::Reply(Reply::ok(
            "s-5",
            ReplyOk::Rewound {
                text: "fix the parser".into(),
                removed: 2,
                files: vec![],
            },
        )),
        json!({"type": "reply", "id": "s-5", "ok": {"type": "rewound", "text": "fix the parser", "removed": 2, "files": []}}),
    );
    round_trip(
        &ServerFrame::Reply(Reply::ok(
            "s-6",
            ReplyOk::Forked {
                conversation_id: "c-2".into(),
                text: None,
            },
        )),
        json!({"type": "reply", "id": "s-6", "ok": {"type": "forked", "conversation_id": "c-2"}}),
    );
}

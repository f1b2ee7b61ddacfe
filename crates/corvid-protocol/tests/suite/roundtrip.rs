//! Every operation and every event, as Rust value and as JSON, both ways.

use std::collections::BTreeSet;

use corvid_protocol::{
    ApprovalDecision, ApprovalPolicy, ApprovalRule, ChangeKind, ClientFrame, ConversationSummary,
    DecisionKind, ErrorClass, ErrorNotification, Event, EventMsg, FileChange, HistoryEntry,
    ImageInput, Op, ProposalKind, ProposalNotification, ProposalOutcome, ReadyNotification,
    Response, SandboxMode, SandboxNotice, SandboxState, SendParams, ServerFrame, ServerRequest,
    SubagentKind, Submission, TodoItem, TodoStatus, TokenUsage, ToolCallKind, ToolCallNotification,
    ToolResultNotification, Truncation, TurnFinishedNotification, TurnOutcome, UsageNotification,
    schema_json,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

/// Serializes `value`, compares with `expected`, and reads `expected` back into `value`.
fn assert_round_trip<T>(value: &T, expected: &Value)
where
    T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let written = serde_json::to_value(value).unwrap();
    assert_eq!(&written, expected);
    let read: T = serde_json::from_value(expected.clone()).unwrap();
    assert_eq!(&read, value);
    // And through text, as the wire carries it.
    let line = serde_json::to_string(value).unwrap();
    assert!(!line.contains('\n'), "a frame must fit on one line: {line}");
    assert_eq!(&serde_json::from_str::<T>(&line).unwrap(), value);
}

/// The `type` values of a union in the generated schema, e.g. every operation's name.
fn schema_type_names(definition: &str) -> BTreeSet<String> {
    let schema: Value = serde_json::from_str(&schema_json()).unwrap();
    let variants = schema["$defs"][definition]["oneOf"].as_array().unwrap();
    variants
        .iter()
        .map(|variant| {
            variant["properties"]["type"]["const"]
                .as_str()
                .unwrap_or_else(|| panic!("{definition} variant without a type const: {variant}"))
                .to_owned()
        })
        .collect()
}

fn type_names<'a>(table: impl IntoIterator<Item = &'a Value>) -> BTreeSet<String> {
    table
        .into_iter()
        .map(|frame| frame.as_object().unwrap().values())
        .flat_map(|mut fields| fields.find_map(|field| field.get("type")))
        .map(|name| name.as_str().unwrap().to_owned())
        .collect()
}

fn ops() -> Vec<(Op, Value)> {
    vec![
        (
            Op::Hello {
                version: 1,
                client: Some("corvid-web 0.1.0".into()),
            },
            json!({"type": "hello", "version": 1, "client": "corvid-web 0.1.0"}),
        ),
        (
            Op::Hello {
                version: 1,
                client: None,
            },
            json!({"type": "hello", "version": 1}),
        ),
        (
            Op::Send(SendParams::text("fix the failing test")),
            json!({"type": "send", "text": "fix the failing test"}),
        ),
        (
            Op::Send(SendParams {
                text: "what is in these?".into(),
                images: vec![
                    ImageInput::Base64 {
                        media_type: "image/png".into(),
                        data: "iVBORw0K".into(),
                    },
                    ImageInput::Url {
                        url: "https://example.com/a.jpg".into(),
                    },
                ],
                model: Some("grok-4".into()),
                skill: Some("review".into()),
                command: None,
            }),
            json!({
                "type": "send",
                "text": "what is in these?",
                "images": [
                    {"type": "base64", "media_type": "image/png", "data": "iVBORw0K"},
                    {"type": "url", "url": "https://example.com/a.jpg"}
                ],
                "model": "grok-4",
                "skill": "review"
            }),
        ),
        (Op::Cancel, json!({"type": "cancel"})),
        (Op::ListConversations, json!({"type": "list_conversations"})),
        (
            Op::OpenConversation {
                conversation_id: None,
            },
            json!({"type": "open_conversation"}),
        ),
        (
            Op::OpenConversation {
                conversation_id: Some("c-2".into()),
            },
            json!({"type": "open_conversation", "conversation_id": "c-2"}),
        ),
        (
            Op::RenameConversation {
                conversation_id: None,
                title: "The parser".into(),
            },
            json!({"type": "rename_conversation", "title": "The parser"}),
        ),
        (
            Op::DeleteConversation {
                conversation_id: "c-3".into(),
            },
            json!({"type": "delete_conversation", "conversation_id": "c-3"}),
        ),
        (Op::ClearConversation, json!({"type": "clear_conversation"})),
        (Op::Init, json!({"type": "init"})),
        (
            Op::SetModel {
                model: "anthropic/claude-sonnet-4-5".into(),
            },
            json!({"type": "set_model", "model": "anthropic/claude-sonnet-4-5"}),
        ),
        (
            Op::SetApprovalPolicy {
                policy: ApprovalPolicy::AutoEdit,
            },
            json!({"type": "set_approval_policy", "policy": "auto-edit"}),
        ),
        (Op::Undo { turn: None }, json!({"type": "undo"})),
        (
            Op::Undo { turn: Some(3) },
            json!({"type": "undo", "turn": 3}),
        ),
        (Op::Diff { turn: None }, json!({"type": "diff"})),
        (
            Op::Diff { turn: Some(2) },
            json!({"type": "diff", "turn": 2}),
        ),
        (Op::Compact, json!({"type": "compact"})),
        (Op::ListToolServers, json!({"type": "list_tool_servers"})),
        (
            Op::TrustToolServer {
                name: "repo-tools".into(),
            },
            json!({"type": "trust_tool_server", "name": "repo-tools"}),
        ),
        (Op::ListPermissions, json!({"type": "list_permissions"})),
        (
            Op::RemovePermission { number: 2 },
            json!({"type": "remove_permission", "number": 2}),
        ),
        (
            Op::AddPermission {
                action: corvid_protocol::RuleAction::Deny,
                rule: "Bash(rm:*)".into(),
                file: corvid_protocol::RuleFile::User,
            },
            json!({"type": "add_permission", "action": "deny", "rule": "Bash(rm:*)", "file": "user"}),
        ),
        (Op::Shutdown, json!({"type": "shutdown"})),
        (Op::UserMessages, json!({"type": "user_messages"})),
        (
            Op::Rewind {
                message: 2,
                restore_files: true,
            },
            json!({"type": "rewind", "message": 2, "restore_files": true}),
        ),
        (Op::Fork { message: None }, json!({"type": "fork"})),
    ]
}

fn usage(input: u64, output: u64) -> TokenUsage {
    TokenUsage {
        input,
        cache_read: 1000,
        cache_write: 200,
        output,
        reasoning: 10,
    }
}

fn usage_json(input: u64, output: u64) -> Value {
    json!({"input": input, "cache_read": 1000, "cache_write": 200, "output": output, "reasoning": 10})
}

fn tool_call() -> (ToolCallNotification, Value) {
    (
        ToolCallNotification {
            call_id: "call-1".into(),
            tool: "read".into(),
            kind: ToolCallKind::Read,
            arguments: json!({"path": "src/lib.rs", "offset": 10}),
            summary: "Read src/lib.rs".into(),
            locations: vec!["src/lib.rs".into()],
        },
        json!({
            "call_id": "call-1",
            "tool": "read",
            "kind": {"type": "read"},
            "arguments": {"path": "src/lib.rs", "offset": 10},
            "summary": "Read src/lib.rs",
            "locations": ["src/lib.rs"]
        }),
    )
}

fn tool_result() -> (ToolResultNotification, Value) {
    (
        ToolResultNotification {
            call_id: "call-1".into(),
            ok: true,
            output: "1\tfn main() {}\n".into(),
            truncation: None,
            change: None,
        },
        json!({"call_id": "call-1", "ok": true, "output": "1\tfn main() {}\n"}),
    )
}

fn summary() -> (ConversationSummary, Value) {
    (
        ConversationSummary {
            id: "c-1".into(),
            title: "Fix the parser".into(),
            updated_at: 1_767_225_600,
            message_count: 12,
        },
        json!({"id": "c-1", "title": "Fix the parser", "updated_at": 1_767_225_600, "message_count": 12}),
    )
}

fn events() -> Vec<(EventMsg, Value)> {
    let (call, call_json) = tool_call();
    let (result, result_json) = tool_result();
    let (conversation, conversation_json) = summary();
    let mut table = vec![
        (
            EventMsg::Ready(ReadyNotification {
                version: 1,
                engine: "corvid 0.1.0".into(),
                cwd: "/home/ada/project".into(),
                conversation_id: "c-1".into(),
                model: "grok-4".into(),
                approval_policy: ApprovalPolicy::Ask,
                missed: None,
                sandbox: None,
            }),
            json!({
                "type": "ready",
                "version": 1,
                "engine": "corvid 0.1.0",
                "cwd": "/home/ada/project",
                "conversation_id": "c-1",
                "model": "grok-4",
                "approval_policy": "ask"
            }),
        ),
        (
            EventMsg::Ready(ReadyNotification {
                version: 4,
                engine: "corvid 0.1.0".into(),
                cwd: "/home/ada/project".into(),
                conversation_id: "c-1".into(),
                model: "grok-4".into(),
                approval_policy: ApprovalPolicy::FullAuto,
                missed: None,
                sandbox: Some(SandboxState {
                    mode: SandboxMode::Enforced,
                    landlock_abi: Some(7),
                    seccomp: true,
                    network: false,
                    summary: "landlock ABI 7 + seccomp".into(),
                }),
            }),
            json!({
                "type": "ready",
                "version": 4,
                "engine": "corvid 0.1.0",
                "cwd": "/home/ada/project",
                "conversation_id": "c-1",
                "model": "grok-4",
                "approval_policy": "full-auto",
                "sandbox": {
                    "mode": "enforced",
                    "landlock_abi": 7,
                    "seccomp": true,
                    "network": false,
                    "summary": "landlock ABI 7 + seccomp"
                }
            }),
        ),
        (
            EventMsg::ToolOutputDelta {
                call_id: "call-1".into(),
                text: "Compiling corvid\n".into(),
            },
            json!({"type": "tool_output_delta", "call_id": "call-1", "text": "Compiling corvid\n"}),
        ),
        (
            EventMsg::ToolCallProgress {
                call_id: Some("call-2".into()),
                tool: "write".into(),
                bytes: 2048,
            },
            json!({"type": "tool_call_progress", "call_id": "call-2", "tool": "write", "bytes": 2048}),
        ),
        (
            EventMsg::ToolCallProgress {
                call_id: None,
                tool: "edit".into(),
                bytes: 0,
            },
            json!({"type": "tool_call_progress", "tool": "edit", "bytes": 0}),
        ),
        (
            EventMsg::SettingsChanged {
                model: "grok-4".into(),
                approval_policy: ApprovalPolicy::FullAuto,
            },
            json!({"type": "settings_changed", "model": "grok-4", "approval_policy": "full-auto"}),
        ),
        (
            EventMsg::TurnStarted {
                conversation_id: "c-1".into(),
                model: "grok-4".into(),
                prompt: Some("fix the failing test".into()),
            },
            json!({"type": "turn_started", "conversation_id": "c-1", "model": "grok-4", "prompt": "fix the failing test"}),
        ),
        (
            EventMsg::TextDelta {
                delta: "Let me look".into(),
            },
            json!({"type": "text_delta", "delta": "Let me look"}),
        ),
        (
            EventMsg::ReasoningDelta {
                delta: "The test fails because".into(),
            },
            json!({"type": "reasoning_delta", "delta": "The test fails because"}),
        ),
        (
            EventMsg::ToolCall(call.clone()),
            with_type("tool_call", &call_json),
        ),
        (
            EventMsg::ToolResult(result.clone()),
            with_type("tool_result", &result_json),
        ),
        (
            EventMsg::ToolResult(ToolResultNotification {
                call_id: "call-2".into(),
                ok: false,
                output: "error[E0308]: mismatched types\n…".into(),
                truncation: Some(Truncation {
                    total_bytes: 120_000,
                    total_lines: 3_000,
                    full_output_path: Some(".corvid/output/call-2.log".into()),
                }),
                change: None,
            }),
            json!({
                "type": "tool_result",
                "call_id": "call-2",
                "ok": false,
                "output": "error[E0308]: mismatched types\n…",
                "truncation": {
                    "total_bytes": 120_000,
                    "total_lines": 3_000,
                    "full_output_path": ".corvid/output/call-2.log"
                }
            }),
        ),
        (
            EventMsg::ToolResult(ToolResultNotification {
                call_id: "call-3".into(),
                ok: true,
                output: "x".repeat(10),
                truncation: Some(Truncation {
                    total_bytes: 50_000,
                    total_lines: 1,
                    full_output_path: None,
                }),
                change: None,
            }),
            json!({
                "type": "tool_result",
                "call_id": "call-3",
                "ok": true,
                "output": "xxxxxxxxxx",
                "truncation": {"total_bytes": 50_000, "total_lines": 1}
            }),
        ),
        (
            EventMsg::ToolResult(ToolResultNotification {
                call_id: "call-4".into(),
                ok: true,
                output: "Edited notes.md".into(),
                truncation: None,
                change: Some(corvid_protocol::AppliedChange {
                    path: "notes.md".into(),
                    diff: "@@ -1 +1 @@\n-a\n+b\n".into(),
                }),
            }),
            json!({
                "type": "tool_result",
                "call_id": "call-4",
                "ok": true,
                "output": "Edited notes.md",
                "change": {"path": "notes.md", "diff": "@@ -1 +1 @@\n-a\n+b\n"}
            }),
        ),
    ];
    for (outcome, name) in [
        (ProposalOutcome::Approved, "approved"),
        (ProposalOutcome::Rejected, "rejected"),
        (ProposalOutcome::Interrupted, "interrupted"),
    ] {
        table.push((
            EventMsg::ProposalClosed {
                proposal_id: "p-1".into(),
                outcome,
            },
            json!({"type": "proposal_closed", "proposal_id": "p-1", "outcome": name}),
        ));
    }
    table.extend([
        (
            EventMsg::Todos {
                todos: vec![
                    TodoItem {
                        content: "Read the parser".into(),
                        status: TodoStatus::Completed,
                    },
                    TodoItem {
                        content: "Fix the bug".into(),
                        status: TodoStatus::InProgress,
                    },
                    TodoItem {
                        content: "Run the tests".into(),
                        status: TodoStatus::Pending,
                    },
                ],
            },
            json!({
                "type": "todos",
                "todos": [
                    {"content": "Read the parser", "status": "completed"},
                    {"content": "Fix the bug", "status": "in_progress"},
                    {"content": "Run the tests", "status": "pending"}
                ]
            }),
        ),
        (
            EventMsg::Todos { todos: vec![] },
            json!({"type": "todos", "todos": []}),
        ),
        (
            EventMsg::SubagentStarted {
                call_id: "call-9".into(),
                agent: SubagentKind::Explore,
                description: "Find where tokens are counted".into(),
                name: None,
            },
            json!({
                "type": "subagent_started",
                "call_id": "call-9",
                "agent": "explore",
                "description": "Find where tokens are counted"
            }),
        ),
        (
            EventMsg::SubagentStarted {
                call_id: "call-10".into(),
                agent: SubagentKind::General,
                description: "Update the docs".into(),
                name: Some("doc-writer".into()),
            },
            json!({
                "type": "subagent_started",
                "call_id": "call-10",
                "agent": "general",
                "description": "Update the docs",
                "name": "doc-writer"
            }),
        ),
        (
            EventMsg::SubagentFinished {
                call_id: "call-9".into(),
                ok: true,
                summary: "In src/usage.rs".into(),
            },
            json!({
                "type": "subagent_finished",
                "call_id": "call-9",
                "ok": true,
                "summary": "In src/usage.rs"
            }),
        ),
        (
            EventMsg::Usage(UsageNotification {
                step: 2,
                usage: usage(30, 40),
                turn: usage(50, 90),
                turn_cost_usd: Some(0.5),
                context_window: Some(128_000),
            }),
            json!({
                "type": "usage",
                "step": 2,
                "usage": usage_json(30, 40),
                "turn": usage_json(50, 90),
                "turn_cost_usd": 0.5,
                "context_window": 128_000
            }),
        ),
        (
            EventMsg::MessageCompleted {
                step: 1,
                text: "Let me look at the parser.".into(),
            },
            json!({"type": "message_completed", "step": 1, "text": "Let me look at the parser."}),
        ),
    ]);
    let classes = [
        (ErrorClass::NotConfigured, "not_configured"),
        (
            ErrorClass::AuthenticationRejected,
            "authentication_rejected",
        ),
        (ErrorClass::RateLimited, "rate_limited"),
        (ErrorClass::ServerError, "server_error"),
        (ErrorClass::Network, "network"),
        (ErrorClass::UnexpectedResponse, "unexpected_response"),
        (ErrorClass::Tool, "tool"),
        (ErrorClass::Cancelled, "cancelled"),
        (ErrorClass::StepLimit, "step_limit"),
        (ErrorClass::InvalidRequest, "invalid_request"),
        (ErrorClass::Internal, "internal"),
    ];
    for (class, name) in classes {
        table.push((
            EventMsg::Error(ErrorNotification {
                class,
                message: "xAI answered 429".into(),
                next_action: "Wait a minute and send the message again.".into(),
                retryable: true,
            }),
            json!({
                "type": "error",
                "class": name,
                "message": "xAI answered 429",
                "next_action": "Wait a minute and send the message again.",
                "retryable": true
            }),
        ));
    }
    for (outcome, name) in [
        (TurnOutcome::Completed, "completed"),
        (TurnOutcome::Cancelled, "cancelled"),
        (TurnOutcome::Failed, "failed"),
        (TurnOutcome::StepLimit, "step_limit"),
    ] {
        table.push((
            EventMsg::TurnFinished(TurnFinishedNotification {
                outcome,
                steps: 3,
                usage: usage(50, 90),
            }),
            json!({"type": "turn_finished", "outcome": name, "steps": 3, "usage": usage_json(50, 90)}),
        ));
    }
    table.extend([
        (
            EventMsg::ConversationOpened {
                conversation: conversation.clone(),
                history: vec![
                    HistoryEntry::User { text: "fix the parser".into() },
                    HistoryEntry::Assistant { text: "Let me look.".into() },
                    HistoryEntry::ToolCall(call),
                    HistoryEntry::ToolResult(result),
                ],
            },
            json!({
                "type": "conversation_opened",
                "conversation": conversation_json.clone(),
                "history": [
                    {"type": "user", "text": "fix the parser"},
                    {"type": "assistant", "text": "Let me look."},
                    with_type("tool_call", &call_json),
                    with_type("tool_result", &result_json)
                ]
            }),
        ),
        (
            EventMsg::ConversationOpened { conversation, history: vec![] },
            json!({"type": "conversation_opened", "conversation": conversation_json, "history": []}),
        ),
        (
            EventMsg::ConversationCleared { conversation_id: "c-1".into() },
            json!({"type": "conversation_cleared", "conversation_id": "c-1"}),
        ),
        (
            EventMsg::Warning {
                message: "Skipped skill `deploy`: its frontmatter has no description.".into(),
            },
            json!({
                "type": "warning",
                "message": "Skipped skill `deploy`: its frontmatter has no description."
            }),
        ),
        (
            EventMsg::Undone {
                turn: 2,
                files: vec![
                    FileChange { path: "src/lib.rs".into(), change: ChangeKind::Modified },
                    FileChange { path: "notes.md".into(), change: ChangeKind::Added },
                ],
            },
            json!({"type": "undone", "turn": 2, "files": [
                {"path": "src/lib.rs", "change": "modified"},
                {"path": "notes.md", "change": "added"}
            ]}),
        ),
        (
            EventMsg::Compacted {
                tokens_before: 9_000,
                tokens_after: 2_500,
                context_window: 10_000,
                messages_summarized: 14,
            },
            json!({"type": "compacted", "tokens_before": 9_000, "tokens_after": 2_500,
                "context_window": 10_000, "messages_summarized": 14}),
        ),
        (EventMsg::ShutdownComplete, json!({"type": "shutdown_complete"})),
    ]);
    table
}

/// Every shape of an approval request's payload, as Rust value and as JSON.
fn approvals() -> Vec<(ProposalNotification, Value)> {
    let mut table = Vec::new();
    let proposals = [
        (
            ProposalKind::Edit {
                path: "src/lib.rs".into(),
                diff: "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1 +1 @@\n-a\n+b\n".into(),
            },
            json!({
                "type": "edit",
                "path": "src/lib.rs",
                "diff": "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1 +1 @@\n-a\n+b\n"
            }),
            Some((
                ApprovalRule::tool("edit"),
                json!({"type": "tool", "tool": "edit"}),
            )),
        ),
        (
            ProposalKind::Write {
                path: "notes.md".into(),
                diff: "--- /dev/null\n+++ b/notes.md\n@@ -0,0 +1 @@\n+hi\n".into(),
            },
            json!({
                "type": "write",
                "path": "notes.md",
                "diff": "--- /dev/null\n+++ b/notes.md\n@@ -0,0 +1 @@\n+hi\n"
            }),
            None,
        ),
        (
            ProposalKind::Command {
                command: "cargo test -p x".into(),
                cwd: ".".into(),
            },
            json!({"type": "command", "command": "cargo test -p x", "cwd": "."}),
            Some((
                ApprovalRule::command_prefix("cargo test"),
                json!({"type": "command_prefix", "prefix": "cargo test"}),
            )),
        ),
        (
            ProposalKind::Other {
                tool: "github_create_issue".into(),
                summary: "Open an issue in ada/project".into(),
            },
            json!({
                "type": "other",
                "tool": "github_create_issue",
                "summary": "Open an issue in ada/project"
            }),
            None,
        ),
    ];
    for (index, (kind, kind_json, always)) in proposals.into_iter().enumerate() {
        let mut expected = json!({
            "proposal_id": format!("p-{index}"),
            "call_id": format!("call-{index}"),
            "title": "Change it",
            "kind": kind_json,
            "decisions": ["approve", "reject"],
        });
        let always_scope = always.map(|(rule, rule_json)| {
            expected["always_scope"] = rule_json;
            rule
        });
        table.push((
            ProposalNotification {
                proposal_id: format!("p-{index}"),
                call_id: format!("call-{index}"),
                title: "Change it".into(),
                kind,
                decisions: vec![DecisionKind::Approve, DecisionKind::Reject],
                always_scope,
                always_description: None,
                sandbox: None,
                notice: None,
            },
            expected,
        ));
    }
    for (notice, notice_json) in [
        (
            SandboxNotice::Widened {
                write_outside: false,
                network: true,
            },
            json!({"type": "widened", "write_outside": false, "network": true}),
        ),
        (
            SandboxNotice::Unavailable {
                reason: "no Landlock".into(),
            },
            json!({"type": "unavailable", "reason": "no Landlock"}),
        ),
    ] {
        table.push((
            ProposalNotification {
                proposal_id: "p-9".into(),
                call_id: "call-9".into(),
                title: "Run npm install".into(),
                kind: ProposalKind::Command {
                    command: "npm install".into(),
                    cwd: ".".into(),
                },
                decisions: vec![
                    DecisionKind::Approve,
                    DecisionKind::ApproveAlways,
                    DecisionKind::Reject,
                ],
                always_scope: None,
                always_description: None,
                notice: Some(notice.describe()),
                sandbox: Some(notice.clone()),
            },
            json!({
                    "proposal_id": "p-9",
                "call_id": "call-9",
                "title": "Run npm install",
                "kind": {"type": "command", "command": "npm install", "cwd": "."},
                "decisions": ["approve", "approve_always", "reject"],
                "sandbox": notice_json,
                "notice": notice.describe()
            }),
        ));
    }
    table
}

/// `fields` (an object) with `"type": name` added, as an internally tagged newtype variant is
/// written.
fn with_type(name: &str, fields: &Value) -> Value {
    let mut value = fields.clone();
    value["type"] = json!(name);
    value
}

#[test]
fn every_op_round_trips_inside_a_submission() {
    let table = ops();
    let mut frames = Vec::new();
    for (index, (op, op_json)) in table.into_iter().enumerate() {
        let id = format!("s-{index}");
        let frame = json!({"id": id, "op": op_json});
        assert_round_trip(&Submission::new(id, op), &frame);
        frames.push(frame);
    }
    assert_eq!(
        type_names(&frames),
        schema_type_names("Op"),
        "an op is missing from the table"
    );
}

#[test]
fn every_event_round_trips_inside_an_event() {
    let table = events();
    let mut frames = Vec::new();
    for (index, (msg, msg_json)) in table.into_iter().enumerate() {
        let event = Event {
            id: "s-1".into(),
            seq: index as u64,
            depth: 0,
            parent_call_id: None,
            at: 1_767_225_600,
            replay: false,
            msg,
        };
        let frame =
            json!({"id": "s-1", "seq": index, "depth": 0, "at": 1_767_225_600, "msg": msg_json});
        assert_round_trip(&event, &frame);
        frames.push(frame);
    }
    assert_eq!(
        type_names(&frames),
        schema_type_names("EventMsg"),
        "an event is missing from the table"
    );
}

#[test]
fn subagent_events_carry_depth_and_parent_call() {
    let event = Event {
        id: "s-4".into(),
        seq: 42,
        depth: 1,
        parent_call_id: Some("call-9".into()),
        at: 1_767_225_601,
        replay: false,
        msg: EventMsg::TextDelta {
            delta: "Searching".into(),
        },
    };
    assert_round_trip(
        &event,
        &json!({
            "id": "s-4",
            "seq": 42,
            "depth": 1,
            "parent_call_id": "call-9",
            "at": 1_767_225_601,
            "msg": {"type": "text_delta", "delta": "Searching"}
        }),
    );
}

#[test]
fn history_entries_and_rules_cover_their_schema() {
    let (call, _) = tool_call();
    let (result, _) = tool_result();
    let entries = [
        HistoryEntry::User {
            text: String::new(),
        },
        HistoryEntry::Assistant {
            text: String::new(),
        },
        HistoryEntry::ToolCall(call),
        HistoryEntry::ToolResult(result),
    ];
    let written: Vec<Value> = entries
        .iter()
        .map(|entry| json!({"entry": serde_json::to_value(entry).unwrap()}))
        .collect();
    assert_eq!(type_names(&written), schema_type_names("HistoryEntry"));

    let rules = [
        ApprovalRule::tool("edit"),
        ApprovalRule::command_prefix("ls"),
        ApprovalRule::origin("mcp:github"),
    ];
    let written: Vec<Value> = rules
        .iter()
        .map(|rule| json!({"rule": serde_json::to_value(rule).unwrap()}))
        .collect();
    assert_eq!(type_names(&written), schema_type_names("ApprovalRule"));
}

#[test]
fn token_usage_adds_up() {
    let mut total = TokenUsage::default();
    total += usage(30, 40);
    let total = total + usage(20, 50);
    assert_eq!(
        total,
        TokenUsage {
            input: 50,
            cache_read: 2000,
            cache_write: 400,
            output: 90,
            reasoning: 20
        }
    );
    assert_eq!(total.total_input(), 2450);
    assert_eq!(total.total(), 2540);
    let huge = TokenUsage {
        input: u64::MAX,
        ..TokenUsage::default()
    };
    assert_eq!((huge + huge).input, u64::MAX);
}

#[test]
fn replayed_events_say_so_and_live_ones_stay_as_they_were() {
    let event = Event {
        id: String::new(),
        seq: 7,
        depth: 0,
        parent_call_id: None,
        at: 1_767_225_600,
        replay: true,
        msg: EventMsg::Ready(ReadyNotification {
            version: 4,
            engine: "corvid 0.1.0".into(),
            cwd: "/p".into(),
            conversation_id: "c-1".into(),
            model: "m".into(),
            approval_policy: ApprovalPolicy::Ask,
            missed: Some(12),
            sandbox: None,
        }),
    };
    assert_round_trip(
        &event,
        &json!({"id": "", "seq": 7, "depth": 0, "at": 1_767_225_600, "replay": true,
            "msg": {"type": "ready", "version": 4, "engine": "corvid 0.1.0", "cwd": "/p",
                "conversation_id": "c-1", "model": "m", "approval_policy": "ask", "missed": 12}}),
    );
    // A frame from an engine before `replay` existed is live.
    let old: Event = serde_json::from_value(json!({"id": "s-1", "seq": 1, "depth": 0, "at": 0,
        "msg": {"type": "turn_started", "conversation_id": "c-1", "model": "m"}}))
    .unwrap();
    assert!(!old.replay);
}

#[test]
fn an_approval_is_a_request_frame_answered_by_a_response_frame() {
    for (index, (approval, approval_json)) in approvals().into_iter().enumerate() {
        let request = ServerRequest {
            id: approval.proposal_id.clone(),
            turn_id: "s-1".into(),
            seq: 7 + index as u64,
            depth: 0,
            parent_call_id: None,
            replay: false,
            approval,
        };
        let id = request.id.clone();
        assert_round_trip(
            &ServerFrame::Request(request),
            &json!({"type": "request", "id": id, "turn_id": "s-1", "seq": 7 + index,
                "depth": 0, "approval": approval_json}),
        );
    }
    // A subagent's request, replayed to a listener that came late.
    let (approval, approval_json) = approvals().remove(2);
    assert_round_trip(
        &ServerFrame::Request(ServerRequest {
            id: "p-2".into(),
            turn_id: "s-1".into(),
            seq: 3,
            depth: 1,
            parent_call_id: Some("task-1".into()),
            replay: true,
            approval,
        }),
        &json!({"type": "request", "id": "p-2", "turn_id": "s-1", "seq": 3, "depth": 1,
            "parent_call_id": "task-1", "replay": true, "approval": approval_json}),
    );
    let decisions = [
        (ApprovalDecision::Approve, json!({"type": "approve"})),
        (
            ApprovalDecision::ApproveAlways {
                scope: ApprovalRule::command_prefix("cargo test"),
            },
            json!({"type": "approve_always",
                "scope": {"type": "command_prefix", "prefix": "cargo test"}}),
        ),
        (
            ApprovalDecision::ApproveAlways {
                scope: ApprovalRule::tool("write"),
            },
            json!({"type": "approve_always", "scope": {"type": "tool", "tool": "write"}}),
        ),
        (
            ApprovalDecision::Reject {
                feedback: Some("use a test instead".into()),
            },
            json!({"type": "reject", "feedback": "use a test instead"}),
        ),
        (
            ApprovalDecision::Reject { feedback: None },
            json!({"type": "reject"}),
        ),
    ];
    for (decision, decision_json) in decisions {
        assert_round_trip(
            &ClientFrame::Response(Response::new("p-1", decision)),
            &json!({"type": "response", "id": "p-1", "decision": decision_json}),
        );
    }
    assert_round_trip(
        &ClientFrame::Submission(Submission::new("s-9", Op::Cancel)),
        &json!({"type": "submission", "id": "s-9", "op": {"type": "cancel"}}),
    );
    assert_eq!(
        schema_type_names("ClientFrame"),
        BTreeSet::from(["response".to_owned(), "submission".to_owned()])
    );
}

use corvid_tools::{TodoStatus, ToolDetail, ToolError, ToolKind, builtin_tools};
use serde_json::json;

use super::support::project;

#[test]
fn every_tool_has_a_kind_for_the_gate() {
    let specs = builtin_tools();
    let kinds: Vec<(&str, ToolKind)> = specs
        .iter()
        .map(|spec| (spec.name.as_str(), spec.kind))
        .collect();
    assert_eq!(
        kinds,
        [
            ("read", ToolKind::Read),
            ("write", ToolKind::Edit),
            ("edit", ToolKind::Edit),
            ("glob", ToolKind::Search),
            ("grep", ToolKind::Search),
            ("bash", ToolKind::Command),
            ("process", ToolKind::Other),
            ("todowrite", ToolKind::Other),
        ]
    );
}

#[tokio::test]
async fn a_narrowed_registry_refuses_the_tools_it_does_not_offer() {
    let p = project();
    let explore = p
        .tools
        .retain(|spec| matches!(spec.kind, ToolKind::Read | ToolKind::Search));
    assert_eq!(
        explore
            .specs()
            .iter()
            .map(|spec| spec.name.as_str())
            .collect::<Vec<_>>(),
        ["read", "glob", "grep"]
    );
    let error = explore
        .prepare("write", json!({"path": "a.txt", "content": "x"}))
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "unknown tool `write`; the available tools are: read, glob, grep"
    );
    assert!(!p.path("a.txt").exists());
}

#[tokio::test]
async fn bad_arguments_say_what_is_wrong() {
    let p = project();
    let error = p.prepare("read", json!({"offset": 3})).await.unwrap_err();
    assert!(
        matches!(&error, ToolError::InvalidArguments { tool, .. } if tool == "read"),
        "{error:?}"
    );
    assert!(
        error.to_string().contains("missing field `path`"),
        "{error}"
    );
    // Double-encoded arguments are accepted.
    p.write("a.txt", "x\n");
    let output = p.run("read", json!("{\"path\": \"a.txt\"}")).await.unwrap();
    assert_eq!(output.text, "     1\tx\n");
}

#[tokio::test]
async fn todowrite_validates_and_returns_the_list() {
    let p = project();
    let output = p
        .run(
            "todowrite",
            json!({"todos": [
                {"content": "Read the code", "status": "completed"},
                {"content": "Fix the bug", "status": "in_progress"},
                {"content": "Run the tests", "status": "pending"}
            ]}),
        )
        .await
        .unwrap();
    assert_eq!(
        output.text,
        "Todo list updated:\n[x] Read the code\n[~] Fix the bug\n[ ] Run the tests\n"
    );
    let Some(ToolDetail::Todos(todos)) = output.detail else {
        panic!("expected the todo list");
    };
    assert_eq!(todos.len(), 3);
    assert_eq!(todos[1].status, TodoStatus::InProgress);
    let error = p
        .prepare(
            "todowrite",
            json!({"todos": [{"content": "x", "status": "someday"}]}),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(error, ToolError::InvalidArguments { .. }),
        "{error:?}"
    );
    let error = p
        .prepare(
            "todowrite",
            json!({"todos": [{"content": "  ", "status": "pending"}]}),
        )
        .await
        .unwrap_err();
    assert!(error.to_string().contains("empty content"), "{error}");
}

#[tokio::test]
async fn reads_get_a_summary_proposal_too() {
    let p = project();
    p.write("src/a.rs", "");
    let prepared = p
        .prepare("read", json!({"path": "src/a.rs"}))
        .await
        .unwrap();
    assert_eq!(prepared.kind, ToolKind::Read);
    assert_eq!(prepared.proposal.summary, "Read src/a.rs");
    let prepared = p
        .prepare(
            "bash",
            json!({"command": "ls", "description": "list files"}),
        )
        .await
        .unwrap();
    assert_eq!(prepared.kind, ToolKind::Command);
    assert_eq!(prepared.proposal.summary, "Run `ls` (list files)");
    assert_eq!(prepared.proposal.command.as_deref(), Some("ls"));
}

use super::*;
use serde_json::json;

fn call(tool: &str, kind: ToolCallKind, locations: &[&str]) -> ToolCallNotification {
    ToolCallNotification {
        call_id: "c1".to_owned(),
        tool: tool.to_owned(),
        kind,
        arguments: json!({}),
        summary: format!("{tool} summary"),
        locations: locations.iter().map(|path| (*path).to_owned()).collect(),
    }
}

#[test]
fn an_edit_shows_its_kind_and_absolute_locations_from_the_engine() {
    let described = describe(
        &call("edit", ToolCallKind::Edit, &["src/lib.rs"]),
        Path::new("/project"),
    );
    assert_eq!(described.kind, ToolKind::Edit);
    assert_eq!(described.title, "edit summary");
    let locations = serde_json::to_value(&described.locations).unwrap();
    assert_eq!(locations[0]["path"], "/project/src/lib.rs");
}

#[test]
fn an_mcp_tool_named_edit_is_an_mcp_call() {
    let described = describe(
        &call(
            "mcp__notes__edit",
            ToolCallKind::Mcp {
                server: "notes".to_owned(),
                tool: "edit".to_owned(),
            },
            &[],
        ),
        Path::new("/project"),
    );
    assert_eq!(described.kind, ToolKind::Other);
    // The engine's words for the call, as in every face (never a title of ACP's own).
    assert_eq!(described.title, "mcp__notes__edit summary");
    assert!(described.content.is_empty());
}

#[test]
fn a_proposal_shows_the_engines_notice_and_diff() {
    let proposal = ProposalNotification {
        proposal_id: "p".to_owned(),
        call_id: "c1".to_owned(),
        title: "Run npm install".to_owned(),
        kind: ProposalKind::Command {
            command: "npm install".to_owned(),
            cwd: ".".to_owned(),
        },
        decisions: Vec::new(),
        always_scope: None,
        always_description: None,
        sandbox: None,
        notice: Some(
            "This command asks to run with more than the sandbox allows: it may use the network."
                .to_owned(),
        ),
    };
    let value = serde_json::to_value(proposal_content(&proposal, Path::new("/p"))).unwrap();
    assert_eq!(value[0]["content"]["text"], "$ npm install");
    assert!(
        value[1]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("use the network")
    );
}

#[test]
fn an_edit_proposal_shows_its_own_diff_as_the_editors_diff() {
    let proposal = ProposalNotification {
        proposal_id: "p".to_owned(),
        call_id: "c1".to_owned(),
        title: "Edit src/lib.rs".to_owned(),
        kind: ProposalKind::Edit {
            path: "src/lib.rs".to_owned(),
            diff: "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,2 +1,2 @@\n fn add() {\n-    a - b\n+    a + b\n".to_owned(),
        },
        decisions: Vec::new(),
        always_scope: None,
        always_description: None,
        sandbox: None,
        notice: None,
    };
    let value = serde_json::to_value(proposal_content(&proposal, Path::new("/p"))).unwrap();
    assert_eq!(value[0]["type"], "diff");
    assert_eq!(value[0]["path"], "/p/src/lib.rs");
    assert_eq!(value[0]["oldText"], "fn add() {\n    a - b\n");
    assert_eq!(value[0]["newText"], "fn add() {\n    a + b\n");
}

#[test]
fn todos_become_a_plan() {
    let update = plan(&[TodoItem {
        content: "write tests".to_owned(),
        status: TodoStatus::InProgress,
    }]);
    let value = serde_json::to_value(&update).unwrap();
    assert_eq!(value["sessionUpdate"], "plan");
    assert_eq!(value["entries"][0]["status"], "in_progress");
    assert_eq!(value["entries"][0]["content"], "write tests");
}

#[test]
fn long_output_is_cut_on_a_character_boundary() {
    let text = "é".repeat(10);
    let shown = cut(&text, 5);
    assert!(shown.starts_with("éé\n…"), "{shown}");
}

#[test]
fn a_running_commands_output_is_the_calls_content_cut_to_its_tail() {
    let short = serde_json::to_value(running_output("c1", "line one\n")).unwrap();
    assert_eq!(short["sessionUpdate"], "tool_call_update");
    assert_eq!(short["toolCallId"], "c1");
    assert_eq!(short["status"], "in_progress");
    assert_eq!(short["content"][0]["content"]["text"], "line one\n");

    let long = format!("{}é{}", "a".repeat(3 * OUTPUT_SHOWN), "z".repeat(10));
    let update = serde_json::to_value(running_output("c1", &long)).unwrap();
    let shown = update["content"][0]["content"]["text"].as_str().unwrap();
    assert!(shown.ends_with(&"z".repeat(10)), "{shown}");
    assert!(shown.starts_with("… ("), "{shown}");
    assert!(shown.len() < long.len());
}

#[test]
fn kinds_follow_the_engines_kind() {
    assert_eq!(kind_of(&ToolCallKind::Fetch), ToolKind::Fetch);
    assert_eq!(kind_of(&ToolCallKind::Search), ToolKind::Search);
    assert_eq!(kind_of(&ToolCallKind::Command), ToolKind::Execute);
}

#[test]
fn a_call_being_written_is_announced_pending_then_retitled_with_its_size() {
    let first = serde_json::to_value(preparing("c9", "write", 0, true)).unwrap();
    assert_eq!(first["sessionUpdate"], "tool_call");
    assert_eq!(first["toolCallId"], "c9");
    // `pending` is a tool call's default status, which the SDK leaves out.
    assert!(
        first["status"].is_null() || first["status"] == "pending",
        "{first}"
    );
    assert_eq!(first["title"], "Writing write call (0 bytes)");
    let later = serde_json::to_value(preparing("c9", "write", 2_150, false)).unwrap();
    assert_eq!(later["sessionUpdate"], "tool_call_update");
    assert_eq!(later["title"], "Writing write call (2.1 KB)");
}

#[test]
fn an_edit_that_ran_without_a_proposal_shows_the_diff_of_its_own_result() {
    let done = ToolResultNotification {
        call_id: "c1".to_owned(),
        ok: true,
        output: "Edited src/lib.rs".to_owned(),
        truncation: None,
        change: Some(corvid_protocol::AppliedChange {
            path: "src/lib.rs".to_owned(),
            diff: "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1 +1 @@\n-a - b\n+a + b\n".to_owned(),
        }),
    };
    // `keep_content` is false: no proposal showed a diff before.
    let value = serde_json::to_value(result(&done, false, Path::new("/p"))).unwrap();
    let content = &value["content"][0];
    assert_eq!(content["type"], "diff", "{value}");
    assert_eq!(content["path"], "/p/src/lib.rs");
    assert_eq!(content["oldText"], "a - b\n");
    assert_eq!(content["newText"], "a + b\n");
    assert_eq!(value["status"], "completed");
    // A result without a change shows its output.
    let plain = ToolResultNotification {
        change: None,
        ..done
    };
    let value = serde_json::to_value(result(&plain, false, Path::new("/p"))).unwrap();
    assert_eq!(value["content"][0]["content"]["text"], "Edited src/lib.rs");
}

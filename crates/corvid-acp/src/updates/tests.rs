use super::*;
use serde_json::json;

fn call(tool: &str, arguments: Value) -> ToolCallNotification {
    ToolCallNotification {
        call_id: "c1".to_owned(),
        tool: tool.to_owned(),
        arguments,
        summary: format!("{tool} summary"),
    }
}

#[test]
fn an_edit_shows_its_old_and_new_text_at_the_absolute_path() {
    let described = describe(
        &call(
            "edit",
            json!({"path": "src/lib.rs", "old_string": "a - b", "new_string": "a + b"}),
        ),
        Path::new("/project"),
    );
    assert_eq!(described.kind, ToolKind::Edit);
    let value = serde_json::to_value(&described.content).unwrap();
    assert_eq!(value[0]["type"], "diff");
    assert_eq!(value[0]["path"], "/project/src/lib.rs");
    assert_eq!(value[0]["oldText"], "a - b");
    assert_eq!(value[0]["newText"], "a + b");
    let locations = serde_json::to_value(&described.locations).unwrap();
    assert_eq!(locations[0]["path"], "/project/src/lib.rs");
}

#[test]
fn a_command_is_titled_by_itself() {
    let described = describe(
        &call("bash", json!({"command": "cargo test -p x"})),
        Path::new("/p"),
    );
    assert_eq!(described.kind, ToolKind::Execute);
    assert_eq!(described.title, "cargo test -p x");
    let value = serde_json::to_value(&described.content).unwrap();
    assert_eq!(value[0]["content"]["text"], "$ cargo test -p x");
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
fn the_web_tools_have_the_fetch_and_search_kinds() {
    assert_eq!(kind_of("web_fetch"), ToolKind::Fetch);
    assert_eq!(kind_of("web_search"), ToolKind::Search);
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

use serde_json::json;

use super::manifest::discover;
use super::*;

fn project() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn write_tool(root: &Path, folder: &str, manifest: &str) {
    let dir = root.join(TOOLS_DIR).join(folder);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(MANIFEST), manifest).unwrap();
}

use std::path::Path;

fn root_of(dir: &tempfile::TempDir) -> std::path::PathBuf {
    dir.path().canonicalize().unwrap()
}

#[test]
fn no_tools_folder_means_no_tools_and_no_notices() {
    let dir = project();
    let (tools, notices) = discover(&root_of(&dir));
    assert!(tools.is_empty() && notices.is_empty());
}

#[test]
fn each_unusable_manifest_is_skipped_with_its_reason_and_the_rest_are_offered() {
    let dir = project();
    let root = root_of(&dir);
    let good = r#"{"name": "lint", "description": "Lints a path.", "command": "python3 run.py",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}"#;
    write_tool(&root, "lint", good);
    write_tool(&root, "broken", "{ not json");
    write_tool(
        &root,
        "renamed",
        r#"{"name": "other", "description": "d", "command": "true"}"#,
    );
    write_tool(&root, "silent", r#"{"name": "silent", "command": "true"}"#);
    write_tool(
        &root,
        "nocommand",
        r#"{"name": "nocommand", "description": "d"}"#,
    );
    write_tool(
        &root,
        "array",
        r#"{"name": "array", "description": "d", "command": "true", "parameters": {"type": "array"}}"#,
    );
    write_tool(
        &root,
        "badschema",
        r#"{"name": "badschema", "description": "d", "command": "true", "parameters": {"type": "object", "properties": {"x": {"type": 12}}}}"#,
    );
    std::fs::create_dir_all(root.join(TOOLS_DIR).join("empty")).unwrap();
    std::fs::create_dir_all(root.join(TOOLS_DIR).join(".hidden")).unwrap();

    let (tools, notices) = discover(&root);
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_str()).collect();
    assert_eq!(names, ["lint"]);
    let expect = |folder: &str, reason: &str| {
        let prefix = format!("skipped the custom tool .corvid/tools/{folder}/tool.json: ");
        assert!(
            notices
                .iter()
                .any(|notice| notice.starts_with(&prefix) && notice.contains(reason)),
            "{folder}: {reason} in {notices:#?}"
        );
    };
    expect("broken", "not valid JSON");
    expect("renamed", "`name` is `other` but the folder is `renamed`");
    expect("silent", "`description` is missing");
    expect("nocommand", "`command` is missing");
    expect("array", "must be an object schema");
    expect("badschema", "not a valid JSON Schema");
    expect("empty", "there is no tool.json");
    assert_eq!(notices.len(), 7, "{notices:#?}");

    let spec = tools[0].spec();
    assert_eq!(spec.kind, ToolKind::Mutating);
    assert_eq!(spec.origin.as_deref(), Some("custom"));
    assert_eq!(spec.parameters["required"], json!(["path"]));
}

#[test]
fn arguments_are_checked_against_the_schema() {
    let dir = project();
    let root = root_of(&dir);
    write_tool(
        &root,
        "lint",
        r#"{"name": "lint", "description": "d", "command": "true",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "depth": {"type": "integer", "minimum": 1}},
                           "required": ["path"], "additionalProperties": false}}"#,
    );
    let (tools, _) = discover(&root);
    let tool = &tools[0];
    assert_eq!(
        tool.check(json!({"path": "src"})).unwrap(),
        json!({"path": "src"})
    );
    // Double-encoded arguments are read as the object they encode.
    assert_eq!(
        tool.check(json!(r#"{"path": "src"}"#)).unwrap(),
        json!({"path": "src"})
    );
    let refused = |arguments: Value| tool.check(arguments).unwrap_err().to_string();
    let missing = refused(json!({}));
    assert!(
        missing.starts_with("invalid arguments for `lint`: ") && missing.contains("path"),
        "{missing}"
    );
    let typed = refused(json!({"path": 3}));
    assert!(
        typed.contains("/path") && typed.contains("string"),
        "{typed}"
    );
    let small = refused(json!({"path": "a", "depth": 0}));
    assert!(small.contains("/depth"), "{small}");
    let extra = refused(json!({"path": "a", "colour": "red"}));
    assert!(extra.contains("colour"), "{extra}");
}

#[test]
fn a_folder_that_leads_outside_the_project_is_refused() {
    let dir = project();
    let root = root_of(&dir);
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(
        outside.path().join(MANIFEST),
        r#"{"name": "escape", "description": "d", "command": "true"}"#,
    )
    .unwrap();
    std::fs::create_dir_all(root.join(TOOLS_DIR)).unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join(TOOLS_DIR).join("escape")).unwrap();
    let (tools, notices) = discover(&root);
    assert!(tools.is_empty());
    assert_eq!(
        notices,
        [
            "skipped the custom tool .corvid/tools/escape/tool.json: its folder leads outside the project"
        ]
    );
}

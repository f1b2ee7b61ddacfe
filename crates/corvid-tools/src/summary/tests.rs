use serde_json::json;

use super::*;

#[test]
fn absolute_paths_inside_the_project_become_relative() {
    let project = Path::new("/home/ada/project");
    assert_eq!(
        shown(project, "/home/ada/project/src/main.rs"),
        "src/main.rs"
    );
    assert_eq!(shown(project, "/home/ada/project"), ".");
    assert_eq!(shown(project, "src/lib.rs"), "src/lib.rs");
    assert_eq!(shown(project, "/etc/passwd"), "/etc/passwd");
    assert_eq!(
        shown(project, "/home/ada/project-2/x"),
        "/home/ada/project-2/x"
    );
}

#[test]
fn each_built_in_has_its_line_and_other_tools_have_none() {
    let project = Path::new("/p");
    let line = |tool: &str, arguments| builtin_summary(project, tool, &arguments);
    assert_eq!(
        line("edit", json!({"path": "/p/src/a.rs"})).as_deref(),
        Some("edit src/a.rs")
    );
    assert_eq!(
        line("bash", json!({"command": "cargo test"})).as_deref(),
        Some("$ cargo test")
    );
    assert_eq!(
        line("grep", json!({"pattern": "fn main"})).as_deref(),
        Some("grep fn main")
    );
    assert_eq!(line("mcp__github__search", json!({})), None);
}

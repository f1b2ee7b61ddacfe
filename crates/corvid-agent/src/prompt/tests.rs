use corvid_tools::{ToolKind, ToolSpec};

use super::runs_commands;

fn spec(name: &str, kind: ToolKind) -> ToolSpec {
    ToolSpec::new(name, "", serde_json::json!({"type": "object"}), kind)
}

#[test]
fn the_sandbox_section_follows_the_tools_kind_not_its_name() {
    assert!(runs_commands(
        [
            spec("read", ToolKind::Read),
            spec("shell", ToolKind::Command)
        ]
        .iter()
    ));
    assert!(!runs_commands(
        [
            spec("read", ToolKind::Read),
            spec("mcp__box__bash", ToolKind::Mutating)
        ]
        .iter()
    ));
    assert!(!runs_commands(std::iter::empty()));
}

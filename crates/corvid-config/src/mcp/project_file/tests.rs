use std::collections::BTreeMap;

use pretty_assertions::assert_eq;

use super::*;
use crate::mcp::{McpTransport, read_project_mcp};

fn stdio(command: &str) -> McpEntry {
    McpEntry::Stdio {
        command: command.to_owned(),
        args: vec!["--stdio".to_owned()],
        env: BTreeMap::new(),
    }
}

#[test]
fn an_added_server_reads_back_and_a_removed_one_is_gone() {
    let project = tempfile::tempdir().unwrap();
    let mut file = ProjectFile::open(project.path()).unwrap();
    file.add("docs", &stdio("docs-mcp")).unwrap();
    file.add(
        "remote",
        &McpEntry::Http {
            url: "https://mcp.example/mcp".to_owned(),
            headers: BTreeMap::from([("X-Key".to_owned(), "${KEY}".to_owned())]),
        },
    )
    .unwrap();
    file.save().unwrap();
    let read = read_project_mcp(project.path()).unwrap();
    assert_eq!(read.warnings, Vec::<String>::new());
    assert_eq!(
        read.servers
            .iter()
            .map(|server| server.name.as_str())
            .collect::<Vec<_>>(),
        ["docs", "remote"]
    );
    assert_eq!(
        read.servers[1].transport,
        McpTransport::Http {
            url: "https://mcp.example/mcp".to_owned(),
            headers: BTreeMap::from([("X-Key".to_owned(), "${KEY}".to_owned())]),
            env_headers: BTreeMap::new(),
            bearer_token_env_var: None,
        }
    );

    let mut file = ProjectFile::open(project.path()).unwrap();
    assert!(matches!(
        file.add("docs", &stdio("other")),
        Err(ConfigError::AlreadyDefined { .. })
    ));
    file.remove("docs").unwrap();
    assert!(matches!(
        file.remove("docs"),
        Err(ConfigError::NotDefined { .. })
    ));
    file.save().unwrap();
    let read = read_project_mcp(project.path()).unwrap();
    assert_eq!(read.servers.len(), 1);
    assert_eq!(read.servers[0].name, "remote");
}

#[test]
fn other_keys_and_vs_codes_servers_key_are_kept() {
    let project = tempfile::tempdir().unwrap();
    let path = project.path().join(PROJECT_MCP_FILE);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        &path,
        r#"{"inputs": [], "servers": {"z": {"command": "z"}, "a": {"command": "a"}}}"#,
    )
    .unwrap();
    let mut file = ProjectFile::open(project.path()).unwrap();
    file.add("m", &stdio("m")).unwrap();
    let text = file.render();
    let json: Json = serde_json::from_str(&text).unwrap();
    assert_eq!(json["inputs"], json!([]));
    assert!(json.get("mcpServers").is_none(), "{text}");
    let names: Vec<&String> = json["servers"].as_object().unwrap().keys().collect();
    assert_eq!(names, ["z", "a", "m"], "the order is kept");
}

#[test]
fn a_file_that_is_not_json_is_refused_and_left_alone() {
    let project = tempfile::tempdir().unwrap();
    let path = project.path().join(PROJECT_MCP_FILE);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, "{ not json").unwrap();
    assert!(matches!(
        ProjectFile::open(project.path()),
        Err(ConfigError::Toml { .. })
    ));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{ not json");
}

//! `corvid mcp add|list|remove` through the real binary: the files it writes are the formats
//! Claude Code, Cursor (`.corvid/mcp.json`) and Codex (`config.toml`) use, and `list` starts
//! each server briefly to show its state and tools.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const CORVID: &str = env!("CARGO_BIN_EXE_corvid");

fn corvid(home: &Path, project: &Path) -> Command {
    let mut command = Command::new(CORVID);
    command
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("CORVID_HOME", home.join("corvid"))
        .env("CORVID_KEYRING", "off")
        .env("NO_COLOR", "1")
        .current_dir(project)
        .arg("mcp");
    command
}

fn run(command: &mut Command) -> (bool, String) {
    let Output {
        status,
        stdout,
        stderr,
    } = command.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&stdout),
        String::from_utf8_lossy(&stderr)
    );
    (status.success(), text)
}

/// A Python with the `mcp` SDK, from scripts/test; `None` (with a loud note) outside CI.
fn python() -> Option<PathBuf> {
    match std::env::var_os("CORVID_MCP_PYTHON").filter(|value| !value.is_empty()) {
        Some(python) => Some(PathBuf::from(python)),
        None if std::env::var_os("CI").is_some() => {
            panic!("CORVID_MCP_PYTHON is not set: under CI scripts/test must set it")
        }
        None => {
            eprintln!(
                "\n!!! SKIPPED the part that starts servers: CORVID_MCP_PYTHON is not set (scripts/test sets it)\n"
            );
            None
        }
    }
}

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp/fixture_server.py")
}

#[test]
fn add_list_and_remove_servers_in_both_files() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join(".git")).unwrap();
    let config = home.path().join("corvid/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, "# my settings\ndefault_model = \"grok-4.6\"\n").unwrap();
    let python = python();
    let program = python
        .clone()
        .unwrap_or_else(|| PathBuf::from("python3"))
        .display()
        .to_string();
    let script = fixture().display().to_string();

    let (ok, text) = run(corvid(home.path(), project.path()).args([
        "add",
        "fixture",
        "--env",
        "GIVEN=${SOURCE:-x}",
        "--",
        &program,
        &script,
        "serve",
    ]));
    assert!(ok, "{text}");
    let written: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(project.path().join(".corvid/mcp.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        written,
        serde_json::json!({"mcpServers": {"fixture": {
            "command": program, "args": [script, "serve"], "env": {"GIVEN": "${SOURCE:-x}"}
        }}})
    );

    let (ok, text) = run(corvid(home.path(), project.path()).args([
        "add",
        "remote",
        "--global",
        "--url",
        "http://127.0.0.1:9/mcp",
        "--header",
        "X-Key=${REMOTE_KEY:-none}",
    ]));
    assert!(ok, "{text}");
    let toml_text = std::fs::read_to_string(&config).unwrap();
    assert!(toml_text.starts_with("# my settings\n"), "{toml_text}");
    let table: toml::Table = toml_text.parse().unwrap();
    assert_eq!(
        table["mcp_servers"]["remote"]["url"].as_str(),
        Some("http://127.0.0.1:9/mcp")
    );
    assert_eq!(
        table["mcp_servers"]["remote"]["http_headers"]["X-Key"].as_str(),
        Some("${REMOTE_KEY:-none}")
    );
    let (ok, text) = run(corvid(home.path(), project.path()).args([
        "add",
        "remote",
        "--global",
        "--url",
        "http://127.0.0.1:9/mcp",
    ]));
    assert!(
        !ok && text.contains("already has a server `remote`"),
        "{text}"
    );

    if python.is_some() {
        let (ok, text) = run(corvid(home.path(), project.path()).arg("list"));
        assert!(ok, "{text}");
        assert!(text.contains("fixture (.corvid/mcp.json; stdio:"), "{text}");
        assert!(text.contains("ready, "), "{text}");
        assert!(text.contains("  mcp__fixture__echo\n"), "{text}");
        assert!(
            text.contains("remote (config.toml; http: http://127.0.0.1:9/mcp): failed"),
            "{text}"
        );
    }

    let (ok, text) =
        run(corvid(home.path(), project.path()).args(["remove", "remote", "--global"]));
    assert!(ok, "{text}");
    let toml_text = std::fs::read_to_string(&config).unwrap();
    assert!(!toml_text.contains("mcp_servers"), "{toml_text}");
    assert!(
        toml_text.contains("default_model = \"grok-4.6\""),
        "{toml_text}"
    );
    let (ok, text) = run(corvid(home.path(), project.path()).args(["remove", "fixture"]));
    assert!(ok, "{text}");
    let (ok, text) = run(corvid(home.path(), project.path()).arg("list"));
    assert!(ok, "{text}");
    assert!(text.contains("No MCP servers configured"), "{text}");
}

/// A cloned repository's `.corvid/mcp.json` server is not started, not even by `list`, until
/// `corvid mcp trust` (kept in corvid's data folder); a changed definition is untrusted again.
#[test]
fn a_project_server_waits_for_trust_and_a_changed_one_asks_again() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let marks = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join(".git")).unwrap();
    std::fs::create_dir(project.path().join(".corvid")).unwrap();
    let mark = marks.path().join("mark");
    let write = |touch: &str| {
        std::fs::write(
            project.path().join(".corvid/mcp.json"),
            serde_json::json!({"mcpServers": {"cloned": {
                "command": "sh",
                "args": ["-c", format!("{touch} '{}'", mark.display())],
                "startup_timeout_sec": 10
            }}})
            .to_string(),
        )
        .unwrap();
    };
    write("touch");
    let list = || run(corvid(home.path(), project.path()).arg("list"));

    let (ok, text) = list();
    assert!(ok, "{text}");
    assert!(
        text.contains("cloned (.corvid/mcp.json; stdio: sh -c touch"),
        "{text}"
    );
    assert!(text.contains("not yet trusted"), "{text}");
    assert!(text.contains("corvid mcp trust cloned"), "{text}");
    assert!(!mark.exists(), "an untrusted server ran");

    let (ok, text) = run(corvid(home.path(), project.path()).args(["trust", "cloned"]));
    assert!(ok, "{text}");
    assert!(text.contains("Trusted `cloned`"), "{text}");
    assert!(home.path().join("corvid/mcp-trust.json").exists());
    let (ok, text) = list();
    assert!(ok, "{text}");
    assert!(!text.contains("not yet trusted"), "{text}");
    assert!(mark.exists(), "the trusted server did not start: {text}");

    std::fs::remove_file(&mark).unwrap();
    write("touch -m");
    let (ok, text) = list();
    assert!(ok, "{text}");
    assert!(text.contains("not yet trusted"), "{text}");
    assert!(
        !mark.exists(),
        "a changed server ran without being trusted again"
    );

    let (ok, text) = run(corvid(home.path(), project.path()).args(["trust", "nothere"]));
    assert!(
        !ok && text.contains("defines no server `nothere`"),
        "{text}"
    );
}

/// The npm MCP servers scripts/test installs (`CORVID_MCP_SERVERS`), if any.
fn node_modules() -> Option<PathBuf> {
    match std::env::var_os("CORVID_MCP_SERVERS").filter(|value| !value.is_empty()) {
        Some(modules) => Some(PathBuf::from(modules)),
        None if std::env::var_os("CI").is_some() => {
            panic!("CORVID_MCP_SERVERS is not set: under CI scripts/test must set it")
        }
        None => {
            eprintln!("\n!!! SKIPPED: CORVID_MCP_SERVERS is not set (scripts/test sets it)\n");
            None
        }
    }
}

#[test]
fn a_claude_code_style_npx_server_in_the_project_starts_in_its_sandbox() {
    let Some(modules) = node_modules() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join(".git")).unwrap();
    // The project has the server as a dependency, as many do; `npx -y` runs its local bin.
    std::os::unix::fs::symlink(&modules, project.path().join("node_modules")).unwrap();
    std::fs::create_dir(project.path().join(".corvid")).unwrap();
    std::fs::write(
        project.path().join(".corvid/mcp.json"),
        r#"{"mcpServers": {"everything": {"command": "npx", "args": ["-y", "mcp-server-everything"]}}}"#,
    )
    .unwrap();
    let (ok, text) = run(corvid(home.path(), project.path()).args(["trust", "everything"]));
    assert!(ok, "{text}");
    let (ok, text) = run(corvid(home.path(), project.path()).arg("list"));
    assert!(ok, "{text}");
    assert!(
        text.contains("everything (.corvid/mcp.json; stdio: npx -y mcp-server-everything): ready,"),
        "{text}"
    );
    assert!(text.contains("  mcp__everything__echo\n"), "{text}");
}

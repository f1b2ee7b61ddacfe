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
    let python = corvid_test_support::installed::mcp_python();
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
    assert!(
        text.contains("not trusted yet, not started: `corvid mcp trust"),
        "{text}"
    );
    assert!(text.contains("corvid mcp trust cloned"), "{text}");
    assert!(!mark.exists(), "an untrusted server ran");

    let (ok, text) = run(corvid(home.path(), project.path()).args(["trust", "cloned"]));
    assert!(ok, "{text}");
    assert!(text.contains("Trusted `cloned`"), "{text}");
    assert!(home.path().join("corvid/mcp-trust.json").exists());
    let (ok, text) = list();
    assert!(ok, "{text}");
    assert!(
        !text.contains("not trusted yet, not started: `corvid mcp trust"),
        "{text}"
    );
    assert!(mark.exists(), "the trusted server did not start: {text}");

    std::fs::remove_file(&mark).unwrap();
    write("touch -m");
    let (ok, text) = list();
    assert!(ok, "{text}");
    assert!(
        text.contains("not trusted yet, not started: `corvid mcp trust"),
        "{text}"
    );
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

/// The OAuth fixture (the Python SDK's authorization server and a bearer-protected MCP
/// server); the child ends with the guard.
struct OAuthFixture {
    child: std::process::Child,
    rs: u16,
    log: PathBuf,
}

impl Drop for OAuthFixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn oauth_fixture(python: &Path, folder: &Path) -> OAuthFixture {
    use std::io::BufRead;
    let log = folder.join("events.jsonl");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp/oauth_server.py");
    let mut child = Command::new(python)
        .arg(script)
        .arg("--log")
        .arg(&log)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let ports: serde_json::Value = serde_json::from_str(&line).expect("the fixture's ports");
    OAuthFixture {
        child,
        rs: u16::try_from(ports["rs"].as_u64().unwrap()).unwrap(),
        log,
    }
}

/// `corvid mcp login docs --no-browser`, with this test as the browser: it reads the URL the
/// command prints and GETs it (the authorization server redirects to corvid's callback).
/// Returns the exit status, stdout and stderr.
fn login_in_test_browser(mut command: Command) -> (bool, String, String) {
    use std::io::{BufRead, Read};
    let mut child = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    let url = loop {
        let mut line = String::new();
        if stderr.read_line(&mut line).unwrap() == 0 {
            break None;
        }
        seen.push_str(&line);
        if let Some(url) = line.trim().strip_prefix("http://") {
            break Some(format!("http://{url}"));
        }
    };
    let browser = url.map(|url| {
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async {
                let client = reqwest::Client::builder().no_proxy().build().unwrap();
                client
                    .get(url)
                    .send()
                    .await
                    .map(|response| response.status())
            })
        })
    });
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    seen.push_str(&rest);
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let status = child.wait().unwrap();
    if let Some(browser) = browser {
        let page = browser.join().unwrap();
        assert!(page.is_ok(), "the browser got no page: {page:?}");
    }
    (status.success(), stdout, seen)
}

#[test]
fn login_list_and_logout_of_an_oauth_server() {
    let Some(python) = corvid_test_support::installed::mcp_python() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join(".git")).unwrap();
    let fixture = oauth_fixture(&python, home.path());
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = home.path().join("corvid/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(
        &config,
        format!(
            "mcp_oauth_callback_port = {port}\n\n[mcp_servers.docs]\nurl = \"http://127.0.0.1:{}/mcp\"\nstartup_timeout_sec = 20\n",
            fixture.rs
        ),
    )
    .unwrap();
    let list = || run(corvid(home.path(), project.path()).arg("list"));

    let (ok, text) = list();
    assert!(ok, "{text}");
    assert!(
        text.contains("docs (config.toml; http: http://")
            && text.contains("needs sign-in: `corvid mcp login docs`"),
        "{text}"
    );

    let mut command = corvid(home.path(), project.path());
    command
        .args(["login", "docs", "--no-browser", "--timeout", "60"])
        .env("RUST_LOG", "trace");
    let (ok, stdout, stderr) = login_in_test_browser(command);
    assert!(ok, "{stdout}{stderr}");
    assert!(
        stdout.contains("Signed in to `docs` (a client registered just now; scopes mcp"),
        "{stdout}"
    );
    assert!(
        stdout.contains(&home.path().join("corvid/env").display().to_string()),
        "{stdout}"
    );
    assert!(
        stderr.contains("Sign in to the MCP server `docs` in your browser"),
        "{stderr}"
    );
    let events = std::fs::read_to_string(&fixture.log).unwrap();
    assert!(
        events.contains(&format!(
            "\"redirect_uris\": [\"http://127.0.0.1:{port}/callback\"]"
        )),
        "the global callback port is used exactly: {events}"
    );

    // The tokens: only in the env file (0600), in no output.
    let env = std::fs::read_to_string(home.path().join("corvid/env")).unwrap();
    let tokens: Vec<String> = env
        .split(['"', '\''])
        .filter(|part| part.starts_with("at-") || part.starts_with("rt-"))
        .map(str::to_owned)
        .collect();
    assert_eq!(tokens.len(), 2, "an access and a refresh token: {env}");
    corvid_test_support::modes::assert_owner_only(&home.path().join("corvid/env"));
    let (ok, text) = list();
    assert!(ok, "{text}");
    assert!(
        text.contains("docs (config.toml; http: http://") && text.contains("ready, 2 tools"),
        "{text}"
    );
    for token in &tokens {
        assert!(!stdout.contains(token) && !stderr.contains(token) && !text.contains(token));
    }

    let (ok, text) = run(corvid(home.path(), project.path()).args(["logout", "docs"]));
    assert!(ok && text.contains("Signed out of `docs`"), "{text}");
    let env = std::fs::read_to_string(home.path().join("corvid/env")).unwrap();
    assert!(!env.contains("CORVID_MCP_OAUTH_"), "{env}");
    let (ok, text) = list();
    assert!(ok && text.contains("needs sign-in"), "{text}");
    let (ok, text) = run(corvid(home.path(), project.path()).args(["logout", "docs"]));
    assert!(ok && text.contains("had no stored sign-in"), "{text}");
}

#[test]
fn login_refuses_what_it_cannot_sign_in_to() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join(".git")).unwrap();
    std::fs::create_dir(project.path().join(".corvid")).unwrap();
    std::fs::write(
        project.path().join(".corvid/mcp.json"),
        r#"{"mcpServers": {"cloned": {"type": "http", "url": "http://127.0.0.1:9/mcp"}}}"#,
    )
    .unwrap();
    let config = home.path().join("corvid/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, "[mcp_servers.local]\ncommand = \"true\"\n").unwrap();
    let login =
        |name: &str| run(corvid(home.path(), project.path()).args(["login", name, "--no-browser"]));
    let (ok, text) = login("local");
    assert!(
        !ok && text.contains("`local` is a local (stdio) server"),
        "{text}"
    );
    let (ok, text) = login("cloned");
    assert!(!ok && text.contains("corvid mcp trust cloned"), "{text}");
    let (ok, text) = login("nothere");
    assert!(!ok && text.contains("no MCP server `nothere`"), "{text}");
}

#[test]
fn a_claude_code_style_npx_server_in_the_project_starts_in_its_sandbox() {
    let Some(modules) = corvid_test_support::installed::mcp_servers() else {
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

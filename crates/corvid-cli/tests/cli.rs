//! The `corvid` binary as a user runs it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use corvid_test_support::{MockUpstream, Reply};
use futures_util::StreamExt;

const CORVID: &str = env!("CARGO_BIN_EXE_corvid");

fn corvid(home: &Path) -> Command {
    let mut command = Command::new(CORVID);
    command
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("CORVID_HOME", home)
        .env("NO_COLOR", "1");
    command
}

fn run(command: &mut Command) -> Output {
    command.stdin(Stdio::null()).output().unwrap()
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn start_server(home: &Path, upstream: &str) -> Server {
    let port = free_port();
    let child = corvid(home)
        .args(["serve", "--port", &port.to_string(), "--upstream", upstream])
        .env("XAI_API_KEY", "upstream-key")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let server = Server { child, port };
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    for _ in 0..200 {
        if let Ok(response) = client
            .get(format!("http://127.0.0.1:{port}/healthz"))
            .send()
            .await
            && response.status() == 200
        {
            return server;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("corvid serve never became healthy");
}

/// Waits, off the runtime, for the server to exit, and expects a clean exit.
async fn exits_cleanly(mut server: Server) {
    let status = tokio::task::spawn_blocking(move || {
        let status = server.child.wait().unwrap();
        (status, server)
    })
    .await
    .unwrap()
    .0;
    assert!(status.success(), "{status:?}");
}

fn terminate(child: &Child) {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn every_command_has_help() {
    let home = tempfile::tempdir().unwrap();
    for args in [
        &["--help"][..],
        &["serve", "--help"],
        &["login", "--help"],
        &["login", "xai", "--help"],
        &["logout", "--help"],
        &["status", "--help"],
        &["zed-config", "--help"],
    ] {
        let output = run(corvid(home.path()).args(args));
        assert!(output.status.success(), "{args:?}");
        let text = String::from_utf8(output.stdout).unwrap();
        assert!(text.contains("Usage:"), "{args:?}: {text}");
    }
}

#[test]
fn serve_refuses_a_public_bind_without_allow_remote() {
    let home = tempfile::tempdir().unwrap();
    for host in ["0.0.0.0", "::"] {
        let output = run(corvid(home.path()).args(["serve", "--host", host, "--port", "0"]));
        assert!(!output.status.success(), "{host}");
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert!(stderr.contains("CORVID_ALLOW_REMOTE"), "{stderr}");
    }
}

#[test]
fn invalid_settings_name_the_key() {
    let home = tempfile::tempdir().unwrap();
    let output = run(corvid(home.path())
        .args(["serve"])
        .env("SUPERGROK_ZED_PORT", "http"));
    assert!(!output.status.success());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains("`port`") && stderr.contains("SUPERGROK_ZED_PORT"),
        "{stderr}"
    );
}

#[test]
fn zed_config_prints_mergeable_settings() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("config.toml"), "port = 9123\n").unwrap();
    let output = run(corvid(home.path()).args(["zed-config", "--prompt-format", "codestral"]));
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap();
    assert_eq!(
        json["edit_predictions"]["open_ai_compatible_api"]["api_url"],
        "http://127.0.0.1:9123/v1/completions"
    );
    assert_eq!(
        json["edit_predictions"]["open_ai_compatible_api"]["prompt_format"],
        "codestral"
    );
}

#[test]
fn status_never_prints_a_secret() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("env"),
        "XAI_API_KEY=xai-secret-key-value\nXAI_ACCESS_TOKEN=secret-access\nXAI_REFRESH_TOKEN=secret-refresh\n",
    )
    .unwrap();
    for mode in ["api_key", "oauth"] {
        let output = run(corvid(home.path())
            .arg("status")
            .env("CORVID_AUTH_MODE", mode));
        assert!(output.status.success(), "{mode}");
        let text =
            String::from_utf8(output.stdout).unwrap() + &String::from_utf8(output.stderr).unwrap();
        assert!(text.contains(mode), "{text}");
        assert!(!text.contains("secret"), "{mode}: {text}");
    }
}

#[tokio::test]
async fn sigterm_stops_accepting_lets_streams_finish_and_frees_the_port() {
    let upstream = MockUpstream::start().await;
    let (feed, reply) = Reply::fed();
    upstream.enqueue("/v1/chat/completions", reply);
    let home = tempfile::tempdir().unwrap();
    let server = start_server(home.path(), &upstream.base_url()).await;
    let port = server.port;

    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let response = client
        .post(format!("http://127.0.0.1:{port}/v1/chat/completions"))
        .body(r#"{"model":"grok","stream":true,"messages":[]}"#)
        .send()
        .await
        .unwrap();
    let mut body = response.bytes_stream();
    feed.event(r#"{"choices":[{"index":0,"delta":{"content":"a"}}]}"#);
    body.next().await.unwrap().unwrap();

    terminate(&server.child);
    // New connections are refused once the listener has closed.
    let mut refused = false;
    for _ in 0..200 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            refused = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(refused, "still accepting after SIGTERM");

    // The stream in flight still completes.
    feed.event("[DONE]");
    drop(feed);
    let mut rest = Vec::new();
    while let Some(chunk) = body.next().await {
        rest.extend_from_slice(&chunk.unwrap());
    }
    assert_eq!(String::from_utf8(rest).unwrap(), "data: [DONE]\n\n");

    exits_cleanly(server).await;
    TcpListener::bind(("127.0.0.1", port)).expect("the port is free again");
}

#[tokio::test]
async fn every_answer_given_before_sigterm_is_in_the_ledger() {
    const REQUESTS: usize = 20;
    let upstream = MockUpstream::start().await;
    for _ in 0..REQUESTS {
        upstream.enqueue(
            "/v1/chat/completions",
            Reply::ok(serde_json::json!({
                "object": "chat.completion",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
            })),
        );
    }
    let home = tempfile::tempdir().unwrap();
    let server = start_server(home.path(), &upstream.base_url()).await;
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    for _ in 0..REQUESTS {
        let response = client
            .post(format!(
                "http://127.0.0.1:{}/v1/chat/completions",
                server.port
            ))
            .body(r#"{"model":"grok","messages":[{"role":"user","content":"hi"}]}"#)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        response.bytes().await.unwrap();
    }

    // Stop right after the last answer: its row is written off the serving thread, after the
    // bytes went out, and must still land before the process exits.
    terminate(&server.child);
    exits_cleanly(server).await;

    let usage = run(corvid(home.path()).args(["usage", "--json"]));
    assert!(usage.status.success(), "{usage:?}");
    let rows: serde_json::Value = serde_json::from_slice(&usage.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    let total = |key: &str| -> u64 { rows.iter().map(|row| row[key].as_u64().unwrap()).sum() };
    assert_eq!(total("requests"), REQUESTS as u64, "{rows:?}");
    assert_eq!(total("input"), 7 * REQUESTS as u64);
    assert_eq!(total("output"), 3 * REQUESTS as u64);
}

/// A port with a listener on it (kept while the returned listener lives).
fn occupied_port() -> (TcpListener, u16) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    (listener, port)
}

/// Issue 10, seen as a new user: the help's first line lists 5 of the 11 commands. It names
/// either none of them or all.
#[test]
fn the_help_first_line_names_no_command_or_every_command() {
    let home = tempfile::tempdir().unwrap();
    let output = run(corvid(home.path()).arg("--help"));
    let text = String::from_utf8(output.stdout).unwrap();
    let first = text.lines().next().unwrap().to_owned();
    let commands: Vec<&str> = text
        .lines()
        .skip_while(|line| !line.starts_with("Commands:"))
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .collect();
    assert!(commands.len() >= 10, "{commands:?}");
    // A list of commands (`…: serve, login, …`) must be the whole list.
    let listed: Vec<&str> = first
        .rsplit(':')
        .next()
        .unwrap()
        .split(',')
        .map(str::trim)
        .filter(|item| commands.contains(item))
        .collect();
    assert!(
        listed.len() < 2 || listed.len() == commands.len(),
        "first line lists {} of {} commands: {first}",
        listed.len(),
        commands.len()
    );
}

/// Issue 10, seen as a new user: `serve`'s log has no colour codes when stderr is not a
/// terminal, does not call xAI "ready" right after saying it has no credential, and
/// `--allow-remote` is announced loudly.
#[test]
fn serve_logs_plainly_and_consistently() {
    let home = tempfile::tempdir().unwrap();
    let (_listener, port) = occupied_port();
    let output = run(corvid(home.path()).env_remove("NO_COLOR").args([
        "serve",
        "--port",
        &port.to_string(),
        "--allow-remote",
    ]));
    assert!(!output.status.success(), "the port was taken");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        !stderr.contains('\u{1b}'),
        "ANSI codes in a pipe: {stderr:?}"
    );
    // Nothing connected: the three ways to connect a provider (issue 23's first run).
    assert!(
        stderr.contains("corvid has no provider to answer with yet"),
        "{stderr}"
    );
    assert!(
        !stderr
            .lines()
            .any(|line| line.contains("provider ready") && line.contains("xai")),
        "{stderr}"
    );
    assert!(stderr.contains("WARNING: remote access is on"), "{stderr}");
}

/// Issue 10, seen as a new user: `corvid status` says whether a gateway answers on the
/// configured port and which provider keys are present (never their values).
#[tokio::test]
async fn status_shows_the_gateway_and_the_keys() {
    let upstream = MockUpstream::start().await;
    let home = tempfile::tempdir().unwrap();
    let status = |port: u16| {
        let home = home.path().to_owned();
        tokio::task::spawn_blocking(move || {
            let output = run(corvid(&home)
                .arg("status")
                .env("CORVID_PORT", port.to_string())
                .env("CORVID_KEYRING", "off")
                .env("OPENAI_API_KEY", "sk-openai-value"));
            assert!(output.status.success());
            String::from_utf8(output.stdout).unwrap()
        })
    };
    let text = status(free_port()).await.unwrap();
    assert!(text.contains("gateway:       not running"), "{text}");
    assert!(
        text.contains("openai key:    present (OPENAI_API_KEY"),
        "{text}"
    );
    assert!(
        text.contains("anthropic key: missing (set ANTHROPIC_API_KEY)"),
        "{text}"
    );
    assert!(
        text.contains("gemini key:    missing (set GEMINI_API_KEY or GOOGLE_API_KEY)"),
        "{text}"
    );
    assert!(!text.contains("sk-openai-value"), "{text}");

    let server = start_server(home.path(), &upstream.base_url()).await;
    let text = status(server.port).await.unwrap();
    assert!(text.contains("gateway:       running at"), "{text}");
}

/// Issue 10, item 21: after Zed answers 401 to the stored sign-in, `corvid status` no longer
/// says "signed in" and the dead sign-in is gone from the env file.
#[tokio::test]
async fn status_after_a_refused_zed_sign_in_says_signed_out_and_clears_it() {
    use corvid_test_support::zed_cloud::{ACCOUNT_TOKEN, MockZedCloud, USER_ID};
    let cloud = MockZedCloud::start().await;
    cloud.revoke_account();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        format!("[providers.zed]\nbase_url = \"{}\"\n", cloud.base_url()),
    )
    .unwrap();
    let env_file = home.path().join("env");
    std::fs::write(
        &env_file,
        format!("ZED_USER_ID={USER_ID}\nZED_ACCESS_TOKEN='{ACCOUNT_TOKEN}'\n"),
    )
    .unwrap();
    let path = home.path().to_owned();
    let output = tokio::task::spawn_blocking(move || {
        run(corvid(&path)
            .arg("status")
            .env("CORVID_PORT", free_port().to_string())
            .env("CORVID_KEYRING", "off"))
    })
    .await
    .unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("zed: not signed in"), "{text}");
    assert!(text.contains("corvid login zed"), "{text}");
    let left = std::fs::read_to_string(&env_file).unwrap();
    assert!(!left.contains("ZED_ACCESS_TOKEN"), "{left}");
}

/// Issue 10, seen as a new user: `corvid models` says Zed needs `corvid login zed`, not that
/// it is "not declared in config.toml".
#[test]
fn models_say_how_to_set_up_zed() {
    let home = tempfile::tempdir().unwrap();
    let output = run(corvid(home.path())
        .arg("models")
        .env("CORVID_KEYRING", "off"));
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    let zed = text.lines().find(|line| line.starts_with("zed/")).unwrap();
    assert!(zed.contains("corvid login zed"), "{zed}");
    assert!(!text.contains("not declared in config.toml"), "{text}");
}

/// Issue 10, seen as a new user: every flag of every command is documented in the README.
#[test]
fn every_flag_is_in_the_readme() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .unwrap();
    let home = tempfile::tempdir().unwrap();
    for command in [
        &["serve"][..],
        &["chat"],
        &["exec"],
        &["usage"],
        &["setup"],
        &["zed-config"],
        &["login", "xai"],
    ] {
        let output = run(corvid(home.path()).args(command).arg("--help"));
        let text = String::from_utf8(output.stdout).unwrap();
        for flag in text
            .split_whitespace()
            .filter(|word| word.starts_with("--"))
            .map(|word| word.trim_end_matches(|c: char| !c.is_ascii_alphanumeric()))
            .filter(|flag| !matches!(*flag, "--help" | "--version"))
        {
            let documented = readme.match_indices(flag).any(|(at, _)| {
                readme[at + flag.len()..]
                    .chars()
                    .next()
                    .is_none_or(|next| !next.is_ascii_alphanumeric() && next != '-')
            });
            assert!(documented, "{command:?} {flag} is not in README.md");
        }
    }
}

/// Issue 11, item 5: `corvid models` shows each model's context window where known: the
/// configured one, else the catalog's.
#[test]
fn models_show_their_context_window() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        "[context_windows]\n\"xai/grok-4.5\" = 123456\n",
    )
    .unwrap();
    let output = run(corvid(home.path())
        .arg("models")
        .env("CORVID_KEYRING", "off"));
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    let line = |name: &str| {
        text.lines()
            .find(|line| line.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no {name} in {text}"))
            .to_owned()
    };
    assert!(line("MODEL").contains("WINDOW"), "{text}");
    assert!(line("xai/grok-4.5").contains(" 123456 "), "{text}");
    assert!(line("xai/grok-4").contains(" 256000 "), "{text}");
    // Issue 22 item 6: the catalog's output limit, price and capabilities.
    assert!(line("MODEL").contains("$/M IN/OUT"), "{text}");
    let grok = line("xai/grok-4");
    assert!(
        grok.contains(" 64000 ") && grok.contains(" 3/15 "),
        "{text}"
    );
    assert!(grok.contains(" t.r "), "{text}");
    assert!(
        line("xai/grok-4-fast-reasoning").contains(" 2000000 "),
        "{text}"
    );
}

//! OAuth sign-in against a real MCP resource server and authorization server nobody here wrote:
//! the official Python SDK's (`tests/mcp/oauth_server.py` wires them to an in-memory provider
//! whose /authorize approves at once). The test plays the browser: it GETs the authorization
//! URL, which redirects to corvid's loopback callback.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use corvid_auth::McpSignInStore;
use corvid_config::{McpScope, McpServer, parse_mcp_json};
use corvid_mcp::oauth::{LoginOptions, McpLoginError, Registration, login, logout};
use corvid_mcp::{McpEnvironment, McpManager, OAuthStore, ServerState};
use corvid_tools::{Cancellation, Sandbox};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::support::{free_port, python, tools};

/// The SDK's servers, in one child process.
struct Fixture {
    _child: tokio::process::Child,
    rs: u16,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Fixture {
    async fn start(python: &Path, args: &[&str]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("events.jsonl");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp/oauth_server.py");
        let mut child = tokio::process::Command::new(python)
            .arg(script)
            .arg("--log")
            .arg(&log)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
            .await
            .expect("the OAuth fixture did not start within a minute")
            .unwrap()
            .expect("the OAuth fixture ended before it listened");
        let ports: Value = serde_json::from_str(&line).unwrap();
        Self {
            _child: child,
            rs: u16::try_from(ports["rs"].as_u64().unwrap()).unwrap(),
            log,
            _dir: dir,
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.rs)
    }

    /// The authorization server's events so far.
    fn events(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    fn count(&self, event: &str, grant: Option<&str>) -> usize {
        self.events()
            .iter()
            .filter(|found| found["event"] == event)
            .filter(|found| grant.is_none_or(|grant| found["grant"] == grant))
            .count()
    }
}

/// A config.toml server `docs` at `url` with `extra` keys.
fn global_server(url: &str, extra: Value) -> McpServer {
    let mut entry = json!({"type": "http", "url": url});
    for (key, value) in extra.as_object().unwrap() {
        entry[key] = value.clone();
    }
    parse_mcp_json(
        &json!({"mcpServers": {"docs": entry}}).to_string(),
        Path::new("/home/u/.config/corvid/config.toml"),
        McpScope::Global,
    )
    .unwrap()
    .servers
    .remove(0)
}

fn project_server(url: &str) -> McpServer {
    parse_mcp_json(
        &json!({"mcpServers": {"docs": {"type": "http", "url": url}}}).to_string(),
        Path::new("/p/.corvid/mcp.json"),
        McpScope::Project,
    )
    .unwrap()
    .servers
    .remove(0)
}

/// A sign-in store in `home` and the environment of sessions in `project`.
fn environment(home: &Path, project: &Path) -> McpEnvironment {
    McpEnvironment {
        project: project.to_path_buf(),
        sandbox: Sandbox::off(),
        lookup: Arc::new(|_| None),
        protected: Arc::new(Vec::new()),
        oauth: Some(store(home)),
    }
}

fn store(home: &Path) -> OAuthStore {
    OAuthStore::new(McpSignInStore::file_only(home.join("env")))
}

/// Options whose "browser" GETs the authorization URL (following its redirect to corvid's
/// callback) and sends the URL it was given to `seen`.
fn browser(seen: Option<tokio::sync::oneshot::Sender<String>>) -> LoginOptions {
    LoginOptions {
        callback_port: None,
        timeout: Duration::from_secs(60),
        open: Box::new(move |url: &str| {
            let url = url.to_owned();
            if let Some(seen) = seen {
                let _ = seen.send(url.clone());
            }
            tokio::spawn(async move {
                let client = reqwest::Client::builder().no_proxy().build().unwrap();
                let _ = client.get(url).send().await;
            });
        }),
    }
}

async fn state_of(manager: &McpManager) -> ServerState {
    tools(manager).await;
    manager.statuses().remove(0).state
}

async fn call(manager: &McpManager, tool: &str, arguments: Value) -> corvid_mcp::McpOutput {
    manager.call(tool, arguments, Cancellation::never()).await
}

fn env_text(home: &Path) -> String {
    std::fs::read_to_string(home.join("env")).unwrap_or_default()
}

#[tokio::test]
async fn login_registers_signs_in_and_a_session_calls_tools_with_the_tokens() {
    let Some(python) = python() else { return };
    let fixture = Fixture::start(&python, &[]).await;
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = global_server(&fixture.url(), json!({}));
    let environment = environment(home.path(), project.path());
    let (seen, url) = tokio::sync::oneshot::channel();

    let outcome = login(&server, &environment, browser(Some(seen)))
        .await
        .unwrap();
    assert_eq!(outcome.registration, Registration::Registered);
    assert_eq!(outcome.env_file, home.path().join("env"));
    // PKCE and state are in the URL the browser was sent to.
    let url = url::Url::parse(&url.await.unwrap()).unwrap();
    let query: std::collections::HashMap<_, _> = url.query_pairs().into_owned().collect();
    assert_eq!(query["code_challenge_method"], "S256");
    assert!(query.contains_key("code_challenge") && query.contains_key("state"));
    assert_eq!(query["redirect_uri"], outcome.redirect_uri);
    assert_eq!(fixture.count("register", None), 1);
    assert_eq!(fixture.count("token", Some("authorization_code")), 1);

    // Stored in the env file, 0600; the manager's session uses it.
    let text = env_text(home.path());
    assert!(text.contains("CORVID_MCP_OAUTH_"), "{text}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(home.path().join("env"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let manager = McpManager::new(vec![server], 100, environment);
    assert_eq!(state_of(&manager).await, ServerState::Ready);
    let output = call(&manager, "mcp__docs__echo", json!({"text": "signed in"})).await;
    assert!(!output.is_error, "{}", output.text);
    assert_eq!(output.text, "signed in");
    let registered = fixture
        .events()
        .into_iter()
        .find(|event| event["event"] == "register")
        .unwrap();
    let whoami = call(&manager, "mcp__docs__whoami", json!({})).await;
    assert_eq!(Value::from(whoami.text), registered["client_id"]);
    manager.shutdown().await;
}

#[tokio::test]
async fn a_server_without_a_sign_in_needs_one_and_says_how() {
    let Some(python) = python() else { return };
    let fixture = Fixture::start(&python, &[]).await;
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let manager = McpManager::new(
        vec![global_server(&fixture.url(), json!({}))],
        100,
        environment(home.path(), project.path()),
    );
    assert_eq!(state_of(&manager).await, ServerState::NeedsSignIn);
    let notices = manager.take_notices();
    assert!(
        notices
            .iter()
            .any(|notice| notice.contains("`docs`")
                && notice.contains("run `corvid mcp login docs`")),
        "{notices:?}"
    );
    let output = call(&manager, "mcp__docs__echo", json!({"text": "x"})).await;
    assert!(output.is_error);

    // `oauth = false`: the same 401 is a failure that says so.
    let manager = McpManager::new(
        vec![global_server(&fixture.url(), json!({"oauth": false}))],
        100,
        environment(home.path(), project.path()),
    );
    let ServerState::Failed(reason) = state_of(&manager).await else {
        panic!("expected a failure");
    };
    assert!(reason.contains("oauth = false"), "{reason}");
}

#[tokio::test]
async fn an_expired_access_token_is_refreshed_and_the_new_tokens_stored() {
    let Some(python) = python() else { return };
    let fixture = Fixture::start(&python, &["--access-ttl", "2"]).await;
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = global_server(&fixture.url(), json!({}));
    let environment = environment(home.path(), project.path());
    login(&server, &environment, browser(None)).await.unwrap();
    let before = env_text(home.path());
    tokio::time::sleep(Duration::from_millis(2500)).await;

    let manager = McpManager::new(vec![server], 100, environment);
    assert_eq!(state_of(&manager).await, ServerState::Ready);
    let output = call(
        &manager,
        "mcp__docs__echo",
        json!({"text": "after refresh"}),
    )
    .await;
    assert_eq!(output.text, "after refresh");
    assert!(fixture.count("token", Some("refresh_token")) >= 1);
    let after = env_text(home.path());
    assert_ne!(before, after, "the rotated tokens are stored");
    manager.shutdown().await;
}

#[tokio::test]
async fn a_refused_refresh_needs_a_sign_in_again() {
    let Some(python) = python() else { return };
    let fixture = Fixture::start(&python, &["--access-ttl", "1", "--refuse-refresh"]).await;
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = global_server(&fixture.url(), json!({}));
    let environment = environment(home.path(), project.path());
    login(&server, &environment, browser(None)).await.unwrap();
    assert!(store(home.path()).is_signed_in(&server, project.path(), &fixture.url()));
    tokio::time::sleep(Duration::from_millis(1500)).await;

    let manager = McpManager::new(vec![server.clone()], 100, environment);
    assert_eq!(state_of(&manager).await, ServerState::NeedsSignIn);
    assert_eq!(fixture.count("refresh_refused", None), 1);
    assert!(
        !store(home.path()).is_signed_in(&server, project.path(), &fixture.url()),
        "the refused tokens are dropped"
    );
}

#[tokio::test]
async fn a_configured_client_id_skips_registration_and_the_fixed_port_is_used_exactly() {
    let Some(python) = python() else { return };
    let port = free_port();
    let redirect = format!("http://127.0.0.1:{port}/callback");
    let client = format!("corvid-test={redirect}");
    let fixture = Fixture::start(&python, &["--no-registration", "--client", &client]).await;
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = global_server(
        &fixture.url(),
        json!({"oauth": {"client_id": "corvid-test", "callback_port": port}}),
    );
    let environment = environment(home.path(), project.path());
    let outcome = login(&server, &environment, browser(None)).await.unwrap();
    assert_eq!(outcome.registration, Registration::Configured);
    assert_eq!(outcome.redirect_uri, redirect);
    assert_eq!(fixture.count("register", None), 0);
    let authorize = fixture
        .events()
        .into_iter()
        .find(|event| event["event"] == "authorize")
        .unwrap();
    assert_eq!(authorize["client_id"], "corvid-test");
    assert_eq!(authorize["redirect_uri"], redirect.as_str());

    let manager = McpManager::new(vec![server], 100, environment);
    let whoami = call(
        &{
            tools(&manager).await;
            manager.clone()
        },
        "mcp__docs__whoami",
        json!({}),
    )
    .await;
    assert_eq!(whoami.text, "corvid-test");
    manager.shutdown().await;
}

#[tokio::test]
async fn the_global_callback_port_is_used_when_the_server_names_none() {
    let Some(python) = python() else { return };
    let fixture = Fixture::start(&python, &[]).await;
    let home = tempfile::tempdir().unwrap();
    let port = free_port();
    let server = global_server(&fixture.url(), json!({}));
    let mut options = browser(None);
    options.callback_port = Some(port);
    let outcome = login(&server, &environment(home.path(), home.path()), options)
        .await
        .unwrap();
    assert_eq!(
        outcome.redirect_uri,
        format!("http://127.0.0.1:{port}/callback")
    );
    let register = fixture
        .events()
        .into_iter()
        .find(|event| event["event"] == "register")
        .unwrap();
    assert_eq!(register["redirect_uris"], json!([outcome.redirect_uri]));
}

#[tokio::test]
async fn logout_removes_the_tokens() {
    let Some(python) = python() else { return };
    let fixture = Fixture::start(&python, &[]).await;
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = global_server(&fixture.url(), json!({}));
    let environment = environment(home.path(), project.path());
    login(&server, &environment, browser(None)).await.unwrap();
    assert!(logout(&server, &environment).unwrap());
    assert!(!env_text(home.path()).contains("CORVID_MCP_OAUTH_"));
    assert!(!logout(&server, &environment).unwrap(), "nothing left");
    let manager = McpManager::new(vec![server], 100, environment);
    assert_eq!(state_of(&manager).await, ServerState::NeedsSignIn);
}

#[tokio::test]
async fn a_project_server_does_not_get_the_tokens_of_another_definition() {
    let Some(python) = python() else { return };
    let fixture = Fixture::start(&python, &[]).await;
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let environment = environment(home.path(), project.path());
    login(
        &global_server(&fixture.url(), json!({})),
        &environment,
        browser(None),
    )
    .await
    .unwrap();
    // The same name and URL, defined by a project's file: not signed in.
    let manager = McpManager::new(vec![project_server(&fixture.url())], 100, environment);
    assert_eq!(state_of(&manager).await, ServerState::NeedsSignIn);
}

#[tokio::test]
async fn a_browser_that_never_comes_back_times_out_saying_so() {
    let Some(python) = python() else { return };
    let fixture = Fixture::start(&python, &[]).await;
    let home = tempfile::tempdir().unwrap();
    let options = LoginOptions {
        callback_port: None,
        timeout: Duration::from_secs(1),
        open: Box::new(|_| {}),
    };
    let server = global_server(&fixture.url(), json!({}));
    let error = login(&server, &environment(home.path(), home.path()), options)
        .await
        .unwrap_err();
    assert!(matches!(error, McpLoginError::TimedOut { .. }), "{error}");
    let message = error.to_string();
    assert!(
        message.contains("no answer from the browser") && message.contains("corvid mcp login docs"),
        "{message}"
    );
    assert!(!env_text(home.path()).contains("CORVID_MCP_OAUTH_"));
}

#[tokio::test]
async fn a_callback_with_another_state_is_refused() {
    let Some(python) = python() else { return };
    let fixture = Fixture::start(&python, &[]).await;
    let home = tempfile::tempdir().unwrap();
    let options = LoginOptions {
        callback_port: None,
        timeout: Duration::from_secs(30),
        open: Box::new(|url: &str| {
            let url = url::Url::parse(url).unwrap();
            let redirect = url
                .query_pairs()
                .find(|(key, _)| key == "redirect_uri")
                .unwrap()
                .1
                .into_owned();
            tokio::spawn(async move {
                let forged = format!("{redirect}?code=forged&state=not-this-login");
                let client = reqwest::Client::builder().no_proxy().build().unwrap();
                let _ = client.get(forged).send().await;
            });
        }),
    };
    let server = global_server(&fixture.url(), json!({}));
    let error = login(&server, &environment(home.path(), home.path()), options)
        .await
        .unwrap_err();
    assert!(
        matches!(error, McpLoginError::StateMismatch { .. }),
        "{error}"
    );
    assert_eq!(fixture.count("token", None), 0);
}

#[tokio::test]
async fn refusals_of_the_authorization_server_are_said_plainly() {
    let Some(python) = python() else { return };
    let home = tempfile::tempdir().unwrap();
    let environment = environment(home.path(), home.path());

    // No registration endpoint and no client_id.
    let fixture = Fixture::start(&python, &["--no-registration"]).await;
    let error = login(
        &global_server(&fixture.url(), json!({})),
        &environment,
        browser(None),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(error, McpLoginError::NoRegistration { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("oauth.client_id"), "{error}");

    // A registration the server refuses (a scope it does not offer).
    let fixture = Fixture::start(&python, &[]).await;
    let error = login(
        &global_server(&fixture.url(), json!({"scopes": ["admin"]})),
        &environment,
        browser(None),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(error, McpLoginError::RegistrationRefused { .. }),
        "{error}"
    );

    // The token endpoint refuses the code.
    let fixture = Fixture::start(&python, &["--refuse-code"]).await;
    let error = login(
        &global_server(&fixture.url(), json!({})),
        &environment,
        browser(None),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(error, McpLoginError::TokenEndpoint { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("invalid_grant"), "{error}");
    assert!(!env_text(home.path()).contains("CORVID_MCP_OAUTH_"));
}

/// A server that answers 401 with no OAuth metadata anywhere.
#[tokio::test]
async fn a_server_without_oauth_metadata_is_said_so() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let mut buffer = [0u8; 4096];
                let _ = tokio::io::AsyncReadExt::read(&mut stream, &mut buffer).await;
                let status = if buffer.starts_with(b"POST") {
                    "401 Unauthorized"
                } else {
                    "404 Not Found"
                };
                let response =
                    format!("HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                let _ = stream.write_all(response.as_bytes()).await;
            });
        }
    });
    let home = tempfile::tempdir().unwrap();
    let server = global_server(&format!("http://127.0.0.1:{port}/mcp"), json!({}));
    let error = login(
        &server,
        &environment(home.path(), home.path()),
        browser(None),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(error, McpLoginError::NoMetadata { asked: true, .. }),
        "{error}"
    );
    assert!(
        error.to_string().contains("publishes no OAuth metadata"),
        "{error}"
    );
}

/// Captured log output.
#[derive(Clone, Default)]
struct Captured(Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The access and refresh tokens in an env file's text (the fixture's start `at-` / `rt-`).
fn tokens_in(text: &str) -> Vec<String> {
    text.split(['"', '\''])
        .filter(|part| part.starts_with("at-") || part.starts_with("rt-"))
        .map(str::to_owned)
        .collect()
}

/// Every log line of every crate, at trace level, through a sign-in, a session and a
/// refresh: no token in any of them.
#[tokio::test(flavor = "current_thread")]
async fn no_token_reaches_a_log_line() {
    let Some(python) = python() else { return };
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new("trace"))
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let fixture = Fixture::start(&python, &["--access-ttl", "2"]).await;
    let home = tempfile::tempdir().unwrap();
    let server = global_server(&fixture.url(), json!({}));
    let environment = environment(home.path(), home.path());
    login(&server, &environment, browser(None)).await.unwrap();
    let mut tokens = tokens_in(&env_text(home.path()));
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let manager = McpManager::new(vec![server], 100, environment);
    assert_eq!(state_of(&manager).await, ServerState::Ready);
    let output = call(&manager, "mcp__docs__echo", json!({"text": "x"})).await;
    assert_eq!(output.text, "x");
    manager.shutdown().await;
    tokens.extend(tokens_in(&env_text(home.path())));
    assert!(fixture.count("token", Some("refresh_token")) >= 1);
    assert_eq!(tokens.len(), 4, "two sign-ins' tokens: {tokens:?}");

    let logs = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    assert!(logs.lines().count() > 20, "the logs were captured: {logs}");
    for token in &tokens {
        let line = logs.lines().find(|line| line.contains(token.as_str()));
        assert!(line.is_none(), "a token in a log line: {line:?}");
    }
}

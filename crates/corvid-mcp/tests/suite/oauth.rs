//! OAuth sign-in against a real MCP resource server and authorization server nobody here wrote:
//! the official Python SDK's (`tests/mcp/oauth_server.py` wires them to an in-memory provider
//! whose /authorize approves at once). The test plays the browser: it GETs the authorization
//! URL, which redirects to corvid's loopback callback.

use std::time::Duration;

use corvid_mcp::oauth::{LoginOptions, McpLoginError, Registration, login, logout};
use corvid_mcp::{McpEnvironment, McpManager, ServerState};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

use super::oauth_support::{
    Fixture, browser, call, env_text, environment, global_server, project_server, state_of, store,
};
use super::support::{free_port, python, tools};

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
    corvid_test_support::modes::assert_owner_only(&home.path().join("env"));
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
    let error = refused_login(&fixture.url(), json!({}), &environment).await;
    assert!(
        matches!(error, McpLoginError::NoRegistration { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("oauth.client_id"), "{error}");

    // A registration the server refuses (a scope it does not offer).
    let fixture = Fixture::start(&python, &[]).await;
    let error = refused_login(&fixture.url(), json!({"scopes": ["admin"]}), &environment).await;
    assert!(
        matches!(error, McpLoginError::RegistrationRefused { .. }),
        "{error}"
    );

    // The token endpoint refuses the code.
    let fixture = Fixture::start(&python, &["--refuse-code"]).await;
    let error = refused_login(&fixture.url(), json!({}), &environment).await;
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

/// The sign-in ends in the middle of a session (the access token expires, the refresh is
/// refused): the call says how to sign in again, and the server needs a sign-in from then on.
#[tokio::test]
async fn a_sign_in_that_ends_mid_session_turns_the_server_to_needs_sign_in() {
    let Some(python) = python() else { return };
    let fixture = Fixture::start(&python, &["--access-ttl", "3", "--refuse-refresh"]).await;
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = global_server(&fixture.url(), json!({}));
    let environment = environment(home.path(), project.path());
    login(&server, &environment, browser(None)).await.unwrap();
    let manager = McpManager::new(vec![server], 100, environment);
    assert_eq!(state_of(&manager).await, ServerState::Ready);
    tokio::time::sleep(Duration::from_millis(3500)).await;

    let output = call(&manager, "mcp__docs__echo", json!({"text": "late"})).await;
    assert!(output.is_error, "{}", output.text);
    assert!(
        output.text.contains("no longer accepts corvid's sign-in")
            && output.text.contains("corvid mcp login docs"),
        "{}",
        output.text
    );
    assert_eq!(manager.statuses()[0].state, ServerState::NeedsSignIn);
    assert_eq!(fixture.count("refresh_refused", None), 1);
}

#[tokio::test]
async fn a_callback_port_in_use_is_said_so() {
    let Some(python) = python() else { return };
    let fixture = Fixture::start(&python, &[]).await;
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let home = tempfile::tempdir().unwrap();
    let server = global_server(&fixture.url(), json!({"oauth": {"callback_port": port}}));
    let error = login(
        &server,
        &environment(home.path(), home.path()),
        browser(None),
    )
    .await
    .unwrap_err();
    assert!(matches!(error, McpLoginError::PortInUse { .. }), "{error}");
    assert!(
        error.to_string().contains(&format!("port {port}")),
        "{error}"
    );
    assert_eq!(fixture.count("register", None), 0, "nothing registered");
}

#[tokio::test]
async fn a_sign_in_made_while_the_session_runs_starts_the_server_at_the_next_step() {
    let Some(python) = python() else { return };
    let fixture = Fixture::start(&python, &[]).await;
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = global_server(&fixture.url(), json!({}));
    let environment = environment(home.path(), project.path());
    let manager = McpManager::new(vec![server.clone()], 100, environment.clone());
    assert_eq!(state_of(&manager).await, ServerState::NeedsSignIn);
    // Another step without a sign-in does not try again.
    tools(&manager).await;
    assert_eq!(manager.statuses()[0].state, ServerState::NeedsSignIn);
    assert!(
        !manager
            .take_notices()
            .iter()
            .any(|notice| notice.contains("new sign-in")),
    );

    // `corvid mcp login` elsewhere: the next step starts it, in this session.
    login(&server, &environment, browser(None)).await.unwrap();
    let offered = tools(&manager).await;
    assert!(
        offered.iter().any(|tool| tool.name == "mcp__docs__echo"),
        "{offered:?}"
    );
    assert!(
        manager
            .take_notices()
            .iter()
            .any(|notice| notice.contains("`docs` has a new sign-in; starting it")),
    );
    let output = call(&manager, "mcp__docs__echo", json!({"text": "now"})).await;
    assert_eq!(output.text, "now");
    manager.shutdown().await;
}

/// The error of a sign-in to the global server at `url` configured with `config`.
async fn refused_login(url: &str, config: Value, environment: &McpEnvironment) -> McpLoginError {
    login(&global_server(url, config), environment, browser(None))
        .await
        .unwrap_err()
}

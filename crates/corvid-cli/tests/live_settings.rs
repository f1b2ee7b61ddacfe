//! Live settings: a running `corvid serve` (in front of a mock upstream) uses a key added on the
//! page, a sign-in made with `corvid login` in another terminal (against a mock OAuth server)
//! and a key written into the env file by hand, from the next request on, with no restart; an
//! invalid config.toml edit keeps serving on the settings in use and the Status tab says why; a
//! port change says it needs a restart; a tab's socket is closed so the page reconnects to the
//! new settings; the admin key follows the env file.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::process::Stdio;
use std::time::{Duration, Instant};

use corvid_test_support::MockUpstream;
use corvid_test_support::oauth::MockOAuth;
use futures_util::StreamExt;
use serde_json::{Value, json};

mod common;
use common::corvid;
use common::serving::{Serving, last_bearer, serve};

#[tokio::test(flavor = "multi_thread")]
async fn keys_from_the_page_and_the_env_file_apply_at_once_and_a_bad_edit_keeps_serving() {
    let upstream = MockUpstream::start().await;
    let home = tempfile::tempdir().unwrap();
    let mut serving = serve(home.path(), &upstream).await;
    assert_eq!(serving.ask().await, 401, "no key yet");
    // The pickers show the xAI models apart while xAI has no key.
    let models = serving
        .page(reqwest::Method::GET, "/api/models", None)
        .await;
    let apart = models["without_key"].as_array().unwrap();
    assert!(apart.contains(&json!("grok-4.6")), "{models}");
    assert!(apart.contains(&json!("xai/grok-4.6")), "{models}");

    // A tab's socket, open before the change.
    let mut socket = serving.tab().await;

    // The page's Settings: the answer comes once the key is in use.
    let answer = serving
        .page(
            reqwest::Method::PUT,
            "/api/settings",
            Some(json!({"keys": {"XAI_API_KEY": "page-key"}})),
        )
        .await;
    assert_eq!(answer["restart_needed"], false, "{answer}");
    assert_eq!(answer["settings_error"], Value::Null, "{answer}");
    assert_eq!(serving.ask().await, 200);
    assert_eq!(last_bearer(&upstream), "Bearer page-key");
    let models = serving
        .page(reqwest::Method::GET, "/api/models", None)
        .await;
    assert_eq!(models["without_key"], json!([]), "{models}");

    // The tab's socket was closed with 1012 so the page reconnects to the new settings.
    let closed = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(frame) = socket.next().await {
            match frame {
                Ok(tokio_tungstenite::tungstenite::Message::Close(close)) => return close,
                Ok(_) => continue,
                Err(_) => return None,
            }
        }
        None
    })
    .await
    .expect("the tab's socket stayed open on the old settings");
    assert_eq!(
        closed.map(|close| u16::from(close.code)),
        Some(1012),
        "closed for new settings"
    );

    // A key written into the env file by hand.
    let env_file = home.path().join("env");
    std::fs::write(&env_file, "XAI_API_KEY=disk-key\n").unwrap();
    serving.until_used(&upstream, "Bearer disk-key").await;
    serving.still_running();

    // An invalid edit: the running settings keep serving, and the Status tab says why.
    std::fs::write(home.path().join("config.toml"), "max_retries = \"many\"\n").unwrap();
    let deadline = Instant::now() + Duration::from_secs(15);
    let error = loop {
        let status = serving.status().await;
        if let Some(error) = status["settings"]["error"].as_str() {
            break error.to_owned();
        }
        assert!(
            Instant::now() < deadline,
            "{status}; log:\n{}",
            serving.log.lock().unwrap()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(error.starts_with("Settings not applied: "), "{error}");
    assert!(error.contains("max_retries"), "{error}");
    assert_eq!(serving.ask().await, 200);
    assert_eq!(last_bearer(&upstream), "Bearer disk-key");

    // A host change cannot apply to the bound socket: it waits for a restart, and says so.
    std::fs::write(home.path().join("config.toml"), "host = \"127.0.0.2\"\n").unwrap();
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let status = serving.status().await;
        if status["settings"]["error"].is_null()
            && let Some(waiting) = status["settings"]["restart_needed"].as_str()
        {
            assert!(waiting.contains("host and port"), "{waiting}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{status}; log:\n{}",
            serving.log.lock().unwrap()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(serving.ask().await, 200, "still on its port");
    serving.still_running();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sign_in_from_another_terminal_applies_at_once() {
    let upstream = MockUpstream::start().await;
    let oauth = MockOAuth::start().await;
    oauth.set_device_timing(1, 600);
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        format!(
            "auth_mode = \"oauth\"\nxai_auth_url = \"{}\"\n",
            oauth.base_url()
        ),
    )
    .unwrap();
    let mut serving = serve(home.path(), &upstream).await;
    assert_eq!(serving.ask().await, 401, "not signed in yet");

    let login = tokio::time::timeout(
        Duration::from_secs(60),
        corvid(home.path())
            .env("HOME", home.path())
            .env("CORVID_KEYRING", "off")
            .args(["login", "xai", "--device"])
            .stdin(Stdio::null())
            .output(),
    )
    .await
    .expect("corvid login hung")
    .unwrap();
    let said = String::from_utf8_lossy(&login.stderr);
    assert!(login.status.success(), "{said}");
    assert!(!said.contains("restart"), "{said}");

    serving.until_used(&upstream, "Bearer mock-access-1").await;
    serving.still_running();
    let status = serving.status().await;
    assert_eq!(status["sign_ins"]["xai"]["signed_in"], true, "{status}");

    // The running sign-in refreshes its token (xAI refused the old one) and stores the new
    // tokens in the env file: corvid's own write changes nothing that serves, so the app is
    // not rebuilt and an open tab is not sent to reconnect.
    let reloads = status["settings"]["reloads"].as_u64().unwrap();
    let mut socket = serving.tab().await;
    let env_before = std::fs::read_to_string(home.path().join("env")).unwrap();
    upstream.enqueue(
        "/v1/chat/completions",
        corvid_test_support::Reply::status(
            http::StatusCode::UNAUTHORIZED,
            json!({"error": {"message": "token expired"}}),
        ),
    );
    assert_eq!(serving.ask().await, 200);
    assert_eq!(last_bearer(&upstream), "Bearer mock-access-2");
    assert_ne!(
        std::fs::read_to_string(home.path().join("env")).unwrap(),
        env_before,
        "the refreshed tokens are stored"
    );
    // The watcher looks every second: give it three looks.
    let closed = tokio::time::timeout(Duration::from_secs(3), async {
        while let Some(frame) = socket.next().await {
            if matches!(
                frame,
                Ok(tokio_tungstenite::tungstenite::Message::Close(_)) | Err(_)
            ) {
                return;
            }
        }
    })
    .await;
    assert!(closed.is_err(), "the tab was sent to reconnect");
    let status = serving.status().await;
    assert_eq!(
        status["settings"]["reloads"].as_u64(),
        Some(reloads),
        "{status}"
    );
    assert_eq!(status["settings"]["error"], Value::Null, "{status}");
    assert_eq!(serving.ask().await, 200);
    assert_eq!(last_bearer(&upstream), "Bearer mock-access-2");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_general_settings_round_trip_and_a_browser_sign_in_from_the_page_applies() {
    let upstream = MockUpstream::start().await;
    let oauth = MockOAuth::start().await;
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "# mine\nxai_auth_url = \"{}\"  # the test's OAuth server\n",
            oauth.base_url()
        ),
    )
    .unwrap();
    let serving = serve(home.path(), &upstream).await;
    let settings = serving
        .page(reqwest::Method::GET, "/api/settings", None)
        .await;
    let general = &settings["general"];
    assert_eq!(general["auth_mode"], "api_key", "{general}");
    assert_eq!(general["completions_enabled"], true);
    assert_eq!(general["log_prompts"], false);
    assert_eq!(general["request_timeout_s"], 600.0);

    let answer = serving
        .page(
            reqwest::Method::PUT,
            "/api/settings",
            Some(
                json!({"general": {"auth_mode": "oauth", "log_prompts": true,
                                    "completions_backend": "chat", "request_timeout_s": 120}}),
            ),
        )
        .await;
    assert_eq!(answer["restart_needed"], false, "{answer}");
    assert_eq!(answer["general"]["auth_mode"], "oauth");
    assert_eq!(answer["general"]["log_prompts"], true);
    assert_eq!(answer["general"]["completions_backend"], "chat");
    assert_eq!(answer["general"]["request_timeout_s"], 120.0);
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(text.starts_with("# mine\n"), "{text}");
    assert!(text.contains("# the test's OAuth server"), "{text}");
    assert!(text.contains("auth_mode = \"oauth\""), "{text}");
    assert!(text.contains("request_timeout_s = 120"), "{text}");
    // auth_mode is oauth now, with no sign-in yet: the running gateway follows.
    assert_eq!(serving.ask().await, 401);

    // A host beyond loopback is refused, with the rule.
    let origin = format!("http://127.0.0.1:{}", serving.port);
    let refused = serving
        .client
        .put(format!("{origin}/api/settings"))
        .bearer_auth(&serving.token)
        .header("Origin", &origin)
        .json(&json!({"general": {"host": "0.0.0.0"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 400);
    let body: Value = refused.json().await.unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--allow-remote"),
        "{body}"
    );
    // A port is saved, and waits for a restart.
    let answer = serving
        .page(
            reqwest::Method::PUT,
            "/api/settings",
            Some(json!({"general": {"port": 9911}})),
        )
        .await;
    assert_eq!(answer["restart_needed"], true, "{answer}");
    assert!(
        answer["restart_reason"]
            .as_str()
            .unwrap()
            .contains("host and port"),
        "{answer}"
    );
    assert_eq!(answer["general"]["port"], 9911);

    // xAI's browser sign-in from the page: PKCE on a loopback callback.
    let started = serving
        .page(
            reqwest::Method::POST,
            "/api/sign-in/xai-browser",
            Some(json!({})),
        )
        .await;
    assert_eq!(started["xai"]["state"], "waiting", "{started}");
    let url = started["xai"]["url"].as_str().unwrap().to_owned();
    assert!(url.starts_with(&oauth.base_url()), "{url}");
    let visit = corvid_test_support::oauth::follow_authorize_redirect(&url)
        .await
        .unwrap();
    assert_eq!(visit.callback.status, 200, "{visit:?}");
    let query = oauth.authorize_queries().pop().unwrap();
    assert_eq!(query["code_challenge_method"], "S256");
    assert!(query["redirect_uri"].starts_with("http://127.0.0.1:"));
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let states = serving
            .page(reqwest::Method::GET, "/api/sign-in", None)
            .await;
        if states["xai"]["state"] == "signed_in" {
            break;
        }
        assert!(Instant::now() < deadline, "{states}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Applied before the page heard of it: the next request uses the sign-in (its access
    // token, or one refreshed from it).
    assert_eq!(serving.ask().await, 200);
    assert!(
        last_bearer(&upstream).starts_with("Bearer mock-access-"),
        "{}",
        last_bearer(&upstream)
    );
}

/// The Status tab's row for `provider`.
fn provider_row(status: &Value, provider: &str) -> Value {
    status["providers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["name"] == provider)
        .cloned()
        .unwrap_or_else(|| panic!("no {provider} row: {status}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_provider_keeps_its_last_error_across_a_reload_until_its_own_settings_change() {
    let upstream = MockUpstream::start().await;
    let home = tempfile::tempdir().unwrap();
    let env_file = home.path().join("env");
    std::fs::write(&env_file, "XAI_API_KEY=first-key\n").unwrap();
    std::fs::set_permissions(
        &env_file,
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    let mut serving = serve(home.path(), &upstream).await;
    upstream.enqueue(
        "/v1/chat/completions",
        corvid_test_support::Reply::status(
            http::StatusCode::BAD_REQUEST,
            json!({"error": {"message": "the prompt is not allowed"}}),
        ),
    );
    assert_eq!(serving.ask().await, 400);
    let failed = provider_row(&serving.status().await, "xai")["last_error"].clone();
    assert_eq!(failed["status"], 400, "{failed}");

    // Another provider's key saved on the page: the settings reload, xAI keeps its state.
    let answer = serving
        .page(
            reqwest::Method::PUT,
            "/api/settings",
            Some(json!({"keys": {"ANTHROPIC_API_KEY": "another-key"}})),
        )
        .await;
    assert_eq!(answer["settings_error"], Value::Null, "{answer}");
    let status = serving.status().await;
    assert!(
        status["settings"]["reloads"].as_u64().unwrap() >= 1,
        "{status}"
    );
    assert_eq!(
        provider_row(&status, "anthropic")["key"],
        "present",
        "{status}"
    );
    assert_eq!(
        provider_row(&status, "xai")["last_error"],
        failed,
        "{status}"
    );

    // xAI's own key changes: it starts afresh.
    serving
        .page(
            reqwest::Method::PUT,
            "/api/settings",
            Some(json!({"keys": {"XAI_API_KEY": "second-key"}})),
        )
        .await;
    let status = serving.status().await;
    assert_eq!(
        provider_row(&status, "xai")["last_error"],
        Value::Null,
        "{status}"
    );
    serving.until_used(&upstream, "Bearer second-key").await;
    serving.still_running();
}

/// `GET /admin/spend` with `key` as the bearer token: the status.
async fn admin_spend(serving: &Serving, key: &str) -> u16 {
    serving
        .client
        .get(format!("http://127.0.0.1:{}/admin/spend", serving.port))
        .bearer_auth(key)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

/// Waits until `/admin/spend` answers `key` with `want`.
async fn until_admin(serving: &Serving, key: &str, want: u16) {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let got = admin_spend(serving, key).await;
        if got == want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "/admin/spend with {key}: {got}, not {want}; log:\n{}",
            serving.log.lock().unwrap()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_admin_key_follows_the_env_file() {
    let upstream = MockUpstream::start().await;
    let home = tempfile::tempdir().unwrap();
    let env_file = home.path().join("env");
    let write_env = |text: &str| {
        std::fs::write(&env_file, text).unwrap();
        std::fs::set_permissions(
            &env_file,
            std::os::unix::fs::PermissionsExt::from_mode(0o600),
        )
        .unwrap();
    };
    write_env("XAI_API_KEY=k\n");
    let mut serving = serve(home.path(), &upstream).await;
    assert_eq!(
        admin_spend(&serving, "first-admin").await,
        404,
        "the admin API is off"
    );

    write_env("XAI_API_KEY=k\nCORVID_ADMIN_KEY=first-admin\n");
    until_admin(&serving, "first-admin", 200).await;
    assert_eq!(admin_spend(&serving, "second-admin").await, 401);

    // A new key replaces the old one at once; removing it turns the API off again.
    write_env("XAI_API_KEY=k\nCORVID_ADMIN_KEY=second-admin\n");
    until_admin(&serving, "second-admin", 200).await;
    assert_eq!(admin_spend(&serving, "first-admin").await, 401);
    write_env("XAI_API_KEY=k\n");
    until_admin(&serving, "second-admin", 404).await;
    let status = serving.status().await;
    assert_eq!(
        status["settings"]["restart_needed"],
        Value::Null,
        "{status}"
    );
    serving.still_running();
}

/// A port change waits for a restart; the page's "Restart now" (`POST /api/restart`) stops
/// the server gracefully and starts it again in the same process on the new port, with the
/// same page token, so the open page moves there.
#[tokio::test(flavor = "multi_thread")]
async fn a_restart_the_page_asks_for_applies_a_new_port_in_the_same_process() {
    let upstream = MockUpstream::start().await;
    let home = tempfile::tempdir().unwrap();
    let env_file = home.path().join("env");
    std::fs::write(&env_file, "XAI_API_KEY=k\n").unwrap();
    std::fs::set_permissions(
        &env_file,
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    let mut serving = serve(home.path(), &upstream).await;
    let pid = serving.child.id();
    let old_port = serving.port;
    let new_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let answer = serving
        .page(
            reqwest::Method::PUT,
            "/api/settings",
            Some(json!({"general": {"port": new_port}})),
        )
        .await;
    assert_eq!(answer["restart_needed"], true, "{answer}");
    let answer = serving
        .page(reqwest::Method::POST, "/api/restart", Some(json!({})))
        .await;
    assert_eq!(answer["restarting"], true, "{answer}");

    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let live = serving
            .client
            .get(format!("http://127.0.0.1:{new_port}/livez"))
            .send()
            .await;
        if live.is_ok_and(|response| response.status() == 200) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "never listened on {new_port}; log:\n{}",
            serving.log.lock().unwrap()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The same process (it replaced itself), no longer on the old port.
    serving.still_running();
    assert_eq!(serving.child.id(), pid);
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", old_port)).is_err(),
        "the old port still answers"
    );
    // The page's token still opens the page's API, and the gateway serves.
    serving.port = new_port;
    let status = serving.status().await;
    assert_eq!(
        status["settings"]["restart_needed"],
        Value::Null,
        "{status}"
    );
    assert_eq!(serving.ask().await, 200);
    let log = serving.log.lock().unwrap().clone();
    assert!(log.contains("starting again"), "{log}");
}

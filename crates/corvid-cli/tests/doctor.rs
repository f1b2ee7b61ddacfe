//! `corvid doctor` against one working and one broken provider.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::process::Stdio;

use corvid_test_support::{MockUpstream, Reply};
use serde_json::json;

const CORVID: &str = env!("CARGO_BIN_EXE_corvid");

#[tokio::test]
async fn doctor_says_which_provider_works_which_does_not_and_how_to_fix_it() {
    let good = MockUpstream::start().await;
    let broken = MockUpstream::start().await;
    broken.enqueue(
        "/v1/models",
        Reply::status(
            http::StatusCode::UNAUTHORIZED,
            json!({"error": {"message": "Incorrect API key provided"}}),
        ),
    );
    let home = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    std::fs::write(
        home.path().join("config.toml"),
        format!(
            "port = {port}\nmax_retries = 0\n\n\
             [providers.good]\nkind = \"openai-chat\"\nbase_url = \"{}\"\napi_key_env = \"GOOD_KEY\"\n\n\
             [providers.broken]\nkind = \"openai-chat\"\nbase_url = \"{}\"\napi_key_env = \"BROKEN_KEY\"\n",
            good.base_url(),
            broken.base_url()
        ),
    )
    .unwrap();
    let env_file = home.path().join("env");
    std::fs::write(&env_file, "GOOD_KEY=good-key\nBROKEN_KEY=stale-key\n").unwrap();
    // Readable by others: doctor says so.
    std::fs::set_permissions(
        &env_file,
        std::os::unix::fs::PermissionsExt::from_mode(0o644),
    )
    .unwrap();

    let output = tokio::process::Command::new(CORVID)
        .arg("doctor")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("CORVID_HOME", home.path())
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{text}\n{output:?}");
    let line = |start: &str| {
        text.lines()
            .position(|line| line.starts_with(start))
            .unwrap_or_else(|| panic!("no line starting {start:?} in\n{text}"))
    };
    let lines: Vec<&str> = text.lines().collect();

    assert!(lines[line("ok    credential good")].contains("GOOD_KEY present"));
    assert!(
        lines[line("ok    reach good")]
            .contains(&format!("{}: listed its models", good.base_url()))
    );
    let reach_broken = line("FAIL  reach broken");
    assert!(
        lines[reach_broken].contains("answered 401: Incorrect API key provided"),
        "{text}"
    );
    assert!(
        lines[reach_broken + 1]
            .contains("fix: the credential was refused: replace it (BROKEN_KEY)"),
        "{text}"
    );
    let env = line("FAIL  env file");
    assert!(lines[env].contains("readable by others (mode 644)"));
    assert!(lines[env + 1].contains(&format!("fix: chmod 600 {}", env_file.display())));
    // No xAI key with xai as the default provider: a warning naming the ways to connect one.
    let xai = line("warn  credential xai");
    assert!(lines[xai + 1].contains("corvid login xai"), "{text}");
    // A provider without its key is not a problem, only a note.
    assert!(lines[line("-     provider openai")].contains("set OPENAI_API_KEY"));
    assert!(!text.contains("warn  config"), "{text}");
    assert!(lines[line("ok    port")].contains(&format!("127.0.0.1:{port} is free")));
    // On or unavailable (as the kernel allows), never a failure.
    assert!(
        text.lines()
            .any(|line| line.starts_with("ok    agent sandbox")
                || line.starts_with("warn  agent sandbox"))
    );
    line("-     client Claude Code");
    assert_eq!(*lines.last().unwrap(), "2 problem(s) found");
    // The key was never printed.
    assert!(!text.contains("stale-key") && !text.contains("good-key"));
}

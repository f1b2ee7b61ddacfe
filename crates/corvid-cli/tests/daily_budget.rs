//! One user on SQLite with `[store] daily_budget_usd`: requests without a key spend the local
//! user's daily budget, a spent budget answers 429 in the caller's dialect, and `corvid status`
//! shows it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::Duration;

use corvid_test_support::MockUpstream;
use serde_json::{Value, json};

const CORVID: &str = env!("CARGO_BIN_EXE_corvid");

fn corvid(home: &std::path::Path) -> Command {
    let mut command = Command::new(CORVID);
    command
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("CORVID_HOME", home)
        .env("XAI_API_KEY", "upstream-key")
        .env("NO_COLOR", "1");
    command
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_local_users_daily_budget_is_enforced_and_shown() {
    let upstream = MockUpstream::start().await;
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        format!(
            "upstream = \"{}\"\n[prices.\"grok-4.6\"]\ninput = 1.0\noutput = 1000.0\n\
             [store]\ndaily_budget_usd = 0.012\n",
            upstream.base_url()
        ),
    )
    .unwrap();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = corvid(home.path())
        .args(["serve", "--port", &port.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let url = |path: &str| format!("http://127.0.0.1:{port}{path}");
    let mut live = false;
    for _ in 0..400 {
        if http
            .get(url("/livez"))
            .send()
            .await
            .is_ok_and(|r| r.status() == 200)
        {
            live = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(live, "corvid serve never became live");
    // 12,000 µ$ a day; each request holds ~4,040 µ$ and costs 5,012 µ$ (12 in, 5 out).
    let body = json!({"model": "grok-4.6", "max_tokens": 4,
                      "messages": [{"role": "user", "content": "hi"}]});
    let mut statuses = Vec::new();
    for _ in 0..3 {
        let response = http
            .post(url("/v1/chat/completions"))
            .header("authorization", "Bearer not-a-corvid-key")
            .json(&body)
            .send()
            .await
            .unwrap();
        statuses.push(response.status().as_u16());
        if response.status() == 429 {
            assert!(response.headers().get("retry-after").is_some());
            let refusal: Value = response.json().await.unwrap();
            let message = refusal["error"]["message"].as_str().unwrap();
            assert!(message.contains("key:local"), "{message}");
        }
    }
    assert_eq!(statuses, [200, 200, 429]);
    // SIGTERM: the last rows are committed before it exits.
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let _ = child.wait();
    let status = corvid(home.path()).arg("status").output().unwrap();
    let text = String::from_utf8(status.stdout).unwrap();
    assert!(
        text.contains("daily budget: $0.0100 of $0.01 spent today"),
        "{text}"
    );
}

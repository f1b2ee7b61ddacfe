//! One user on SQLite with `[store] daily_budget_usd` or `daily_requests`: requests without a
//! key spend the local user's daily budget or quota, a spent one answers 429 in the caller's
//! dialect naming it and its reset, and `corvid status` shows it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
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

/// `corvid serve` on a home whose `[store]` is `store`: the child and its port.
async fn serve(home: &std::path::Path, upstream: &MockUpstream, store: &str) -> (Child, u16) {
    std::fs::write(
        home.join("config.toml"),
        format!(
            "upstream = \"{}\"\n[prices.\"grok-4.6\"]\ninput = 1.0\noutput = 1000.0\n\
             [store]\n{store}\n",
            upstream.base_url()
        ),
    )
    .unwrap();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = corvid(home)
        .args(["serve", "--port", &port.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    for _ in 0..400 {
        if http
            .get(format!("http://127.0.0.1:{port}/livez"))
            .send()
            .await
            .is_ok_and(|r| r.status() == 200)
        {
            return (child, port);
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("corvid serve never became live");
}

/// Three requests without a corvid key: their statuses, and the refusal's message (which must
/// come with `Retry-After`).
async fn three_requests(port: u16) -> (Vec<u16>, String) {
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let body = json!({"model": "grok-4.6", "max_tokens": 4,
                      "messages": [{"role": "user", "content": "hi"}]});
    let mut statuses = Vec::new();
    let mut refusal = String::new();
    for _ in 0..3 {
        let response = http
            .post(format!("http://127.0.0.1:{port}/v1/chat/completions"))
            .header("authorization", "Bearer not-a-corvid-key")
            .json(&body)
            .send()
            .await
            .unwrap();
        statuses.push(response.status().as_u16());
        if response.status() == 429 {
            assert!(response.headers().get("retry-after").is_some());
            let answer: Value = response.json().await.unwrap();
            refusal = answer["error"]["message"].as_str().unwrap().to_owned();
        }
    }
    (statuses, refusal)
}

/// SIGTERM (the last rows are committed before it exits), then `corvid status`.
fn stop_and_status(mut child: Child, home: &std::path::Path) -> String {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let _ = child.wait();
    let status = corvid(home).arg("status").output().unwrap();
    String::from_utf8(status.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_local_users_daily_budget_is_enforced_and_shown() {
    let upstream = MockUpstream::start().await;
    let home = tempfile::tempdir().unwrap();
    // 12,000 µ$ a day; each request holds ~4,040 µ$ and costs 5,012 µ$ (12 in, 5 out).
    let (child, port) = serve(home.path(), &upstream, "daily_budget_usd = 0.012").await;
    let (statuses, refusal) = three_requests(port).await;
    assert_eq!(statuses, [200, 200, 429]);
    assert!(refusal.contains("key:local"), "{refusal}");
    let text = stop_and_status(child, home.path());
    assert!(
        text.contains("daily budget: $0.0100 of $0.01 spent today"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_local_users_daily_request_quota_is_enforced_and_shown() {
    let upstream = MockUpstream::start().await;
    let home = tempfile::tempdir().unwrap();
    let (child, port) = serve(home.path(), &upstream, "daily_requests = 2").await;
    let (statuses, refusal) = three_requests(port).await;
    assert_eq!(statuses, [200, 200, 429]);
    assert!(
        refusal.contains("daily request quota (2 requests)") && refusal.contains("resets in"),
        "{refusal}"
    );
    let text = stop_and_status(child, home.path());
    assert!(text.contains("daily requests: 2 of 2 made today"), "{text}");
}

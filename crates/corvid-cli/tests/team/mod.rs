//! What the team-mode tests share: a fresh PostgreSQL database (from the server
//! `scripts/team-services` starts), a corvid home pointed at it and at a mock upstream with
//! prices, and `corvid serve` instances on loopback ports.

#![allow(dead_code)]

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use corvid_test_support::{MockUpstream, Reply};
use serde_json::{Value, json};

pub(crate) const CORVID: &str = env!("CARGO_BIN_EXE_corvid");

/// The model the tests ask for, and its price: 1 µ$ per input token, 1,000 µ$ per output token.
pub(crate) const MODEL: &str = "grok-4.6";

/// The admin API's key in these tests.
pub(crate) const ADMIN_KEY: &str = "admin-key-of-the-tests";

/// A database of its own on the test server, or `None` (with a note) when there is none.
pub(crate) async fn fresh_database() -> Option<String> {
    let Ok(admin_url) = std::env::var("CORVID_TEST_POSTGRES_URL") else {
        eprintln!("skipped: CORVID_TEST_POSTGRES_URL is not set (run under scripts/team-services)");
        return None;
    };
    let client = connect(&admin_url).await;
    let name = format!("c_{}", std::process::id()) + &format!("_{}", rand_suffix());
    client
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await
        .unwrap();
    Some(admin_url.replace("/postgres", &format!("/{name}")))
}

fn rand_suffix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        % 1_000_000_007
}

pub(crate) async fn connect(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
}

/// A corvid home whose config prices [`MODEL`] and requires keys.
pub(crate) fn home(upstream: &str) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        format!(
            "upstream = \"{upstream}\"\n\
             [prices.\"{MODEL}\"]\ninput = 1.0\noutput = 1000.0\n\
             [store]\nrequire_keys = true\nkey_cache_ms = 500\n"
        ),
    )
    .unwrap();
    home
}

pub(crate) fn corvid(home: &Path, database: &str) -> Command {
    let mut command = Command::new(CORVID);
    command
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("CORVID_HOME", home)
        .env("CORVID_DATABASE_URL", database)
        .env("XAI_API_KEY", "upstream-key")
        .env("CORVID_ADMIN_KEY", ADMIN_KEY)
        .env("NO_COLOR", "1");
    command
}

pub(crate) fn run(command: &mut Command) -> Output {
    command.stdin(Stdio::null()).output().unwrap()
}

pub(crate) fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "corvid failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// `corvid keys create …`: the key, from the last line.
pub(crate) fn create_key(home: &Path, database: &str, args: &[&str]) -> String {
    let out = stdout(&run(corvid(home, database)
        .args(["keys", "create"])
        .args(args)));
    let key = out.lines().last().unwrap().trim().to_owned();
    assert!(key.starts_with("cv-"), "{out}");
    key
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub(crate) struct Server {
    pub(crate) child: Child,
    pub(crate) port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// SIGTERM, then wait: the last rows are flushed.
    pub(crate) fn stop(mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

pub(crate) fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(64)
        .build()
        .unwrap()
}

pub(crate) async fn start_server(home: &Path, database: &str) -> Server {
    start_server_in(home, database, Path::new(".")).await
}

/// `corvid serve` run from the folder `project` (its page agent's project).
pub(crate) async fn start_server_in(home: &Path, database: &str, project: &Path) -> Server {
    let port = free_port();
    let child = corvid(home, database)
        .current_dir(project)
        .args(["serve", "--port", &port.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let server = Server { child, port };
    let client = client();
    for _ in 0..400 {
        if let Ok(response) = client.get(server.url("/livez")).send().await
            && response.status() == 200
        {
            return server;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("corvid serve never became live");
}

/// A chat completion of [`MODEL`] capped at `max_tokens`, with `key`.
pub(crate) async fn chat(
    client: &reqwest::Client,
    server: &Server,
    key: Option<&str>,
    max_tokens: u32,
    stream: bool,
) -> reqwest::Response {
    let mut request = client
        .post(server.url("/v1/chat/completions"))
        .json(&chat_body(max_tokens, stream));
    if let Some(key) = key {
        request = request.bearer_auth(key);
    }
    request.send().await.unwrap()
}

pub(crate) fn chat_body(max_tokens: u32, stream: bool) -> serde_json::Value {
    serde_json::json!({
        "model": MODEL,
        "max_tokens": max_tokens,
        "stream": stream,
        "messages": [{"role": "user", "content": "hi"}]
    })
}

/// The hold a [`chat_body`] request takes, in µ$: its bytes over three at 1 µ$, plus its cap at
/// 1,000 µ$.
pub(crate) fn estimate(max_tokens: u32, stream: bool) -> i64 {
    let bytes = serde_json::to_vec(&chat_body(max_tokens, stream))
        .unwrap()
        .len() as i64;
    (bytes + 2) / 3 + i64::from(max_tokens) * 1000
}

/// `(sum of spent, sum of reserved)` over every budget.
pub(crate) async fn budget_totals(db: &tokio_postgres::Client) -> (i64, i64) {
    let row = db
        .query_one(
            "SELECT COALESCE(sum(spent), 0)::bigint, COALESCE(sum(reserved), 0)::bigint FROM budgets",
            &[],
        )
        .await
        .unwrap();
    (row.get(0), row.get(1))
}

/// A streamed xAI chat reply of `pieces` content events `gap` apart (12 tokens in, 5 out).
pub(crate) fn slow_stream(gap: Duration, pieces: usize) -> Reply {
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": MODEL,
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        .to_string()
    };
    let mut events = vec![chunk(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    )];
    for _ in 0..pieces {
        events.push(chunk(json!({"content": "x"}), Value::Null));
    }
    events.push(chunk(json!({}), json!("stop")));
    events.push(
        json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": MODEL,
               "choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}})
        .to_string(),
    );
    events.push("[DONE]".to_owned());
    let refs: Vec<&str> = events.iter().map(String::as_str).collect();
    Reply::sse(&refs, gap)
}

/// `(spent, reserved)` of the budget `scope` (`key:alice`).
pub(crate) async fn scope_totals(db: &tokio_postgres::Client, scope: &str) -> (i64, i64) {
    let row = db
        .query_one(
            "SELECT spent, reserved FROM budgets WHERE scope = $1",
            &[&scope],
        )
        .await
        .unwrap();
    (row.get(0), row.get(1))
}

/// Waits (at most `within`) until the budget `scope` holds nothing; returns what it spent.
pub(crate) async fn settled(db: &tokio_postgres::Client, scope: &str, within: Duration) -> i64 {
    let started = Instant::now();
    loop {
        let (spent, reserved) = scope_totals(db, scope).await;
        if reserved == 0 {
            return spent;
        }
        assert!(started.elapsed() < within, "{scope}'s holds never settled");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// What most team tests start from: a migrated database of their own, a mock upstream, and a
/// corvid home pointed at both.
pub(crate) struct Team {
    pub(crate) database: String,
    pub(crate) upstream: MockUpstream,
    home: tempfile::TempDir,
}

impl Team {
    /// `None` (with a note) without the test server; `store` is appended to the home's
    /// `[store]` table.
    pub(crate) async fn migrated(store: &str) -> Option<Team> {
        let database = fresh_database().await?;
        let upstream = MockUpstream::start().await;
        let home = home(&upstream.base_url());
        if !store.is_empty() {
            let config = home.path().join("config.toml");
            let text = std::fs::read_to_string(&config).unwrap();
            std::fs::write(&config, format!("{text}{store}\n")).unwrap();
        }
        stdout(&run(corvid(home.path(), &database).arg("migrate")));
        Some(Team {
            database,
            upstream,
            home,
        })
    }

    pub(crate) fn home(&self) -> &Path {
        self.home.path()
    }
}

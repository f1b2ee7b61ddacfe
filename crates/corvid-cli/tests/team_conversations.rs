//! The page agent's conversations on PostgreSQL: two `corvid serve` instances with corvid
//! homes (and SQLite files) of their own, on one database and one project folder. A turn run
//! through one instance's page agent is listed and opened, with its history and usage, through
//! the other's page API; a conversation started on the second is listed by the first.
//! `scripts/team-services cargo test -p corvid-cli --test team_conversations`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod team;

use std::path::Path;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use team::*;
use tokio_tungstenite::tungstenite::Message;

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// One instance's page: its port and the token in its `page-url`.
struct Page {
    port: u16,
    token: String,
    http: reqwest::Client,
}

impl Page {
    async fn of(server: &Server, home: &Path) -> Page {
        let file = home.join("page-url");
        let deadline = Instant::now() + Duration::from_secs(10);
        while !file.exists() {
            assert!(
                Instant::now() < deadline,
                "no page-url in {}",
                home.display()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let url = std::fs::read_to_string(file).unwrap();
        let token = url.trim().rsplit_once("token=").unwrap().1.to_owned();
        Page {
            port: server.port,
            token,
            http: client(),
        }
    }

    fn origin(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// A page API call as the page makes it (the token, corvid's own origin).
    async fn call(&self, method: reqwest::Method, path: &str) -> Value {
        let response = self
            .http
            .request(method, format!("{}{path}", self.origin()))
            .bearer_auth(&self.token)
            .header("Origin", self.origin())
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        assert!(response.status().is_success(), "{path}: {response:?}");
        response.json().await.unwrap()
    }

    /// A tab's socket on the project's current conversation: the socket and that conversation.
    async fn tab(&self) -> (Socket, String) {
        let url = format!("ws://127.0.0.1:{}/api/agent/ws", self.port);
        let mut request =
            tokio_tungstenite::tungstenite::client::IntoClientRequest::into_client_request(url)
                .unwrap();
        let headers = request.headers_mut();
        headers.insert(
            "Authorization",
            format!("Bearer {}", self.token).parse().unwrap(),
        );
        headers.insert("Origin", self.origin().parse().unwrap());
        let (mut socket, _) = tokio_tungstenite::connect_async(request).await.unwrap();
        let ready = frame_where(&mut socket, |frame| frame["msg"]["type"] == "ready").await;
        let conversation = ready["msg"]["conversation_id"].as_str().unwrap().to_owned();
        (socket, conversation)
    }
}

async fn frame_where(socket: &mut Socket, wanted: impl Fn(&Value) -> bool) -> Value {
    tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let Some(Ok(Message::Text(text))) = socket.next().await else {
                panic!("the socket closed");
            };
            let frame: Value = serde_json::from_str(&text).unwrap();
            if wanted(&frame) {
                return frame;
            }
        }
    })
    .await
    .expect("no such frame within 30 s")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_written_through_one_instance_is_opened_through_the_other() {
    let Some(team) = Team::migrated("").await else {
        return;
    };
    let database = team.database.clone();
    let other_home = home(&team.upstream.base_url());
    let project = tempfile::tempdir().unwrap();
    let a = start_server_in(team.home(), &database, project.path()).await;
    let b = start_server_in(other_home.path(), &database, project.path()).await;
    let (page_a, page_b) = (
        Page::of(&a, team.home()).await,
        Page::of(&b, other_home.path()).await,
    );

    // A turn through A's page agent.
    let (mut socket, conversation) = page_a.tab().await;
    socket
        .send(Message::text(
            json!({"type": "submission", "id": "m1", "op": {"type": "send", "text": "hi from A"}})
                .to_string(),
        ))
        .await
        .unwrap();
    let finished = frame_where(&mut socket, |frame| {
        frame["id"] == "m1" && frame["msg"]["type"] == "turn_finished"
    })
    .await;
    assert_eq!(finished["msg"]["outcome"], "completed", "{finished}");

    // B lists it as the project's current conversation, with its messages and title.
    let listed = page_b
        .call(reqwest::Method::GET, "/api/conversations")
        .await;
    assert_eq!(listed["current"], conversation.as_str(), "{listed}");
    let conversations = listed["conversations"].as_array().unwrap();
    assert_eq!(conversations.len(), 1, "{listed}");
    let summary = &conversations[0];
    assert_eq!(summary["id"], conversation.as_str(), "{summary}");
    assert!(
        summary["message_count"].as_u64().unwrap() >= 2,
        "the question and the answer: {summary}"
    );
    // B opens it: the turn's history and its tokens (step usage) come from PostgreSQL.
    let opened = page_b
        .call(
            reqwest::Method::GET,
            &format!("/api/conversations/{conversation}"),
        )
        .await;
    let history = opened["history"].to_string();
    assert!(history.contains("hi from A"), "{opened}");
    assert!(
        opened["usage"]["total"]["input"].as_u64().unwrap() > 0,
        "{opened}"
    );

    // A conversation started on B is listed by A, most recent first.
    let started = page_b
        .call(reqwest::Method::POST, "/api/conversations")
        .await;
    let listed = page_a
        .call(reqwest::Method::GET, "/api/conversations")
        .await;
    let ids: Vec<&str> = listed["conversations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|summary| summary["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 2, "{listed} after {started}");
    assert_eq!(ids[1], conversation, "{listed}");

    // The rows are in PostgreSQL (not in either home's SQLite file), and so is the page agent's
    // model call in the shared ledger.
    let db = connect(&database).await;
    let messages: i64 = db
        .query_one(
            "SELECT count(*) FROM conversation_messages WHERE conversation_id = $1",
            &[&conversation],
        )
        .await
        .unwrap()
        .get(0);
    assert!(messages >= 2, "{messages} messages in PostgreSQL");
    let agent_rows: i64 = db
        .query_one(
            "SELECT count(*) FROM usage_events WHERE front_end = 'web'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(agent_rows, 1, "the page agent's one model call");
    drop(socket);
    a.stop();
    b.stop();
}

/// `corvid exec` in team mode keeps its conversation on PostgreSQL too, so an instance's page
/// (another corvid home, the same project) lists and opens it; on a database not yet migrated
/// it refuses, naming `corvid migrate`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corvid_exec_keeps_its_conversation_on_postgresql() {
    let Some(team) = Team::migrated("").await else {
        return;
    };
    let project = tempfile::tempdir().unwrap();
    let out = stdout(&run(corvid(team.home(), &team.database)
        .current_dir(project.path())
        .args(["exec", "hi from exec"])));
    assert!(!out.trim().is_empty(), "exec printed its answer");

    let other_home = home(&team.upstream.base_url());
    let server = start_server_in(other_home.path(), &team.database, project.path()).await;
    let page = Page::of(&server, other_home.path()).await;
    let listed = page.call(reqwest::Method::GET, "/api/conversations").await;
    let conversations = listed["conversations"].as_array().unwrap();
    let with_exec: Vec<&Value> = conversations
        .iter()
        .filter(|summary| summary["message_count"].as_u64().unwrap_or(0) >= 2)
        .collect();
    assert_eq!(with_exec.len(), 1, "{listed}");
    let id = with_exec[0]["id"].as_str().unwrap();
    let opened = page
        .call(reqwest::Method::GET, &format!("/api/conversations/{id}"))
        .await;
    assert!(
        opened["history"].to_string().contains("hi from exec"),
        "{opened}"
    );
    server.stop();

    // A database nobody migrated: exec refuses before anything is written.
    let Some(unmigrated) = fresh_database().await else {
        return;
    };
    let refused = run(corvid(team.home(), &unmigrated)
        .current_dir(project.path())
        .args(["exec", "hi"]));
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("corvid migrate"), "{said}");
}

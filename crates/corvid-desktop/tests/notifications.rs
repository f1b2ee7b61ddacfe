//! The desktop app's system notifications on Linux, headless: `corvid-desktop` on a free port in
//! front of a mock provider, an `org.freedesktop.Notifications` double on a private session bus.
//! A tab that is looked at gets no notification for its turn; once it reports it is not looked
//! at, the approval the next turn waits for is notified (summary and body), and a click on the
//! notification (`ActionInvoked(id, "default")`) opens the chat. Run under `dbus-run-session`
//! (scripts/test does):
//!
//! ```text
//! dbus-run-session -- cargo test -p corvid-desktop --test notifications -- --ignored --test-threads=1
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use corvid_test_support::{MockUpstream, Reply};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use zbus::object_server::SignalEmitter;
use zbus::zvariant::OwnedValue;

const DESKTOP: &str = env!("CARGO_BIN_EXE_corvid-desktop");
const CHAT: &str = "/v1/chat/completions";
const PATH: &str = "/org/freedesktop/Notifications";

/// One `Notify` call the double received.
#[derive(Debug, Clone)]
struct Shown {
    id: u32,
    app: String,
    summary: String,
    body: String,
    actions: Vec<String>,
}

/// The notification server double: records each `Notify`, numbers them.
struct Notifications {
    shown: mpsc::UnboundedSender<Shown>,
    next: AtomicU32,
}

#[zbus::interface(name = "org.freedesktop.Notifications")]
impl Notifications {
    #[allow(clippy::too_many_arguments)] // the specification's signature
    fn notify(
        &self,
        app_name: String,
        replaces_id: u32,
        _app_icon: String,
        summary: String,
        body: String,
        actions: Vec<String>,
        _hints: HashMap<String, OwnedValue>,
        _expire_timeout: i32,
    ) -> u32 {
        let id = if replaces_id == 0 {
            self.next.fetch_add(1, Ordering::SeqCst) + 1
        } else {
            replaces_id
        };
        let _ = self.shown.send(Shown {
            id,
            app: app_name,
            summary,
            body,
            actions,
        });
        id
    }

    fn get_capabilities(&self) -> Vec<String> {
        vec!["actions".to_owned(), "body".to_owned()]
    }

    fn close_notification(&self, _id: u32) {}

    fn get_server_information(&self) -> (String, String, String, String) {
        (
            "double".to_owned(),
            "corvid tests".to_owned(),
            "1".to_owned(),
            "1.2".to_owned(),
        )
    }

    #[zbus(signal)]
    async fn action_invoked(
        emitter: &SignalEmitter<'_>,
        id: u32,
        action_key: &str,
    ) -> zbus::Result<()>;
}

/// A streamed chat-completion chunk.
fn chunk(delta: Value, finish: Value) -> String {
    json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "grok-4.6",
           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    .to_string()
}

fn streamed(mut chunks: Vec<String>) -> Reply {
    chunks.push(
        json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "grok-4.6",
               "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}})
        .to_string(),
    );
    chunks.push("[DONE]".to_owned());
    let refs: Vec<&str> = chunks.iter().map(String::as_str).collect();
    Reply::sse(&refs, Duration::ZERO)
}

/// A tab's socket, as the page opens it: its name and whether it is looked at in the query.
async fn tab(
    port: u16,
    token: &str,
    focused: bool,
) -> tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>> {
    let url = format!(
        "ws://127.0.0.1:{port}/api/agent/ws?tab=t1&focused={}",
        u8::from(focused)
    );
    let mut request =
        tokio_tungstenite::tungstenite::client::IntoClientRequest::into_client_request(url)
            .unwrap();
    let headers = request.headers_mut();
    headers.insert("Authorization", format!("Bearer {token}").parse().unwrap());
    headers.insert(
        "Origin",
        format!("http://127.0.0.1:{port}").parse().unwrap(),
    );
    tokio_tungstenite::connect_async(request).await.unwrap().0
}

/// Reads the tab's frames until one matches `wanted`.
async fn until_frame(
    socket: &mut tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >,
    wanted: impl Fn(&Value) -> bool,
) -> Value {
    tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(message) = socket.next().await {
            if let Message::Text(text) = message.unwrap() {
                let frame: Value = serde_json::from_str(&text).unwrap();
                if wanted(&frame) {
                    return frame;
                }
            }
        }
        panic!("the socket closed");
    })
    .await
    .expect("the frame never came")
}

fn send(text: &str, id: &str) -> Message {
    Message::Text(
        json!({"type": "submission", "id": id, "op": {"type": "send", "text": text}})
            .to_string()
            .into(),
    )
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs a private session bus: dbus-run-session -- cargo test -p corvid-desktop --test notifications -- --ignored"]
async fn an_approval_nobody_looks_at_is_notified_and_a_click_opens_the_chat() {
    let bus = std::env::var("DBUS_SESSION_BUS_ADDRESS")
        .expect("run under dbus-run-session (DBUS_SESSION_BUS_ADDRESS is not set)");
    let (shown, mut notified) = mpsc::unbounded_channel();
    let server = zbus::connection::Builder::session()
        .unwrap()
        .name("org.freedesktop.Notifications")
        .unwrap()
        .serve_at(
            PATH,
            Notifications {
                shown,
                next: AtomicU32::new(0),
            },
        )
        .unwrap()
        .build()
        .await
        .unwrap();

    let upstream = MockUpstream::start().await;
    // Turn 1 answers; turn 2 asks to run a command (an approval under the default policy).
    upstream.enqueue(
        CHAT,
        streamed(vec![
            chunk(json!({"content": "Hello."}), Value::Null),
            chunk(json!({}), json!("stop")),
        ]),
    );
    upstream.enqueue(
        CHAT,
        streamed(vec![
            chunk(
                json!({"tool_calls": [{"index": 0, "id": "b1", "type": "function", "function": {"name": "bash", "arguments": r#"{"command":"touch marker"}"#}}]}),
                Value::Null,
            ),
            chunk(json!({}), json!("tool_calls")),
        ]),
    );
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let mut app = tokio::process::Command::new(DESKTOP)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("CORVID_HOME", home.path())
        .env("CORVID_KEYRING", "off")
        .env("CORVID_UPSTREAM", upstream.base_url())
        .env("XAI_API_KEY", "upstream-key")
        .env("DBUS_SESSION_BUS_ADDRESS", &bus)
        .env("RUST_LOG", "info,corvid_desktop=debug")
        .arg("--project")
        .arg(project.path())
        .args(["--port", "0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let log = Arc::new(Mutex::new(String::new()));
    let (ports, mut port) = mpsc::unbounded_channel();
    let kept = Arc::clone(&log);
    let stderr = app.stderr.take().unwrap();
    tokio::spawn(async move {
        let mut lines = BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some((_, rest)) = line.split_once("corvid listening on http://127.0.0.1:") {
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                let _ = ports.send(digits.parse::<u16>().unwrap());
            }
            let mut log = kept.lock().unwrap();
            log.push_str(&line);
            log.push('\n');
        }
    });
    let (said, mut stdout) = mpsc::unbounded_channel();
    let out = app.stdout.take().unwrap();
    tokio::spawn(async move {
        let mut lines = BufReader::new(out).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let _ = said.send(line);
        }
    });
    let port = tokio::time::timeout(Duration::from_secs(30), port.recv())
        .await
        .unwrap_or_else(|_| panic!("no listening line; log:\n{}", log.lock().unwrap()))
        .unwrap();
    let page_file = home.path().join("page-url");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !page_file.exists() {
        assert!(Instant::now() < deadline, "no page-url");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let page = std::fs::read_to_string(&page_file).unwrap();
    let token = page.trim().rsplit_once("token=").unwrap().1.to_owned();

    // A tab that is looked at: its turn ends with no notification.
    let mut socket = tab(port, &token, true).await;
    socket.send(send("say hello", "s1")).await.unwrap();
    until_frame(&mut socket, |frame| {
        frame["type"] == "event" && frame["msg"]["type"] == "turn_finished"
    })
    .await;

    // The user looks away (the page's report); the next turn waits for an approval.
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let origin = format!("http://127.0.0.1:{port}");
    let reported = client
        .post(format!("{origin}/api/agent/focus"))
        .bearer_auth(&token)
        .header("Origin", &origin)
        .json(&json!({"tab": "t1", "focused": false}))
        .send()
        .await
        .unwrap();
    assert_eq!(reported.status(), 204);
    socket.send(send("make a marker", "s2")).await.unwrap();
    let request = until_frame(&mut socket, |frame| frame["type"] == "request").await;
    assert_eq!(
        request["approval"]["title"], "Run touch marker",
        "{request}"
    );

    let notice = tokio::time::timeout(Duration::from_secs(10), notified.recv())
        .await
        .unwrap_or_else(|_| panic!("no notification; log:\n{}", log.lock().unwrap()))
        .unwrap();
    // The first turn's end was looked at: the first notification is the approval's.
    assert_eq!(notice.app, "corvid");
    assert_eq!(notice.summary, "corvid: approval needed", "{notice:?}");
    assert!(
        notice.body.starts_with("Run touch marker — in "),
        "{notice:?}"
    );
    assert_eq!(notice.actions, ["default", "Open chat"]);
    assert!(notified.try_recv().is_err(), "one notification only");

    // A click on it opens the chat (no browser here: the app prints the page's link). The app
    // knows the notification's id once the Notify reply reaches it, which may be just after
    // the double saw the call: click until it answers.
    let interface = server
        .object_server()
        .interface::<_, Notifications>(PATH)
        .await
        .unwrap();
    let opened = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            Notifications::action_invoked(interface.signal_emitter(), notice.id, "default")
                .await
                .unwrap();
            let said = tokio::time::timeout(Duration::from_millis(300), async {
                while let Some(line) = stdout.recv().await {
                    if line.starts_with("corvid: no browser to open; visit ") {
                        return line;
                    }
                }
                panic!("stdout closed");
            })
            .await;
            if let Ok(line) = said {
                return line;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("the click opened nothing; log:\n{}", log.lock().unwrap()));
    assert!(opened.ends_with(page.trim()), "{opened}");

    drop(socket);
    // SIGTERM: the same graceful stop as Quit.
    let pid = app.id().unwrap();
    std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    let status = tokio::time::timeout(Duration::from_secs(10), app.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(
        status.success(),
        "{status:?}; log:\n{}",
        log.lock().unwrap()
    );
}

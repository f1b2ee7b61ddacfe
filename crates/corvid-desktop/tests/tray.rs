//! The tray on Linux, headless: `corvid-desktop` on a free port in front of a mock provider,
//! its StatusNotifierItem registered with a StatusNotifierWatcher double on a private session
//! bus. Run under `dbus-run-session` (scripts/test does):
//!
//! ```text
//! dbus-run-session -- cargo test -p corvid-desktop --test tray -- --ignored --test-threads=1
//! ```
//!
//! (One test at a time: each owns the watcher's well-known name on the bus.)

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use corvid_test_support::{MockUpstream, Reply};
use futures_util::StreamExt;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::mpsc;
use zbus::object_server::SignalEmitter;
use zbus::proxy::CacheProperties;
use zbus::zvariant::{OwnedValue, Value};

const DESKTOP: &str = env!("CARGO_BIN_EXE_corvid-desktop");

/// The watcher double: takes registrations, says a host is there, and reports each item.
struct Watcher {
    items: Arc<Mutex<Vec<String>>>,
    registered: mpsc::UnboundedSender<String>,
}

#[zbus::interface(name = "org.kde.StatusNotifierWatcher")]
impl Watcher {
    async fn register_status_notifier_item(
        &self,
        service: String,
        #[zbus(header)] header: zbus::message::Header<'_>,
        #[zbus(signal_emitter)] emitter: SignalEmitter<'_>,
    ) {
        // An item names either its bus name or only its object path (then: the sender's).
        let item = if service.starts_with('/') {
            let sender = header.sender().map(ToString::to_string).unwrap_or_default();
            format!("{sender}{service}")
        } else {
            service
        };
        self.items.lock().unwrap().push(item.clone());
        let _ = Self::status_notifier_item_registered(&emitter, &item).await;
        let _ = self.registered.send(item);
    }

    fn register_status_notifier_host(&self, _service: String) {}

    #[zbus(property)]
    fn registered_status_notifier_items(&self) -> Vec<String> {
        self.items.lock().unwrap().clone()
    }

    #[zbus(property)]
    fn is_status_notifier_host_registered(&self) -> bool {
        true
    }

    #[zbus(property)]
    fn protocol_version(&self) -> i32 {
        0
    }

    #[zbus(signal)]
    async fn status_notifier_item_registered(
        emitter: &SignalEmitter<'_>,
        service: &str,
    ) -> zbus::Result<()>;
}

/// A dbusmenu node: its id, its properties, its children (each a variant of a node).
type Node = (i32, HashMap<String, OwnedValue>, Vec<OwnedValue>);

/// One entry of the item's menu, as `GetLayout` gives it.
#[derive(Debug)]
struct MenuEntry {
    id: i32,
    label: String,
    enabled: bool,
}

struct Item {
    properties: zbus::Proxy<'static>,
    menu: zbus::Proxy<'static>,
}

impl Item {
    async fn connect(bus: &zbus::Connection, item: &str) -> Self {
        let (destination, path) = match item.find('/') {
            Some(slash) => (item[..slash].to_owned(), item[slash..].to_owned()),
            None => (item.to_owned(), "/StatusNotifierItem".to_owned()),
        };
        let properties = proxy(bus, &destination, &path, "org.kde.StatusNotifierItem").await;
        let menu_path: zbus::zvariant::OwnedObjectPath =
            properties.get_property("Menu").await.unwrap();
        let menu = proxy(
            bus,
            &destination,
            menu_path.as_str(),
            "com.canonical.dbusmenu",
        )
        .await;
        Self { properties, menu }
    }

    async fn text(&self, name: &str) -> String {
        self.properties.get_property(name).await.unwrap()
    }

    async fn entries(&self) -> Vec<MenuEntry> {
        let (_revision, (_root, _props, children)): (u32, Node) = self
            .menu
            .call("GetLayout", &(0i32, -1i32, Vec::<String>::new()))
            .await
            .unwrap();
        children
            .into_iter()
            .map(|child| {
                let (id, props, _children): Node = Value::from(child).try_into().unwrap();
                let label = props
                    .get("label")
                    .and_then(|label| String::try_from(label.try_clone().unwrap()).ok())
                    .unwrap_or_default();
                let enabled = props
                    .get("enabled")
                    .is_none_or(|enabled| bool::try_from(enabled).unwrap());
                MenuEntry { id, label, enabled }
            })
            .collect()
    }

    async fn labels(&self) -> Vec<String> {
        self.entries()
            .await
            .into_iter()
            .map(|entry| entry.label)
            .filter(|label| !label.is_empty())
            .collect()
    }

    async fn click(&self, id: i32) {
        self.menu
            .call_method("Event", &(id, "clicked", Value::from(0i32), 0u32))
            .await
            .unwrap();
    }

    /// Waits until the title and status are the ones wanted.
    async fn wait_for(&self, title: &str, status: &str) {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let (now_title, now_status) = (self.text("Title").await, self.text("Status").await);
            if now_title == title && now_status == status {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the tray says {now_title:?} / {now_status:?}, not {title:?} / {status:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

async fn proxy(
    bus: &zbus::Connection,
    destination: &str,
    path: &str,
    interface: &str,
) -> zbus::Proxy<'static> {
    zbus::proxy::Builder::<zbus::Proxy>::new(bus)
        .destination(destination.to_owned())
        .unwrap()
        .path(path.to_owned())
        .unwrap()
        .interface(interface.to_owned())
        .unwrap()
        // The item announces changes with its own signals, not PropertiesChanged: read afresh.
        .cache_properties(CacheProperties::No)
        .build()
        .await
        .unwrap()
}

fn desktop(home: &Path, upstream: &MockUpstream, bus: &str) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(DESKTOP);
    command
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("CORVID_HOME", home)
        .env("CORVID_UPSTREAM", upstream.base_url())
        .env("DBUS_SESSION_BUS_ADDRESS", bus)
        .env("RUST_LOG", "info")
        .stdin(Stdio::null());
    command
}

/// The processes in the process group `group` (the app was started as its leader, so its
/// children are in it unless they left on purpose).
fn group_members(group: u32) -> Vec<u32> {
    let mut members = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // After the command's closing parenthesis: state, ppid, pgrp.
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest.split_whitespace().collect())
            .unwrap_or_default();
        if fields.get(2).and_then(|pgrp| pgrp.parse::<u32>().ok()) == Some(group) {
            members.push(pid);
        }
    }
    members
}

/// A private bus's address, a connection owning the watcher's name, and the items registering.
async fn watch_the_bus() -> (String, zbus::Connection, mpsc::UnboundedReceiver<String>) {
    let bus = std::env::var("DBUS_SESSION_BUS_ADDRESS")
        .expect("run under dbus-run-session (DBUS_SESSION_BUS_ADDRESS is not set)");
    let (registered, registrations) = mpsc::unbounded_channel();
    let watcher = Watcher {
        items: Arc::default(),
        registered,
    };
    let session = zbus::connection::Builder::session()
        .unwrap()
        .name("org.kde.StatusNotifierWatcher")
        .unwrap()
        .serve_at("/StatusNotifierWatcher", watcher)
        .unwrap()
        .build()
        .await
        .unwrap();

    (bus, session, registrations)
}

/// A started app: the process, its process group, its port, and its log so far.
struct Running {
    app: tokio::process::Child,
    group: u32,
    port: u16,
    log: Arc<Mutex<String>>,
}

/// Starts `command` on a free port and waits for its "listening on" line (the same as
/// `corvid serve`'s), which names the port; its output is drained from then on.
async fn start(command: &mut tokio::process::Command) -> Running {
    let mut app = command
        .args(["--port", "0"])
        .kill_on_drop(true)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let group = app.id().unwrap();
    // The log names the port (the same "listening on" line as `corvid serve`); keep draining it.
    let (ports, mut port) = mpsc::unbounded_channel();
    let log = Arc::new(Mutex::new(String::new()));
    let stderr = app.stderr.take().unwrap();
    let kept = Arc::clone(&log);
    tokio::spawn(async move {
        let mut lines = BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some((_, rest)) = line.split_once("corvid listening on http://127.0.0.1:") {
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                let _ = ports.send(digits.parse::<u16>().unwrap());
            }
            kept.lock().unwrap().push_str(&line);
            kept.lock().unwrap().push('\n');
        }
    });
    let stdout = app.stdout.take().unwrap();
    tokio::spawn(async move {
        let mut lines = BufReader::new(stdout).lines();
        while let Ok(Some(_)) = lines.next_line().await {}
    });
    let port = tokio::time::timeout(Duration::from_secs(30), port.recv())
        .await
        .unwrap_or_else(|_| panic!("no listening line; log:\n{}", log.lock().unwrap()))
        .unwrap();

    Running {
        app,
        group,
        port,
        log,
    }
}

fn chat(text: &str) -> serde_json::Value {
    json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "grok-4.6",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
    })
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs a private session bus: dbus-run-session -- cargo test -p corvid-desktop --test tray -- --ignored"]
async fn the_tray_shows_the_gateway_and_quit_stops_it_cleanly() {
    let (bus, session, mut registrations) = watch_the_bus().await;

    let upstream = MockUpstream::start().await;
    upstream.enqueue("/v1/chat/completions", Reply::ok(chat("first")));
    upstream.enqueue(
        "/v1/chat/completions",
        Reply::status(
            http::StatusCode::INTERNAL_SERVER_ERROR,
            json!({"error": {"message": "the model is on fire"}}),
        ),
    );
    let (feed, stream) = Reply::fed();
    upstream.enqueue("/v1/chat/completions", stream);
    let home = tempfile::tempdir().unwrap();

    let Running {
        mut app,
        group,
        port,
        log,
    } = start(desktop(home.path(), &upstream, &bus).env("XAI_API_KEY", "upstream-key")).await;

    // The item registers with the watcher, and shows a running gateway.
    let item = tokio::time::timeout(Duration::from_secs(15), registrations.recv())
        .await
        .expect("the item never registered")
        .unwrap();
    let item = Item::connect(&session, &item).await;
    item.wait_for("corvid", "Active").await;
    let address = format!("127.0.0.1:{port}");
    assert_eq!(
        item.labels().await,
        [
            format!("Gateway: running on {address}"),
            "Open chat".to_owned(),
            "Settings…".to_owned(),
            "Sign in to xAI (SuperGrok)…".to_owned(),
            "Sign in to Zed…".to_owned(),
            "Copy Zed settings".to_owned(),
            "Start at login".to_owned(),
            "Quit".to_owned(),
        ]
    );
    let entries = item.entries().await;
    assert!(!entries[0].enabled, "the status line is not a button");
    assert!(
        entries
            .iter()
            .any(|entry| entry.label == "Quit" && entry.enabled)
    );
    assert_eq!(item.text("IconName").await, "network-server");

    // A second launch on the same port finds this one and hands over its page.
    let second = desktop(home.path(), &upstream, &bus)
        .env("XAI_API_KEY", "upstream-key")
        .args(["--port", &port.to_string()])
        .output()
        .await
        .unwrap();
    assert!(second.status.success(), "{second:?}");
    let said = String::from_utf8_lossy(&second.stdout);
    assert!(
        said.contains(&format!(
            "corvid is already running: its page is http://{address}/?token="
        )),
        "{said}"
    );

    // A request that works, then one the provider fails: the tray says so.
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let url = format!("http://{address}/v1/chat/completions");
    let ask = |stream: bool| {
        client
            .post(&url)
            .json(&json!({"model": "grok-4.6", "stream": stream, "messages": [{"role": "user", "content": "hi"}]}))
            .send()
    };
    assert_eq!(ask(false).await.unwrap().status(), 200);
    assert_eq!(ask(false).await.unwrap().status(), 500);
    item.wait_for("corvid: xai failing", "NeedsAttention").await;
    let labels = item.labels().await;
    assert_eq!(
        labels[0],
        format!("Gateway: running on {address}; xai failing")
    );
    assert_eq!(labels[1], "xai: 500 the model is on fire");
    assert_eq!(item.text("IconName").await, "dialog-warning");

    // A stream in flight when Quit is clicked.
    let response = ask(true).await.unwrap();
    assert_eq!(response.status(), 200);
    let mut body = response.bytes_stream();
    feed.event(r#"{"id":"c","object":"chat.completion.chunk","model":"grok-4.6","choices":[{"index":0,"delta":{"content":"a"}}]}"#);
    body.next().await.unwrap().unwrap();
    assert!(!group_members(group).is_empty());

    let quit = item
        .entries()
        .await
        .into_iter()
        .find(|entry| entry.label == "Quit")
        .unwrap();
    let clicked = Instant::now();
    item.click(quit.id).await;

    // The port closes at once; the stream in flight still finishes.
    let mut refused = false;
    for _ in 0..200 {
        if std::net::TcpStream::connect(&address).is_err() {
            refused = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(refused, "still accepting after Quit");
    feed.event(r#"{"id":"c","object":"chat.completion.chunk","model":"grok-4.6","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}"#);
    feed.event("[DONE]");
    drop(feed);
    let mut rest = Vec::new();
    while let Some(chunk) = body.next().await {
        rest.extend_from_slice(&chunk.unwrap());
    }
    assert!(String::from_utf8_lossy(&rest).contains("[DONE]"));

    let status = tokio::time::timeout(Duration::from_secs(5), app.wait())
        .await
        .unwrap_or_else(|_| {
            panic!(
                "still running 5 s after Quit; log:\n{}",
                log.lock().unwrap()
            )
        })
        .unwrap();
    assert!(
        status.success(),
        "{status:?}; log:\n{}",
        log.lock().unwrap()
    );
    assert!(clicked.elapsed() < Duration::from_secs(5));
    assert!(std::net::TcpStream::connect(&address).is_err());
    assert_eq!(group_members(group), Vec::<u32>::new(), "a child survived");
    assert!(
        log.lock().unwrap().contains("Quit picked in the tray"),
        "{}",
        log.lock().unwrap()
    );

    // Every request made before Quit is in the ledger, the stream's included.
    let store = corvid_store::Store::open(&home.path().join("corvid.db")).unwrap();
    let totals = store.totals(None).unwrap();
    assert_eq!(totals.requests, 3, "{totals:?}");
    assert_eq!(totals.errors, 1, "{totals:?}");
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs a private session bus: dbus-run-session -- cargo test -p corvid-desktop --test tray -- --ignored --test-threads=1"]
async fn a_key_added_on_disk_is_used_without_a_restart_and_an_invalid_edit_keeps_serving() {
    let (bus, session, mut registrations) = watch_the_bus().await;
    let upstream = MockUpstream::start().await;
    let home = tempfile::tempdir().unwrap();
    let Running {
        mut app, port, log, ..
    } = start(&mut desktop(home.path(), &upstream, &bus)).await;
    let item = tokio::time::timeout(Duration::from_secs(15), registrations.recv())
        .await
        .expect("the item never registered")
        .unwrap();
    let item = Item::connect(&session, &item).await;
    let address = format!("127.0.0.1:{port}");
    let page_file = home.path().join("page-url");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !page_file.exists() {
        assert!(Instant::now() < deadline, "no page-url");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let page = std::fs::read_to_string(&page_file).unwrap();
    // A first run: the menu says how to go on.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !item
        .labels()
        .await
        .contains(&"No provider connected yet: Settings… to add one".to_owned())
    {
        assert!(Instant::now() < deadline, "{:?}", item.labels().await);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let url = format!("http://{address}/v1/chat/completions");
    let ask = || {
        client
            .post(&url)
            .json(&json!({"model": "grok-4.6", "messages": [{"role": "user", "content": "hi"}]}))
            .send()
    };
    assert_eq!(ask().await.unwrap().status(), 401);

    // A key written to the env file (as the page's settings or `corvid login` do).
    let env_file = home.path().join("env");
    std::fs::write(&env_file, "XAI_API_KEY=upstream-key\n").unwrap();
    std::fs::set_permissions(
        &env_file,
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        if let Ok(response) = ask().await
            && response.status() == 200
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the key was never used; log:\n{}",
            log.lock().unwrap()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(app.try_wait().unwrap().is_none(), "the process restarted");
    let upstream_saw = upstream.requests();
    assert_eq!(
        upstream_saw.last().unwrap().headers["authorization"],
        "Bearer upstream-key"
    );
    // Same port, same page link: open pages keep working.
    assert_eq!(std::fs::read_to_string(&page_file).unwrap(), page);

    // An invalid edit: the menu says so, and the running settings keep serving.
    std::fs::write(home.path().join("config.toml"), "max_retries = \"many\"\n").unwrap();
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let labels = item.labels().await;
        if labels
            .iter()
            .any(|label| label.starts_with("Settings not applied: "))
        {
            break;
        }
        assert!(Instant::now() < deadline, "{labels:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(ask().await.unwrap().status(), 200);

    let quit = item
        .entries()
        .await
        .into_iter()
        .find(|entry| entry.label == "Quit")
        .unwrap();
    item.click(quit.id).await;
    let status = tokio::time::timeout(Duration::from_secs(5), app.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(
        status.success(),
        "{status:?}; log:\n{}",
        log.lock().unwrap()
    );
}

//! A running `corvid serve --port 0` in front of a mock upstream, as the live-settings tests
//! drive it: its chat endpoint, the page's API with its token, the Status tab, a tab's socket.

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use corvid_test_support::MockUpstream;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use super::corvid;

/// A running `corvid serve --port 0`: the process, its port, the page's token, its log.
pub(crate) struct Serving {
    pub(crate) child: tokio::process::Child,
    pub(crate) port: u16,
    pub(crate) token: String,
    pub(crate) log: Arc<Mutex<String>>,
    pub(crate) client: reqwest::Client,
}

pub(crate) async fn serve(home: &Path, upstream: &MockUpstream) -> Serving {
    let mut child = corvid(home)
        .env("HOME", home)
        .env("CORVID_KEYRING", "off")
        .env("CORVID_UPSTREAM", upstream.base_url())
        .env("NO_COLOR", "1")
        .env("RUST_LOG", "info")
        .args(["serve", "--port", "0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let (ports, mut port) = tokio::sync::mpsc::unbounded_channel();
    let log = Arc::new(Mutex::new(String::new()));
    let kept = Arc::clone(&log);
    let stderr = child.stderr.take().unwrap();
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
    let port = tokio::time::timeout(Duration::from_secs(30), port.recv())
        .await
        .unwrap_or_else(|_| panic!("serve never listened:\n{}", log.lock().unwrap()))
        .unwrap();
    let page_file = home.join("page-url");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !page_file.exists() {
        assert!(Instant::now() < deadline, "no page-url");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let url = std::fs::read_to_string(page_file).unwrap();
    let token = url.trim().rsplit_once("token=").unwrap().1.to_owned();
    Serving {
        child,
        port,
        token,
        log,
        client: reqwest::Client::builder().no_proxy().build().unwrap(),
    }
}

impl Serving {
    pub(crate) async fn ask(&self) -> u16 {
        self.client
            .post(format!(
                "http://127.0.0.1:{}/v1/chat/completions",
                self.port
            ))
            .json(&json!({"model": "grok-4.6", "messages": [{"role": "user", "content": "hi"}]}))
            .send()
            .await
            .unwrap()
            .status()
            .as_u16()
    }

    /// A page API call, as the page makes it (the token, corvid's own origin).
    pub(crate) async fn page(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Value {
        let origin = format!("http://127.0.0.1:{}", self.port);
        let mut request = self
            .client
            .request(method, format!("{origin}{path}"))
            .bearer_auth(&self.token)
            .header("Origin", &origin);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.unwrap();
        assert!(response.status().is_success(), "{path}: {response:?}");
        response.json().await.unwrap()
    }

    pub(crate) async fn status(&self) -> Value {
        self.page(reqwest::Method::GET, "/api/status", None).await
    }

    /// Waits until a request is answered 200 with `bearer` sent upstream.
    pub(crate) async fn until_used(&self, upstream: &MockUpstream, bearer: &str) {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if self.ask().await == 200 && last_bearer(upstream) == bearer {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{bearer} was never used; log:\n{}",
                self.log.lock().unwrap()
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// A tab's socket, as the page opens it.
    pub(crate) async fn tab(
        &self,
    ) -> tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>
    {
        let ws_url = format!("ws://127.0.0.1:{}/api/agent/ws", self.port);
        let mut request =
            tokio_tungstenite::tungstenite::client::IntoClientRequest::into_client_request(ws_url)
                .unwrap();
        let headers = request.headers_mut();
        headers.insert(
            "Authorization",
            format!("Bearer {}", self.token).parse().unwrap(),
        );
        headers.insert(
            "Origin",
            format!("http://127.0.0.1:{}", self.port).parse().unwrap(),
        );
        tokio_tungstenite::connect_async(request).await.unwrap().0
    }

    pub(crate) fn still_running(&mut self) {
        assert!(
            self.child.try_wait().unwrap().is_none(),
            "serve exited; log:\n{}",
            self.log.lock().unwrap()
        );
    }
}

pub(crate) fn last_bearer(upstream: &MockUpstream) -> String {
    upstream
        .requests()
        .last()
        .and_then(|request| {
            request
                .headers
                .get("authorization")
                .and_then(|value| value.to_str().ok())
                .map(str::to_owned)
        })
        .unwrap_or_default()
}

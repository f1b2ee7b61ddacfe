use std::net::SocketAddr;
use std::time::Duration;

use corvid_auth::{Credential, Secret};
use corvid_config::Config;
use corvid_gateway::{AppState, router};
use corvid_providers::{Upstream, build_transport};
use corvid_test_support::MockUpstream;

/// A running gateway in front of a mock upstream.
pub(crate) struct Gateway {
    pub(crate) addr: SocketAddr,
    pub(crate) upstream: MockUpstream,
    pub(crate) client: reqwest::Client,
    _stop: tokio::sync::oneshot::Sender<()>,
}

pub(crate) const UPSTREAM_KEY: &str = "upstream-test-key";

impl Gateway {
    pub(crate) async fn start() -> Self {
        Self::start_with(|_| {}).await
    }

    pub(crate) async fn start_with(configure: impl FnOnce(&mut Config)) -> Self {
        Self::start_with_credential(configure, Credential::ApiKey(Secret::new(UPSTREAM_KEY))).await
    }

    pub(crate) async fn start_with_credential(
        configure: impl FnOnce(&mut Config),
        credential: Credential,
    ) -> Self {
        let upstream = MockUpstream::start().await;
        let mut config = Config {
            upstream: upstream.base_url(),
            ..Config::default()
        };
        configure(&mut config);
        let http = build_transport(&config).unwrap();
        let provider = Upstream::new(http, &config.upstream, credential, config.max_retries);
        let app = router(AppState::new(config, provider));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(corvid_gateway::serve(
            listener,
            app,
            async move {
                let _ = stopped.await;
            },
            Duration::from_secs(1),
        ));
        let client = reqwest::Client::builder().no_proxy().build().unwrap();
        Self {
            addr,
            upstream,
            client,
            _stop: stop,
        }
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// POSTs JSON text with a dummy client key, as Zed does.
    pub(crate) async fn post(&self, path: &str, body: &str) -> reqwest::Response {
        self.client
            .post(self.url(path))
            .header("authorization", "Bearer client-dummy-key")
            .header("content-type", "application/json")
            .body(body.to_owned())
            .send()
            .await
            .unwrap()
    }
}

/// Waits (bounded) until `condition` holds; for effects that happen on another task.
pub(crate) async fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    for _ in 0..200 {
        if condition() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("timed out waiting until {what}");
}

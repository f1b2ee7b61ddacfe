//! The routing tests' gateway: named providers, each on its own mock (or a dead port), with
//! a ledger to read the rows back.

use std::collections::BTreeMap;
use std::time::Duration;

use corvid_auth::{Credential, Secret};
use corvid_config::{
    Capabilities, Config, CredentialSource, ProviderConfig, ProviderKind, RouteTargets,
};
use corvid_gateway::{AppState, router};
use corvid_providers::Registry;
use corvid_store::{Store, UsageRecorder};
use corvid_test_support::MockUpstream;
use serde_json::{Value, json};

/// A gateway over named providers, each on its own mock (or on a dead port).
pub(crate) struct Routed {
    pub(crate) addr: std::net::SocketAddr,
    client: reqwest::Client,
    ledger: std::path::PathBuf,
    recorder: UsageRecorder,
    _dir: tempfile::TempDir,
    _stop: tokio::sync::oneshot::Sender<()>,
}

/// A provider of `kind` at `base_url` with `keys` keys named `<name>-key-<i>`.
pub(crate) fn provider(
    name: &str,
    kind: ProviderKind,
    base_url: &str,
    keys: usize,
) -> ProviderConfig {
    ProviderConfig {
        name: name.to_owned(),
        kind,
        base_url: base_url.to_owned(),
        credential: CredentialSource::Env(vec![format!("{name}_KEY")]),
        key_pool: (1..keys)
            .map(|index| format!("{name}_KEY_{index}"))
            .collect(),
        headers: Vec::new(),
        models: Vec::new(),
        model_rules: BTreeMap::new(),
        explicit: true,
        enabled: true,
        capabilities: Capabilities::PLAIN,
    }
}

/// A base URL nothing listens on.
pub(crate) const DEAD: &str = "http://127.0.0.1:1/v1";

impl Routed {
    pub(crate) async fn start(
        providers: Vec<ProviderConfig>,
        configure: impl FnOnce(&mut Config),
    ) -> Self {
        let mut config = Config {
            max_retries: 0,
            ..Config::default()
        };
        config.providers.extend(providers);
        configure(&mut config);
        let registry = Registry::build_pooled(&config, |provider| {
            (0..=provider.key_pool.len())
                .map(|index| Credential::Key {
                    provider: provider.name.clone(),
                    secret: Secret::new(format!("{}-key-{index}", provider.name)),
                })
                .collect()
        })
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let ledger = dir.path().join("corvid.db");
        let recorder = UsageRecorder::spawn(Store::open(&ledger).unwrap()).unwrap();
        let state = AppState::new(config, registry).with_recorder(recorder.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(corvid_gateway::serve(
            listener,
            router(state),
            async move {
                let _ = stopped.await;
            },
            Duration::from_secs(1),
        ));
        Self {
            addr,
            client: reqwest::Client::builder().no_proxy().build().unwrap(),
            ledger,
            recorder,
            _dir: dir,
            _stop: stop,
        }
    }

    pub(crate) async fn post(
        &self,
        path: &str,
        body: &Value,
        headers: &[(&str, &str)],
    ) -> reqwest::Response {
        let mut request = self
            .client
            .post(format!("http://{}{path}", self.addr))
            .json(body);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.send().await.unwrap()
    }

    /// `(provider, model, status, key_index, rule)` of every ledger row, once `count` are in.
    pub(crate) async fn rows(
        &self,
        count: usize,
    ) -> Vec<(String, String, u16, Option<u32>, Option<String>)> {
        let mut rows = Vec::new();
        for _ in 0..100 {
            self.recorder.flush().unwrap();
            let connection = rusqlite::Connection::open(&self.ledger).unwrap();
            let mut statement = connection
                .prepare(
                    "SELECT provider, model, status, key_index, rule FROM requests ORDER BY id",
                )
                .unwrap();
            rows = statement
                .query_map([], |row| {
                    Ok((
                        row.get(0)?,
                        row.get(1)?,
                        row.get(2)?,
                        row.get(3)?,
                        row.get(4)?,
                    ))
                })
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            if rows.len() >= count {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        rows
    }
}

pub(crate) fn header(response: &reqwest::Response, name: &str) -> Option<String> {
    response
        .headers()
        .get(name)
        .map(|value| value.to_str().unwrap().to_owned())
}

pub(crate) fn chat(text: &str) -> Value {
    json!({"model": "sonnet", "messages": [{"role": "user", "content": text}]})
}

pub(crate) fn route(config: &mut Config, name: &str, targets: &[&str]) {
    config.routing.routes.insert(
        name.to_owned(),
        RouteTargets {
            targets: targets.iter().map(|target| (*target).to_owned()).collect(),
        },
    );
}

pub(crate) fn keys_sent(mock: &MockUpstream) -> Vec<String> {
    mock.requests()
        .iter()
        .map(|request| {
            request.headers["authorization"]
                .to_str()
                .unwrap()
                .trim_start_matches("Bearer ")
                .to_owned()
        })
        .collect()
}

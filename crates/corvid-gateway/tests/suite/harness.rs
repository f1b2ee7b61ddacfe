use std::net::SocketAddr;
use std::time::Duration;

use corvid_auth::{Credential, Secret};
use corvid_config::Config;
use corvid_config::{CredentialSource, ProviderConfig};
use corvid_gateway::{AppState, router};
use corvid_providers::Registry;
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
        Self::start_full(configure, credential, None).await
    }

    /// A gateway that records every request with `recorder`.
    pub(crate) async fn start_recording(recorder: corvid_store::UsageRecorder) -> Self {
        Self::start_full(
            |config| providers_on_mock(config, &["anthropic"]),
            Credential::ApiKey(Secret::new(UPSTREAM_KEY)),
            Some(recorder),
        )
        .await
    }

    /// A gateway whose `anthropic` provider is at `base_url`, recording with `recorder`.
    pub(crate) async fn start_recording_at(
        recorder: corvid_store::UsageRecorder,
        base_url: &str,
    ) -> Self {
        let base_url = base_url.to_owned();
        Self::start_full(
            move |config| {
                if let Some(anthropic) = config
                    .providers
                    .iter_mut()
                    .find(|provider| provider.name == "anthropic")
                {
                    anthropic.base_url = base_url;
                    anthropic.explicit = true;
                }
            },
            Credential::ApiKey(Secret::new(UPSTREAM_KEY)),
            Some(recorder),
        )
        .await
    }

    /// A gateway whose `zed` provider is backed by `client`.
    pub(crate) async fn start_with_zed(client: corvid_providers::zed::ZedClient) -> Self {
        Self::start_inner(
            |_| {},
            Credential::ApiKey(Secret::new(UPSTREAM_KEY)),
            None,
            Some(client),
        )
        .await
    }

    async fn start_full(
        configure: impl FnOnce(&mut Config),
        credential: Credential,
        recorder: Option<corvid_store::UsageRecorder>,
    ) -> Self {
        Self::start_inner(configure, credential, recorder, None).await
    }

    async fn start_inner(
        configure: impl FnOnce(&mut Config),
        credential: Credential,
        recorder: Option<corvid_store::UsageRecorder>,
        zed: Option<corvid_providers::zed::ZedClient>,
    ) -> Self {
        let upstream = MockUpstream::start().await;
        let mut config = Config {
            upstream: upstream.base_url(),
            ..Config::default()
        };
        configure(&mut config);
        // The seed's upstream is the xai provider.
        if let Some(xai) = config
            .providers
            .iter_mut()
            .find(|provider| provider.name == "xai")
        {
            xai.base_url = config.upstream.clone();
        }
        let mut registry =
            Registry::build(&config, |provider| credential_for(provider, &credential)).unwrap();
        if let Some(client) = zed {
            registry = registry.with_zed(client);
        }
        let mut state = AppState::new(config, registry);
        if let Some(recorder) = recorder {
            state = state.with_recorder(recorder);
        }
        let app = router(state);
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

/// The xai provider gets the given credential; the others their key from `TEST_KEYS`, named
/// `<provider>-test-key`, when the test declared the provider.
fn credential_for(provider: &ProviderConfig, xai: &Credential) -> Credential {
    match &provider.credential {
        CredentialSource::XaiAuth => xai.clone(),
        CredentialSource::None | CredentialSource::ZedAccount => Credential::None,
        CredentialSource::Env(_) if provider.explicit => Credential::Key {
            provider: provider.name.clone(),
            secret: Secret::new(format!("{}-test-key", provider.name)),
        },
        CredentialSource::Env(variables) => Credential::MissingKey {
            provider: provider.name.clone(),
            variables: variables.clone(),
        },
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

/// Points these providers at the mock upstream (the configured `upstream`) and switches them on
/// with a test key.
pub(crate) fn providers_on_mock(config: &mut Config, names: &[&str]) {
    let base = config.upstream.clone();
    for provider in config
        .providers
        .iter_mut()
        .filter(|provider| names.contains(&provider.name.as_str()))
    {
        provider.base_url = base.clone();
        provider.explicit = true;
    }
}

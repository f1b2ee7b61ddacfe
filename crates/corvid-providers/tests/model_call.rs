//! The in-process model client against mock providers.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use corvid_auth::{Credential, Secret};
use corvid_config::{Config, CredentialSource};
use corvid_providers::{FailureClass, Registry};
use corvid_test_support::{MockUpstream, Reply};
use corvid_wire::model::{ChatRequest, FinishReason, Message, Role, StreamEvent};
use futures_util::StreamExt;
use http::StatusCode;
use serde_json::json;

fn registry(upstream: &MockUpstream) -> Registry {
    let mut config = Config {
        max_retries: 0,
        ..Config::default()
    };
    for provider in &mut config.providers {
        provider.base_url = upstream.base_url();
    }
    Registry::build(&config, |provider| match provider.credential {
        CredentialSource::None => Credential::None,
        _ => Credential::Key {
            provider: provider.name.clone(),
            secret: Secret::new("k"),
        },
    })
    .unwrap()
}

fn request(model: &str) -> ChatRequest {
    ChatRequest {
        model: model.to_owned(),
        messages: vec![Message::text(Role::User, "hi")],
        ..ChatRequest::default()
    }
}

async fn text_of(registry: &Registry, model: &str) -> (String, Vec<StreamEvent>) {
    let events: Vec<StreamEvent> = registry
        .stream(request(model))
        .await
        .unwrap()
        .collect()
        .await;
    let text = events
        .iter()
        .filter_map(|event| match event {
            StreamEvent::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    (text, events)
}

#[tokio::test]
async fn every_provider_kind_streams_canonical_events() {
    let upstream = MockUpstream::start().await;
    let registry = registry(&upstream);
    for model in [
        "grok-4.6",
        "claude-sonnet-4-5",
        "gemini-2.5-pro",
        "openai/gpt-5",
    ] {
        let (text, events) = text_of(&registry, model).await;
        assert_eq!(text, "Hello from the mock.", "{model}");
        assert!(
            events.contains(&StreamEvent::Finish(FinishReason::EndTurn)),
            "{model}: {events:?}"
        );
        assert!(
            events
                .iter()
                .any(|event| matches!(event, StreamEvent::Usage(usage) if usage.output > 0)),
            "{model}"
        );
    }
    let paths: Vec<String> = upstream.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(
        paths,
        [
            "/v1/chat/completions",
            "/v1/messages",
            "/v1/models/gemini-2.5-pro:streamGenerateContent",
            "/v1/chat/completions"
        ]
    );
    assert_eq!(upstream.requests()[1].json()["stream"], true);
}

#[tokio::test]
async fn failures_are_classified() {
    let upstream = MockUpstream::start().await;
    let registry = registry(&upstream);
    let class = |status: u16| {
        upstream.enqueue(
            "/v1/chat/completions",
            Reply::status(
                StatusCode::from_u16(status).unwrap(),
                json!({"error": {"message": "nope"}}),
            ),
        );
        async {
            registry
                .stream(request("grok-4.6"))
                .await
                .err()
                .unwrap()
                .class()
        }
    };
    assert_eq!(class(401).await, FailureClass::AuthenticationRejected);
    assert_eq!(class(429).await, FailureClass::RateLimited);
    assert_eq!(class(503).await, FailureClass::ServerError);
    assert_eq!(class(400).await, FailureClass::UnexpectedResponse);
    let unknown = registry
        .stream(request("nobody/model"))
        .await
        .err()
        .unwrap();
    assert_eq!(unknown.class(), FailureClass::NotConfigured);
    assert!(unknown.message(None).contains("nobody"), "{unknown}");

    let dead = {
        let mut config = Config {
            max_retries: 0,
            ..Config::default()
        };
        config.providers[0].base_url = "http://127.0.0.1:9/v1".to_owned();
        Registry::build(&config, |_| Credential::Key {
            provider: "xai".into(),
            secret: Secret::new("k"),
        })
        .unwrap()
    };
    assert_eq!(
        dead.stream(request("grok-4.6"))
            .await
            .err()
            .unwrap()
            .class(),
        FailureClass::Network
    );
}

#[tokio::test]
async fn a_cut_stream_ends_with_an_error_event() {
    let upstream = MockUpstream::start().await;
    let registry = registry(&upstream);
    upstream.enqueue(
        "/v1/chat/completions",
        Reply::sse(
            &[r#"{"choices":[{"index":0,"delta":{"content":"partial"}}]}"#],
            std::time::Duration::ZERO,
        ),
    );
    let (text, events) = text_of(&registry, "grok-4.6").await;
    assert_eq!(text, "partial");
    assert!(
        matches!(events.last(), Some(StreamEvent::Error(_))),
        "{events:?}"
    );
}

#[tokio::test]
async fn an_upstream_refusing_stream_options_is_asked_again_without_it() {
    let upstream = MockUpstream::start().await;
    let registry = registry(&upstream);
    upstream.enqueue(
        "/v1/chat/completions",
        Reply::status(
            StatusCode::BAD_REQUEST,
            json!({"error": {"message": "Unrecognized request argument supplied: stream_options"}}),
        ),
    );
    let (text, _) = text_of(&registry, "grok-4.6").await;
    assert_eq!(text, "Hello from the mock.");
    let sent = upstream.requests();
    assert_eq!(sent.len(), 2);
    assert!(sent[0].json().get("stream_options").is_some());
    assert!(sent[1].json().get("stream_options").is_none());
}

/// A registry whose `zed` provider is the mock cloud's account and whose HTTP providers are
/// the mock upstream, all with the same `max_retries`.
fn with_zed(
    upstream: &MockUpstream,
    cloud: &corvid_test_support::zed_cloud::MockZedCloud,
    max_retries: u32,
) -> Registry {
    use corvid_auth::zed::{ZedCredentials, ZedHosts};
    use corvid_providers::zed::{ZedClient, ZedConfig};
    use corvid_test_support::zed_cloud::{ACCOUNT_TOKEN, USER_ID};
    let mut config = Config {
        max_retries,
        ..Config::default()
    };
    for provider in &mut config.providers {
        provider.base_url = upstream.base_url();
    }
    let client = ZedClient::new(
        ZedConfig::new(&ZedHosts::single(&cloud.base_url())),
        ZedCredentials {
            user_id: USER_ID.to_owned(),
            access_token: Secret::new(ACCOUNT_TOKEN),
            system_id: None,
        },
    )
    .unwrap();
    Registry::build(&config, |_| Credential::ApiKey(Secret::new("k")))
        .unwrap()
        .with_zed(client)
}

/// Issue 10, item 20, through the one pipeline: a Zed 5xx before any output is retried by the
/// same retry step as any provider's — `max_retries` counts for both alike, and what is left
/// when the retries are spent is classified alike.
#[tokio::test]
async fn a_zed_server_error_before_output_is_retried_as_any_providers() {
    use corvid_test_support::zed_cloud::{CompletionReply, MockZedCloud};
    for max_retries in [0, 1] {
        let upstream = MockUpstream::start().await;
        let cloud = MockZedCloud::start().await;
        let registry = with_zed(&upstream, &cloud, max_retries);
        cloud.enqueue_completion(CompletionReply::status(
            503,
            json!({"code": "upstream_http_503", "message": "overloaded"}),
        ));
        upstream.enqueue(
            "/v1/chat/completions",
            Reply::status(
                StatusCode::SERVICE_UNAVAILABLE,
                json!({"error": {"message": "overloaded"}}),
            ),
        );
        let zed = registry.stream(request("zed/grok-4")).await;
        let xai = registry.stream(request("grok-4.6")).await;
        let sent = (
            cloud.requests_to("/completions").len(),
            upstream.requests().len(),
        );
        if max_retries == 0 {
            assert_eq!(sent, (1, 1), "no retry when max_retries = 0");
            let (zed, xai) = (zed.err().unwrap(), xai.err().unwrap());
            assert_eq!(zed.class(), FailureClass::ServerError, "{zed}");
            assert_eq!(xai.class(), FailureClass::ServerError, "{xai}");
        } else {
            assert_eq!(sent, (2, 2), "one retry each");
            let zed: Vec<StreamEvent> = zed.unwrap().collect().await;
            assert!(
                zed.iter()
                    .any(|event| matches!(event, StreamEvent::TextDelta { .. })),
                "{zed:?}"
            );
            assert!(xai.is_ok());
        }
    }
}

/// The Zed account's failures are classified as any provider's: a refused sign-in says to
/// sign in again, an unlisted model lists what the account offers.
#[tokio::test]
async fn zed_failures_before_output_are_classified_with_their_wording() {
    use corvid_test_support::zed_cloud::MockZedCloud;
    let upstream = MockUpstream::start().await;
    let cloud = MockZedCloud::start().await;
    let registry = with_zed(&upstream, &cloud, 0);
    let unlisted = registry.stream(request("zed/nope")).await.err().unwrap();
    assert_eq!(unlisted.class(), FailureClass::NotConfigured, "{unlisted}");
    assert!(
        unlisted.message(None).contains("offers no model `nope`")
            && unlisted.message(None).contains("claude-sonnet-4-6"),
        "{unlisted}"
    );
    let fresh = MockZedCloud::start().await;
    let registry = with_zed(&upstream, &fresh, 0);
    fresh.revoke_account();
    let refused = registry
        .stream(request("zed/claude-sonnet-4-6"))
        .await
        .err()
        .unwrap();
    assert_eq!(
        refused.class(),
        FailureClass::AuthenticationRejected,
        "{refused}"
    );
    assert!(
        refused.message(None).contains("corvid login zed"),
        "{refused}"
    );
}

/// `Registry::call` says how many requests each call sent (the agent's ledger rows use it).
#[tokio::test]
async fn a_call_counts_the_requests_it_sent() {
    let upstream = MockUpstream::start().await;
    let mut config = Config {
        max_retries: 1,
        ..Config::default()
    };
    for provider in &mut config.providers {
        provider.base_url = upstream.base_url();
    }
    let registry = Registry::build(&config, |provider| Credential::Key {
        provider: provider.name.clone(),
        secret: Secret::new("k"),
    })
    .unwrap();
    let unavailable = || {
        Reply::status(
            StatusCode::SERVICE_UNAVAILABLE,
            json!({"error": {"message": "busy"}}),
        )
    };
    upstream.enqueue("/v1/chat/completions", unavailable());
    let attempts = registry.call(request("grok-4.6")).await.unwrap().attempts;
    assert_eq!(attempts, 2);
    upstream.enqueue("/v1/chat/completions", unavailable());
    upstream.enqueue("/v1/chat/completions", unavailable());
    let failure = registry.call(request("grok-4.6")).await.err().unwrap();
    assert_eq!(
        (failure.class(), failure.attempts),
        (FailureClass::ServerError, 2)
    );
    let unknown = registry
        .call(request("nowhere/nothing"))
        .await
        .err()
        .unwrap();
    assert_eq!(
        (unknown.class(), unknown.attempts),
        (FailureClass::NotConfigured, 0)
    );
}

/// xAI on `first`, OpenAI on `second`, with `routing`.
fn two_providers(
    first: &MockUpstream,
    second: &MockUpstream,
    routing: corvid_config::RoutingConfig,
) -> Registry {
    let mut config = Config {
        max_retries: 0,
        routing,
        ..Config::default()
    };
    for provider in &mut config.providers {
        provider.base_url = match provider.name.as_str() {
            "xai" => first.base_url(),
            _ => second.base_url(),
        };
    }
    Registry::build(&config, |provider| Credential::Key {
        provider: provider.name.clone(),
        secret: Secret::new("k"),
    })
    .unwrap()
}

/// The agent's calls follow `[routes]` as the gateway's requests do: a route name is a model,
/// and a target that fails before any output gives way to the next.
#[tokio::test]
async fn a_route_falls_back_to_its_next_target() {
    let (first, second) = (MockUpstream::start().await, MockUpstream::start().await);
    let mut routing = corvid_config::RoutingConfig::default();
    routing.routes.insert(
        "fast".to_owned(),
        corvid_config::RouteTargets {
            targets: vec!["grok-4.6".to_owned(), "openai/gpt-5".to_owned()],
        },
    );
    let registry = two_providers(&first, &second, routing);
    // A route name describes itself as its first target does (the agent's window, its facts).
    assert_eq!(registry.lead("fast").unwrap().target(), "xai/grok-4.6");
    assert_eq!(registry.model_info("fast").provider.as_deref(), Some("xai"));
    assert_eq!(
        registry.context_window("fast").map(|window| window.tokens),
        registry
            .context_window("grok-4.6")
            .map(|window| window.tokens)
    );
    assert!(registry.context_window("fast").is_some());
    first.enqueue(
        "/v1/chat/completions",
        Reply::status(
            StatusCode::SERVICE_UNAVAILABLE,
            json!({"error": {"message": "overloaded"}}),
        ),
    );
    let reply = registry.call(request("fast")).await.unwrap();
    assert_eq!(
        reply.route.target(),
        "openai/gpt-5",
        "the fallback served it"
    );
    let attempts = reply.attempts;
    let events: Vec<StreamEvent> = reply.stream.collect().await;
    assert!(
        events.contains(&StreamEvent::Finish(FinishReason::EndTurn)),
        "{events:?}"
    );
    assert_eq!(
        attempts, 2,
        "the failed target's request and the fallback's"
    );
    assert_eq!(first.requests().len(), 1);
    assert_eq!(second.requests().len(), 1);
    assert_eq!(second.requests()[0].json()["model"], "gpt-5");
}

/// The task rules apply too: a conversation with an image goes to the `image` rule's target.
#[tokio::test]
async fn the_image_rule_picks_the_target_of_a_request_with_an_image() {
    let (first, second) = (MockUpstream::start().await, MockUpstream::start().await);
    let mut routing = corvid_config::RoutingConfig::default();
    routing.rules.image = Some("openai/gpt-5".to_owned());
    let registry = two_providers(&first, &second, routing);
    let mut with_image = request("grok-4.6");
    with_image.messages[0]
        .parts
        .push(corvid_wire::model::Part::Image(corvid_wire::model::Image {
            source: corvid_wire::model::ImageSource::Base64 {
                media_type: "image/png".to_owned(),
                data: "iVBORw0KGgo=".to_owned(),
            },
            detail: None,
        }));
    let reply = registry.call(with_image).await.unwrap();
    let _: Vec<StreamEvent> = reply.stream.collect().await;
    assert!(first.requests().is_empty());
    assert_eq!(second.requests().len(), 1);
    // Without an image the model asked for is used.
    let reply = registry.call(request("grok-4.6")).await.unwrap();
    let _: Vec<StreamEvent> = reply.stream.collect().await;
    assert_eq!(first.requests().len(), 1);
}

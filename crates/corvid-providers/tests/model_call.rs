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
                .class
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
    assert_eq!(unknown.class, FailureClass::NotConfigured);
    assert!(unknown.message.contains("nobody"), "{unknown}");

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
        dead.stream(request("grok-4.6")).await.err().unwrap().class,
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

//! The gateway's translation and the agent's model call are one pipeline
//! (`corvid_providers::Route::prepare` → `ModelCall::send`): the same broken upstream reply
//! reaches a gateway client and the agent with the same failure class and the same words,
//! for an HTTP provider and for the Zed account alike.

use std::time::Duration;

use bytes::Bytes;
use corvid_auth::zed::{ZedCredentials, ZedHosts};
use corvid_auth::{Credential, Secret};
use corvid_config::Config;
use corvid_providers::zed::{ZedClient, ZedConfig};
use corvid_providers::{FailureClass, Registry};
use corvid_test_support::zed_cloud::{
    ACCOUNT_TOKEN, CompletionReply, MockZedCloud, USER_ID, fixtures,
};
use corvid_test_support::{Reply, StreamEnd};
use corvid_wire::Dialect;
use corvid_wire::codec;
use corvid_wire::model::{ChatRequest, Message, Role, StreamEvent, WireError};
use futures_util::StreamExt;

use super::harness::Gateway;

/// A chat stream that sends some text, then loses its connection.
fn cut_chat_stream() -> Reply {
    Reply::Stream {
        chunks: vec![(
            Duration::ZERO,
            Bytes::from_static(
                b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"partial\"}}]}\n\n",
            ),
        )],
        end: StreamEnd::Abort,
    }
}

/// What an Anthropic client read as the last event of a translated stream, as a canonical
/// error (its `type` read back into a kind).
async fn last_anthropic_error(gateway: &Gateway, model: &str) -> WireError {
    let body = format!(
        r#"{{"model":"{model}","max_tokens":64,"stream":true,"messages":[{{"role":"user","content":"hi"}}]}}"#
    );
    let text = gateway
        .post("/v1/messages", &body)
        .await
        .text()
        .await
        .unwrap();
    let last_event = text
        .lines()
        .rev()
        .find(|line| line.starts_with("event: "))
        .unwrap();
    assert_eq!(last_event, "event: error", "{text}");
    let data = text
        .lines()
        .rev()
        .find_map(|line| line.strip_prefix("data: "))
        .unwrap();
    codec::decode_error(Dialect::Anthropic, 200, data.as_bytes())
}

/// What the agent's model call ended with.
async fn last_agent_error(registry: &Registry, model: &str) -> WireError {
    let request = ChatRequest {
        model: model.to_owned(),
        messages: vec![Message::text(Role::User, "hi")],
        ..ChatRequest::default()
    };
    let events: Vec<StreamEvent> = registry.stream(request).await.unwrap().collect().await;
    match events.last() {
        Some(StreamEvent::Error(error)) => error.clone(),
        other => panic!("the agent's stream ended with {other:?}: {events:?}"),
    }
}

fn assert_same_failure(translated: &WireError, agent: &WireError) {
    assert_eq!(translated.message, agent.message);
    assert_eq!(
        FailureClass::of_stream_error(translated.kind),
        FailureClass::of_stream_error(agent.kind),
        "{translated:?} / {agent:?}"
    );
}

#[tokio::test]
async fn a_cut_stream_reads_the_same_through_the_translation_and_the_agent() {
    let gateway = Gateway::start().await;
    gateway
        .upstream
        .enqueue("/v1/chat/completions", cut_chat_stream());
    let translated = last_anthropic_error(&gateway, "grok-4.6").await;

    let mut config = Config {
        max_retries: 0,
        ..Config::default()
    };
    for provider in &mut config.providers {
        provider.base_url = gateway.upstream.base_url();
    }
    let registry = Registry::build(&config, |_| Credential::ApiKey(Secret::new("k"))).unwrap();
    gateway
        .upstream
        .enqueue("/v1/chat/completions", cut_chat_stream());
    let agent = last_agent_error(&registry, "grok-4.6").await;

    assert!(translated.message.contains("broke"), "{translated:?}");
    assert_same_failure(&translated, &agent);
    assert_eq!(
        FailureClass::of_stream_error(agent.kind),
        FailureClass::ServerError
    );
}

#[tokio::test]
async fn a_zed_reply_cut_before_stream_ended_reads_the_same_through_both() {
    let cloud = MockZedCloud::start().await;
    let client = ZedClient::new(
        ZedConfig::new(&ZedHosts::single(&cloud.base_url())),
        ZedCredentials {
            user_id: USER_ID.to_owned(),
            access_token: Secret::new(ACCOUNT_TOKEN),
            system_id: None,
        },
    )
    .unwrap();
    let gateway = Gateway::start_with_zed(client.clone()).await;
    let cut = || {
        CompletionReply::without_stream_ended(fixtures::provider_events(
            "anthropic",
            "claude-sonnet-4-6",
        ))
    };
    cloud.enqueue_completion(cut());
    let translated = last_anthropic_error(&gateway, "zed/claude-sonnet-4-6").await;

    let registry = Registry::build(&Config::default(), |_| Credential::None)
        .unwrap()
        .with_zed(client);
    cloud.enqueue_completion(cut());
    let agent = last_agent_error(&registry, "zed/claude-sonnet-4-6").await;

    assert!(
        translated.message.contains("stream_ended"),
        "{translated:?}"
    );
    assert_same_failure(&translated, &agent);
}

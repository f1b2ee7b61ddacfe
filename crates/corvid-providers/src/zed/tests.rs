//! Tests of the Zed provider: the pure parts (account, models, request bodies, the NDJSON
//! decoder) with whole values, the client end to end against `corvid-test-support`'s mock
//! Zed cloud.

use corvid_auth::Secret;
use corvid_auth::zed::{ZedCredentials, ZedHosts};
use corvid_test_support::zed_cloud::{ACCOUNT_TOKEN, MockZedCloud, USER_ID};
use corvid_wire::model::{
    ChatRequest, Message, Params, Part, Role, StreamEvent, Tool, ToolCall, ToolResult,
    ToolResultContent,
};
use serde_json::json;

use super::{ZedClient, ZedConfig};

mod account;
mod client;
mod decoder;
mod request;
mod service;

const SYSTEM_ID: &str = "5d0c5f1e-8a3b-4c2d-9e1f-0a1b2c3d4e5f";

fn credentials() -> ZedCredentials {
    ZedCredentials {
        user_id: USER_ID.to_owned(),
        access_token: Secret::new(ACCOUNT_TOKEN),
        system_id: Some(SYSTEM_ID.to_owned()),
    }
}

fn client_for(cloud: &MockZedCloud) -> ZedClient {
    let config = ZedConfig::new(&ZedHosts::single(&cloud.base_url()));
    // No system proxy, whatever the environment says.
    let transport = crate::Transport::new(
        config.connect_timeout,
        config.idle_timeout,
        &config.llm_url,
        |_| None,
    )
    .unwrap();
    ZedClient::with_transport(config, credentials(), transport)
}

/// A turn after one tool round trip: system text, the question, the model's call, its result,
/// and the tool on offer.
fn chat_request() -> ChatRequest {
    ChatRequest {
        model: "zed/whatever".to_owned(),
        system: vec!["Be brief.".to_owned(), "Use tools.".to_owned()],
        messages: vec![
            Message::text(Role::User, "Weather in Paris and Rome?"),
            Message {
                role: Role::Assistant,
                parts: vec![Part::ToolCall(ToolCall {
                    id: "toolu_0".to_owned(),
                    name: "get_weather".to_owned(),
                    arguments: r#"{"city":"Rome"}"#.to_owned(),
                    signature: None,
                })],
            },
            Message {
                role: Role::User,
                parts: vec![Part::ToolResult(ToolResult {
                    call_id: "toolu_0".to_owned(),
                    name: Some("get_weather".to_owned()),
                    content: vec![ToolResultContent::Text {
                        text: "sunny".to_owned(),
                    }],
                    is_error: false,
                })],
            },
        ],
        tools: vec![Tool {
            name: "get_weather".to_owned(),
            description: None,
            parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}})
                .into(),
            strict: None,
        }],
        tool_choice: None,
        params: Params {
            max_output_tokens: Some(1000),
            ..Params::default()
        },
        stream: true,
        extra: serde_json::Map::from_iter([("metadata".to_owned(), json!({"user_id": "u"}))]),
    }
}

/// The text, the tool call (id, name, whole arguments) and whether the reply finished with
/// `ToolCalls` and no error: what every provider fixture must come out as.
fn summarize(events: &[StreamEvent]) -> (String, Vec<(String, String, String)>, bool) {
    let mut text = String::new();
    let mut calls: Vec<(String, String, String)> = Vec::new();
    let mut finished = false;
    for event in events {
        match event {
            StreamEvent::TextDelta { text: delta } => text.push_str(delta),
            StreamEvent::ToolCallStart { id, name, .. } => {
                calls.push((id.clone(), name.clone(), String::new()));
            }
            StreamEvent::ToolCallArgs { index, delta } => {
                calls[*index as usize].2.push_str(delta);
            }
            StreamEvent::Finish(reason) => {
                finished = *reason == corvid_wire::model::FinishReason::ToolCalls;
            }
            StreamEvent::Error(error) => panic!("unexpected error event: {error:?}"),
            _ => {}
        }
    }
    (text, calls, finished)
}

/// The account is one more backend: its failures are `ProviderError`s with Zed's wording,
/// status and retry rule, and the transport's failures the same variants as any provider's.
#[test]
fn zed_errors_become_provider_errors() {
    use crate::{FailureClass, ProviderError, Retry};
    use corvid_wire::model::ErrorKind;
    let status = |status: u16, retry_after: Option<std::time::Duration>| super::ZedError::Status {
        status,
        kind: ErrorKind::from_status(status),
        code: Some(format!("upstream_http_{status}")),
        message: "busy".to_owned(),
        retry_after,
    };
    let overloaded = ProviderError::from(status(503, None));
    assert_eq!(overloaded.retry(), Retry::After(None));
    assert_eq!(overloaded.class(), FailureClass::ServerError);
    assert_eq!(overloaded.status_code(), 503);
    assert_eq!(overloaded.to_string(), "Zed answered 503: busy");
    let wait = Some(std::time::Duration::from_secs(2));
    assert_eq!(
        ProviderError::from(status(429, wait)).retry(),
        Retry::After(wait)
    );
    assert_eq!(ProviderError::from(status(400, None)).retry(), Retry::No);
    let signed_out = ProviderError::from(super::ZedError::SignedOut);
    assert_eq!(signed_out.class(), FailureClass::AuthenticationRejected);
    assert_eq!(signed_out.status_code(), 401);
    assert!(signed_out.to_string().contains("corvid login zed"));
    let timeout = ProviderError::from(super::ZedError::Timeout {
        url: "https://cloud.zed.dev/completions".to_owned(),
    });
    assert!(matches!(timeout, ProviderError::Timeout { .. }));
    assert_eq!(timeout.retry(), Retry::No, "as for every provider");
}

//! Issue 22: with a fallback chain, a retryable failure moves to the next target at once
//! instead of being retried on the same target `max_retries` times first; a single-target
//! route keeps its retries.

use corvid_config::ProviderKind;
use corvid_test_support::{MockUpstream, Reply};
use http::StatusCode;
use serde_json::json;

use super::routed_harness::{Routed, chat, header, provider, route};

fn overloaded() -> Reply {
    Reply::status(
        StatusCode::SERVICE_UNAVAILABLE,
        json!({"error": {"message": "overloaded", "type": "server_error"}}),
    )
}

#[tokio::test]
async fn a_chain_moves_on_at_once_instead_of_retrying_in_place() {
    let first = MockUpstream::start().await;
    let second = MockUpstream::start().await;
    for _ in 0..3 {
        first.enqueue("/v1/chat/completions", overloaded());
    }
    let gateway = Routed::start(
        vec![
            provider("first", ProviderKind::OpenAiChat, &first.base_url(), 1),
            provider("second", ProviderKind::OpenAiChat, &second.base_url(), 1),
        ],
        |config| {
            config.max_retries = 2;
            route(config, "sonnet", &["first/a", "second/b"]);
        },
    )
    .await;
    let answer = gateway
        .post("/v1/chat/completions", &chat("hello"), &[])
        .await;
    assert_eq!(answer.status(), 200);
    assert_eq!(
        header(&answer, "x-corvid-target").as_deref(),
        Some("second/b")
    );
    assert_eq!(
        first.requests().len(),
        1,
        "the failing target was asked once"
    );
    assert_eq!(second.requests().len(), 1);
}

#[tokio::test]
async fn a_single_target_and_a_chains_last_target_keep_their_retries() {
    let only = MockUpstream::start().await;
    for _ in 0..2 {
        only.enqueue("/v1/chat/completions", overloaded());
    }
    let gateway = Routed::start(
        vec![provider(
            "only",
            ProviderKind::OpenAiChat,
            &only.base_url(),
            1,
        )],
        |config| {
            config.max_retries = 2;
            route(config, "sonnet", &["only/a"]);
        },
    )
    .await;
    let answer = gateway
        .post("/v1/chat/completions", &chat("hello"), &[])
        .await;
    assert_eq!(answer.status(), 200);
    assert_eq!(only.requests().len(), 3, "two retries, then the answer");
}

/// A conversation moved to another key of an OpenAI-style pool (its first key rate limited):
/// the `encrypted_content` the first key's organisation sealed cannot be read with the other
/// key, so it is dropped, as a move between providers drops it; the turn succeeds.
#[tokio::test]
async fn a_move_to_another_key_drops_reasoning_sealed_for_the_first() {
    let mock = MockUpstream::start().await;
    let gateway = Routed::start(
        vec![provider(
            "pool",
            ProviderKind::OpenAiResponses,
            &mock.base_url(),
            2,
        )],
        |_| {},
    )
    .await;
    let session = [("x-session-id", "conversation-1")];
    let first = json!({"model": "pool/m", "input": "hello"});
    let answer = gateway.post("/v1/responses", &first, &session).await;
    assert_eq!(answer.status(), 200);
    let began = header(&answer, "x-corvid-key").unwrap();
    // The next turn gives back the first key's sealed reasoning; that key is rate limited now.
    mock.enqueue(
        "/v1/responses",
        Reply::status(
            StatusCode::TOO_MANY_REQUESTS,
            json!({"error": {"message": "slow down", "type": "rate_limit_error"}}),
        )
        .with_header("retry-after", "30"),
    );
    let second = json!({"model": "pool/m", "input": [
        {"type": "message", "role": "user", "content": "hello"},
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "sealed-for-key"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hi"}]},
        {"type": "message", "role": "user", "content": "and now?"}
    ]});
    let answer = gateway.post("/v1/responses", &second, &session).await;
    assert_eq!(answer.status(), 200);
    assert_ne!(header(&answer, "x-corvid-key").unwrap(), began);
    let sent = mock.requests();
    assert_eq!(sent.len(), 3);
    assert!(String::from_utf8_lossy(&sent[1].body).contains("sealed-for-key"));
    let moved = String::from_utf8_lossy(&sent[2].body).into_owned();
    assert!(!moved.contains("sealed-for-key"), "{moved}");
    assert!(moved.contains("and now?"), "{moved}");
}

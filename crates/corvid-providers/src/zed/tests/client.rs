//! The client end to end against the mock Zed cloud.

use std::time::Duration;

use corvid_test_support::zed_cloud::{
    ACCOUNT_TOKEN, CompletionReply, MockZedCloud, StaleReply, fixtures,
};
use corvid_wire::model::{ErrorKind, StreamEvent};
use futures_util::StreamExt;
use pretty_assertions::assert_eq;
use serde_json::json;

use super::{SYSTEM_ID, chat_request, client_for, summarize};
use crate::Retry;
use crate::zed::{ZedError, ZedFraming, ZedModels, ZedPlan, ZedProvider, default_user_agent};

async fn models(cloud: &MockZedCloud) -> ZedModels {
    client_for(cloud).models().await.unwrap()
}

#[tokio::test]
async fn me_sends_the_account_pair_and_reads_the_account() {
    let cloud = MockZedCloud::start().await;
    cloud.set_plan("zed_student");
    let client = client_for(&cloud);
    let account = client.me().await.unwrap();
    assert_eq!(account.plan, ZedPlan::Student);
    assert_eq!(
        account.organization.as_ref().map(|org| org.id.as_str()),
        Some("org_personal")
    );
    assert_eq!(client.plan(), Some(ZedPlan::Student));
    let request = &cloud.requests_to("/client/users/me")[0];
    let header = |name: &str| request.headers.get(name).unwrap().to_str().unwrap();
    assert_eq!(header("authorization"), format!("42 {ACCOUNT_TOKEN}"));
    assert_eq!(header("x-zed-system-id"), SYSTEM_ID);
    assert_eq!(header("content-type"), "application/json");
    assert_eq!(header("user-agent"), default_user_agent("1.23.0"));
    assert!(header("user-agent").starts_with("Zed/1.23.0 ("));
}

#[tokio::test]
async fn a_401_on_the_account_means_signed_out() {
    let cloud = MockZedCloud::start().await;
    cloud.revoke_account();
    let client = client_for(&cloud);
    let err = client.me().await.unwrap_err();
    assert!(matches!(err, ZedError::SignedOut));
    assert!(err.to_string().contains("run `corvid login zed`"), "{err}");
    assert_eq!(err.status(), 401);
    // Minting a token needs the account too.
    assert!(matches!(
        client.llm_token().await.unwrap_err(),
        ZedError::SignedOut
    ));
}

/// Issue 10, item 21: a sign-in Zed refuses (401) is removed from where it was stored (the
/// installation's system id stays), so `corvid status` no longer says "signed in".
#[tokio::test]
async fn a_401_on_the_account_removes_the_stored_sign_in() {
    use corvid_auth::zed::{ZED_SYSTEM_ID_VAR, ZedStore};
    let home = tempfile::tempdir().unwrap();
    let env_file = home.path().join("env");
    let store = ZedStore::file_only(env_file.clone());
    store.save(&super::credentials()).unwrap();
    assert!(store.load().unwrap().is_some());
    let cloud = MockZedCloud::start().await;
    cloud.revoke_account();
    let client = client_for(&cloud).with_store(store.clone());
    assert!(!client.is_signed_out());
    assert!(matches!(client.me().await, Err(ZedError::SignedOut)));
    assert!(client.is_signed_out());
    assert!(store.load().unwrap().is_none(), "the dead sign-in was kept");
    let file = corvid_config::EnvFile::read(&env_file).unwrap();
    assert_eq!(file.get(ZED_SYSTEM_ID_VAR), Some(SYSTEM_ID));

    // Through the mint too, and a newer sign-in in the store is left alone.
    store.save(&super::credentials()).unwrap();
    let mut newer = super::credentials();
    newer.access_token = corvid_auth::Secret::new("a-newer-token");
    store.save(&newer).unwrap();
    let client = client_for(&cloud).with_store(store.clone());
    assert!(matches!(client.llm_token().await, Err(ZedError::SignedOut)));
    assert!(client.is_signed_out());
    assert!(
        store.load().unwrap().is_some(),
        "a newer sign-in was removed"
    );
}

#[tokio::test]
async fn models_use_a_minted_token_and_leave_out_disabled_ones() {
    let cloud = MockZedCloud::start().await;
    let listed = models(&cloud).await;
    let ids: Vec<&str> = listed
        .models
        .iter()
        .map(|model| model.id.as_str())
        .collect();
    assert_eq!(
        ids,
        vec!["claude-sonnet-4-6", "gpt-5", "gemini-2.5-pro", "grok-4"]
    );
    // users/me (for the organization), the mint, then /models.
    let paths: Vec<String> = cloud.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(
        paths,
        vec!["/client/users/me", "/client/llm_tokens", "/models"]
    );
    let mint = &cloud.requests_to("/client/llm_tokens")[0];
    assert_eq!(mint.json(), json!({"organization_id": "org_personal"}));
    let request = &cloud.requests_to("/models")[0];
    let header = |name: &str| request.headers.get(name).unwrap().to_str().unwrap();
    assert_eq!(header("authorization"), "Bearer tok-1");
    assert_eq!(header("x-zed-client-supports-x-ai"), "true");
}

#[tokio::test]
async fn twenty_concurrent_calls_after_a_401_share_one_new_token() {
    let cloud = MockZedCloud::start().await;
    let client = client_for(&cloud);
    client.models().await.unwrap();
    assert_eq!(cloud.mint_requests(), 1);
    cloud.expire_tokens(StaleReply::unauthorized());
    cloud.set_mint_delay(Duration::from_millis(100));
    let calls: Vec<_> = (0..20)
        .map(|_| {
            let client = client.clone();
            tokio::spawn(async move { client.models().await })
        })
        .collect();
    for call in calls {
        assert_eq!(call.await.unwrap().unwrap().models.len(), 4);
    }
    assert_eq!(cloud.mint_requests(), 2, "one new token for all twenty");
    assert_eq!(client.llm_tokens_minted(), 2);
    // Each call was sent at most twice (a call scheduled after the new token arrived is sent
    // once): the first listing, then 20 to 40 more.
    let sent = cloud.requests_to("/models").len();
    assert!((21..=41).contains(&sent), "{sent}");
}

#[tokio::test]
async fn stale_token_headers_mint_once_and_resend_once() {
    for reply in [
        StaleReply::expired(),
        StaleReply::expired_ok(),
        StaleReply::outdated(),
    ] {
        let cloud = MockZedCloud::start().await;
        let client = client_for(&cloud);
        client.models().await.unwrap();
        cloud.expire_tokens(reply);
        let listed = client.models().await.unwrap();
        assert_eq!(listed.models.len(), 4, "{reply:?}");
        assert_eq!(cloud.mint_requests(), 2, "{reply:?}");
        let tokens: Vec<String> = cloud
            .requests_to("/models")
            .iter()
            .map(|r| {
                r.headers
                    .get("authorization")
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .to_owned()
            })
            .collect();
        assert_eq!(
            tokens,
            vec!["Bearer tok-1", "Bearer tok-1", "Bearer tok-2"],
            "{reply:?}"
        );
    }
}

#[tokio::test]
async fn a_second_401_is_an_error_not_a_loop() {
    let cloud = MockZedCloud::start().await;
    let client = client_for(&cloud);
    let unauthorized = || CompletionReply::status(401, json!({"message": "no"}));
    cloud.enqueue_completion(unauthorized());
    cloud.enqueue_completion(unauthorized());
    let model = models(&cloud).await.get("grok-4").cloned().unwrap();
    let err = client
        .completion(&chat_request(), &model, None, None)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            ZedError::Status {
                status: 401,
                kind: ErrorKind::Authentication,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(err.retry(), Retry::No);
    assert_eq!(cloud.requests_to("/completions").len(), 2);
}

#[tokio::test]
async fn a_failed_mint_is_reported_and_the_next_call_mints_again() {
    let cloud = MockZedCloud::start().await;
    cloud.fail_next_mints(&[500]);
    let client = client_for(&cloud);
    let err = client.llm_token().await.unwrap_err();
    assert!(
        matches!(err, ZedError::Status { status: 500, .. }),
        "{err:?}"
    );
    assert_eq!(client.llm_token().await.unwrap().expose(), "tok-1");
    assert_eq!(cloud.mint_requests(), 2);
    // A 401 from the mint means the sign-in itself is dead.
    let cloud = MockZedCloud::start().await;
    cloud.fail_next_mints(&[401]);
    let err = client_for(&cloud).llm_token().await.unwrap_err();
    assert!(matches!(err, ZedError::SignedOut), "{err:?}");
}

#[tokio::test]
async fn an_anthropic_model_streams_text_and_a_tool_call() {
    let cloud = MockZedCloud::start().await;
    let client = client_for(&cloud);
    let model = client
        .models()
        .await
        .unwrap()
        .get("claude-sonnet-4-6")
        .cloned()
        .unwrap();
    assert_eq!(model.provider, ZedProvider::Anthropic);
    let thread = "5d0c5f1e-8a3b-4c2d-9e1f-0a1b2c3d4e60";
    let mut completion = client
        .completion(&chat_request(), &model, Some(thread), None)
        .await
        .unwrap();
    assert_eq!(completion.framing(), ZedFraming::Wrapped);
    let mut events = Vec::new();
    while let Some(event) = completion.next_event().await {
        events.push(event);
    }
    assert!(matches!(
        &events[0],
        StreamEvent::Start { id, model } if id == "msg_1" && model == "claude-sonnet-4-6"
    ));
    let (text, calls, finished) = summarize(&events);
    assert_eq!(text, "Hello");
    assert_eq!(
        calls,
        vec![(
            "toolu_1".to_owned(),
            fixtures::TOOL_NAME.to_owned(),
            fixtures::TOOL_ARGUMENTS.to_owned()
        )]
    );
    assert!(finished);
    assert!(completion.decoder().is_complete());

    let request = &cloud.requests_to("/completions")[0];
    let header = |name: &str| request.headers.get(name).unwrap().to_str().unwrap();
    assert_eq!(header("authorization"), "Bearer tok-1");
    assert_eq!(header("x-zed-version"), "1.23.0");
    assert_eq!(header("x-zed-client-supports-status-messages"), "true");
    assert_eq!(
        header("x-zed-client-supports-stream-ended-request-completion-status"),
        "true"
    );
    assert_eq!(header("content-type"), "application/json");
    let body = request.json();
    assert_eq!(body["thread_id"], thread);
    assert_eq!(body["provider"], "anthropic");
    assert_eq!(body["model"], "claude-sonnet-4-6");
    assert!(body["provider_request"].get("stream").is_none());
    assert_eq!(
        body["provider_request"]["messages"][2]["content"][0]["is_error"],
        false
    );
}

#[tokio::test]
async fn an_xai_model_streams_text_and_a_tool_call() {
    let cloud = MockZedCloud::start().await;
    let client = client_for(&cloud);
    let model = client
        .models()
        .await
        .unwrap()
        .get("grok-4")
        .cloned()
        .unwrap();
    let completion = client
        .completion(&chat_request(), &model, None, None)
        .await
        .unwrap();
    let events: Vec<StreamEvent> = completion.collect().await;
    let (text, calls, finished) = summarize(&events);
    assert_eq!(text, "Hello");
    assert_eq!(
        calls,
        vec![(
            "call_1".to_owned(),
            fixtures::TOOL_NAME.to_owned(),
            fixtures::TOOL_ARGUMENTS.to_owned()
        )]
    );
    assert!(finished);
    assert!(
        events
            .iter()
            .any(|event| matches!(event, StreamEvent::Usage(usage) if usage.output == 12))
    );
    let body = cloud.requests_to("/completions")[0].json();
    assert_eq!(body["provider"], "x_ai");
    assert_eq!(body["model"], "grok-4");
    assert_eq!(body["provider_request"]["max_completion_tokens"], 1000);
    assert_eq!(body["provider_request"]["stream"], true);
    assert!(body.get("thread_id").is_none());
}

#[tokio::test]
async fn openai_and_google_models_stream_too() {
    let cloud = MockZedCloud::start().await;
    let client = client_for(&cloud);
    let listed = client.models().await.unwrap();
    for id in ["gpt-5", "gemini-2.5-pro"] {
        let model = listed.get(id).cloned().unwrap();
        let completion = client
            .completion(&chat_request(), &model, None, None)
            .await
            .unwrap();
        let events: Vec<StreamEvent> = completion.collect().await;
        let (text, calls, finished) = summarize(&events);
        assert_eq!(
            (text.as_str(), calls.len(), finished),
            ("Hello", 1, true),
            "{id}"
        );
    }
    let google = &cloud.requests_to("/completions")[1].json();
    assert_eq!(google["model"], "gemini-2.5-pro");
    assert_eq!(google["provider_request"]["model"], "models/gemini-2.5-pro");
}

#[tokio::test]
async fn a_reply_without_stream_ended_ends_in_an_error() {
    let cloud = MockZedCloud::start().await;
    cloud.enqueue_completion(CompletionReply::without_stream_ended(
        fixtures::provider_events("x_ai", "grok-4"),
    ));
    let client = client_for(&cloud);
    let model = client
        .models()
        .await
        .unwrap()
        .get("grok-4")
        .cloned()
        .unwrap();
    let events: Vec<StreamEvent> = client
        .completion(&chat_request(), &model, None, None)
        .await
        .unwrap()
        .collect()
        .await;
    let Some(StreamEvent::Error(error)) = events.last() else {
        panic!("{events:?}");
    };
    assert!(error.message.contains("stream_ended"), "{}", error.message);
}

#[tokio::test]
async fn statuses_and_a_failure_come_through_the_client() {
    let cloud = MockZedCloud::start().await;
    let events = fixtures::provider_events("anthropic", "claude-sonnet-4-6");
    cloud.enqueue_completion(CompletionReply::lines(vec![
        fixtures::queued(4),
        fixtures::started(),
        fixtures::wrapped(events[0].clone()),
        fixtures::failed(
            "upstream_http_429",
            "rate limited",
            "2f6e1c9a-3b7d-4c1e-9a55-0d7c2b8e4f10",
            Some(1.5),
        ),
    ]));
    let client = client_for(&cloud);
    let model = client
        .models()
        .await
        .unwrap()
        .get("claude-sonnet-4-6")
        .cloned()
        .unwrap();
    let mut completion = client
        .completion(&chat_request(), &model, None, None)
        .await
        .unwrap();
    let mut events = Vec::new();
    while let Some(event) = completion.next_event().await {
        events.push(event);
    }
    assert!(matches!(events[0], StreamEvent::Start { .. }));
    assert!(
        matches!(events.last(), Some(StreamEvent::Error(error)) if error.kind == ErrorKind::RateLimited)
    );
    let failure = completion.decoder().failure().unwrap();
    assert_eq!(failure.retry_after, Some(Duration::from_millis(1500)));
}

#[tokio::test]
async fn payment_required_names_the_plan_and_what_to_do() {
    for (plan, words) in [
        ("zed_pro", "raise the spending limit"),
        ("zed_free", "upgrade to Zed Pro"),
        ("zed_pro_trial", "trial"),
    ] {
        let cloud = MockZedCloud::start().await;
        cloud.set_plan(plan);
        cloud.enqueue_completion(CompletionReply::payment_required());
        let client = client_for(&cloud);
        let model = client
            .models()
            .await
            .unwrap()
            .get("grok-4")
            .cloned()
            .unwrap();
        let err = client
            .completion(&chat_request(), &model, None, None)
            .await
            .unwrap_err();
        let ZedError::PaymentRequired {
            plan: Some(got), ..
        } = &err
        else {
            panic!("{err:?}");
        };
        let message = err.to_string();
        assert!(message.contains(got.label()), "{message}");
        assert!(message.contains(words), "{message}");
        assert!(
            message.contains("Payment required to use this model"),
            "{message}"
        );
        assert!(message.contains("https://zed.dev/account") || plan == "zed_business");
        assert_eq!((err.status(), err.retry()), (402, Retry::No));
        assert_eq!(cloud.requests_to("/completions").len(), 1, "not retried");
    }
}

#[tokio::test]
async fn error_replies_keep_the_upstream_status_and_retry_after() {
    let cloud = MockZedCloud::start().await;
    cloud.enqueue_completion(CompletionReply::status(
        500,
        json!({"code": "upstream_http_error", "message": "upstream", "upstream_status": 503}),
    ));
    cloud.enqueue_completion(CompletionReply::status(
        429,
        json!({"code": "upstream_http_429", "message": "slow down", "retry_after": 30.5}),
    ));
    cloud.enqueue_completion(CompletionReply::status(
        400,
        json!({"code": "invalid_request", "message": "prompt is too long: 220000 tokens > 200000"}),
    ));
    let client = client_for(&cloud);
    let model = client
        .models()
        .await
        .unwrap()
        .get("grok-4")
        .cloned()
        .unwrap();
    let mut errors = Vec::new();
    for _ in 0..3 {
        errors.push(
            client
                .completion(&chat_request(), &model, None, None)
                .await
                .unwrap_err(),
        );
    }
    let summary: Vec<(u16, ErrorKind, Retry)> = errors
        .iter()
        .map(|err| (err.status(), err.to_wire_error().kind, err.retry()))
        .collect();
    assert_eq!(
        summary,
        vec![
            (503, ErrorKind::Overloaded, Retry::After(None)),
            (
                429,
                ErrorKind::RateLimited,
                Retry::After(Some(Duration::from_millis(30_500)))
            ),
            (400, ErrorKind::RequestTooLarge, Retry::No),
        ]
    );
}

#[tokio::test]
async fn a_bare_reply_is_read_without_status_lines() {
    let cloud = MockZedCloud::start().await;
    cloud.enqueue_completion(CompletionReply::bare(fixtures::provider_events(
        "anthropic",
        "claude-sonnet-4-6",
    )));
    let client = client_for(&cloud);
    let model = client
        .models()
        .await
        .unwrap()
        .get("claude-sonnet-4-6")
        .cloned()
        .unwrap();
    let completion = client
        .completion(&chat_request(), &model, None, None)
        .await
        .unwrap();
    assert_eq!(completion.framing(), ZedFraming::Bare);
    let events: Vec<StreamEvent> = completion.collect().await;
    assert_eq!(summarize(&events).0, "Hello");
}

#[tokio::test]
async fn no_token_reaches_the_debug_output() {
    let cloud = MockZedCloud::start().await;
    let client = client_for(&cloud);
    client.models().await.unwrap();
    let debug = format!("{client:?}");
    assert!(!debug.contains("tok-1"), "{debug}");
    assert!(!debug.contains("Zk3vQpL8"), "{debug}");
}

/// The HTTP scripting a process-run mock offers to SDK tests in other languages.
#[tokio::test]
async fn the_mock_can_be_scripted_over_http() {
    let cloud = MockZedCloud::start().await;
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let control = |command: &str, body: serde_json::Value| {
        http.post(format!("{}/__mock/{command}", cloud.base_url()))
            .json(&body)
            .send()
    };
    control("account", json!({"plan": "zed_free"}))
        .await
        .unwrap();
    control(
        "completion",
        json!({"status": 402, "body": {"code": "payment_required", "message": "no"}}),
    )
    .await
    .unwrap();
    let client = client_for(&cloud);
    let model = client
        .models()
        .await
        .unwrap()
        .get("grok-4")
        .cloned()
        .unwrap();
    let err = client
        .completion(&chat_request(), &model, None, None)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            ZedError::PaymentRequired {
                plan: Some(ZedPlan::Free),
                ..
            }
        ),
        "{err:?}"
    );
    control(
        "expire_tokens",
        json!({"status": 200, "header": "x-zed-outdated-token"}),
    )
    .await
    .unwrap();
    client.models().await.unwrap();
    let state: serde_json::Value = http
        .get(format!("{}/__mock/state", cloud.base_url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(state, json!({"mint_requests": 2}));
    let requests: serde_json::Value = http
        .get(format!("{}/__mock/requests", cloud.base_url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(requests[3]["path"], "/completions");
    assert_eq!(requests[3]["body"]["provider"], "x_ai");
}

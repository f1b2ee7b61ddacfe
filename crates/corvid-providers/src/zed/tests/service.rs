//! The account's last failed call, kept for the status page as every upstream's is: after its
//! retries, cleaned (no key, no prompt), and not for a model the caller named wrongly.

use corvid_test_support::zed_cloud::{CompletionReply, MockZedCloud};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::{chat_request, client_for};
use crate::zed::ZedService;

#[tokio::test]
async fn a_failed_completion_is_the_accounts_last_failure_cleaned() {
    let cloud = MockZedCloud::start().await;
    let service = ZedService::new(client_for(&cloud));
    assert_eq!(service.last_failure(), None);
    let model = service.model("grok-4").await.unwrap();
    // A model the account does not offer is the caller's mistake, not the account's failure.
    assert!(service.model("no-such-model").await.is_err());
    assert_eq!(service.last_failure(), None);
    cloud.enqueue_completion(CompletionReply::status(
        500,
        json!({"code": "internal_error", "message": "overloaded; key sk-live-abcdef123456 was refused"}),
    ));
    let failed = service
        .completion(&chat_request(), &model)
        .await
        .unwrap_err();
    let failure = service.last_failure().unwrap();
    assert_eq!(failure.status, Some(failed.error.status_code()));
    assert_eq!(failure.status, Some(500));
    assert_eq!(failure.cause, "status");
    assert!(failure.message.contains("overloaded"), "{failure:?}");
    assert!(failure.message.contains("****"), "{failure:?}");
    assert!(!failure.message.contains("sk-live"), "{failure:?}");
    assert!(!failure.message.contains("Paris"), "{failure:?}");
    assert!(failure.at_ms > 0);
}

#[tokio::test]
async fn a_model_list_the_account_cannot_read_is_its_last_failure() {
    let cloud = MockZedCloud::start().await;
    cloud.revoke_account();
    let service = ZedService::new(client_for(&cloud));
    assert!(service.models().await.is_err());
    let failure = service.last_failure().unwrap();
    assert_eq!(failure.status, Some(401), "{failure:?}");
    assert!(failure.message.contains("corvid login zed"), "{failure:?}");
}

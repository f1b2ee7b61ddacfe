use std::sync::Mutex;
use std::time::Duration;

use corvid_test_support::oauth::{DevicePoll, MockOAuth};
use pretty_assertions::assert_eq;

use super::{DeviceCode, DeviceLogin, login_device_with};
use crate::test_util::http;
use crate::{AuthError, CLIENT_ID, LoginError, OAuthEndpoints, SCOPE};

/// One server "second" lasts this long in these tests.
const UNIT: Duration = Duration::from_millis(10);

fn options(mock: &MockOAuth) -> DeviceLogin {
    DeviceLogin {
        endpoints: OAuthEndpoints::new(&mock.base_url()),
        http: http(),
        time_unit: UNIT,
    }
}

#[tokio::test]
async fn pending_then_slow_down_then_success() {
    let mock = MockOAuth::start().await;
    mock.push_device_polls([
        DevicePoll::Pending,
        DevicePoll::SlowDown,
        DevicePoll::Approve,
    ]);
    let shown = Mutex::new(Vec::new());
    let started = tokio::time::Instant::now();
    let tokens = login_device_with(options(&mock), |code| {
        shown.lock().unwrap().push(code.clone());
    })
    .await
    .unwrap();

    assert!(tokens.access_token.expose().starts_with("mock-access-"));
    assert!(tokens.refresh_token.is_some());
    assert_eq!(tokens.email.as_deref(), Some("user@example.com"));
    assert_eq!(
        shown.into_inner().unwrap(),
        vec![DeviceCode {
            user_code: "ABCD-EFGH".into(),
            verification_uri: "https://accounts.example/device".into(),
            verification_uri_complete: Some(
                "https://accounts.example/device?user_code=ABCD-EFGH".into()
            ),
            expires_in: 600,
            interval: 5,
        }]
    );
    let request = &mock.device_code_forms()[0];
    assert_eq!(request["client_id"], CLIENT_ID);
    assert_eq!(request["scope"], SCOPE);
    let forms = mock.token_forms();
    assert_eq!(forms.len(), 3);
    for form in &forms {
        assert_eq!(
            form["grant_type"],
            "urn:ietf:params:oauth:grant-type:device_code"
        );
        assert_eq!(form["device_code"], "mock-device-code");
        assert_eq!(form["client_id"], CLIENT_ID);
    }
    // Polls at 5, 10, then 10 + (5 + 5) units: slow_down added five seconds. Each poll is
    // scheduled from the previous one's start, and the mock sees it only later (by however
    // long the request took to arrive, which varies under load): so measured from the start,
    // each poll is at least that late, while the gap between two receipts may look shorter.
    let times = mock.device_poll_times();
    assert!(times[0] - started >= UNIT * 5);
    assert!(times[1] - started >= UNIT * 10);
    assert!(
        times[2] - started >= UNIT * 20,
        "slow_down did not add its five"
    );
}

#[tokio::test]
async fn access_denied_is_reported() {
    let mock = MockOAuth::start().await;
    mock.push_device_polls([DevicePoll::Pending, DevicePoll::Denied]);
    let err = login_device_with(options(&mock), |_| {}).await.unwrap_err();
    assert!(
        matches!(&err, AuthError::Login(LoginError::Denied { error, .. }) if error == "access_denied"),
        "{err:?}"
    );
    assert!(err.to_string().contains("access_denied"), "{err}");
}

#[tokio::test]
async fn expired_token_is_reported() {
    let mock = MockOAuth::start().await;
    mock.push_device_polls([DevicePoll::Expired]);
    let err = login_device_with(options(&mock), |_| {}).await.unwrap_err();
    assert!(
        matches!(err, AuthError::Login(LoginError::DeviceCodeExpired)),
        "{err:?}"
    );
    assert!(err.to_string().contains("--device"), "{err}");
}

#[tokio::test]
async fn the_device_code_lifetime_bounds_the_polling() {
    let mock = MockOAuth::start().await;
    mock.set_device_timing(5, 12);
    mock.push_device_polls([DevicePoll::Pending; 10]);
    let err = login_device_with(options(&mock), |_| {}).await.unwrap_err();
    assert!(
        matches!(err, AuthError::Login(LoginError::DeviceCodeExpired)),
        "{err:?}"
    );
    // Polls at 5 and 10; the next would be at 15, past the 12 s lifetime.
    assert_eq!(mock.token_forms().len(), 2);
}

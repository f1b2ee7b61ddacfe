use http::StatusCode;
use serde_json::Value;

use super::harness::Gateway;

#[tokio::test]
async fn forged_host_is_refused() {
    let gateway = Gateway::start().await;
    for host in ["evil.example", "evil.example:8787", "192.168.0.5:8787"] {
        let response = gateway
            .client
            .post(gateway.url("/v1/chat/completions"))
            .header("host", host)
            .body(r#"{"model":"grok","messages":[]}"#)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "{host}");
        let value: Value = response.json().await.unwrap();
        assert_eq!(value["error"]["type"], "permission_error");
    }
    assert!(gateway.upstream.requests().is_empty());
}

#[tokio::test]
async fn cross_site_origin_is_refused_and_loopback_origin_allowed() {
    let gateway = Gateway::start().await;
    let send = |origin: &'static str| {
        gateway
            .client
            .post(gateway.url("/v1/chat/completions"))
            .header("origin", origin)
            .body(r#"{"model":"grok","messages":[]}"#)
            .send()
    };
    assert_eq!(
        send("https://evil.example").await.unwrap().status(),
        StatusCode::FORBIDDEN
    );
    assert_eq!(send("null").await.unwrap().status(), StatusCode::FORBIDDEN);
    assert_eq!(
        send("http://localhost:3000").await.unwrap().status(),
        StatusCode::OK
    );
    assert_eq!(gateway.upstream.requests().len(), 1);
}

#[tokio::test]
async fn allow_remote_relaxes_only_the_host_check() {
    let gateway = Gateway::start_with(|config| config.allow_remote = true).await;
    let response = gateway
        .client
        .get(gateway.url("/healthz"))
        .header("host", "myhost.lan:8787")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let response = gateway
        .client
        .get(gateway.url("/healthz"))
        .header("origin", "https://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
}

use super::*;

#[test]
fn proxies_apply_only_when_set_and_not_loopback() {
    let set = |name: &str| (name == "HTTPS_PROXY").then(|| "http://proxy:3128".to_owned());
    assert!(proxy_applies("https://api.x.ai/v1", set));
    assert!(!proxy_applies("https://127.0.0.1:1/v1", set));
    assert!(
        !proxy_applies("http://api.example/v1", set),
        "HTTPS_PROXY is for https"
    );
    assert!(!proxy_applies("https://api.x.ai/v1", |_| None));
    assert!(!proxy_applies("https://api.x.ai/v1", |_| Some(
        " ".to_owned()
    )));
}

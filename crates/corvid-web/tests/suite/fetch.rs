//! `web_fetch` against local servers: what the guard refuses (and that nothing was dialled),
//! the allowed path through a test-only allowlist, redirects re-checked, HTML converted, caps.

use std::sync::Arc;
use std::time::Duration;

use corvid_config::{HostRule, WebConfig};
use corvid_tools::Cancellation;
use corvid_web::tools::{FETCH, WebCall};
use corvid_web::{AddressClass, FetchError, Fetcher, PageKind, Refusal, RequestError, WebTools};
use pretty_assertions::assert_eq;

use super::support::{Answer, Server, TestNetwork, page, redirect, respond};

/// The defaults: nothing but public addresses.
fn strict() -> WebConfig {
    WebConfig::default()
}

/// Loopback `127.0.0.1` allowed, for these tests only.
fn loopback_allowed() -> WebConfig {
    WebConfig {
        allow_hosts: vec![HostRule::parse("127.0.0.1").unwrap()],
        ..WebConfig::default()
    }
}

fn refusal(error: FetchError) -> Refusal {
    match error {
        FetchError::Request(RequestError::Refused(refusal)) => refusal,
        FetchError::Redirect {
            error: RequestError::Refused(refusal),
            ..
        } => refusal,
        other => panic!("not a refusal: {other:?}"),
    }
}

async fn html_server() -> Server {
    Server::start("127.0.0.1", |_| {
        page(
            "text/html; charset=utf-8",
            "<html><head><title>Local</title></head><body><h1>It works</h1><p>See <a href=\"/next\">next</a>.</p></body></html>",
        )
    })
    .await
}

#[tokio::test]
async fn loopback_is_refused_by_default_and_never_dialled() {
    let server = html_server().await;
    let network = Arc::new(TestNetwork::default());
    let fetcher = Fetcher::new(&strict(), network.clone());
    let port = server.address.port();
    for url in [
        server.url("/"),
        format!("http://127.0.0.1:{port}/"),
        format!("http://[::1]:{port}/"),
        format!("http://[::ffff:127.0.0.1]:{port}/"),
        format!("http://[::ffff:7f00:1]:{port}/"),
        format!("http://[::127.0.0.1]:{port}/"),
        format!("http://2130706433:{port}/"),
        format!("http://0x7f.0.0.1:{port}/"),
        format!("http://0.0.0.0:{port}/"),
        format!("http://localhost:{port}/"),
        format!("http://www.localhost:{port}/"),
    ] {
        let refused = refusal(fetcher.fetch(&url).await.unwrap_err());
        assert!(
            matches!(
                refused,
                Refusal::Address {
                    class: AddressClass::Loopback | AddressClass::Unspecified,
                    ..
                } | Refusal::Name {
                    class: AddressClass::Loopback,
                    ..
                }
            ),
            "{url}: {refused:?}"
        );
    }
    assert_eq!(server.connections(), 0);
    assert!(network.connects().is_empty(), "{:?}", network.connects());
    assert!(network.lookups().is_empty(), "{:?}", network.lookups());
}

#[tokio::test]
async fn private_link_local_and_metadata_targets_are_refused_before_a_connection() {
    let network = Arc::new(
        TestNetwork::default()
            .with("intranet.test", &["10.1.2.3"])
            .with("router.test", &["192.168.1.1"])
            .with("mixed.test", &["93.184.215.14", "172.16.5.4"])
            .with("mapped.test", &["::ffff:169.254.169.254"])
            .with("ula.test", &["fd12:3456::1"]),
    );
    let fetcher = Fetcher::new(&strict(), network.clone());
    for (url, class) in [
        ("http://10.0.0.1/", AddressClass::Private),
        ("http://172.16.0.1/", AddressClass::Private),
        ("http://192.168.1.1/admin", AddressClass::Private),
        ("http://100.64.0.1/", AddressClass::SharedNat),
        ("http://169.254.1.1/", AddressClass::LinkLocal),
        ("http://[fe80::1]/", AddressClass::LinkLocal),
        ("http://[fd00::1]/", AddressClass::UniqueLocal),
        (
            "http://169.254.169.254/latest/meta-data/",
            AddressClass::Metadata,
        ),
        (
            "http://[fd00:ec2::254]/latest/meta-data/",
            AddressClass::Metadata,
        ),
        ("http://[::ffff:169.254.169.254]/", AddressClass::Metadata),
        ("http://[::ffff:10.0.0.1]/", AddressClass::Private),
        (
            "http://metadata.google.internal/computeMetadata/v1/",
            AddressClass::Metadata,
        ),
        ("http://intranet.test/", AddressClass::Private),
        ("http://router.test/", AddressClass::Private),
        ("http://mixed.test/", AddressClass::Private),
        ("http://mapped.test/", AddressClass::Metadata),
        ("http://ula.test/", AddressClass::UniqueLocal),
    ] {
        let refused = refusal(fetcher.fetch(url).await.unwrap_err());
        let found = match refused {
            Refusal::Address { class, .. } | Refusal::Name { class, .. } => class,
            other => panic!("{url}: {other:?}"),
        };
        assert_eq!(found, class, "{url}");
    }
    assert!(network.connects().is_empty(), "{:?}", network.connects());
    assert_eq!(
        network.lookups(),
        [
            "intranet.test",
            "router.test",
            "mixed.test",
            "mapped.test",
            "ula.test"
        ],
        "metadata names are refused without a lookup"
    );
}

#[tokio::test]
async fn urls_with_other_schemes_or_credentials_are_refused() {
    let server = html_server().await;
    let fetcher = Fetcher::new(&loopback_allowed(), Arc::new(TestNetwork::default()));
    let port = server.address.port();
    for (url, expected) in [
        ("file:///etc/passwd".to_owned(), "only http:// and https://"),
        (
            format!("http://user:secret@127.0.0.1:{port}/"),
            "user name or password",
        ),
        ("not a url".to_owned(), "not a valid URL"),
    ] {
        let error = fetcher.fetch(&url).await.unwrap_err().to_string();
        assert!(error.contains(expected), "{url}: {error}");
        assert!(!error.contains("secret"), "{error}");
    }
    assert_eq!(server.connections(), 0);
}

#[tokio::test]
async fn an_allowlisted_page_is_fetched_and_converted_to_markdown() {
    let server = html_server().await;
    let network = Arc::new(TestNetwork::default());
    let fetcher = Fetcher::new(&loopback_allowed(), network.clone());
    let fetched = fetcher.fetch(&server.url("/start?x=1#part")).await.unwrap();
    assert_eq!(fetched.page.kind, PageKind::Html);
    assert_eq!(fetched.page.title.as_deref(), Some("Local"));
    assert_eq!(
        fetched.page.text,
        format!("# It works\n\nSee [next]({}).", server.url("/next"))
    );
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].method, "GET");
    assert_eq!(seen[0].target, "/start?x=1", "the fragment stays local");
    assert_eq!(seen[0].headers["host"], server.address.to_string());
    assert_eq!(seen[0].headers["accept-encoding"], "identity");
    assert!(seen[0].headers["user-agent"].starts_with("corvid/"));
    assert_eq!(network.connects(), [server.address]);
}

#[tokio::test]
async fn a_name_is_resolved_once_and_only_the_checked_address_is_dialled() {
    let server = html_server().await;
    let network = Arc::new(TestNetwork::default().with("docs.test", &["127.0.0.1"]));
    let fetcher = Fetcher::new(&loopback_allowed(), network.clone());
    let port = server.address.port();
    let fetched = fetcher
        .fetch(&format!("http://docs.test:{port}/"))
        .await
        .unwrap();
    assert_eq!(fetched.page.title.as_deref(), Some("Local"));
    assert_eq!(network.lookups(), ["docs.test"]);
    assert_eq!(network.connects(), [server.address]);
    assert_eq!(
        server.seen()[0].headers["host"],
        format!("docs.test:{port}")
    );
}

#[tokio::test]
async fn a_redirect_to_a_private_or_loopback_address_is_refused() {
    // The second server listens on another loopback address that is not on the allowlist: a
    // redirect there must be refused without a connection.
    let inner = Server::start("127.0.0.2", |_| page("text/plain", "internal secret")).await;
    let inner_url = inner.url("/secret");
    let inner_port = inner.address.port();
    let network = Arc::new(TestNetwork::default().with("inner.test", &["127.0.0.2"]));
    let outer = Server::start("127.0.0.1", move |seen| match seen.target.as_str() {
        "/to-inner" => redirect("302 Found", &inner_url),
        "/to-mapped" => redirect(
            "307 Temporary Redirect",
            &format!("http://[::ffff:127.0.0.2]:{inner_port}/secret"),
        ),
        "/to-name" => redirect(
            "301 Moved Permanently",
            &format!("http://inner.test:{inner_port}/secret"),
        ),
        "/to-metadata" => redirect("303 See Other", "http://169.254.169.254/latest/meta-data/"),
        "/to-private" => redirect("308 Permanent Redirect", "http://10.0.0.1/"),
        "/to-file" => redirect("302 Found", "file:///etc/passwd"),
        _ => page("text/plain", "outer"),
    })
    .await;
    let fetcher = Fetcher::new(&loopback_allowed(), network.clone());
    for path in [
        "/to-inner",
        "/to-mapped",
        "/to-name",
        "/to-metadata",
        "/to-private",
        "/to-file",
    ] {
        let error = fetcher.fetch(&outer.url(path)).await.unwrap_err();
        let text = error.to_string();
        assert!(text.contains("redirected to"), "{path}: {text}");
        refusal(error);
    }
    assert_eq!(inner.connections(), 0);
    assert!(
        network
            .connects()
            .iter()
            .all(|address| *address == outer.address),
        "{:?}",
        network.connects()
    );
    assert_eq!(network.lookups(), ["inner.test"]);
}

#[tokio::test]
async fn redirects_are_followed_by_hand_up_to_the_cap() {
    let server = Server::start("127.0.0.1", |seen| match seen.target.as_str() {
        "/old" => redirect("301 Moved Permanently", "/new"),
        "/new" => page("text/markdown", "# New home\n"),
        "/loop" => redirect("302 Found", "/loop"),
        "/nowhere" => respond("302 Found", &[], ""),
        _ => respond(
            "404 Not Found",
            &[("Content-Type", "text/html")],
            "<p>gone</p>",
        ),
    })
    .await;
    let web = WebConfig {
        max_redirects: 3,
        ..loopback_allowed()
    };
    let fetcher = Fetcher::new(&web, Arc::new(TestNetwork::default()));
    let fetched = fetcher.fetch(&server.url("/old")).await.unwrap();
    assert_eq!(fetched.url.as_str(), server.url("/new"));
    assert_eq!(fetched.requested.as_str(), server.url("/old"));
    assert_eq!(fetched.page.text, "# New home\n");

    let error = fetcher.fetch(&server.url("/loop")).await.unwrap_err();
    assert!(
        matches!(error, FetchError::TooManyRedirects { limit: 3, .. }),
        "{error:?}"
    );
    let before = server.connections();
    assert_eq!(before, 2 + 4, "one request per hop");

    let error = fetcher.fetch(&server.url("/nowhere")).await.unwrap_err();
    assert!(matches!(error, FetchError::NoLocation { .. }), "{error:?}");

    let fetched = fetcher.fetch(&server.url("/missing")).await.unwrap();
    assert_eq!(fetched.status.as_u16(), 404);
    assert_eq!(fetched.page.text, "gone");
}

#[tokio::test]
async fn binaries_are_refused_and_big_pages_are_capped() {
    let big = "word ".repeat(100_000);
    let server = Server::start("127.0.0.1", move |seen| match seen.target.as_str() {
        "/logo.png" => page("image/png", b"\x89PNG\r\n\x1a\n"),
        "/gzipped" => respond(
            "200 OK",
            &[("Content-Type", "text/html"), ("Content-Encoding", "gzip")],
            b"\x1f\x8b\x08\0\0\0\0\0",
        ),
        "/big" => page("text/plain", big.as_bytes()),
        _ => page("text/plain", "small"),
    })
    .await;
    let web = WebConfig {
        max_page_bytes: 16 * 1024,
        max_text_bytes: 4 * 1024,
        ..loopback_allowed()
    };
    let tools = WebTools::new(&web, None, Arc::new(TestNetwork::default()));
    let run = |url: String| {
        let tools = &tools;
        async move {
            let call = tools
                .check(FETCH, &serde_json::json!({ "url": url }))
                .unwrap();
            tools.run(&call, Cancellation::never()).await
        }
    };
    let output = run(server.url("/logo.png")).await;
    assert!(output.is_error);
    assert!(output.text.contains("image/png"), "{}", output.text);

    let output = run(server.url("/gzipped")).await;
    assert!(output.is_error);
    assert!(output.text.contains("gzip-compressed"), "{}", output.text);

    let output = run(server.url("/big")).await;
    assert!(!output.is_error, "{}", output.text);
    assert!(output.text.len() < 5 * 1024, "{}", output.text.len());
    assert!(output.text.contains("\"offset\": 4"), "{}", output.text);
    assert!(output.text.contains("max_page_kb"), "{}", output.text);

    let fetcher = Fetcher::new(&web, Arc::new(TestNetwork::default()));
    let fetched = fetcher.fetch(&server.url("/big")).await.unwrap();
    assert!(fetched.truncated);
    assert_eq!(
        fetched.page.text.len(),
        16 * 1024,
        "no more than max_page_kb is read"
    );
}

#[tokio::test]
async fn a_silent_server_times_out_and_a_cancel_stops_the_fetch() {
    let server = Server::start("127.0.0.1", |_| Answer::Hang).await;
    let web = WebConfig {
        timeout: Duration::from_secs(1),
        ..loopback_allowed()
    };
    let fetcher = Fetcher::new(&web, Arc::new(TestNetwork::default()));
    let error = fetcher.fetch(&server.url("/")).await.unwrap_err();
    assert!(matches!(error, FetchError::Timeout(_)), "{error:?}");

    let web = WebConfig {
        timeout: Duration::from_secs(60),
        ..loopback_allowed()
    };
    let tools = WebTools::new(&web, None, Arc::new(TestNetwork::default()));
    let (cancel, watch) = tokio::sync::watch::channel(false);
    let call = WebCall::Fetch {
        url: server.url("/"),
        offset: 0,
    };
    let started = std::time::Instant::now();
    let (output, ()) = tokio::join!(tools.run(&call, Cancellation::new(watch)), async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        cancel.send(true).unwrap();
    });
    assert!(output.is_error);
    assert!(output.text.contains("cancelled"), "{}", output.text);
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[tokio::test]
async fn https_goes_through_tls_and_a_server_that_does_not_speak_it_fails_cleanly() {
    use tokio::io::AsyncWriteExt;
    // A server that answers plain HTTP at once, whatever it is sent (a TLS hello here).
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let plain = tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let _ = stream
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi")
                .await;
        }
    });
    let fetcher = Fetcher::new(&loopback_allowed(), Arc::new(TestNetwork::default()));
    let error = fetcher
        .fetch(&format!("https://127.0.0.1:{port}/"))
        .await
        .unwrap_err();
    plain.abort();
    assert!(
        matches!(error, FetchError::Request(RequestError::Tls { .. })),
        "{error:?}"
    );
    assert!(
        error.to_string().contains("TLS with 127.0.0.1 failed"),
        "{error}"
    );
}

#[tokio::test]
async fn a_name_on_the_allowlist_may_resolve_privately_and_every_checked_address_is_tried() {
    let server = html_server().await;
    let port = server.address.port();
    // Nothing listens on 127.0.0.3: the first address refuses, the second answers.
    let network = Arc::new(TestNetwork::default().with("wiki.test", &["127.0.0.3", "127.0.0.1"]));
    let web = WebConfig {
        allow_hosts: vec![HostRule::parse("wiki.test").unwrap()],
        ..WebConfig::default()
    };
    let fetcher = Fetcher::new(&web, network.clone());
    let fetched = fetcher
        .fetch(&format!("http://wiki.test:{port}/"))
        .await
        .unwrap();
    assert_eq!(fetched.page.title.as_deref(), Some("Local"));
    assert_eq!(
        network.connects(),
        [format!("127.0.0.3:{port}").parse().unwrap(), server.address]
    );
    // The same address under another name is not on the list.
    let network = Arc::new(TestNetwork::default().with("other.test", &["127.0.0.1"]));
    let fetcher = Fetcher::new(&web, network.clone());
    let error = fetcher
        .fetch(&format!("http://other.test:{port}/"))
        .await
        .unwrap_err();
    refusal(error);
    assert!(network.connects().is_empty());
}

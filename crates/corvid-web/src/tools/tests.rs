use std::sync::Arc;

use http::StatusCode;
use pretty_assertions::assert_eq;
use serde_json::json;
use url::Url;

use super::*;
use crate::net::SystemNetwork;
use crate::page::Page;

fn tools(web: &WebConfig, search: bool) -> WebTools {
    let backend = search.then(|| Backend::Searxng {
        base: Url::parse("http://127.0.0.1:1/").unwrap(),
    });
    WebTools::new(web, backend, Arc::new(SystemNetwork))
}

#[test]
fn only_configured_tools_are_offered() {
    let names = |tools: &WebTools| -> Vec<&str> {
        tools.offered().iter().map(|offered| offered.name).collect()
    };
    assert_eq!(names(&tools(&WebConfig::default(), false)), vec![FETCH]);
    assert_eq!(
        names(&tools(&WebConfig::default(), true)),
        vec![FETCH, SEARCH]
    );
    let no_fetch = WebConfig {
        fetch: false,
        ..WebConfig::default()
    };
    assert!(names(&tools(&no_fetch, false)).is_empty());
    assert!(!tools(&no_fetch, false).offers(FETCH));
    let offered = tools(&WebConfig::default(), true).offered();
    assert!(offered[1].description.contains("searxng"));
    assert_eq!(offered[0].parameters["required"], json!(["url"]));
}

#[test]
fn arguments_are_checked() {
    let web_tools = tools(&WebConfig::default(), true);
    assert_eq!(
        web_tools
            .check(FETCH, &json!({"url": " https://example.com/ "}))
            .unwrap(),
        WebCall::Fetch {
            url: "https://example.com/".to_owned(),
            offset: 0
        }
    );
    assert_eq!(
        web_tools
            .check(SEARCH, &json!({"query": "rust", "count": 3}))
            .unwrap(),
        WebCall::Search {
            query: "rust".to_owned(),
            count: 3
        }
    );
    for (name, arguments, expected) in [
        (FETCH, json!({}), "missing field `url`"),
        (FETCH, json!({"url": ""}), "`url` is empty"),
        (
            FETCH,
            json!({"url": "x", "headers": {}}),
            "unknown field `headers`",
        ),
        (FETCH, json!({"url": "x", "offset": -1}), "invalid value"),
        (SEARCH, json!({"query": "  "}), "`query` is empty"),
        (SEARCH, json!({"query": "x", "count": 0}), "from 1 to 20"),
        ("web_crawl", json!({}), "not a web tool"),
    ] {
        let error = web_tools.check(name, &arguments).unwrap_err().to_string();
        assert!(error.contains(expected), "{arguments}: {error}");
    }
    let without_search = tools(&WebConfig::default(), false);
    assert!(
        without_search
            .check(SEARCH, &json!({"query": "x"}))
            .is_err()
    );
}

fn fetched(text: &str, status: StatusCode) -> Fetched {
    Fetched {
        requested: Url::parse("http://a.example/old").unwrap(),
        url: Url::parse("http://a.example/new").unwrap(),
        page: Page {
            kind: PageKind::Html,
            media_type: "text/html".to_owned(),
            title: Some("A page".to_owned()),
            text: text.to_owned(),
        },
        status,
        truncated: false,
    }
}

#[test]
fn a_page_renders_with_its_origin_and_a_long_one_says_how_to_read_on() {
    let output = render_page(&fetched("# Hello\n\nworld", StatusCode::OK), 0, 1024);
    assert_eq!(
        output.text,
        "URL: http://a.example/new\nRedirected from: http://a.example/old\nTitle: A page\n\n# Hello\n\nworld"
    );
    assert!(!output.is_error);

    let text = "line one\nline two\nline three\n";
    let output = render_page(&fetched(text, StatusCode::OK), 0, 20);
    assert!(output.text.contains("line one\nline two\n\n\n[cut: bytes 0-18 of 29 shown; call web_fetch again with \"offset\": 18"), "{}", output.text);
    let output = render_page(&fetched(text, StatusCode::OK), 18, 20);
    assert!(output.text.ends_with("\n\nline three\n"), "{}", output.text);
    let output = render_page(&fetched(text, StatusCode::OK), 500, 20);
    assert!(output.text.contains("past the end"), "{}", output.text);

    // Offsets and cuts land on character boundaries.
    let output = render_page(&fetched("ééé", StatusCode::OK), 1, 3);
    assert!(
        output.text.contains("\n\né\n\n[cut: bytes 0-2 of 6 shown"),
        "{}",
        output.text
    );

    let mut big = fetched("x", StatusCode::OK);
    big.truncated = true;
    assert!(render_page(&big, 0, 10).text.contains("max_page_kb"));
}

#[test]
fn an_error_status_is_an_error_with_a_short_page() {
    let body = "Not here. ".repeat(1000);
    let output = render_page(&fetched(&body, StatusCode::NOT_FOUND), 0, 100 * 1024);
    assert!(output.is_error);
    assert!(
        output.text.contains("Status: 404 Not Found"),
        "{}",
        output.text
    );
    assert!(output.text.len() < 3 * 1024, "{}", output.text.len());
}

#[test]
fn the_configuration_decides_and_a_missing_key_is_a_notice() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        "[web]\nsearch = \"brave\"\n",
    )
    .unwrap();
    let environment = |pairs: &[(&str, &str)]| {
        let mut environment: std::collections::HashMap<String, String> = pairs
            .iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
            .collect();
        environment.insert("CORVID_HOME".to_owned(), home.path().display().to_string());
        environment
    };
    let loaded = corvid_config::load(&corvid_config::Flags::default(), &environment(&[])).unwrap();
    let (tools, notices) = WebTools::configured(&loaded);
    assert!(!tools.offers(SEARCH));
    assert!(tools.offers(FETCH));
    assert_eq!(notices.len(), 1);
    assert!(notices[0].contains("BRAVE_API_KEY"), "{notices:?}");

    std::fs::write(home.path().join("env"), "BRAVE_API_KEY=from-the-env-file\n").unwrap();
    let loaded = corvid_config::load(&corvid_config::Flags::default(), &environment(&[])).unwrap();
    let (tools, notices) = WebTools::configured(&loaded);
    assert!(tools.offers(SEARCH));
    assert!(notices.is_empty(), "{notices:?}");
    assert!(!format!("{tools:?}").contains("from-the-env-file"));
}

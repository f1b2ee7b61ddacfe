//! `web_search` against SearXNG-, Brave- and Tavily-shaped mocks on loopback.

use std::sync::Arc;

use corvid_config::{SearchBackend, WebConfig};
use corvid_tools::Cancellation;
use corvid_web::tools::SEARCH;
use corvid_web::{Backend, WebTools};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{Server, TestNetwork, page, respond};

fn tools(backend: Backend) -> WebTools {
    // The fetch guard stays strict: the backend is trusted because the user configured it.
    WebTools::new(
        &WebConfig::default(),
        Some(backend),
        Arc::new(TestNetwork::default()),
    )
}

async fn search(tools: &WebTools, arguments: serde_json::Value) -> corvid_tools::ToolOutput {
    let call = tools.check(SEARCH, &arguments).unwrap();
    tools.run(&call, Cancellation::never()).await
}

#[tokio::test]
async fn searxng_is_asked_for_json_and_its_results_become_a_markdown_list() {
    let server = Server::start("127.0.0.1", |_| {
        page(
            "application/json",
            json!({
                "query": "rust book",
                "results": [
                    {"title": "The Rust Programming Language", "url": "https://doc.rust-lang.org/book/", "content": "An <b>introductory</b> book about Rust.", "engine": "duckduckgo"},
                    {"title": "Rust by Example", "url": "https://doc.rust-lang.org/rust-by-example/", "content": "A collection of runnable examples."},
                    {"title": "No URL", "content": "skipped"},
                    {"title": "Third", "url": "https://example.org/3", "content": ""}
                ]
            })
            .to_string(),
        )
    })
    .await;
    let backend = Backend::from_config(SearchBackend::Searxng, Some(&server.url("/searx")), |_| {
        None
    })
    .unwrap()
    .unwrap();
    let tools = tools(backend);
    let output = search(&tools, json!({"query": "rust book", "count": 2})).await;
    assert!(!output.is_error, "{}", output.text);
    assert_eq!(
        output.text,
        "Results for \"rust book\" (searxng):\n\n1. [The Rust Programming Language](https://doc.rust-lang.org/book/)\n   An introductory book about Rust.\n\n2. [Rust by Example](https://doc.rust-lang.org/rust-by-example/)\n   A collection of runnable examples.\n"
    );
    let seen = server.seen();
    assert_eq!(seen[0].method, "GET");
    assert_eq!(seen[0].target, "/searx/search?q=rust+book&format=json");
    assert_eq!(seen[0].headers["accept"], "application/json");
}

#[tokio::test]
async fn searxng_without_json_enabled_says_how_to_fix_it() {
    let server = Server::start("127.0.0.1", |_| respond("403 Forbidden", &[], "Forbidden")).await;
    let backend = Backend::from_config(SearchBackend::Searxng, Some(&server.url("")), |_| None)
        .unwrap()
        .unwrap();
    let output = search(&tools(backend), json!({"query": "x"})).await;
    assert!(output.is_error);
    assert!(output.text.contains("403"), "{}", output.text);
    assert!(output.text.contains("settings.yml"), "{}", output.text);
}

#[tokio::test]
async fn brave_gets_its_key_in_a_header_and_its_answer_is_read() {
    let server = Server::start("127.0.0.1", |seen| {
        if seen.headers.get("x-subscription-token").map(String::as_str) != Some("brave-key-123") {
            return respond("401 Unauthorized", &[], "{}");
        }
        page(
            "application/json",
            json!({
                "type": "search",
                "web": {"results": [
                    {"title": "Tokio", "url": "https://tokio.rs/", "description": "An <strong>asynchronous</strong> runtime &amp; more."}
                ]}
            })
            .to_string(),
        )
    })
    .await;
    let key = |name: &str| (name == "BRAVE_API_KEY").then(|| "brave-key-123".to_owned());
    let backend = Backend::from_config(SearchBackend::Brave, Some(&server.url("")), key)
        .unwrap()
        .unwrap();
    let output = search(&tools(backend), json!({"query": "tokio runtime"})).await;
    assert_eq!(
        output.text,
        "Results for \"tokio runtime\" (brave):\n\n1. [Tokio](https://tokio.rs/)\n   An asynchronous runtime & more.\n"
    );
    let seen = server.seen();
    assert_eq!(seen[0].target, "/res/v1/web/search?q=tokio+runtime&count=5");

    let wrong = |_: &str| Some("wrong-key".to_owned());
    let backend = Backend::from_config(SearchBackend::Brave, Some(&server.url("")), wrong)
        .unwrap()
        .unwrap();
    let output = search(&tools(backend), json!({"query": "x"})).await;
    assert!(output.is_error);
    assert!(output.text.contains("401"), "{}", output.text);
    assert!(
        !output.text.contains("wrong-key"),
        "the key never shows: {}",
        output.text
    );
}

#[tokio::test]
async fn brave_without_web_results_means_no_results() {
    let server = Server::start("127.0.0.1", |_| {
        page(
            "application/json",
            json!({"type": "search", "query": {"original": "zzz"}}).to_string(),
        )
    })
    .await;
    let backend = Backend::from_config(SearchBackend::Brave, Some(&server.url("")), |_| {
        Some("k".to_owned())
    })
    .unwrap()
    .unwrap();
    let output = search(&tools(backend), json!({"query": "zzz"})).await;
    assert!(!output.is_error);
    assert_eq!(output.text, "No results for \"zzz\" (brave).");
}

#[tokio::test]
async fn tavily_gets_a_json_post_with_a_bearer_key() {
    let server = Server::start("127.0.0.1", |_| {
        page(
            "application/json",
            json!({"query": "q", "results": [
                {"title": "Result", "url": "https://example.com/r", "content": "Text.", "score": 0.9}
            ]})
            .to_string(),
        )
    })
    .await;
    let backend = Backend::from_config(SearchBackend::Tavily, Some(&server.url("")), |_| {
        Some("tvly-secret".to_owned())
    })
    .unwrap()
    .unwrap();
    let output = search(
        &tools(backend),
        json!({"query": "what is corvid", "count": 3}),
    )
    .await;
    assert!(
        output.text.contains("1. [Result](https://example.com/r)"),
        "{}",
        output.text
    );
    let seen = server.seen();
    assert_eq!(seen[0].method, "POST");
    assert_eq!(seen[0].target, "/search");
    assert_eq!(seen[0].headers["authorization"], "Bearer tvly-secret");
    let body: serde_json::Value = serde_json::from_slice(&seen[0].body).unwrap();
    assert_eq!(body["query"], "what is corvid");
    assert_eq!(body["max_results"], 3);
}

#[tokio::test]
async fn an_answer_that_is_not_the_backends_json_is_an_error() {
    let server = Server::start("127.0.0.1", |_| page("text/html", "<html>login</html>")).await;
    let backend = Backend::from_config(SearchBackend::Searxng, Some(&server.url("")), |_| None)
        .unwrap()
        .unwrap();
    let output = search(&tools(backend), json!({"query": "x"})).await;
    assert!(output.is_error);
    assert!(output.text.contains("not its JSON"), "{}", output.text);
}

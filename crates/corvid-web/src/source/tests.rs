use std::sync::Arc;

use corvid_config::WebConfig;
use pretty_assertions::assert_eq;
use serde_json::json;
use url::Url;

use super::*;
use crate::net::SystemNetwork;
use crate::search::Backend;

fn source(search: bool) -> WebSource {
    let backend = search.then(|| Backend::Searxng {
        base: Url::parse("http://127.0.0.1:1/").unwrap(),
    });
    WebSource {
        tools: Arc::new(WebTools::new(
            &WebConfig::default(),
            backend,
            Arc::new(SystemNetwork),
        )),
        notices: vec!["a notice".to_owned()],
    }
}

#[tokio::test]
async fn fetch_asks_and_search_reads() {
    let listing = source(true).list().await;
    let kinds: Vec<(&str, ToolKind)> = listing
        .tools
        .iter()
        .map(|spec| (spec.name.as_str(), spec.kind))
        .collect();
    assert_eq!(
        kinds,
        vec![(FETCH, ToolKind::Fetch), (SEARCH, ToolKind::Fetch)]
    );
    assert_eq!(listing.notices, vec!["a notice".to_owned()]);
    let listing = source(false).list().await;
    assert_eq!(listing.tools.len(), 1, "no search until configured");
}

#[tokio::test]
async fn a_call_is_prepared_with_its_url_in_the_proposal() {
    let source = source(false);
    let prepared = source
        .prepare(FETCH, json!({"url": "https://example.com/docs"}))
        .await
        .unwrap();
    assert_eq!(prepared.tool, FETCH);
    assert_eq!(prepared.kind, ToolKind::Fetch);
    assert_eq!(prepared.proposal.summary, "Fetch https://example.com/docs");
    assert_eq!(
        source.summary(FETCH, &json!({"url": "https://example.com/docs"})),
        Some("Fetch https://example.com/docs".to_owned())
    );
    let error = source.prepare(FETCH, json!({})).await.unwrap_err();
    assert!(error.to_string().contains("missing field `url`"), "{error}");
    let error = source
        .prepare(SEARCH, json!({"query": "x"}))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("not a web tool"), "{error}");
}

#[tokio::test]
async fn a_refused_fetch_is_an_error_result_not_a_failure_of_the_tool() {
    let source = source(false);
    let prepared = source
        .prepare(
            FETCH,
            json!({"url": "http://169.254.169.254/latest/meta-data/"}),
        )
        .await
        .unwrap();
    let output = source
        .apply(FETCH, prepared.plan, Run::unattended())
        .await
        .unwrap();
    assert!(output.is_error);
    assert!(output.text.contains("cloud metadata"), "{}", output.text);
}

//! The web tools through the real agent: a scripted model calls `web_fetch`, the user approves
//! the fetch (it asks under `ask`), and the page's markdown is in the model's next request;
//! `web_search` asks the same way, showing its query.

use std::sync::Arc;

use corvid_config::{HostRule, WebConfig};
use corvid_protocol::{
    ApprovalDecision, ApprovalPolicy, ApprovalRule, EventMsg, ProposalKind, TurnOutcome,
};
use corvid_test_support::agent::{self, Said, ScriptedAgent, tool_names, tool_results};
use corvid_test_support::scripted::ScriptedReply;
use corvid_web::WebTools;
use corvid_web::source::WebPlugin;

use super::support::{Server, TestNetwork, page};

/// An agent in a new project under `policy`, with the web tools of `plugin`, its model
/// answering `replies`.
async fn start(
    policy: ApprovalPolicy,
    plugin: WebPlugin,
    replies: Vec<ScriptedReply>,
) -> (tempfile::TempDir, ScriptedAgent) {
    let project = tempfile::tempdir().unwrap();
    let mut config = agent::config(project.path(), policy);
    config.tool_plugins = vec![Arc::new(plugin)];
    (project, ScriptedAgent::spawn(config, replies).await)
}

/// `web_fetch` allowed to reach the local test servers; search off.
fn local_fetch() -> WebPlugin {
    let web = WebConfig {
        allow_hosts: vec![HostRule::parse("127.0.0.1").unwrap()],
        ..WebConfig::default()
    };
    WebPlugin::new(
        WebTools::new(&web, None, Arc::new(TestNetwork::default())),
        Vec::new(),
    )
}

#[tokio::test]
async fn a_scripted_model_fetches_a_page_and_reads_its_markdown_next() {
    let server = Server::start("127.0.0.1", |_| {
        page(
            "text/html",
            "<html><head><title>Release notes</title></head><body><h2>1.2.0</h2><ul><li>Faster builds</li></ul></body></html>",
        )
    })
    .await;
    let plugin = local_fetch();
    let arguments = serde_json::json!({ "url": server.url("/notes") }).to_string();
    let (_project, mut agent) = start(
        ApprovalPolicy::Ask,
        plugin,
        vec![
            ScriptedReply::tool_call("c1", "web_fetch", &arguments),
            ScriptedReply::text("1.2.0 makes builds faster."),
        ],
    )
    .await;
    agent.send("what changed in 1.2.0?");
    let outcome = loop {
        match agent.next_said().await {
            Said::Asked(proposal) => {
                match &proposal.kind {
                    ProposalKind::Other { tool, summary } => {
                        assert_eq!(tool, "web_fetch");
                        assert_eq!(summary, &format!("Fetch {}", server.url("/notes")));
                    }
                    other => panic!("{other:?}"),
                }
                assert_eq!(
                    server.connections(),
                    0,
                    "nothing fetched before the approval"
                );
                agent.decide(&proposal.proposal_id, ApprovalDecision::Approve);
            }
            Said::Event(EventMsg::TurnFinished(finished)) => break finished.outcome,
            _ => {}
        }
    };
    assert_eq!(outcome, TurnOutcome::Completed);
    let requests = agent.model.requests();
    assert_eq!(requests.len(), 2);
    let offered = tool_names(&requests[0]);
    assert!(offered.contains(&"web_fetch"), "{offered:?}");
    assert!(
        !offered.contains(&"web_search"),
        "search is off: {offered:?}"
    );
    let results = tool_results(&requests[1]);
    assert_eq!(results.len(), 1);
    let (text, is_error) = &results[0];
    assert!(!is_error, "{text}");
    assert!(text.contains("Title: Release notes"), "{text}");
    assert!(text.contains("## 1.2.0"), "{text}");
    assert!(text.contains("Faster builds"), "{text}");
}

#[tokio::test]
async fn web_search_asks_first_showing_the_query_and_its_results_reach_the_model() {
    let backend = Server::start("127.0.0.1", |_| {
        page(
            "application/json",
            serde_json::json!({"results": [
                {"title": "corvid", "url": "https://example.com/corvid", "content": "A local gateway."}
            ]})
            .to_string(),
        )
    })
    .await;
    let searxng = corvid_web::Backend::from_config(
        corvid_config::SearchBackend::Searxng,
        Some(&backend.url("")),
        |_| None,
    )
    .unwrap();
    let plugin = WebPlugin::new(
        WebTools::new(
            &WebConfig::default(),
            searxng,
            Arc::new(TestNetwork::default()),
        ),
        Vec::new(),
    );
    let (_project, mut agent) = start(
        ApprovalPolicy::Ask,
        plugin,
        vec![
            ScriptedReply::tool_call("c1", "web_search", r#"{"query":"corvid gateway"}"#),
            ScriptedReply::text("Found it."),
        ],
    )
    .await;
    agent.send("search for corvid");
    let mut asked = 0;
    let outcome = loop {
        match agent.next_said().await {
            Said::Asked(proposal) => {
                match &proposal.kind {
                    ProposalKind::Other { tool, summary } => {
                        assert_eq!(tool, "web_search");
                        assert!(summary.contains("corvid gateway"), "{summary}");
                    }
                    other => panic!("{other:?}"),
                }
                asked += 1;
                agent.decide(&proposal.proposal_id, ApprovalDecision::Approve);
            }
            Said::Event(EventMsg::TurnFinished(finished)) => break finished.outcome,
            _ => {}
        }
    };
    assert_eq!(outcome, TurnOutcome::Completed);
    assert_eq!(asked, 1, "the search asked once");
    let requests = agent.model.requests();
    let offered = tool_names(&requests[0]);
    assert!(offered.contains(&"web_search"), "{offered:?}");
    let results = tool_results(&requests[1]);
    assert_eq!(results.len(), 1);
    assert!(
        results[0]
            .0
            .contains("1. [corvid](https://example.com/corvid)"),
        "{results:?}"
    );
}

#[tokio::test]
async fn always_allowing_web_fetch_lets_later_fetches_run_without_asking() {
    let server = Server::start("127.0.0.1", |_| page("text/plain", "page text")).await;
    let plugin = local_fetch();
    let first = serde_json::json!({ "url": server.url("/one") }).to_string();
    let second = serde_json::json!({ "url": server.url("/two") }).to_string();
    let (_project, mut agent) = start(
        ApprovalPolicy::AutoEdit,
        plugin,
        vec![
            ScriptedReply::tool_call("c1", "web_fetch", &first),
            ScriptedReply::tool_call("c2", "web_fetch", &second),
            ScriptedReply::text("Read both."),
        ],
    )
    .await;
    agent.send("read two pages");
    let mut proposals = 0;
    let outcome = loop {
        match agent.next_said().await {
            Said::Asked(proposal) => {
                proposals += 1;
                // auto-edit still asks for a fetch; "always" means this tool.
                assert_eq!(proposal.always_scope, Some(ApprovalRule::tool("web_fetch")));
                agent.decide(
                    &proposal.proposal_id,
                    ApprovalDecision::ApproveAlways {
                        scope: ApprovalRule::tool("web_fetch"),
                    },
                );
            }
            Said::Event(EventMsg::TurnFinished(finished)) => break finished.outcome,
            _ => {}
        }
    };
    assert_eq!(outcome, TurnOutcome::Completed);
    assert_eq!(proposals, 1, "the second fetch did not ask");
    let targets: Vec<String> = server.seen().into_iter().map(|seen| seen.target).collect();
    assert_eq!(targets, ["/one", "/two"]);
}

#[tokio::test]
async fn the_explore_subagent_is_offered_the_web_tools_and_fetches_a_page() {
    let server = Server::start("127.0.0.1", |_| {
        page(
            "text/html",
            "<html><body><p>The answer is forty-two.</p></body></html>",
        )
    })
    .await;
    let arguments = serde_json::json!({ "url": server.url("/answer") }).to_string();
    let (_project, mut agent) = start(
        ApprovalPolicy::FullAuto,
        local_fetch(),
        vec![
            ScriptedReply::tool_call(
                "t1",
                "task",
                r#"{"agent":"explore","description":"look it up","prompt":"What is the answer?"}"#,
            ),
            ScriptedReply::tool_call("f1", "web_fetch", &arguments),
            ScriptedReply::text("It is forty-two."),
            ScriptedReply::text("The explorer says forty-two."),
        ],
    )
    .await;
    agent.send("find the answer");
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    let requests = agent.model.requests();
    let explore_tools = tool_names(&requests[1]);
    assert!(explore_tools.contains(&"web_fetch"), "{explore_tools:?}");
    for writer in ["write", "edit", "bash"] {
        assert!(!explore_tools.contains(&writer), "{explore_tools:?}");
    }
    let fetched = tool_results(&requests[2]);
    assert!(fetched[0].0.contains("forty-two"), "{fetched:?}");
}

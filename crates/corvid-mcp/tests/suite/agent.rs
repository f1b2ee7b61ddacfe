//! The whole path: a session's agent opens the project's `.corvid/mcp.json`, a scripted model
//! calls server-everything's tools, the approval gate asks (once: "always" for the server), and
//! the results arrive in the model's next request.

use std::sync::Arc;
use std::time::Duration;

use corvid_mcp::McpPlugin;
use corvid_protocol::{
    ApprovalDecision, ApprovalPolicy, ApprovalRule, EventMsg, ProposalKind, TurnOutcome,
};
use corvid_test_support::agent::{self, Said, ScriptedAgent, tool_names, tool_results};
use corvid_test_support::scripted::ScriptedReply;
use corvid_wire::model::{Part, ToolResultContent};
use serde_json::json;

use super::support::{node_modules, npm_server};

#[tokio::test(flavor = "multi_thread")]
async fn a_scripted_model_calls_mcp_tools_and_reads_their_results() {
    let Some(modules) = node_modules() else {
        return;
    };
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join(".corvid")).unwrap();
    std::fs::write(
        project.path().join(".corvid/mcp.json"),
        json!({"mcpServers": {"everything": {
            "command": "node",
            "args": [npm_server(&modules, "server-everything"), "stdio"],
            "always_allow": "server"
        }}})
        .to_string(),
    )
    .unwrap();
    let mut config = agent::config(project.path(), ApprovalPolicy::Ask);
    // The user trusted the project's server (it would not start otherwise).
    let data = tempfile::tempdir().unwrap();
    let trust = corvid_mcp::TrustStore::in_data_dir(data.path());
    for server in corvid_config::read_project_mcp(project.path())
        .unwrap()
        .servers
    {
        trust.trust(project.path(), &server).unwrap();
    }
    config.tool_plugins = vec![Arc::new(
        McpPlugin::new(Vec::new(), 100, Arc::new(|_: &str| None)).with_trust(trust),
    )];
    let mut agent = ScriptedAgent::spawn(
        config,
        vec![
            ScriptedReply::tool_call(
                "c1",
                "mcp__everything__echo",
                r#"{"message":"hello through the agent"}"#,
            ),
            ScriptedReply::tool_call("c2", "mcp__everything__get-sum", r#"{"a":20,"b":22}"#),
            ScriptedReply::tool_call("c3", "mcp__everything__get-tiny-image", "{}"),
            ScriptedReply::text("Done."),
        ],
    )
    .await
    .with_patience(Duration::from_secs(60));
    agent.send("echo something, then add");

    let mut proposals = Vec::new();
    let outcome = loop {
        match agent.next_said().await {
            Said::Asked(proposal) => {
                // "Always", with the scope the proposal offers: the whole server.
                let scope = proposal.always_scope.clone().unwrap();
                agent.decide(
                    &proposal.proposal_id,
                    ApprovalDecision::ApproveAlways { scope },
                );
                proposals.push(proposal);
            }
            Said::Event(EventMsg::TurnFinished(finished)) => break finished.outcome,
            _ => {}
        }
    };
    assert_eq!(outcome, TurnOutcome::Completed);

    // The first call asked, showing the server, the tool and the arguments; "always" for the
    // server (`always_allow = "server"`) let the second tool of the same server through.
    assert_eq!(
        proposals.len(),
        1,
        "{:?}",
        proposals
            .iter()
            .map(|p| &p.always_scope)
            .collect::<Vec<_>>()
    );
    assert_eq!(
        proposals[0].kind,
        ProposalKind::Other {
            tool: "mcp__everything__echo".to_owned(),
            summary: r#"Call `echo` on the MCP server `everything` with {"message":"hello through the agent"}"#
                .to_owned(),
        }
    );
    assert_eq!(
        proposals[0].always_scope,
        Some(ApprovalRule::origin("mcp:everything"))
    );

    let requests = agent.model.requests();
    let offered = tool_names(&requests[0]);
    assert!(offered.contains(&"mcp__everything__echo"), "{offered:?}");
    assert!(offered.contains(&"read"), "the built-ins stay: {offered:?}");
    let (echoed, is_error) = tool_results(&requests[1])[0].clone();
    assert!(
        !is_error && echoed.contains("hello through the agent"),
        "{echoed}"
    );
    let (sum, is_error) = tool_results(&requests[2])[0].clone();
    assert!(!is_error && sum.contains("42"), "{sum}");
    // The image itself reaches the model, beside the line naming it.
    let Some(Part::ToolResult(image)) = requests[3].messages.last().unwrap().parts.first() else {
        panic!("no tool result")
    };
    assert!(
        image.content.iter().any(|content| matches!(
            content,
            ToolResultContent::Image(corvid_wire::model::Image {
                source: corvid_wire::model::ImageSource::Base64 { media_type, .. },
                ..
            }) if media_type == "image/png"
        )),
        "{:?}",
        image.content
    );
}

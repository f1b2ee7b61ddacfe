//! Issue 15, part 4: the MCP servers Zed (or any ACP client) passes in `session/new` join that
//! session's tools: `corvid acp` as a child process, a scripted model on loopback calling the
//! editor's server, the permission asked over ACP, and the result in the model's next request.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::Path;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{
    ContentBlock, InitializeRequest, McpServer, McpServerStdio, NewSessionRequest, PromptRequest,
    RequestPermissionRequest, RequestPermissionResponse, SessionNotification, StopReason,
};
use agent_client_protocol::{Agent, Client, on_receive_notification, on_receive_request};
use corvid_test_support::MockUpstream;
use serde_json::{Value, json};

mod common;
use common::acp::{agent, allow_once, run_to_end};
use common::{
    CHAT, chat_requests, delta_then_stop, offered_tools, reply, tool_call_chunks, tool_message,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_editors_mcp_servers_join_the_session() {
    let Some(python) = corvid_test_support::installed::mcp_python() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join(".git")).unwrap();
    let root = project.path().canonicalize().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp/fixture_server.py");
    let upstream = MockUpstream::start().await;
    upstream.enqueue(
        CHAT,
        reply(tool_call_chunks(
            "call_1",
            "mcp__zed-tools__echo",
            r#"{"text":"from the editor's server"}"#,
        )),
    );
    upstream.enqueue(
        CHAT,
        reply(delta_then_stop(
            json!({"role": "assistant", "content": "Echoed."}),
        )),
    );
    let agent = agent(
        &upstream,
        home.path(),
        &[format!("HOME={}", home.path().display())],
    );
    let permissions = std::sync::Arc::new(std::sync::Mutex::new(Vec::<Value>::new()));
    let asked = permissions.clone();
    let said = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let heard = said.clone();
    let server = McpServer::Stdio(
        McpServerStdio::new("zed-tools", python)
            .args(vec![fixture.display().to_string(), "serve".to_owned()]),
    );
    let run = Client
        .v1()
        .on_receive_notification(
            async move |notification: SessionNotification, _cx| {
                let update = serde_json::to_value(&notification.update).unwrap();
                if update["sessionUpdate"] == "agent_message_chunk"
                    && let Some(text) = update["content"]["text"].as_str()
                {
                    heard.lock().unwrap().push_str(text);
                }
                Ok(())
            },
            on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: RequestPermissionRequest,
                        responder: Responder<RequestPermissionResponse>,
                        _cx| {
                asked
                    .lock()
                    .unwrap()
                    .push(serde_json::to_value(&request).unwrap());
                responder.respond(allow_once(&request))
            },
            on_receive_request!(),
        )
        .connect_with(agent, async move |cx: ConnectionTo<Agent>| {
            let init = cx
                .send_request(InitializeRequest::new(ProtocolVersion::V1))
                .block_task()
                .await?;
            let init = serde_json::to_value(&init).unwrap();
            assert_eq!(init["agentCapabilities"]["mcpCapabilities"]["http"], true);
            let created = cx
                .send_request(NewSessionRequest::new(root.clone()).mcp_servers(vec![server]))
                .block_task()
                .await?;
            let answer = cx
                .send_request(PromptRequest::new(
                    created.session_id.0.to_string(),
                    vec![ContentBlock::from(
                        "echo through the editor's server".to_owned(),
                    )],
                ))
                .block_task()
                .await?;
            assert_eq!(answer.stop_reason, StopReason::EndTurn);
            // `/mcp` lists the editor's server with its tools, without a model call.
            said.lock().unwrap().clear();
            let listed = cx
                .send_request(PromptRequest::new(
                    created.session_id.0.to_string(),
                    vec![ContentBlock::from("/mcp".to_owned())],
                ))
                .block_task()
                .await?;
            assert_eq!(listed.stop_reason, StopReason::EndTurn);
            let text = said.lock().unwrap().clone();
            assert!(
                text.contains("- **zed-tools**: ready, ") && text.contains("(the editor; runs `"),
                "{text}"
            );
            assert!(text.contains("`echo`"), "{text}");
            // `/mcp trust` of a server that waits for nothing says so, and the prompt ends.
            said.lock().unwrap().clear();
            let refused = cx
                .send_request(PromptRequest::new(
                    created.session_id.0.to_string(),
                    vec![ContentBlock::from("/mcp trust zed-tools".to_owned())],
                ))
                .block_task()
                .await?;
            assert_eq!(refused.stop_reason, StopReason::EndTurn);
            let text = said.lock().unwrap().clone();
            assert!(
                text.contains("**Error:** the MCP server `zed-tools` is not waiting for trust")
                    && text.contains(" — /mcp shows which servers wait for trust."),
                "{text}"
            );
            Ok(())
        });
    run_to_end(run).await;

    let requests = chat_requests(&upstream);
    let offered = offered_tools(&requests[0]);
    assert!(offered.contains(&"mcp__zed-tools__echo"), "{offered:?}");
    let result = tool_message(&requests[1]);
    assert_eq!(result["content"], "from the editor's server", "{result}");
    let asked = permissions.lock().unwrap();
    assert_eq!(asked.len(), 1, "{asked:?}");
}

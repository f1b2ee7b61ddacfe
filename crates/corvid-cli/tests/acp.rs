//! `corvid acp` driven as a child process by the `agent-client-protocol` crate's own client,
//! against a scripted model on loopback: initialize, new session, a prompt streamed as updates,
//! a permission request answered, the edit made through the client's `fs/*` (on its unsaved
//! buffer), list, config options, slash commands, a cancel while a permission waits, a cancel
//! of a running command, the session loaded again with its history replayed, and an image in
//! a prompt reaching the upstream.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    CancelNotification, ClientCapabilities, ContentBlock, FileSystemCapabilities, ImageContent,
    InitializeRequest, ListSessionsRequest, LoadSessionRequest, NewSessionRequest, PromptRequest,
    ReadTextFileRequest, ReadTextFileResponse, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SessionConfigOptionValue, SessionId, SessionNotification,
    SetSessionConfigOptionRequest, StopReason, WriteTextFileRequest, WriteTextFileResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, on_receive_notification, on_receive_request};
use corvid_test_support::{MockUpstream, Reply};
use serde_json::{Value, json};

mod common;
use common::acp::{agent, allow_once, run_to_end};
use common::{CHAT, CORVID, chunk, reply_with_usage, text, tool_call_chunks};

const STEP: Duration = Duration::from_secs(30);

/// The assistant thinks aloud, then calls one tool.
fn thought_then_tool_call(id: &str, name: &str, arguments: Value) -> Reply {
    let mut chunks = vec![chunk(
        json!({"role": "assistant", "reasoning_content": "thinking it over"}),
        Value::Null,
    )];
    chunks.extend(tool_call_chunks(id, name, &arguments.to_string()));
    reply_with_usage(chunks)
}

/// What the client saw and how it answers.
#[derive(Default)]
struct Seen {
    updates: Vec<Value>,
    permissions: Vec<Value>,
    reads: Vec<PathBuf>,
    writes: Vec<(PathBuf, String)>,
    /// When set, permission requests are held here instead of answered.
    hold: bool,
    held: Vec<Responder<RequestPermissionResponse>>,
    /// The editor's unsaved buffers: reads answer from them, writes land in them (and on disk).
    buffers: std::collections::HashMap<PathBuf, String>,
}

type Shared = Arc<Mutex<Seen>>;

/// Runs `body` against a fresh `corvid acp` with a client recording into `seen`.
async fn drive<F>(upstream: &MockUpstream, home: &Path, seen: Shared, body: F)
where
    F: AsyncFnOnce(ConnectionTo<Agent>) -> Result<(), agent_client_protocol::Error>,
{
    let (a, b, c, d) = (seen.clone(), seen.clone(), seen.clone(), seen);
    let run = Client
        .v1()
        .on_receive_notification(
            async move |notification: SessionNotification, _cx| {
                a.lock()
                    .unwrap()
                    .updates
                    .push(serde_json::to_value(&notification.update).unwrap());
                Ok(())
            },
            on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: RequestPermissionRequest,
                        responder: Responder<RequestPermissionResponse>,
                        _cx| {
                let mut seen = b.lock().unwrap();
                seen.permissions
                    .push(serde_json::to_value(&request).unwrap());
                if seen.hold {
                    seen.held.push(responder);
                    return Ok(());
                }
                drop(seen);
                responder.respond(allow_once(&request))
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ReadTextFileRequest, responder, _cx| {
                let mut seen = c.lock().unwrap();
                seen.reads.push(request.path.clone());
                let content = match seen.buffers.get(&request.path) {
                    Some(buffer) => buffer.clone(),
                    None => std::fs::read_to_string(&request.path).unwrap_or_default(),
                };
                responder.respond(ReadTextFileResponse::new(content))
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: WriteTextFileRequest, responder, _cx| {
                let mut seen = d.lock().unwrap();
                std::fs::write(&request.path, &request.content).unwrap();
                seen.buffers
                    .insert(request.path.clone(), request.content.clone());
                seen.writes.push((request.path, request.content));
                responder.respond(WriteTextFileResponse::new())
            },
            on_receive_request!(),
        )
        .connect_with(
            agent(upstream, home, &[]),
            async move |connection: ConnectionTo<Agent>| {
                let init = connection
                    .send_request(
                        InitializeRequest::new(ProtocolVersion::V1).client_capabilities(
                            ClientCapabilities::new().fs(FileSystemCapabilities::new()
                                .read_text_file(true)
                                .write_text_file(true)),
                        ),
                    )
                    .block_task()
                    .await?;
                let init = serde_json::to_value(&init).unwrap();
                assert_eq!(init["protocolVersion"], 1);
                assert_eq!(init["agentCapabilities"]["loadSession"], true);
                assert_eq!(
                    init["agentCapabilities"]["promptCapabilities"]["image"],
                    true
                );
                assert_eq!(
                    init["agentCapabilities"]["promptCapabilities"]["embeddedContext"],
                    true
                );
                assert_eq!(init["authMethods"][0]["type"], "terminal");
                body(connection).await
            },
        );
    run_to_end(run).await;
}

fn prompt(session: &str, text: &str) -> PromptRequest {
    PromptRequest::new(
        session.to_owned(),
        vec![ContentBlock::from(text.to_owned())],
    )
}

/// Sets the session's approval policy: its `mode` config option.
fn set_mode(session: impl Into<SessionId>, mode: &str) -> SetSessionConfigOptionRequest {
    SetSessionConfigOptionRequest::new(
        session,
        "mode",
        SessionConfigOptionValue::value_id(mode.to_owned()),
    )
}

/// The kinds of the options a recorded permission request offered, in order.
fn option_kinds(asked: &Value) -> Vec<&str> {
    asked["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|option| option["kind"].as_str().unwrap())
        .collect()
}

fn updates_of<'a>(seen: &'a Seen, kind: &str) -> Vec<&'a Value> {
    seen.updates
        .iter()
        .filter(|update| update["sessionUpdate"] == kind)
        .collect()
}

async fn until(seen: &Shared, what: &str, check: impl Fn(&Seen) -> bool) {
    let deadline = tokio::time::Instant::now() + STEP;
    while !check(&seen.lock().unwrap()) {
        assert!(tokio::time::Instant::now() < deadline, "never saw {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_streams_asks_edits_through_the_editor_and_the_session_loads_again() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join(".git")).unwrap();
    let root = project.path().canonicalize().unwrap();
    let file = root.join("lib.rs");
    std::fs::write(&file, "fn add(a: i32, b: i32) -> i32 { a - b }\n").unwrap();
    let upstream = MockUpstream::start().await;
    upstream.enqueue(
        CHAT,
        thought_then_tool_call(
            "call_1",
            "edit",
            json!({"path": "lib.rs", "old_string": "a - b", "new_string": "a + b"}),
        ),
    );
    upstream.enqueue(CHAT, text("Fixed: add now adds."));
    let seen: Shared = Arc::default();
    // Zed holds an unsaved change in its buffer: the agent must see and keep it.
    seen.lock().unwrap().buffers.insert(
        file.clone(),
        "// unsaved note\nfn add(a: i32, b: i32) -> i32 { a - b }\n".to_owned(),
    );
    let session = Arc::new(Mutex::new(String::new()));
    let (state, id) = (seen.clone(), session.clone());
    let cwd = root.clone();
    let edited = file.clone();
    drive(
        &upstream,
        home.path(),
        seen.clone(),
        async move |cx: ConnectionTo<Agent>| {
            let created = cx
                .send_request(NewSessionRequest::new(cwd.clone()))
                .block_task()
                .await?;
            let created_json = serde_json::to_value(&created).unwrap();
            let options = created_json["configOptions"].as_array().unwrap();
            let mode = options
                .iter()
                .find(|option| option["id"] == "mode")
                .unwrap();
            assert_eq!(mode["currentValue"], "ask");
            let values: Vec<&str> = mode["options"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| o["value"].as_str().unwrap())
                .collect();
            assert_eq!(
                values,
                ["read-only", "plan", "ask", "auto-edit", "full-auto"]
            );
            let model = options
                .iter()
                .find(|option| option["id"] == "model")
                .unwrap();
            assert_eq!(model["currentValue"], "grok");
            let sid = created.session_id.0.to_string();
            *id.lock().unwrap() = sid.clone();

            let answer = cx
                .send_request(prompt(&sid, "make add add"))
                .block_task()
                .await?;
            assert_eq!(answer.stop_reason, StopReason::EndTurn);
            {
                let seen = state.lock().unwrap();
                let commands = updates_of(&seen, "available_commands_update");
                let names: Vec<&str> = commands[0]["availableCommands"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| c["name"].as_str().unwrap())
                    .collect();
                for name in ["init", "compact", "undo", "diff"] {
                    assert!(names.contains(&name), "{names:?}");
                }
                let thoughts = updates_of(&seen, "agent_thought_chunk");
                assert_eq!(thoughts[0]["content"]["text"], "thinking it over");
                let calls = updates_of(&seen, "tool_call");
                // Announced while the model was still writing it, then complete.
                let writing = calls[0]["title"].as_str().unwrap();
                assert!(writing.starts_with("Writing edit call ("), "{writing}");
                assert_eq!(calls[0]["toolCallId"], "call_1");
                let call = *calls
                    .iter()
                    .find(|call| !call["rawInput"].is_null())
                    .unwrap();
                assert_eq!(call["toolCallId"], "call_1");
                assert_eq!(call["kind"], "edit");
                assert_eq!(call["rawInput"]["old_string"], "a - b");
                assert_eq!(call["locations"][0]["path"], file.display().to_string());
                // The permission request shows the proposal's own diff, and its options.
                assert_eq!(seen.permissions.len(), 1, "{:?}", seen.permissions);
                let asked = &seen.permissions[0];
                assert_eq!(asked["toolCall"]["content"][0]["type"], "diff");
                assert!(
                    asked["toolCall"]["content"][0]["newText"]
                        .as_str()
                        .unwrap()
                        .contains("a + b"),
                    "{asked}"
                );
                assert!(
                    asked["toolCall"]["content"][0]["oldText"]
                        .as_str()
                        .unwrap()
                        .contains("a - b"),
                    "{asked}"
                );
                assert_eq!(asked["toolCall"]["status"], "pending");
                // Allow always for the session, then saved to the project and for the user;
                // reject, and "never" saved to the project and for the user.
                assert_eq!(
                    option_kinds(asked),
                    [
                        "allow_once",
                        "allow_always",
                        "allow_always",
                        "allow_always",
                        "reject_once",
                        "reject_always",
                        "reject_always"
                    ]
                );
                let statuses: Vec<&Value> = updates_of(&seen, "tool_call_update")
                    .iter()
                    .map(|u| &u["status"])
                    .collect();
                assert!(statuses.contains(&&json!("pending")), "{statuses:?}");
                assert!(statuses.contains(&&json!("in_progress")), "{statuses:?}");
                assert_eq!(statuses.last().unwrap(), &&json!("completed"));
                let said: String = updates_of(&seen, "agent_message_chunk")
                    .iter()
                    .map(|u| u["content"]["text"].as_str().unwrap())
                    .collect();
                assert!(said.contains("Fixed: add now adds."), "{said}");
                let usage = updates_of(&seen, "usage_update");
                assert!(!usage.is_empty());
                // `grok` is grok-4.6, whose family window is 256,000 tokens (not the default
                // 128,000 every model was reported with before).
                assert_eq!(usage[0]["size"], json!(256_000), "{usage:?}");
                // Read from the editor's buffer, written through the editor.
                assert!(seen.reads.contains(&file), "{:?}", seen.reads);
                assert_eq!(seen.writes.len(), 1);
                assert_eq!(
                    seen.writes[0].1,
                    "// unsaved note\nfn add(a: i32, b: i32) -> i32 { a + b }\n"
                );
            }

            // Listed, with a title.
            let listed = cx
                .send_request(ListSessionsRequest::new().cwd(cwd.clone()))
                .block_task()
                .await?;
            let listed = serde_json::to_value(&listed).unwrap();
            assert_eq!(listed["sessions"][0]["sessionId"], sid.as_str());
            assert_eq!(listed["sessions"][0]["title"], "make add add");

            // Modes are approval policies; a bad value is an error, not a crash.
            let changed = cx
                .send_request(set_mode(sid.clone(), "full-auto"))
                .block_task()
                .await?;
            let changed = serde_json::to_value(&changed).unwrap();
            assert_eq!(changed["configOptions"][0]["currentValue"], "full-auto");
            let refused = cx
                .send_request(set_mode(sid.clone(), "yolo"))
                .block_task()
                .await;
            assert!(refused.is_err());

            // A slash command answers without a model call.
            let diff = cx.send_request(prompt(&sid, "/diff")).block_task().await?;
            assert_eq!(diff.stop_reason, StopReason::EndTurn);
            Ok(())
        },
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(&edited).unwrap(),
        "// unsaved note\nfn add(a: i32, b: i32) -> i32 { a + b }\n"
    );
    assert_eq!(upstream.requests().len(), 2);

    // A new process loads the session: the history is replayed before the answer.
    let sid = session.lock().unwrap().clone();
    let replayed: Shared = Arc::default();
    let state = replayed.clone();
    drive(
        &upstream,
        home.path(),
        replayed.clone(),
        async move |cx: ConnectionTo<Agent>| {
            cx.send_request(LoadSessionRequest::new(sid.clone(), root.clone()))
                .block_task()
                .await?;
            let seen = state.lock().unwrap();
            let user: Vec<&Value> = updates_of(&seen, "user_message_chunk");
            assert_eq!(user[0]["content"]["text"], "make add add");
            let call = updates_of(&seen, "tool_call")[0];
            assert_eq!(call["toolCallId"], "call_1");
            let said: String = updates_of(&seen, "agent_message_chunk")
                .iter()
                .map(|u| u["content"]["text"].as_str().unwrap())
                .collect();
            assert!(said.contains("Fixed: add now adds."), "{said}");
            Ok(())
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_ends_a_waiting_permission_and_a_running_command() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join(".git")).unwrap();
    let root = project.path().canonicalize().unwrap();
    let upstream = MockUpstream::start().await;
    upstream.enqueue(
        CHAT,
        thought_then_tool_call("call_a", "bash", json!({"command": "mkdir -p made-never"})),
    );
    upstream.enqueue(
        CHAT,
        thought_then_tool_call(
            "call_b",
            "bash",
            json!({"command": "echo started-output; sleep 30"}),
        ),
    );
    let seen: Shared = Arc::default();
    seen.lock().unwrap().hold = true;
    let state = seen.clone();
    let cwd = root.clone();
    drive(
        &upstream,
        home.path(),
        seen,
        async move |cx: ConnectionTo<Agent>| {
            let opened = cx
                .send_request(NewSessionRequest::new(cwd.clone()))
                .block_task()
                .await?;
            // The session's sandbox (from its `ready`) is told in the approvals option.
            let options = serde_json::to_value(&opened.config_options).unwrap();
            let approvals = options[0]["description"].as_str().unwrap();
            assert!(
                approvals.starts_with("What the agent may do without asking. Commands run "),
                "{approvals}"
            );
            let sid = opened.session_id;
            // 1. The permission request waits; a cancel ends the prompt as cancelled.
            let sent = cx.send_request(prompt(&sid.0, "make a file"));
            until(&state, "the permission request", |seen| {
                seen.held.len() == 1
            })
            .await;
            let asked = state.lock().unwrap().permissions[0].clone();
            // The engine's title, the same words in every face.
            assert_eq!(asked["toolCall"]["title"], "Run mkdir -p made-never");
            assert_eq!(asked["toolCall"]["kind"], "execute");
            assert_eq!(
                asked["toolCall"]["rawInput"]["command"],
                "mkdir -p made-never"
            );
            assert_eq!(
                option_kinds(&asked),
                [
                    "allow_once",
                    "allow_always",
                    "allow_always",
                    "allow_always",
                    "reject_once",
                    "reject_always",
                    "reject_always"
                ]
            );
            assert_eq!(
                asked["options"][6]["name"],
                "Never: deny `Bash(mkdir:*)` — deny rule saved in your settings.json"
            );
            // The rule in the engine's words, as every face says it.
            assert_eq!(
                asked["options"][1]["name"],
                "Always allow commands starting with `mkdir` (without shell operators) in this session."
            );
            cx.send_notification(CancelNotification::new(sid.clone()))?;
            let answer = tokio::time::timeout(STEP, sent.block_task())
                .await
                .expect("the cancelled prompt hung")?;
            assert_eq!(answer.stop_reason, StopReason::Cancelled);
            // The client answers its held request as cancelled, as the protocol asks.
            for responder in std::mem::take(&mut state.lock().unwrap().held) {
                responder.respond(RequestPermissionResponse::new(
                    RequestPermissionOutcome::Cancelled,
                ))?;
            }
            assert!(!cwd.join("made-never").exists());

            // 2. Full auto: the command runs, its output shows while it runs; a cancel kills it.
            cx.send_request(set_mode(sid.clone(), "full-auto"))
                .block_task()
                .await?;
            let started = tokio::time::Instant::now();
            let sent = cx.send_request(prompt(&sid.0, "wait a while"));
            until(&state, "the running command's output", |seen| {
                updates_of(seen, "tool_call_update").iter().any(|update| {
                    update["toolCallId"] == "call_b"
                        && update["status"] == "in_progress"
                        && update["content"][0]["content"]["text"]
                            .as_str()
                            .is_some_and(|text| text.contains("started-output"))
                })
            })
            .await;
            tokio::time::sleep(Duration::from_millis(300)).await;
            cx.send_notification(CancelNotification::new(sid.clone()))?;
            let answer = tokio::time::timeout(STEP, sent.block_task())
                .await
                .expect("the cancelled command hung")?;
            assert_eq!(answer.stop_reason, StopReason::Cancelled);
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "the command was not stopped"
            );
            Ok(())
        },
    )
    .await;
}

/// An editor that closes the panel while corvid still has something to send (its end of
/// stdout closed) ends the session; corvid exits 0, not 1 with "Broken pipe" (seen as a flaky
/// failure of the test above when its client finished before the last update).
#[test]
fn a_client_that_closes_its_end_ends_the_session_cleanly() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let home = tempfile::tempdir().unwrap();
    let mut child = Command::new(CORVID)
        .arg("acp")
        .env("CORVID_HOME", home.path())
        .env("HOME", home.path())
        .env("XAI_API_KEY", "upstream-key")
        .env("CORVID_UPSTREAM", "http://127.0.0.1:9/v1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The client goes away before corvid answers: its reply meets a closed pipe.
    drop(child.stdout.take());
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":1}}}}"#
    )
    .unwrap();
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{:?}: {stderr}", output.status);
    assert!(!stderr.contains("Broken pipe"), "{stderr}");
}

/// An image block in a prompt reaches the model as an image part (the chat dialect's data URL).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_in_a_prompt_reaches_the_upstream() {
    const PNG_BASE64: &str = "iVBORw0KGgoAAAANSUhEUg==";
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let root = project.path().canonicalize().unwrap();
    let upstream = MockUpstream::start().await;
    upstream.enqueue(CHAT, text("A small square."));
    drive(
        &upstream,
        home.path(),
        Arc::default(),
        async move |cx: ConnectionTo<Agent>| {
            let sid = cx
                .send_request(NewSessionRequest::new(root))
                .block_task()
                .await?
                .session_id;
            let answer = cx
                .send_request(PromptRequest::new(
                    sid,
                    vec![
                        ContentBlock::from("what is this?".to_owned()),
                        ContentBlock::Image(ImageContent::new(PNG_BASE64, "image/png")),
                    ],
                ))
                .block_task()
                .await?;
            assert_eq!(answer.stop_reason, StopReason::EndTurn);
            Ok(())
        },
    )
    .await;
    let request = common::chat_requests(&upstream).pop().unwrap();
    let user = request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|message| message["role"] == "user")
        .unwrap();
    let images: Vec<&Value> = user["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|part| part["type"] == "image_url")
        .map(|part| &part["image_url"]["url"])
        .collect();
    assert_eq!(
        images,
        [&json!(format!("data:image/png;base64,{PNG_BASE64}"))]
    );
}

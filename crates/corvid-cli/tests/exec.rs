//! `corvid exec --json` end to end: the real binary, the real provider path (xAI-style chat
//! upstream), a mock that scripts the model's replies.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::process::Stdio;
use std::time::Duration;

use corvid_test_support::{MockUpstream, Reply};
use serde_json::{Value, json};

mod common;
use common::{
    CHAT, chat_requests, chunk, corvid, corvid_with_upstream, delta_then_stop, json_lines,
    reply_with_usage, text, tool_call, tool_message,
};

async fn run_exec(
    upstream: &MockUpstream,
    project: &std::path::Path,
    home: &std::path::Path,
    extra: &[&str],
) -> (bool, Vec<Value>, String) {
    let mut command = corvid_with_upstream(upstream, home);
    command
        .arg("exec")
        .arg("--json")
        .arg("--project")
        .arg(project)
        .args(extra)
        .arg("fix the sign in lib.rs")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let output = tokio::time::timeout(Duration::from_secs(60), command.output())
        .await
        .unwrap()
        .unwrap();
    (
        output.status.success(),
        json_lines(output.stdout),
        String::from_utf8(output.stderr).unwrap(),
    )
}

/// The published schema (what the page's socket serves at `/api/agent/schema`), for one
/// `ServerFrame`.
fn frame_validator() -> jsonschema::Validator {
    let mut schema: Value = serde_json::from_str(&corvid_protocol::schema_json()).unwrap();
    let object = schema.as_object_mut().unwrap();
    object.remove("anyOf");
    object.insert("$ref".to_owned(), json!("#/$defs/ServerFrame"));
    jsonschema::validator_for(&schema).unwrap()
}

/// Every line is one shape: a `ServerFrame` the schema accepts, the `protocol` hello first.
fn assert_one_shape(lines: &[Value]) {
    assert_eq!(lines[0]["type"], "protocol", "{:#}", lines[0]);
    assert_eq!(lines[0]["version"], corvid_protocol::PROTOCOL_VERSION);
    let validator = frame_validator();
    for line in lines {
        let errors: Vec<String> = validator
            .iter_errors(line)
            .map(|error| error.to_string())
            .collect();
        assert!(errors.is_empty(), "{line:#}: {errors:?}");
        assert!(
            ["protocol", "event", "request", "reply"].contains(&line["type"].as_str().unwrap()),
            "{line:#}"
        );
    }
}

fn types(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|event| event["msg"]["type"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test]
async fn exec_json_reads_edits_and_finishes() {
    let upstream = MockUpstream::start().await;
    upstream.enqueue(CHAT, tool_call("c1", "read", r#"{"path":"lib.rs"}"#));
    upstream.enqueue(
        CHAT,
        tool_call(
            "c2",
            "edit",
            r#"{"path":"lib.rs","old_string":"a - b","new_string":"a + b"}"#,
        ),
    );
    upstream.enqueue(
        CHAT,
        reply_with_usage(delta_then_stop(json!({"content": "Fixed."}))),
    );
    let project = tempfile::tempdir().unwrap();
    std::fs::write(
        project.path().join("lib.rs"),
        "fn add(a: i32, b: i32) -> i32 { a - b }\n",
    )
    .unwrap();
    let home = tempfile::tempdir().unwrap();

    let (ok, events, stderr) = run_exec(
        &upstream,
        project.path(),
        home.path(),
        &["--approval", "auto-edit", "--model", "grok"],
    )
    .await;
    assert!(ok, "{stderr}\n{events:#?}");
    assert_one_shape(&events);
    let kinds = types(&events);
    for expected in [
        "ready",
        "turn_started",
        "tool_call",
        "tool_result",
        "text_delta",
        "usage",
        "turn_finished",
    ] {
        assert!(
            kinds.iter().any(|kind| kind == expected),
            "{expected} missing from {kinds:?}"
        );
    }
    let finished = events
        .iter()
        .find(|event| event["msg"]["type"] == "turn_finished")
        .unwrap();
    assert_eq!(finished["msg"]["outcome"], "completed");
    assert_eq!(
        std::fs::read_to_string(project.path().join("lib.rs")).unwrap(),
        "fn add(a: i32, b: i32) -> i32 { a + b }\n"
    );

    // The model saw the file, through the real xAI chat path and credential.
    let requests = upstream.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0].headers["authorization"], "Bearer upstream-key");
    let second = requests[1].json();
    assert_eq!(second["model"], "grok-4.6");
    assert!(
        tool_message(&second)["content"]
            .as_str()
            .unwrap()
            .contains("a - b")
    );
}

#[tokio::test]
async fn exec_refuses_commands_it_cannot_ask_about_and_fails_on_errors() {
    let upstream = MockUpstream::start().await;
    upstream.enqueue(
        CHAT,
        reply_with_usage(vec![
            chunk(json!({"tool_calls": [{"index": 0, "id": "b1", "type": "function", "function": {"name": "bash", "arguments": r#"{"command":"touch marker"}"#}}]}), Value::Null),
            chunk(json!({}), json!("tool_calls")),
        ]),
    );
    upstream.enqueue(
        CHAT,
        reply_with_usage(delta_then_stop(json!({"content": "ok"}))),
    );
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let (code, stdout, _) =
        exec_raw(&upstream, project.path(), home.path(), &["refuse it"], None).await;
    assert_eq!(code, 3, "completed with an action refused: {stdout}");
    assert!(
        !project.path().join("marker").exists(),
        "the command was not run under --approval ask"
    );
    assert!(stdout.contains("✗ $ touch marker"), "{stdout}");

    // With --json the refused approval is a `request` frame among the events, one shape.
    upstream.enqueue(
        CHAT,
        reply_with_usage(vec![
            chunk(json!({"tool_calls": [{"index": 0, "id": "b2", "type": "function", "function": {"name": "bash", "arguments": r#"{"command":"touch marker"}"#}}]}), Value::Null),
            chunk(json!({}), json!("tool_calls")),
        ]),
    );
    upstream.enqueue(
        CHAT,
        reply_with_usage(delta_then_stop(json!({"content": "ok"}))),
    );
    let (_, lines, stderr) = run_exec(&upstream, project.path(), home.path(), &[]).await;
    assert_one_shape(&lines);
    let request = lines
        .iter()
        .find(|line| line["type"] == "request")
        .unwrap_or_else(|| panic!("no request line: {lines:#?}\n{stderr}"));
    assert_eq!(
        request["approval"]["title"], "Run touch marker",
        "{request:#}"
    );

    upstream.enqueue(
        CHAT,
        Reply::status(http::StatusCode::UNAUTHORIZED, json!({"error": "bad key"})),
    );
    let (ok, events, _) = run_exec(&upstream, project.path(), home.path(), &[]).await;
    assert!(!ok, "a failed turn exits non-zero");
    let error = events
        .iter()
        .find(|event| event["msg"]["type"] == "error")
        .unwrap();
    assert_eq!(error["msg"]["class"], "authentication_rejected");
}

/// `corvid exec` with `args` (the prompt among them), stdin from `input` (else empty); its exit
/// status, stdout and stderr.
async fn exec_raw(
    upstream: &MockUpstream,
    project: &std::path::Path,
    home: &std::path::Path,
    args: &[&str],
    input: Option<&str>,
) -> (i32, String, String) {
    use tokio::io::AsyncWriteExt;
    let mut command = corvid_with_upstream(upstream, home);
    command
        .args(["exec", "--model", "grok", "--project"])
        .arg(project)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(input.unwrap_or_default().as_bytes())
        .await
        .unwrap();
    drop(stdin);
    let output = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    (
        output.status.code().unwrap(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

fn user_messages(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "user")
        .map(|message| message["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test]
async fn exec_starts_a_fresh_conversation_unless_told_to_continue() {
    let upstream = MockUpstream::start().await;
    for answer in ["One.", "Two.", "Three."] {
        upstream.enqueue(CHAT, text(answer));
    }
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) =
        exec_raw(&upstream, project.path(), home.path(), &["first"], None).await;
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("One.") && stdout.contains("[completed · 1 step ·"),
        "{stdout}"
    );
    exec_raw(&upstream, project.path(), home.path(), &["second"], None).await;
    exec_raw(
        &upstream,
        project.path(),
        home.path(),
        &["--continue", "third"],
        None,
    )
    .await;
    let requests = upstream.requests();
    assert_eq!(
        user_messages(&requests[1].json()),
        ["second"],
        "fresh by default"
    );
    assert_eq!(
        user_messages(&requests[2].json()),
        ["second", "third"],
        "--continue goes on with the last one"
    );
    // Two conversations, both with messages: the first run left no empty one behind.
    let database = walk(home.path())
        .into_iter()
        .find(|path| path.ends_with("corvid.db"))
        .expect("the store");
    let store = corvid_store::Store::open(&database).unwrap();
    let key = project.path().canonicalize().unwrap().display().to_string();
    let conversations = store.list_conversations(&key).unwrap();
    let counts: Vec<u64> = conversations.iter().map(|c| c.message_count).collect();
    assert_eq!(counts.len(), 2, "{conversations:?}");
    assert!(counts.iter().all(|count| *count > 0), "{conversations:?}");
}

/// Every file under `folder`.
fn walk(folder: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(folder).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(walk(&path));
        } else {
            found.push(path);
        }
    }
    found
}

#[tokio::test]
async fn exec_reads_the_prompt_from_stdin_and_prints_only_the_last_message() {
    let upstream = MockUpstream::start().await;
    upstream.enqueue(CHAT, text("From a dash."));
    upstream.enqueue(CHAT, text("From a pipe."));
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = exec_raw(
        &upstream,
        project.path(),
        home.path(),
        &["--output", "last", "-"],
        Some("question one\nand its second line"),
    )
    .await;
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, "From a dash.\n");
    let (code, stdout, _) = exec_raw(
        &upstream,
        project.path(),
        home.path(),
        &["--output", "last"],
        Some("question two"),
    )
    .await;
    assert_eq!(code, 0);
    assert_eq!(stdout, "From a pipe.\n");
    let requests = upstream.requests();
    assert_eq!(
        user_messages(&requests[0].json()),
        ["question one\nand its second line"]
    );
    assert_eq!(user_messages(&requests[1].json()), ["question two"]);
}

#[tokio::test]
async fn exec_exit_codes_for_usage_errors_and_failures() {
    let upstream = MockUpstream::start().await;
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    // An empty stdin is no prompt.
    let (code, _, stderr) = exec_raw(&upstream, project.path(), home.path(), &[], Some("")).await;
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("the prompt is empty"), "{stderr}");
    // An unknown conversation is a usage error, and nothing is sent.
    let (code, _, stderr) = exec_raw(
        &upstream,
        project.path(),
        home.path(),
        &["--resume", "c_nope", "hello"],
        None,
    )
    .await;
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("c_nope"), "{stderr}");
    assert!(upstream.requests().is_empty());
    // A flag clap refuses.
    let (code, _, _) = exec_raw(
        &upstream,
        project.path(),
        home.path(),
        &["--output", "bogus", "x"],
        None,
    )
    .await;
    assert_eq!(code, 2);
    // A failed turn.
    upstream.enqueue(
        CHAT,
        Reply::status(http::StatusCode::UNAUTHORIZED, json!({"error": "bad key"})),
    );
    let (code, stdout, _) =
        exec_raw(&upstream, project.path(), home.path(), &["hello"], None).await;
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("error (sign-in rejected)"), "{stdout}");
    assert!(!stdout.contains("AuthenticationRejected"), "{stdout}");
    // The statuses are documented where scripts' authors look.
    let (code, help, _) = exec_raw(&upstream, project.path(), home.path(), &["--help"], None).await;
    assert_eq!(code, 0);
    assert!(
        help.contains("2 usage error, 3 it completed but an action needing approval was refused"),
        "{help}"
    );
}

#[tokio::test]
async fn exec_advice_names_no_chat_command_and_no_restart() {
    let upstream = MockUpstream::start().await;
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    // No XAI_API_KEY anywhere: the model's provider has no credential.
    let output = corvid(home.path())
        .env("CORVID_UPSTREAM", upstream.base_url())
        .args(["exec", "--model", "grok", "--project"])
        .arg(project.path())
        .arg("hello")
        .stdin(Stdio::null())
        .output();
    let output = tokio::time::timeout(Duration::from_secs(60), output)
        .await
        .unwrap()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stdout.contains("error (not configured)"), "{stdout}");
    assert!(stdout.contains("Choose another model"), "{stdout}");
    // Neither the chat's `/model` (nor a rewrite of it) nor a restart nothing here needs.
    assert!(!stdout.contains("/model"), "{stdout}");
    assert!(!stdout.contains("--model"), "{stdout}");
    assert!(!stdout.contains("restart corvid"), "{stdout}");
    assert!(upstream.requests().is_empty());
}

#[tokio::test]
async fn exec_runs_a_custom_command_and_a_user_commands_folder_is_read() {
    let upstream = MockUpstream::start().await;
    upstream.enqueue(CHAT, text("Hello, Bob."));
    upstream.enqueue(CHAT, text("Hi."));
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let commands = project.path().join(".corvid/commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(commands.join("greet.md"), "Say hello to $1, kindly.").unwrap();
    // The user's own folder, in corvid's configuration folder.
    std::fs::create_dir_all(home.path().join("commands")).unwrap();
    std::fs::write(
        home.path().join("commands/mine.md"),
        "My prompt: $ARGUMENTS",
    )
    .unwrap();
    let (status, _, stderr) = exec_raw(
        &upstream,
        project.path(),
        home.path(),
        &["/greet Bob"],
        None,
    )
    .await;
    assert_eq!(status, 0, "{stderr}");
    let (status, _, stderr) =
        exec_raw(&upstream, project.path(), home.path(), &["/mine x y"], None).await;
    assert_eq!(status, 0, "{stderr}");
    let requests = chat_requests(&upstream);
    assert_eq!(user_messages(&requests[0]), ["Say hello to Bob, kindly."]);
    assert_eq!(user_messages(&requests[1]), ["My prompt: x y"]);
}

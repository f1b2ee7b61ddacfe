//! Hooks in Claude Code's format, through the real engine, tools and gate on a scripted model:
//! a PreToolUse validator script blocks a command and the model reads why; a PostToolUse hook
//! sees the tool's output and adds context; a project's hooks wait for trust.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::Path;
use std::sync::Arc;

use corvid_agent::hooks::ProjectTrust;
use corvid_protocol::{ApprovalPolicy, EventMsg, TurnOutcome};
use corvid_test_support::agent::{self, ScriptedAgent};
use corvid_test_support::scripted::ScriptedReply;

/// A command validator written the way Claude Code's hook documentation shows one: read the
/// event from stdin, and exit 2 with the reason on stderr to block.
const VALIDATOR: &str = r#"#!/usr/bin/env python3
import json, re, sys

event = json.load(sys.stdin)
if event.get("tool_name") != "Bash":
    sys.exit(0)
command = event.get("tool_input", {}).get("command", "")
if re.search(r"\brm\s+-rf\b", command):
    print("Use `trash` instead of `rm -rf`; deleting recursively is not allowed here.", file=sys.stderr)
    sys.exit(2)
sys.exit(0)
"#;

/// Keeps the event it is given and answers with context for the model, as JSON.
const RECORDER: &str = r#"#!/usr/bin/env bash
cat > "$CLAUDE_PROJECT_DIR/post-event.json"
echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"remember to run the linter"}}'
"#;

fn write_script(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    corvid_test_support::executable::write_executable(&path, text).unwrap();
    path.display().to_string()
}

fn user_settings(dir: &Path, hooks: serde_json::Value) -> std::path::PathBuf {
    let path = dir.join("config/settings.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, serde_json::json!({ "hooks": hooks }).to_string()).unwrap();
    path
}

#[tokio::test]
async fn a_pre_tool_use_script_blocks_a_command_and_the_model_reads_why() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join("build")).unwrap();
    let validator = write_script(home.path(), "validate.py", VALIDATOR);
    let mut config = agent::config(project.path(), ApprovalPolicy::FullAuto);
    config.user_settings = Some(user_settings(
        home.path(),
        serde_json::json!({"PreToolUse": [{"matcher": "Bash",
            "hooks": [{"type": "command", "command": validator}]}]}),
    ));
    let mut agent = ScriptedAgent::spawn(
        config,
        vec![
            ScriptedReply::tool_call("c1", "bash", r#"{"command":"rm -rf build"}"#),
            ScriptedReply::tool_call("c2", "bash", r#"{"command":"echo kept"}"#),
            ScriptedReply::text("ok"),
        ],
    )
    .await;
    agent.send("clean up");
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);

    assert!(
        project.path().join("build").is_dir(),
        "the command did not run"
    );
    let (blocked, failed) = &agent.results_in(1)[0];
    assert!(*failed);
    assert!(blocked.contains("PreToolUse hook blocked"), "{blocked}");
    assert!(
        blocked.contains("Use `trash` instead of `rm -rf`"),
        "{blocked}"
    );
    let (allowed, failed) = &agent.results_in(2)[0];
    assert!(!failed && allowed.contains("kept"), "{allowed}");
}

#[tokio::test]
async fn a_post_tool_use_hook_sees_the_output_and_its_context_reaches_the_model() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let recorder = write_script(home.path(), "record.sh", RECORDER);
    let mut config = agent::config(project.path(), ApprovalPolicy::FullAuto);
    config.user_settings = Some(user_settings(
        home.path(),
        serde_json::json!({"PostToolUse": [{"matcher": "Bash",
            "hooks": [{"type": "command", "command": recorder}]}]}),
    ));
    let mut agent = ScriptedAgent::spawn(
        config,
        vec![
            ScriptedReply::tool_call("c1", "bash", r#"{"command":"echo the-output-42"}"#),
            ScriptedReply::text("ok"),
        ],
    )
    .await;
    agent.send("run it");
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);

    let event: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(project.path().join("post-event.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(event["hook_event_name"], "PostToolUse");
    assert_eq!(event["tool_name"], "Bash");
    assert_eq!(event["tool_input"]["command"], "echo the-output-42");
    assert!(
        event["tool_response"]["output"]
            .as_str()
            .unwrap()
            .contains("the-output-42"),
        "{event}"
    );
    let (result, _) = &agent.last_results()[0];
    assert!(result.contains("remember to run the linter"), "{result}");
}

#[derive(Debug)]
struct TrustAll;

impl ProjectTrust for TrustAll {
    fn is_trusted(&self, _project: &Path, _file: &str, _fingerprint: &str) -> bool {
        true
    }
}

#[tokio::test]
async fn a_projects_hooks_run_only_once_trusted() {
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join(".claude")).unwrap();
    std::fs::write(
        project.path().join(".claude/settings.json"),
        serde_json::json!({"hooks": {"UserPromptSubmit": [{"hooks": [
            {"type": "command", "command": "echo 'the deploy freeze is on'"}
        ]}]}})
        .to_string(),
    )
    .unwrap();

    let mut untrusted = ScriptedAgent::spawn(
        agent::config(project.path(), ApprovalPolicy::Ask),
        vec![ScriptedReply::text("ok")],
    )
    .await;
    untrusted
        .until(|msg| matches!(msg, EventMsg::Warning { message } if message.contains("corvid hooks trust")))
        .await;
    untrusted.send("hello");
    untrusted.turn_finished().await;
    let sent = format!("{:?}", untrusted.model.requests()[0].messages);
    assert!(!sent.contains("deploy freeze"), "{sent}");

    let mut config = agent::config(project.path(), ApprovalPolicy::Ask);
    config.project_trust = Some(Arc::new(TrustAll));
    let mut trusted = ScriptedAgent::spawn(config, vec![ScriptedReply::text("ok")]).await;
    trusted.send("hello");
    trusted.turn_finished().await;
    let sent = format!("{:?}", trusted.model.requests()[0].messages);
    assert!(sent.contains("the deploy freeze is on"), "{sent}");
}

#[tokio::test]
async fn a_user_prompt_submit_hook_can_block_and_a_stop_hook_sends_the_model_back() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let mut config = agent::config(project.path(), ApprovalPolicy::Ask);
    config.user_settings = Some(user_settings(
        home.path(),
        serde_json::json!({
            "UserPromptSubmit": [{"hooks": [{"type": "command",
                "command": "grep -q password && { echo 'no secrets in prompts' >&2; exit 2; }; exit 0"}]}],
            "Stop": [{"hooks": [{"type": "command",
                "command": "grep -q '\"stop_hook_active\":true' && exit 0; echo '{\"decision\":\"block\",\"reason\":\"run the tests first\"}'"}]}]
        }),
    ));
    let mut agent = ScriptedAgent::spawn(
        config,
        vec![
            ScriptedReply::text("done"),
            ScriptedReply::text("tests ran"),
        ],
    )
    .await;
    agent.send("my password is hunter2");
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    assert!(
        agent.model.requests().is_empty(),
        "the blocked prompt reached the model"
    );
    assert!(
        agent
            .warnings()
            .iter()
            .any(|warning| warning.contains("no secrets in prompts")),
        "{:?}",
        agent.warnings()
    );

    agent.send("finish up");
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);
    let requests = agent.model.requests();
    assert_eq!(requests.len(), 2, "the Stop hook sent the model back once");
    let again = format!("{:?}", requests[1].messages);
    assert!(again.contains("run the tests first"), "{again}");
}

#[tokio::test]
async fn a_prompt_hook_asks_the_sessions_model_and_its_no_blocks_the_call() {
    let home = tempfile::tempdir().unwrap();
    let database = home.path().join("corvid.db");
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join("build")).unwrap();
    let mut config = agent::config(project.path(), ApprovalPolicy::FullAuto);
    let session_model = config.model.clone();
    config.user_settings = Some(user_settings(
        home.path(),
        serde_json::json!({
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "prompt",
                "prompt": "Is this command safe to run? $ARGUMENTS"}]}],
            "Stop": [{"hooks": [{"type": "prompt", "prompt": "Did the agent finish?",
                "model": "small-judge"}]}]
        }),
    ));
    let mut agent = ScriptedAgent::spawn_on_store(
        config,
        vec![
            ScriptedReply::tool_call("c1", "bash", r#"{"command":"rm -rf build"}"#),
            // The PreToolUse prompt hook's answer.
            ScriptedReply::text(r#"{"ok": false, "reason": "deleting build/ is not allowed"}"#),
            ScriptedReply::text("I left build/ alone"),
            // The Stop prompt hook's answer.
            ScriptedReply::text("```json\n{\"ok\": true}\n```"),
        ],
        Arc::new(parking_lot::Mutex::new(
            corvid_store::Store::open(&database).unwrap(),
        )),
    )
    .await;
    agent.send("clean up");
    assert_eq!(agent.turn_finished().await, TurnOutcome::Completed);

    assert!(project.path().join("build").is_dir(), "the command ran");
    let requests = agent.model.requests();
    assert_eq!(requests.len(), 4, "{requests:?}");
    let judged = &requests[1];
    assert_eq!(judged.model, session_model);
    assert!(judged.tools.is_empty());
    let asked = format!("{:?}", judged.messages);
    assert!(asked.contains("Is this command safe to run?"), "{asked}");
    assert!(asked.contains("rm -rf build"), "{asked}");
    assert!(!asked.contains("$ARGUMENTS"), "{asked}");
    let (refused, failed) = &agent.results_in(2)[0];
    assert!(*failed);
    assert!(
        refused.contains("deleting build/ is not allowed"),
        "{refused}"
    );

    let stop = &requests[3];
    assert_eq!(stop.model, "small-judge");
    // The hooks' two calls are in the usage ledger beside the turn's two steps.
    let rows = corvid_store::Store::open(&database)
        .unwrap()
        .usage_by_day_and_model(None)
        .unwrap();
    let requests_of = |model: &str| {
        rows.iter()
            .filter(|row| row.model == model)
            .map(|row| row.requests)
            .sum::<u64>()
    };
    assert_eq!(requests_of(&session_model), 3, "{rows:?}");
    assert_eq!(requests_of("small-judge"), 1, "{rows:?}");
    let asked = format!("{:?}", stop.messages);
    assert!(asked.contains("Did the agent finish?"), "{asked}");
    assert!(
        asked.contains("\\\"hook_event_name\\\":\\\"Stop\\\""),
        "{asked}"
    );
}

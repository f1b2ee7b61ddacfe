//! A Claude Code user's `.claude/` and `.corvid/` folders in `corvid chat`, in a real
//! pseudo-terminal (tmux on a private socket) against a scripted model on loopback: a
//! `PreToolUse` hook script blocks a command and the model reads why while a `PostToolUse`
//! hook sees the output; a saved `deny` rule beats an `allow`; a custom subagent is offered and
//! runs with only its tools; a skill the agent writes is offered on the next turn.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::Path;
use std::time::Duration;

use corvid_test_support::MockUpstream;
use serde_json::Value;

mod common;
use common::pane::{Pane, Setup};
use common::{CHAT, chat_requests, corvid, offered_tools, text, tool_call};

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.md"), "some notes\n").unwrap();
    dir
}

/// `corvid chat` on `project` in a 100×40 pane, with `env` (`NAME=value` words) added.
fn open(upstream: &MockUpstream, home: &Path, project: &Path, env: &str) -> Pane {
    tokio::task::block_in_place(|| {
        Pane::open(
            upstream,
            home,
            project,
            &Setup {
                width: 100,
                height: 40,
                env,
                ..Setup::default()
            },
        )
    })
}

/// Sends `message` and waits for `answer`, then for the turn's end; the screen then.
fn ask(pane: &Pane, message: &str, answer: &str) -> String {
    tokio::task::block_in_place(|| {
        pane.type_text(message);
        pane.keys(&["Enter"]);
        pane.wait_for(answer, Duration::from_secs(20));
        pane.wait_for("─ done", Duration::from_secs(10))
    })
}

/// `corvid hooks trust` in `project`: its hooks and its `allow` rules apply from now on.
async fn trust(home: &Path, project: &Path) {
    let output = corvid(home)
        .args(["hooks", "trust", "--project"])
        .arg(project)
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "{output:?}");
}

/// The tool results among a chat request's messages, in order.
fn tool_results(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "tool")
        .map(|message| message["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// The system message a chat request starts with.
fn system_prompt(request: &Value) -> &str {
    let first = &request["messages"][0];
    assert_eq!(first["role"], "system", "{request}");
    first["content"].as_str().unwrap()
}

/// The description of the tool `name` a chat request offers.
fn tool_description<'a>(request: &'a Value, name: &str) -> &'a str {
    request["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["function"]["name"] == name)
        .unwrap_or_else(|| panic!("no `{name}` tool offered: {request}"))["function"]["description"]
        .as_str()
        .unwrap()
}

fn write_script(path: &Path, text: &str) {
    corvid_test_support::executable::write_executable(path, text).unwrap();
}

/// A command validator as Claude Code's hook documentation writes one: the event on stdin,
/// exit 2 with the reason on stderr to block.
const VALIDATOR: &str = r#"#!/usr/bin/env python3
import json, re, sys

event = json.load(sys.stdin)
command = event.get("tool_input", {}).get("command", "")
if re.search(r"\brm\s+-rf\b", command):
    print("Use `trash` instead of `rm -rf`; deleting recursively is not allowed here.", file=sys.stderr)
    sys.exit(2)
sys.exit(0)
"#;

/// Keeps the event it is given in the project.
const RECORDER: &str = "#!/usr/bin/env bash\ncat > \"$CLAUDE_PROJECT_DIR/post-event.json\"\n";

const HOOK_SETTINGS: &str = r#"{
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/validate.py"}]}
    ],
    "PostToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/record.sh"}]}
    ]
  }
}"#;

#[tokio::test(flavor = "multi_thread")]
async fn a_pre_tool_use_hook_blocks_a_command_with_its_reason_and_a_post_tool_use_hook_sees_the_output()
 {
    let upstream = MockUpstream::start().await;
    upstream.enqueue(
        CHAT,
        tool_call("c1", "bash", r#"{"command":"rm -rf build"}"#),
    );
    upstream.enqueue(
        CHAT,
        tool_call("c2", "bash", r#"{"command":"echo the-output-42"}"#),
    );
    upstream.enqueue(CHAT, text("Left the build folder alone."));
    let home = tempfile::tempdir().unwrap();
    let project = project();
    std::fs::create_dir(project.path().join("build")).unwrap();
    let claude = project.path().join(".claude");
    write_script(&claude.join("hooks/validate.py"), VALIDATOR);
    write_script(&claude.join("hooks/record.sh"), RECORDER);
    std::fs::write(claude.join("settings.json"), HOOK_SETTINGS).unwrap();
    trust(home.path(), project.path()).await;

    // Asked before each command: the hook blocks before any question.
    let pane = open(&upstream, home.path(), project.path(), "");
    let screen = tokio::task::block_in_place(|| {
        pane.type_text("clean up");
        pane.keys(&["Enter"]);
        pane.wait_for("? allow: Run echo the-output-42", Duration::from_secs(20));
        pane.wait_for("1 yes · 2 always · 3 no", Duration::from_secs(2));
        pane.type_text("1");
        pane.wait_for("Left the build folder alone.", Duration::from_secs(20));
        pane.wait_for("─ done", Duration::from_secs(10))
    });
    println!("{screen}");
    assert!(
        screen.contains("Not run: a PreToolUse hook blocked this `bash` call: Use `trash`"),
        "the block is shown:\n{screen}"
    );
    let history = tokio::task::block_in_place(|| pane.history());
    assert!(
        !history.contains("? allow: Run rm -rf build"),
        "the blocked command asked nothing:\n{history}"
    );
    assert!(project.path().join("build").is_dir(), "rm -rf did not run");

    let requests = chat_requests(&upstream);
    assert_eq!(requests.len(), 3, "{requests:?}");
    let blocked = &tool_results(&requests[1])[0];
    assert!(
        blocked.contains("PreToolUse hook blocked")
            && blocked.contains("Use `trash` instead of `rm -rf`"),
        "{blocked}"
    );
    let event: Value = serde_json::from_str(
        &std::fs::read_to_string(project.path().join("post-event.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(event["hook_event_name"], "PostToolUse", "{event}");
    assert_eq!(
        event["tool_input"]["command"], "echo the-output-42",
        "{event}"
    );
    assert!(
        event["tool_response"]["output"]
            .as_str()
            .unwrap()
            .contains("the-output-42"),
        "{event}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_saved_deny_rule_beats_an_allow_and_neither_asks() {
    let upstream = MockUpstream::start().await;
    upstream.enqueue(
        CHAT,
        tool_call("c1", "bash", r#"{"command":"touch secret"}"#),
    );
    upstream.enqueue(CHAT, tool_call("c2", "bash", r#"{"command":"touch open"}"#));
    upstream.enqueue(CHAT, text("Touched what I may."));
    let home = tempfile::tempdir().unwrap();
    let project = project();
    std::fs::create_dir(project.path().join(".corvid")).unwrap();
    std::fs::write(
        project.path().join(".corvid/settings.json"),
        r#"{"permissions": {"allow": ["Bash(touch:*)"], "deny": ["Bash(touch secret:*)"]}}"#,
    )
    .unwrap();
    // A project's `allow` list applies once trusted; its `deny` list at once.
    trust(home.path(), project.path()).await;

    // Under `ask`: each call would ask but for the rules.
    let pane = open(&upstream, home.path(), project.path(), "");
    let screen = ask(&pane, "touch both", "Touched what I may.");
    println!("{screen}");
    let history = tokio::task::block_in_place(|| pane.history());
    assert!(!history.contains("? allow"), "nothing asked:\n{history}");
    assert!(
        screen.contains("Not run: the permission rule `Bash(touch secret:*)`"),
        "the refusal is shown:\n{screen}"
    );
    assert!(!project.path().join("secret").exists(), "deny won");
    assert!(project.path().join("open").exists(), "allow let it run");

    let requests = chat_requests(&upstream);
    assert_eq!(requests.len(), 3, "{requests:?}");
    let denied = &tool_results(&requests[1])[0];
    assert!(
        denied
            .contains("the permission rule `Bash(touch secret:*)` in .corvid/settings.json denies"),
        "{denied}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_custom_subagent_is_offered_and_runs_with_only_its_tools() {
    let upstream = MockUpstream::start().await;
    upstream.enqueue(
        CHAT,
        tool_call(
            "t1",
            "task",
            r#"{"agent":"reviewer","description":"review the notes","prompt":"Review notes.md."}"#,
        ),
    );
    // The subagent tries a tool it was not given, then answers.
    upstream.enqueue(
        CHAT,
        tool_call(
            "s1",
            "write",
            r#"{"path":"notes.md","content":"rewritten\n"}"#,
        ),
    );
    upstream.enqueue(CHAT, text("The notes look fine."));
    upstream.enqueue(CHAT, text("Reviewed by the reviewer."));
    let home = tempfile::tempdir().unwrap();
    let project = project();
    let agents = project.path().join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("reviewer.md"),
        "---\nname: reviewer\ndescription: Reviews code for bugs. Use after a change.\n\
         tools: Read, Grep, Glob\n---\nYou are a strict reviewer.\n",
    )
    .unwrap();

    // Full-auto: a tool the subagent lacks is refused all the same.
    let pane = open(
        &upstream,
        home.path(),
        project.path(),
        "CORVID_APPROVAL=full-auto",
    );
    let screen = ask(&pane, "review my notes", "Reviewed by the reviewer.");
    println!("{screen}");
    assert!(
        screen.contains("subagent (reviewer): review the notes"),
        "{screen}"
    );
    assert_eq!(
        std::fs::read_to_string(project.path().join("notes.md")).unwrap(),
        "some notes\n"
    );

    let requests = chat_requests(&upstream);
    assert_eq!(requests.len(), 4, "{requests:?}");
    let task = tool_description(&requests[0], "task");
    assert!(
        task.contains("- reviewer: Reviews code for bugs. Use after a change."),
        "{task}"
    );
    let sub = &requests[1];
    assert!(
        system_prompt(sub).starts_with("You are a strict reviewer."),
        "{sub}"
    );
    let mut tools = offered_tools(sub);
    tools.sort_unstable();
    assert_eq!(tools, ["glob", "grep", "read"]);
    let refused = &tool_results(&requests[2])[0];
    assert!(refused.contains("unknown tool `write`"), "{refused}");
    assert_eq!(tool_results(&requests[3])[0], "The notes look fine.");
}

const SKILL: &str = "---\\nname: release-notes\\ndescription: Draft release notes from the git log. Use when tagging a release.\\n---\\n# Release notes\\n\\nList every merged change since the last tag.\\n";

#[tokio::test(flavor = "multi_thread")]
async fn a_skill_the_agent_writes_is_offered_on_the_next_turn() {
    let upstream = MockUpstream::start().await;
    upstream.enqueue(
        CHAT,
        tool_call(
            "w1",
            "write",
            &format!(r#"{{"path":".corvid/skills/release-notes/SKILL.md","content":"{SKILL}"}}"#),
        ),
    );
    upstream.enqueue(CHAT, text("Wrote the skill."));
    upstream.enqueue(
        CHAT,
        tool_call("s1", "skill", r#"{"name":"release-notes"}"#),
    );
    upstream.enqueue(CHAT, text("Loaded it."));
    let home = tempfile::tempdir().unwrap();
    let project = project();
    let pane = open(
        &upstream,
        home.path(),
        project.path(),
        "CORVID_APPROVAL=full-auto",
    );
    ask(&pane, "write a skill for release notes", "Wrote the skill.");
    assert!(
        project
            .path()
            .join(".corvid/skills/release-notes/SKILL.md")
            .is_file()
    );
    let screen = ask(&pane, "now use it", "Loaded it.");
    println!("{screen}");

    let requests = chat_requests(&upstream);
    assert_eq!(requests.len(), 4, "{requests:?}");
    let before = system_prompt(&requests[0]);
    assert!(!before.contains("release-notes"), "not there yet: {before}");
    let next_turn = &requests[2];
    let listing = system_prompt(next_turn);
    assert!(
        listing.contains("- release-notes: Draft release notes"),
        "{listing}"
    );
    let skill = tool_description(next_turn, "skill");
    assert!(skill.contains("release-notes"), "{skill}");
    let loaded = &tool_results(&requests[3])[1];
    assert!(loaded.contains("List every merged change"), "{loaded}");
}

use std::path::{Path, PathBuf};

use serde_json::json;

use super::*;
use crate::settings_files::{SettingsFile, SettingsScope};

fn file(shown: &str, scope: SettingsScope, value: Value) -> SettingsFile {
    SettingsFile {
        path: PathBuf::from(shown),
        shown: shown.to_owned(),
        scope,
        value,
    }
}

#[derive(Debug)]
struct TrustOnly(String);

impl ProjectTrust for TrustOnly {
    fn is_trusted(&self, _project: &Path, file: &str, _fingerprint: &str) -> bool {
        file == self.0
    }
}

fn claude_settings() -> Value {
    json!({"hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "check", "timeout": 5}]}],
        "PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "fmt"}]}],
        "Bogus": [],
        "Stop": [{"hooks": [{"type": "prompt", "prompt": "x"}, {"type": "agent", "prompt": "y"}]}]
    }})
}

#[test]
fn settings_are_read_and_a_projects_hooks_wait_for_trust() {
    let files = [
        file(
            "/home/me/.config/corvid/settings.json",
            SettingsScope::User,
            claude_settings(),
        ),
        file(
            ".claude/settings.json",
            SettingsScope::Project,
            claude_settings(),
        ),
        file(
            ".corvid/settings.json",
            SettingsScope::Project,
            claude_settings(),
        ),
    ];
    let mut warnings = Vec::new();
    let trust = TrustOnly(".corvid/settings.json".to_owned());
    let hooks = Hooks::from_settings(&files, Path::new("/p"), Some(&trust), &mut warnings);

    let sources: Vec<&str> = hooks
        .commands()
        .iter()
        .map(|hook| hook.source.as_str())
        .collect();
    assert_eq!(
        sources,
        vec![
            "/home/me/.config/corvid/settings.json",
            "/home/me/.config/corvid/settings.json",
            "/home/me/.config/corvid/settings.json",
            ".corvid/settings.json",
            ".corvid/settings.json",
            ".corvid/settings.json"
        ]
    );
    let commands = hooks.commands();
    assert_eq!(commands[0].timeout, Duration::from_secs(5));
    assert_eq!(commands[1].timeout, DEFAULT_TIMEOUT);
    let stop = commands
        .iter()
        .find(|hook| hook.event == HookEvent::Stop)
        .unwrap();
    assert_eq!(stop.kind, HookKind::Prompt { model: None });
    assert_eq!(stop.command, "x");
    assert_eq!(stop.timeout, DEFAULT_PROMPT_TIMEOUT);
    assert_eq!(hooks.untrusted.len(), 1);
    assert_eq!(hooks.untrusted[0].file, ".claude/settings.json");
    assert_eq!(hooks.untrusted[0].commands, 3);
    assert!(
        warnings.iter().any(|warning| warning.contains("`Bogus`")),
        "{warnings:?}"
    );
    assert!(
        warnings.iter().any(|warning| warning.contains("`agent`")),
        "{warnings:?}"
    );

    // Without a trust keeper no project hook runs.
    let none = Hooks::from_settings(&files, Path::new("/p"), None, &mut Vec::new());
    assert_eq!(none.commands().len(), 3);
    assert_eq!(none.untrusted.len(), 2);
}

#[tokio::test]
async fn a_hook_reads_the_event_on_stdin_and_answers() {
    let dir = tempfile::tempdir().unwrap();
    let settings = json!({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command",
            "command": "cat > event.json; echo 'no rm here' >&2; exit 2"}]},
        {"matcher": "Read", "hooks": [{"type": "command", "command": "echo never >&2; exit 2"}]}
    ]}});
    let files = [file("settings.json", SettingsScope::User, settings)];
    let hooks = Hooks::from_settings(&files, dir.path(), None, &mut Vec::new()).at(HookSite {
        sandbox: corvid_tools::Sandbox::off(),
        project: dir.path().to_path_buf(),
        cwd: dir.path().to_path_buf(),
        session_id: "s1".to_owned(),
    });
    let fields = tool_fields(dir.path(), "bash", &json!({"command": "rm -rf /"}));
    let answer = hooks
        .fire(HookEvent::PreToolUse, Some("bash"), fields)
        .await;

    assert_eq!(answer.blocked.as_deref(), Some("no rm here"));
    let event: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("event.json")).unwrap())
            .unwrap();
    assert_eq!(event["hook_event_name"], "PreToolUse");
    assert_eq!(event["tool_name"], "Bash");
    assert_eq!(event["tool_input"]["command"], "rm -rf /");
    assert_eq!(event["session_id"], "s1");
    assert!(event["cwd"].is_string() && event["transcript_path"].is_string());

    let other = hooks
        .fire(HookEvent::PreToolUse, Some("grep"), json!({}))
        .await;
    assert_eq!(other, Answer::default());
}

#[tokio::test]
async fn a_slow_hook_is_stopped_at_its_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let settings = json!({"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": "sleep 30", "timeout": 0.3}
    ]}]}});
    let files = [file("settings.json", SettingsScope::User, settings)];
    let hooks = Hooks::from_settings(&files, dir.path(), None, &mut Vec::new()).at(HookSite {
        sandbox: corvid_tools::Sandbox::off(),
        project: dir.path().to_path_buf(),
        cwd: dir.path().to_path_buf(),
        session_id: "s1".to_owned(),
    });
    let started = std::time::Instant::now();
    let answer = hooks.fire(HookEvent::Stop, None, json!({})).await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(answer.blocked, None);
    assert!(answer.notices[0].contains("killed"), "{:?}", answer.notices);
}

#[tokio::test]
async fn an_events_hooks_run_at_once_and_their_answers_are_merged() {
    let dir = tempfile::tempdir().unwrap();
    let settings = json!({"hooks": {"UserPromptSubmit": [
        {"hooks": [{"type": "command", "command": "sleep 1; echo first context"}]},
        {"hooks": [{"type": "command",
            "command": "sleep 1; echo '{\"hookSpecificOutput\":{\"additionalContext\":\"second context\"}}'"}]},
        {"hooks": [{"type": "command", "command": "sleep 1; echo 'not this prompt' >&2; exit 2"}]}
    ]}});
    let files = [file("settings.json", SettingsScope::User, settings)];
    let hooks = Hooks::from_settings(&files, dir.path(), None, &mut Vec::new()).at(HookSite {
        sandbox: corvid_tools::Sandbox::off(),
        project: dir.path().to_path_buf(),
        cwd: dir.path().to_path_buf(),
        session_id: "s1".to_owned(),
    });
    let started = std::time::Instant::now();
    let answer = hooks
        .fire(HookEvent::UserPromptSubmit, None, json!({"prompt": "hi"}))
        .await;
    // Three one-second hooks, one after another, would take three seconds.
    assert!(
        started.elapsed() < Duration::from_millis(2500),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(answer.blocked.as_deref(), Some("not this prompt"));
    assert_eq!(answer.context, vec!["first context", "second context"]);
}

#[tokio::test]
async fn a_prompt_hook_without_a_model_is_skipped_with_a_notice() {
    let dir = tempfile::tempdir().unwrap();
    let settings = json!({"hooks": {"Stop": [{"hooks": [{"type": "prompt", "prompt": "done?"}]}]}});
    let files = [file("settings.json", SettingsScope::User, settings)];
    let hooks = Hooks::from_settings(&files, dir.path(), None, &mut Vec::new()).at(HookSite {
        sandbox: corvid_tools::Sandbox::off(),
        project: dir.path().to_path_buf(),
        cwd: dir.path().to_path_buf(),
        session_id: "s1".to_owned(),
    });
    let answer = hooks.fire(HookEvent::Stop, None, json!({})).await;
    assert_eq!(answer.blocked, None);
    assert!(
        answer.notices[0].contains("no model"),
        "{:?}",
        answer.notices
    );
}

#[test]
fn tool_input_gets_claude_codes_file_path() {
    let fields = tool_fields(
        Path::new("/p"),
        "edit",
        &json!({"path": "src/a.rs", "old_string": "a", "new_string": "b"}),
    );
    assert_eq!(fields["tool_name"], "Edit");
    assert_eq!(fields["tool_input"]["file_path"], "/p/src/a.rs");
    assert_eq!(fields["tool_input"]["path"], "src/a.rs");
}

//! Hooks, in Claude Code's format so existing hook scripts work unchanged: shell commands run
//! on a session's events, reading the event as JSON on stdin and answering by exit code (2
//! blocks, with stderr as the reason the model reads) or by JSON on stdout (`decision`,
//! `reason`, `additionalContext`, `hookSpecificOutput.permissionDecision`, `continue`).
//!
//! They are read from the `hooks` object of the settings files (`crate::settings_files`): the
//! user's `settings.json` in corvid's configuration folder, and the project's
//! `.corvid/settings.json`, `.claude/settings.json` and `.claude/settings.local.json`:
//!
//! ```json
//! {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
//!   "command": "./check.sh", "timeout": 30}]}]}}
//! ```
//!
//! Events: `SessionStart`, `UserPromptSubmit`, `PreToolUse`, `PostToolUse`, `Stop`,
//! `SubagentStop`, `Notification`, `PreCompact`. Matchers (for the tool events) are Claude
//! Code's: a tool name (`Bash`, `Edit|Write`, `mcp__github__.*`; corvid's own names work too).
//!
//! A command hook runs like `bash` does — `bash -c` in the project folder, under the session's
//! kernel sandbox — with a timeout (60 s unless it sets `timeout` in seconds). A prompt hook
//! (`{"type": "prompt", "prompt": "... $ARGUMENTS ..."}`, optional `model`) asks the session's
//! model (or its own) through the session's model client and reads `{"ok", "reason"}` back
//! (`prompt.rs`; 30 s unless it sets `timeout`). The hooks an event matches run at once, as in
//! Claude Code; their answers are merged (any block wins, every context is kept). A project's hooks run a
//! program of the repository's choosing, so a project file's hooks run only once the user
//! trusted that file's hooks as they are now (`AgentConfig::project_trust`); until then they
//! are skipped with a warning saying how to trust them.

mod answer;
mod names;
mod parse;
mod prompt;
mod run;
pub(crate) mod session;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};

pub use answer::{Answer, Permission};
use names::ToolMatcher;
pub(crate) use names::claude_name;

use crate::settings_files::{SettingsFile, SettingsScope};

/// How long a command hook may run unless it says otherwise (Claude Code's default).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a prompt hook's model may take unless it says otherwise (Claude Code's default).
pub const DEFAULT_PROMPT_TIMEOUT: Duration = Duration::from_secs(30);

/// The events hooks are run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HookEvent {
    SessionStart,
    UserPromptSubmit,
    PreToolUse,
    PostToolUse,
    Stop,
    SubagentStop,
    Notification,
    PreCompact,
}

impl HookEvent {
    pub const ALL: [Self; 8] = [
        Self::SessionStart,
        Self::UserPromptSubmit,
        Self::PreToolUse,
        Self::PostToolUse,
        Self::Stop,
        Self::SubagentStop,
        Self::Notification,
        Self::PreCompact,
    ];

    /// The name in settings files and in the event's `hook_event_name`.
    pub fn name(self) -> &'static str {
        match self {
            Self::SessionStart => "SessionStart",
            Self::UserPromptSubmit => "UserPromptSubmit",
            Self::PreToolUse => "PreToolUse",
            Self::PostToolUse => "PostToolUse",
            Self::Stop => "Stop",
            Self::SubagentStop => "SubagentStop",
            Self::Notification => "Notification",
            Self::PreCompact => "PreCompact",
        }
    }

    fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|event| event.name() == name)
    }

    /// Whether the group's matcher is about tools (else it is ignored, or for `SessionStart`
    /// and `PreCompact`, matched against the source or trigger).
    fn matches_tools(self) -> bool {
        matches!(self, Self::PreToolUse | Self::PostToolUse)
    }
}

/// Whether the user trusts a project settings file's hooks as they are now. The composition
/// root keeps the answers (beside the trusted MCP servers); without one, a project's hooks do
/// not run.
pub trait ProjectTrust: Send + Sync + std::fmt::Debug {
    /// `file` is the settings file relative to the project, `fingerprint` the SHA-256 (hex) of
    /// its `hooks` object.
    fn is_trusted(&self, project: &Path, file: &str, fingerprint: &str) -> bool;

    /// Keeps `fingerprint` as trusted for `file` in `project`: corvid changed a list the user
    /// had trusted (an "always" answer saved, a rule removed). A store that cannot keep it says
    /// nothing; the list then waits for the user's trust again.
    fn trust(&self, project: &Path, file: &str, fingerprint: &str) {
        let _ = (project, file, fingerprint);
    }
}

/// What a hook does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookKind {
    /// Runs `command` (Claude Code's `"type": "command"`).
    Command,
    /// Asks a model about the event (`"type": "prompt"`): `model` if the hook names one, else
    /// the session's.
    Prompt { model: Option<String> },
}

/// One hook: a command, or a prompt for a model.
#[derive(Debug, Clone)]
pub struct HookCommand {
    pub event: HookEvent,
    /// The group's matcher as written (empty: every tool or source).
    pub matcher: String,
    pub kind: HookKind,
    /// The command (a command hook) or the prompt (a prompt hook).
    pub command: String,
    pub timeout: Duration,
    /// The settings file it comes from, as the user knows it.
    pub source: String,
    tools: ToolMatcher,
}

/// A project file's hooks that wait for the user's trust.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Untrusted {
    /// Relative to the project.
    pub file: String,
    pub fingerprint: String,
    /// How many commands it defines.
    pub commands: usize,
}

/// A session's hooks, and what it needs to run them.
#[derive(Debug, Default)]
pub struct Hooks {
    commands: Vec<HookCommand>,
    /// Project files whose hooks were skipped for want of trust.
    pub untrusted: Vec<Untrusted>,
    runner: Option<Runner>,
    /// The model prompt hooks ask; without one they are skipped with a notice.
    judge: Option<prompt::Judge>,
    /// Set once `SessionStart` has run.
    started: std::sync::atomic::AtomicBool,
}

#[derive(Debug, Clone)]
struct Runner {
    sandbox: corvid_tools::Sandbox,
    project: PathBuf,
    cwd: PathBuf,
    session_id: String,
}

/// Where hooks run, and as whose session.
#[derive(Debug, Clone)]
pub struct HookSite {
    pub sandbox: corvid_tools::Sandbox,
    pub project: PathBuf,
    pub cwd: PathBuf,
    pub session_id: String,
}

impl Hooks {
    /// The hooks of `files` (in order); a project file's only when `trust` says so. What cannot
    /// be read is left out with a warning.
    pub fn from_settings(
        files: &[SettingsFile],
        project: &Path,
        trust: Option<&dyn ProjectTrust>,
        warnings: &mut Vec<String>,
    ) -> Self {
        let mut hooks = Self::default();
        for file in files {
            let Some(table) = file.value.get("hooks") else {
                continue;
            };
            let mut found = Vec::new();
            parse::parse_table(table, &file.shown, &mut found, warnings);
            if found.is_empty() {
                continue;
            }
            if file.scope == SettingsScope::Project {
                let fingerprint = crate::settings_files::fingerprint(table);
                let trusted =
                    trust.is_some_and(|trust| trust.is_trusted(project, &file.shown, &fingerprint));
                if !trusted {
                    hooks.untrusted.push(Untrusted {
                        file: file.shown.clone(),
                        fingerprint,
                        commands: found.len(),
                    });
                    continue;
                }
            }
            hooks.commands.extend(found);
        }
        hooks
    }

    /// These hooks, run at `site`.
    pub fn at(mut self, site: HookSite) -> Self {
        self.runner = Some(Runner {
            sandbox: site.sandbox,
            project: site.project,
            cwd: site.cwd,
            session_id: site.session_id,
        });
        self
    }

    /// Prompt hooks ask `model` through `client` (a hook's own `model` beats it).
    pub fn judged_by(mut self, client: Arc<dyn crate::model::ModelClient>, model: &str) -> Self {
        self.judge = Some(prompt::Judge::new(client, model));
        self
    }

    /// The prompt hooks' model calls since the last take, for the usage ledger.
    pub(crate) fn take_calls(&self) -> Vec<(crate::ledger::CallMeter, crate::ledger::CallEnd)> {
        self.judge
            .as_ref()
            .map(|judge| std::mem::take(&mut *judge.calls.lock()))
            .unwrap_or_default()
    }

    /// The session's model changed (`/model`): prompt hooks ask it from now on.
    pub(crate) fn set_model(&self, model: &str) {
        if let Some(judge) = &self.judge {
            *judge.model.lock() = model.to_owned();
        }
    }

    /// True the first time only: `SessionStart` runs before the session's first turn.
    pub(crate) fn first_turn(&self) -> bool {
        !self.started.swap(true, std::sync::atomic::Ordering::SeqCst)
    }

    /// Every hook that will run.
    pub fn commands(&self) -> &[HookCommand] {
        &self.commands
    }

    /// Whether any hook listens to `event`.
    pub fn listens(&self, event: HookEvent) -> bool {
        self.commands.iter().any(|hook| hook.event == event)
    }

    /// Runs every hook of `event` whose matcher takes `subject` (a tool name for the tool
    /// events; the source or trigger for `SessionStart` and `PreCompact`) at once, as Claude
    /// Code does, each with its own timeout, with `fields` added to the common ones; their
    /// answers merged (any block wins, every context is kept, in the settings' order).
    pub async fn fire(&self, event: HookEvent, subject: Option<&str>, fields: Value) -> Answer {
        let Some(runner) = &self.runner else {
            return Answer::default();
        };
        let input = runner.input(event, &fields);
        let runs = self
            .commands
            .iter()
            .filter(|hook| hook.event == event && hook.takes(subject))
            .map(|hook| self.run_one(runner, hook, &input));
        futures_util::future::join_all(runs)
            .await
            .into_iter()
            .fold(Answer::default(), Answer::merge)
    }

    /// One hook's answer to the event `input`.
    async fn run_one(&self, runner: &Runner, hook: &HookCommand, input: &str) -> Answer {
        let event = hook.event.name();
        match &hook.kind {
            HookKind::Command => {
                let ran = run::run(
                    &runner.sandbox,
                    &runner.project,
                    &hook.command,
                    input,
                    hook.timeout,
                )
                .await;
                tracing::debug!(event, command = %hook.command, code = ?ran.code, "hook ran");
                Answer::of(event, &hook.command, &ran)
            }
            HookKind::Prompt { model } => match &self.judge {
                Some(judge) => {
                    let answer = prompt::ask(
                        judge,
                        model.as_deref(),
                        event,
                        &hook.command,
                        input,
                        hook.timeout,
                    )
                    .await;
                    tracing::debug!(event, blocked = answer.blocked.is_some(), "prompt hook ran");
                    answer
                }
                None => Answer {
                    notices: vec![format!(
                        "the {event} prompt hook was skipped: no model to ask"
                    )],
                    ..Answer::default()
                },
            },
        }
    }
}

impl HookCommand {
    /// Whether this hook's matcher takes `subject` (see [`Hooks::fire`]).
    fn takes(&self, subject: Option<&str>) -> bool {
        match (self.event.matches_tools(), subject) {
            (true, Some(tool)) => self.tools.matches(tool),
            (false, Some(subject))
                if !self.matcher.is_empty()
                    && matches!(self.event, HookEvent::SessionStart | HookEvent::PreCompact) =>
            {
                self.matcher.split('|').any(|part| part.trim() == subject)
            }
            _ => true,
        }
    }
}

impl Runner {
    /// The event's JSON: Claude Code's common fields, then the event's own.
    fn input(&self, event: HookEvent, fields: &Value) -> String {
        let mut input = Map::new();
        input.insert("session_id".into(), json!(self.session_id));
        input.insert("transcript_path".into(), json!(""));
        input.insert("cwd".into(), json!(self.cwd.display().to_string()));
        input.insert("hook_event_name".into(), json!(event.name()));
        if let Value::Object(fields) = fields {
            input.extend(fields.clone());
        }
        Value::Object(input).to_string()
    }
}

/// What a tool call looks like to a hook: Claude Code's name, and its input with Claude Code's
/// `file_path` (absolute) beside corvid's `path`.
pub(crate) fn tool_fields(project: &Path, tool: &str, arguments: &Value) -> Value {
    let mut input = arguments.clone();
    if let Value::Object(map) = &mut input
        && let Some(path) = map.get("path").and_then(Value::as_str)
    {
        let absolute = project.join(path).display().to_string();
        map.insert("file_path".into(), json!(absolute));
    }
    json!({"tool_name": claude_name(tool), "tool_input": input})
}

/// A session's hooks from its settings files, run under its sandbox (prompt hooks ask the
/// session's model through `model`); project hooks not yet trusted go to `warnings`.
pub(crate) fn for_session(
    config: &crate::AgentConfig,
    model: Arc<dyn crate::model::ModelClient>,
    files: &[SettingsFile],
    project: &Path,
    session_id: &str,
    warnings: &mut Vec<String>,
) -> SharedHooks {
    let hooks = Hooks::from_settings(files, project, config.project_trust.as_deref(), warnings);
    for untrusted in &hooks.untrusted {
        warnings.push(format!(
            "the project's hooks in {} ({} command{}) are not run until you trust them: `corvid hooks trust` in this project (run `corvid hooks` to see them first)",
            untrusted.file,
            untrusted.commands,
            if untrusted.commands == 1 { "" } else { "s" }
        ));
    }
    Arc::new(
        hooks
            .at(HookSite {
                sandbox: config.sandbox.clone(),
                project: project.to_path_buf(),
                cwd: config.cwd.clone(),
                session_id: session_id.to_owned(),
            })
            .judged_by(model, &config.model),
    )
}

/// Shared by a session's turns and its engine.
pub(crate) type SharedHooks = Arc<Hooks>;

#[cfg(test)]
mod tests;

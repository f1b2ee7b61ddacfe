//! The saved rules as a session lives with them: read again when they change, listed for
//! `/permissions` (numbered, with their file), an "always" answer saved as an `allow` rule, and
//! a rule removed. Files are changed through one JSON writer that keeps every other key (and
//! their order) and replaces the file atomically.
//!
//! A project's `allow` list applies only once trusted as it is (see the module above). When
//! corvid itself changes a list the user had trusted (or an empty one), it trusts the new list,
//! so saving one rule never switches off the rules already trusted.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use corvid_protocol::{ApprovalRule, PermissionRule, RuleAction, RuleFile};
use parking_lot::Mutex;
use serde_json::{Map, Value};

use super::{ALLOW_SUFFIX, Rules};
use crate::hooks::{ProjectTrust, claude_name};
use crate::settings_files::{SettingsFile, SettingsPaths, SettingsScope};

/// The project's file an "always" answer is saved to.
pub const PROJECT_RULES_FILE: &str = ".corvid/settings.json";

/// Why a rule could not be saved or removed.
#[derive(Debug, thiserror::Error)]
pub enum SavedRuleError {
    #[error("{file} was not read: {reason}")]
    Read { file: String, reason: String },
    #[error("{file} is not a JSON object with a `permissions` object")]
    Shape { file: String },
    #[error("{file} was not written: {source}")]
    Write {
        file: String,
        source: corvid_config::ConfigError,
    },
    #[error("there is no user settings file in this session")]
    NoUserFile,
    #[error("there is no rule {0}; /permissions lists them")]
    NoSuchRule(u32),
    #[error("`{rule}` is not a permission rule: {reason}")]
    Rule { rule: String, reason: String },
}

/// The rule in Claude Code's syntax that allows what `rule` allows, when there is one.
pub fn claude_rule(rule: &ApprovalRule) -> Option<String> {
    match rule {
        ApprovalRule::CommandPrefix { prefix } if !prefix.trim().is_empty() => {
            Some(format!("Bash({}:*)", prefix.trim()))
        }
        ApprovalRule::CommandPrefix { .. } => None,
        ApprovalRule::Tool { tool } => Some(claude_name(tool).to_owned()),
        ApprovalRule::Origin { origin } => origin
            .strip_prefix("mcp:")
            .map(|server| format!("mcp__{server}")),
    }
}

/// "Never" in an approval: `scope` is saved as a `deny` rule in `file` (a warning says so when
/// it could not be); the text the model reads for the refused call.
pub(crate) fn refuse_and_save(
    shared: &crate::session::Shared,
    scope: &crate::scope::Scope,
    tool: &str,
    rule: &ApprovalRule,
    file: RuleFile,
) -> String {
    match shared
        .permissions
        .save_approval(rule, RuleAction::Deny, file)
    {
        Ok((text, shown)) => format!(
            "The user rejected this `{tool}` call and saved the rule `{text}` in {shown} to deny such calls from now on. Do not retry it; take another approach or ask the user."
        ),
        Err(error) => {
            shared.emit(
                scope,
                corvid_protocol::EventMsg::Warning {
                    message: format!(
                        "the call was rejected but the deny rule was not saved: {error}"
                    ),
                },
            );
            format!(
                "The user rejected this `{tool}` call. Ask what they want instead, or take another approach."
            )
        }
    }
}

/// A session's saved rules, read again whenever one is saved or removed.
#[derive(Debug)]
pub struct LiveRules {
    paths: SettingsPaths,
    trust: Option<Arc<dyn ProjectTrust>>,
    rules: Mutex<Arc<Rules>>,
}

impl LiveRules {
    /// `rules` as read from `paths` at the session's start.
    pub fn new(paths: SettingsPaths, trust: Option<Arc<dyn ProjectTrust>>, rules: Rules) -> Self {
        Self {
            paths,
            trust,
            rules: Mutex::new(Arc::new(rules)),
        }
    }

    /// The rules in force now.
    pub fn current(&self) -> Arc<Rules> {
        Arc::clone(&self.rules.lock())
    }

    /// [`Rules::decide`] on the rules in force now.
    pub fn decide(
        &self,
        project: &Path,
        tool: &str,
        arguments: &Value,
    ) -> Option<super::RuleDecision> {
        self.current().decide(project, tool, arguments)
    }

    /// Which files an "always" answer may be saved to in this session.
    pub fn files(&self) -> Vec<RuleFile> {
        let mut files = vec![RuleFile::Project];
        if self.paths.user.is_some() {
            files.push(RuleFile::User);
        }
        files
    }

    fn path_of(&self, file: RuleFile) -> Result<(PathBuf, String, SettingsScope), SavedRuleError> {
        match file {
            RuleFile::Project => Ok((
                self.paths.project.join(PROJECT_RULES_FILE),
                PROJECT_RULES_FILE.to_owned(),
                SettingsScope::Project,
            )),
            RuleFile::User => {
                let path = self.paths.user.clone().ok_or(SavedRuleError::NoUserFile)?;
                let shown = path.display().to_string();
                Ok((path, shown, SettingsScope::User))
            }
        }
    }

    /// Saves `rule` as an `allow` rule in `file`; returns the rule's text and the file's name.
    pub fn save_allow(
        &self,
        rule: &ApprovalRule,
        file: RuleFile,
    ) -> Result<(String, String), SavedRuleError> {
        self.save_approval(rule, RuleAction::Allow, file)
    }

    /// Saves the rule of an approval's `always_scope` to the `action` list of `file` ("always"
    /// saves an allow, "never" a deny); returns the rule's text and the file's name.
    pub fn save_approval(
        &self,
        rule: &ApprovalRule,
        action: RuleAction,
        file: RuleFile,
    ) -> Result<(String, String), SavedRuleError> {
        let text = claude_rule(rule).ok_or_else(|| SavedRuleError::Shape {
            file: "this rule".to_owned(),
        })?;
        self.save(action, &text, file)
    }

    /// Saves `text` (a rule in Claude Code's syntax) to the `action` list of `file`, unless it
    /// is there already; returns the rule's text and the file's name.
    pub fn save(
        &self,
        action: RuleAction,
        text: &str,
        file: RuleFile,
    ) -> Result<(String, String), SavedRuleError> {
        let text = text.trim().to_owned();
        super::parse(&text).map_err(|reason| SavedRuleError::Rule {
            rule: text.clone(),
            reason: reason.to_string(),
        })?;
        let (path, shown, scope) = self.path_of(file)?;
        self.change_list(&path, &shown, scope, action.as_str(), |list| {
            if !list
                .iter()
                .any(|entry| entry.as_str() == Some(text.as_str()))
            {
                list.push(Value::String(text.clone()));
            }
        })?;
        self.reload();
        Ok((text, shown))
    }

    /// Every rule of every file, numbered in reading order.
    pub fn list(&self) -> Vec<PermissionRule> {
        let (files, _) = self.paths.read();
        listed(&files, &self.paths.project, self.trust.as_deref())
            .into_iter()
            .map(|(rule, _)| rule)
            .collect()
    }

    /// Removes rule `number` (as [`LiveRules::list`] numbers it) from its file; says what was
    /// removed.
    pub fn remove(&self, number: u32) -> Result<String, SavedRuleError> {
        let (files, _) = self.paths.read();
        let (rule, file) = listed(&files, &self.paths.project, self.trust.as_deref())
            .into_iter()
            .find(|(rule, _)| rule.number == number)
            .ok_or(SavedRuleError::NoSuchRule(number))?;
        let key = match rule.action {
            RuleAction::Allow => "allow",
            RuleAction::Ask => "ask",
            RuleAction::Deny => "deny",
        };
        self.change_list(&file.path, &file.shown, file.scope, key, |list| {
            list.retain(|entry| entry.as_str() != Some(rule.rule.as_str()));
        })?;
        self.reload();
        Ok(format!("removed `{}` from {}", rule.rule, rule.source))
    }

    /// Reads the files again (warnings were given when the session started).
    fn reload(&self) {
        let (files, _) = self.paths.read();
        let rules = Rules::from_settings(
            &files,
            &self.paths.project,
            self.trust.as_deref(),
            &mut Vec::new(),
        );
        *self.rules.lock() = Arc::new(rules);
    }

    /// Changes the `permissions.<key>` list of the file at `path` with `change`, keeping every
    /// other key; a project's `allow` list trusted before stays trusted.
    fn change_list(
        &self,
        path: &Path,
        shown: &str,
        scope: SettingsScope,
        key: &str,
        change: impl FnOnce(&mut Vec<Value>),
    ) -> Result<(), SavedRuleError> {
        let mut document = read_object(path, shown)?;
        let shape = || SavedRuleError::Shape {
            file: shown.to_owned(),
        };
        let permissions = document
            .entry("permissions")
            .or_insert_with(|| Value::Object(Map::new()))
            .as_object_mut()
            .ok_or_else(shape)?;
        let before = permissions.get("allow").cloned();
        let list = permissions
            .entry(key)
            .or_insert_with(|| Value::Array(Vec::new()))
            .as_array_mut()
            .ok_or_else(shape)?;
        change(list);
        let after = permissions.get("allow").cloned();
        let trust_key = format!("{shown}{ALLOW_SUFFIX}");
        let was_trusted = match (&self.trust, &before) {
            (_, None) => true,
            (_, Some(Value::Array(list))) if list.is_empty() => true,
            (Some(trust), Some(list)) => trust.is_trusted(
                &self.paths.project,
                &trust_key,
                &crate::settings_files::fingerprint(list),
            ),
            (None, Some(_)) => false,
        };
        let mut text = serde_json::to_string_pretty(&Value::Object(document)).map_err(|error| {
            SavedRuleError::Read {
                file: shown.to_owned(),
                reason: error.to_string(),
            }
        })?;
        text.push('\n');
        if let Some(folder) = path.parent() {
            std::fs::create_dir_all(folder).map_err(|error| SavedRuleError::Read {
                file: shown.to_owned(),
                reason: error.to_string(),
            })?;
        }
        corvid_config::write_atomic(path, text.as_bytes(), corvid_config::FileMode::Shared)
            .map_err(|source| SavedRuleError::Write {
                file: shown.to_owned(),
                source,
            })?;
        if scope == SettingsScope::Project
            && was_trusted
            && before != after
            && let (Some(trust), Some(allow)) = (&self.trust, &after)
        {
            trust.trust(
                &self.paths.project,
                &trust_key,
                &crate::settings_files::fingerprint(allow),
            );
        }
        Ok(())
    }
}

/// The JSON object in `path` (an empty one when the file does not exist yet).
fn read_object(path: &Path, shown: &str) -> Result<Map<String, Value>, SavedRuleError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
        Err(error) => {
            return Err(SavedRuleError::Read {
                file: shown.to_owned(),
                reason: error.to_string(),
            });
        }
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(_) => Err(SavedRuleError::Shape {
            file: shown.to_owned(),
        }),
        Err(error) => Err(SavedRuleError::Read {
            file: shown.to_owned(),
            reason: format!("it is not valid JSON ({error})"),
        }),
    }
}

/// Every rule of `files`, numbered, with the file it is in.
fn listed<'a>(
    files: &'a [SettingsFile],
    project: &Path,
    trust: Option<&dyn ProjectTrust>,
) -> Vec<(PermissionRule, &'a SettingsFile)> {
    let mut rules = Vec::new();
    for file in files {
        let Some(permissions) = file.value.get("permissions") else {
            continue;
        };
        for (key, action) in [
            ("allow", RuleAction::Allow),
            ("ask", RuleAction::Ask),
            ("deny", RuleAction::Deny),
        ] {
            let Some(list) = permissions.get(key).and_then(Value::as_array) else {
                continue;
            };
            let active = action != RuleAction::Allow
                || file.scope == SettingsScope::User
                || trust.is_some_and(|trust| {
                    trust.is_trusted(
                        project,
                        &format!("{}{ALLOW_SUFFIX}", file.shown),
                        &crate::settings_files::fingerprint(&Value::Array(list.clone())),
                    )
                });
            for text in list.iter().filter_map(Value::as_str) {
                let number = u32::try_from(rules.len() + 1).unwrap_or(u32::MAX);
                rules.push((
                    PermissionRule {
                        number,
                        rule: text.to_owned(),
                        action,
                        source: file.shown.clone(),
                        active,
                    },
                    file,
                ));
            }
        }
    }
    rules
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn always_rules_in_claude_codes_syntax() {
        assert_eq!(
            claude_rule(&ApprovalRule::command_prefix("npm test")).as_deref(),
            Some("Bash(npm test:*)")
        );
        assert_eq!(
            claude_rule(&ApprovalRule::tool("edit")).as_deref(),
            Some("Edit")
        );
        assert_eq!(
            claude_rule(&ApprovalRule::origin("mcp:github")).as_deref(),
            Some("mcp__github")
        );
        assert_eq!(claude_rule(&ApprovalRule::origin("custom")), None);
    }

    #[test]
    fn saving_keeps_every_other_key_and_removing_takes_one_rule() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().to_path_buf();
        std::fs::create_dir_all(project.join(".corvid")).unwrap();
        std::fs::write(
            project.join(PROJECT_RULES_FILE),
            r#"{"hooks": {"Stop": []}, "permissions": {"deny": ["Bash(rm:*)"]}, "model": "x"}"#,
        )
        .unwrap();
        let paths = SettingsPaths {
            user: None,
            project: project.clone(),
        };
        let live = LiveRules::new(paths, None, Rules::default());
        let (text, shown) = live
            .save_allow(
                &ApprovalRule::command_prefix("cargo test"),
                RuleFile::Project,
            )
            .unwrap();
        assert_eq!(
            (text.as_str(), shown.as_str()),
            ("Bash(cargo test:*)", ".corvid/settings.json")
        );
        let written: Value = serde_json::from_str(
            &std::fs::read_to_string(project.join(PROJECT_RULES_FILE)).unwrap(),
        )
        .unwrap();
        assert_eq!(written["hooks"], serde_json::json!({"Stop": []}));
        assert_eq!(written["model"], "x");
        let keys: Vec<&String> = written.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["hooks", "permissions", "model"], "the order is kept");
        assert_eq!(
            written["permissions"]["allow"],
            serde_json::json!(["Bash(cargo test:*)"])
        );
        let listed = live.list();
        assert_eq!(listed.len(), 2);
        assert_eq!(listed[0].rule, "Bash(cargo test:*)");
        assert!(!listed[0].active, "a project's allow waits for trust");
        assert_eq!(listed[1].action, RuleAction::Deny);
        assert!(matches!(
            live.save_allow(&ApprovalRule::tool("write"), RuleFile::User),
            Err(SavedRuleError::NoUserFile)
        ));
        assert_eq!(
            live.remove(2).unwrap(),
            "removed `Bash(rm:*)` from .corvid/settings.json"
        );
        assert_eq!(live.list().len(), 1);
        assert!(matches!(live.remove(5), Err(SavedRuleError::NoSuchRule(5))));
    }
}

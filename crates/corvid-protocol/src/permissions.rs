//! Saved permission rules as faces see them: the settings file an "always" answer may be saved
//! to, and the rules `/permissions` lists (numbered, with their file) and removes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Which settings file a saved rule goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RuleFile {
    /// The project's `.corvid/settings.json` (a project's `allow` list applies once trusted;
    /// corvid trusts what it wrote itself when the list was trusted before).
    Project,
    /// The user's `settings.json` in corvid's configuration folder: every project.
    User,
}

/// What a saved rule does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RuleAction {
    /// Runs without asking.
    Allow,
    /// Asks, under every policy.
    Ask,
    /// Never runs.
    Deny,
}

/// One saved rule, as `/permissions` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PermissionRule {
    /// Its number in the list, for `/permissions remove N` (from 1).
    pub number: u32,
    /// The rule in Claude Code's syntax (`Bash(npm test:*)`, `Edit(src/**)`, `mcp__github`).
    pub rule: String,
    /// What it does.
    pub action: RuleAction,
    /// The file it is in, as people know it (relative to the project, or the full path).
    pub source: String,
    /// Whether it is in force: a project's `allow` rule waits for trust.
    pub active: bool,
}

impl RuleAction {
    /// The action's name in the settings files (`allow`, `ask`, `deny`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Ask => "ask",
            Self::Deny => "deny",
        }
    }
}

impl PermissionRule {
    /// One line for people: `2. deny Bash(rm:*) — .corvid/settings.json`, with a note when it
    /// waits for trust.
    pub fn describe(&self) -> String {
        let waiting = if self.active {
            ""
        } else {
            " (not applied until `corvid hooks trust` in this project)"
        };
        format!(
            "{}. {} {} — {}{waiting}",
            self.number,
            self.action.as_str(),
            self.rule,
            self.source
        )
    }
}

/// What `/permissions` shows: a line per rule, or how to add one when there is none.
pub fn describe_rules(rules: &[PermissionRule]) -> Vec<String> {
    if rules.is_empty() {
        return vec![
            "no saved permission rules: answer \"always\" and save it, or add `permissions` to .corvid/settings.json".to_owned(),
        ];
    }
    let mut lines: Vec<String> = rules.iter().map(PermissionRule::describe).collect();
    lines.push("/permissions remove N deletes rule N from its file".to_owned());
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_read_as_one_line_each() {
        let rule = PermissionRule {
            number: 2,
            rule: "Bash(rm:*)".to_owned(),
            action: RuleAction::Deny,
            source: ".corvid/settings.json".to_owned(),
            active: true,
        };
        assert_eq!(
            rule.describe(),
            "2. deny Bash(rm:*) — .corvid/settings.json"
        );
        assert_eq!(describe_rules(&[rule]).len(), 2);
        assert!(describe_rules(&[])[0].starts_with("no saved permission rules"));
    }
}

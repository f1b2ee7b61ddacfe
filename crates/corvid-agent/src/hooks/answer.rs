//! What a hook's run means, in Claude Code's terms: exit code 0 is success (its stdout may be
//! JSON with a decision, or — for `UserPromptSubmit` and `SessionStart` — context for the
//! model); exit code 2 blocks, with its stderr as the reason; any other code is a non-blocking
//! error shown to the user.

use serde_json::Value;

use super::run::Ran;

/// A `PreToolUse` hook's say over the approval gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permission {
    /// Run without asking.
    Allow,
    /// Ask the user even where the policy would not.
    Ask,
    /// Refuse the call (with the reason).
    Deny,
}

/// What one hook (or every hook of an event, merged) answered.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Answer {
    /// The hook blocked what it was asked about; the reason goes to the model.
    pub blocked: Option<String>,
    /// `PreToolUse` only: allow, ask or deny, whatever the policy says.
    pub permission: Option<Permission>,
    /// Why, for the model (deny) or the user (allow, ask).
    pub permission_reason: Option<String>,
    /// Text for the model (`additionalContext`, or a context hook's plain stdout).
    pub context: Vec<String>,
    /// For the user only: a failed hook's error, `systemMessage`.
    pub notices: Vec<String>,
    /// `continue: false`: stop the turn, with this reason.
    pub stop: Option<String>,
}

impl Answer {
    /// One hook's run, for `event`.
    pub(crate) fn of(event: &str, command: &str, ran: &Ran) -> Self {
        let mut answer = Self::default();
        match ran.code {
            Some(0) => {
                let stdout = ran.stdout.trim();
                match serde_json::from_str::<Value>(stdout) {
                    Ok(Value::Object(json)) => answer.read_json(&json),
                    _ if !stdout.is_empty() && takes_plain_context(event) => {
                        answer.context.push(stdout.to_owned());
                    }
                    _ => {}
                }
            }
            Some(2) => {
                let reason = ran.stderr.trim();
                answer.blocked = Some(if reason.is_empty() {
                    format!("blocked by the {event} hook `{command}`")
                } else {
                    reason.to_owned()
                });
            }
            _ => answer.notices.push(format!(
                "the {event} hook `{command}` failed ({}): {}",
                ran.code
                    .map_or_else(|| "killed".to_owned(), |code| format!("exit code {code}")),
                ran.stderr.trim()
            )),
        }
        answer
    }

    fn read_json(&mut self, json: &serde_json::Map<String, Value>) {
        let text = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_owned);
        if json.get("continue").and_then(Value::as_bool) == Some(false) {
            self.stop = Some(
                text(json.get("stopReason")).unwrap_or_else(|| "a hook stopped the turn".into()),
            );
        }
        if let Some(message) = text(json.get("systemMessage")) {
            self.notices.push(message);
        }
        let reason = text(json.get("reason"));
        match json.get("decision").and_then(Value::as_str) {
            Some("block") => {
                self.blocked = Some(reason.clone().unwrap_or_else(|| "blocked by a hook".into()))
            }
            // The older PreToolUse spelling.
            Some("approve") => self.permission = Some(Permission::Allow),
            _ => {}
        }
        let specific = json.get("hookSpecificOutput").and_then(Value::as_object);
        if let Some(context) = text(json.get("additionalContext"))
            .or_else(|| text(specific.and_then(|specific| specific.get("additionalContext"))))
        {
            self.context.push(context);
        }
        if let Some(specific) = specific {
            let permission = match specific.get("permissionDecision").and_then(Value::as_str) {
                Some("allow") => Some(Permission::Allow),
                Some("ask") => Some(Permission::Ask),
                Some("deny") => Some(Permission::Deny),
                _ => None,
            };
            if permission.is_some() {
                self.permission = permission;
                self.permission_reason = text(specific.get("permissionDecisionReason"));
            }
        }
        if self.permission_reason.is_none() && self.permission.is_some() {
            self.permission_reason = reason;
        }
    }

    /// Several hooks' answers as one: any block or deny wins, then ask, then allow; every
    /// context and notice is kept.
    pub(crate) fn merge(mut self, other: Self) -> Self {
        self.blocked = match (self.blocked.take(), other.blocked) {
            (Some(first), Some(second)) => Some(format!("{first}\n{second}")),
            (first, second) => first.or(second),
        };
        let rank = |permission: Option<Permission>| match permission {
            Some(Permission::Deny) => 3,
            Some(Permission::Ask) => 2,
            Some(Permission::Allow) => 1,
            None => 0,
        };
        if rank(other.permission) > rank(self.permission) {
            self.permission = other.permission;
            self.permission_reason = other.permission_reason;
        }
        self.context.extend(other.context);
        self.notices.extend(other.notices);
        self.stop = self.stop.or(other.stop);
        self
    }
}

/// Events whose plain stdout (exit code 0, not JSON) is context for the model.
fn takes_plain_context(event: &str) -> bool {
    matches!(event, "UserPromptSubmit" | "SessionStart")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ran(code: i32, stdout: &str, stderr: &str) -> Ran {
        Ran {
            code: Some(code),
            stdout: stdout.to_owned(),
            stderr: stderr.to_owned(),
            timed_out: false,
        }
    }

    #[test]
    fn exit_codes_and_json_answers() {
        let blocked = Answer::of("PreToolUse", "x", &ran(2, "", "rm is not allowed\n"));
        assert_eq!(blocked.blocked.as_deref(), Some("rm is not allowed"));

        let failed = Answer::of("PreToolUse", "x", &ran(1, "", "oops"));
        assert_eq!(failed.blocked, None);
        assert!(failed.notices[0].contains("exit code 1"));

        let deny = Answer::of(
            "PreToolUse",
            "x",
            &ran(
                0,
                r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no secrets"}}"#,
                "",
            ),
        );
        assert_eq!(deny.permission, Some(Permission::Deny));
        assert_eq!(deny.permission_reason.as_deref(), Some("no secrets"));

        let block = Answer::of(
            "PostToolUse",
            "x",
            &ran(0, r#"{"decision":"block","reason":"lint failed"}"#, ""),
        );
        assert_eq!(block.blocked.as_deref(), Some("lint failed"));

        let context = Answer::of("UserPromptSubmit", "x", &ran(0, "today is Monday\n", ""));
        assert_eq!(context.context, vec!["today is Monday".to_owned()]);
        let ignored = Answer::of("PostToolUse", "x", &ran(0, "plain text", ""));
        assert!(ignored.context.is_empty());

        let merged = Answer::of(
            "PreToolUse",
            "x",
            &ran(
                0,
                r#"{"hookSpecificOutput":{"permissionDecision":"allow"}}"#,
                "",
            ),
        )
        .merge(deny);
        assert_eq!(merged.permission, Some(Permission::Deny));
    }
}

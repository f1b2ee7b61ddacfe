//! What the engine tells every face about a call, once, from what the tool's source said: its
//! kind as offered, the words of a proposal (its title, the decisions it allows, the "always"
//! rule and the sandbox notice in words). Faces show these as they are.

use std::collections::HashMap;

use corvid_protocol::{
    AppliedChange, ApprovalRule, DecisionKind, ProposalKind, RuleFile, SandboxNotice, ToolCallKind,
};
use corvid_tools::{Offer, ToolKind};
use parking_lot::Mutex;

/// What the engine said of each call this session made (its kind as offered, the files it
/// touched, the change it made), so a replayed history shows every call as it was announced. A call stored before
/// the session started takes its kind from the latest offer (its locations are not known
/// without preparing it again, which would read files and could fail).
#[derive(Debug, Default)]
pub(crate) struct CallFacts {
    state: Mutex<FactsState>,
}

#[derive(Debug, Default)]
struct FactsState {
    calls: HashMap<String, (ToolCallKind, Vec<String>)>,
    changes: HashMap<String, AppliedChange>,
    offer: Option<Offer>,
}

impl CallFacts {
    /// The call `call_id` was announced with `kind` and `locations`.
    pub(crate) fn record(&self, call_id: &str, kind: ToolCallKind, locations: Vec<String>) {
        self.state
            .lock()
            .calls
            .insert(call_id.to_owned(), (kind, locations));
    }

    /// The call `call_id` made `change` (its result says so).
    pub(crate) fn changed(&self, call_id: &str, change: AppliedChange) {
        self.state.lock().changes.insert(call_id.to_owned(), change);
    }

    /// The change call `call_id` made, when this session saw it.
    pub(crate) fn change_of(&self, call_id: &str) -> Option<AppliedChange> {
        self.state.lock().changes.get(call_id).cloned()
    }

    /// The tools on offer now: the kind of calls announced before this session.
    pub(crate) fn offered(&self, offer: &Offer) {
        self.state.lock().offer = Some(offer.clone());
    }

    /// The kind and locations of call `call_id` of `tool`, as announced (or as offered now).
    pub(crate) fn of(&self, call_id: &str, tool: &str) -> (ToolCallKind, Vec<String>) {
        let state = self.state.lock();
        if let Some(known) = state.calls.get(call_id) {
            return known.clone();
        }
        let kind = state
            .offer
            .as_ref()
            .map_or(ToolCallKind::Other, |offer| call_kind(offer, tool));
        (kind, Vec::new())
    }
}

/// The kind `tool` was offered with; `task` (the agent's own) is `other`.
pub(crate) fn call_kind(offer: &Offer, tool: &str) -> ToolCallKind {
    let Some(spec) = offer.spec(tool) else {
        return ToolCallKind::Other;
    };
    match spec.kind {
        ToolKind::Read => ToolCallKind::Read,
        ToolKind::Search => ToolCallKind::Search,
        ToolKind::Edit => ToolCallKind::Edit,
        ToolKind::Command => ToolCallKind::Command,
        ToolKind::Fetch => ToolCallKind::Fetch,
        ToolKind::Other | ToolKind::Mutating => match spec
            .origin
            .as_deref()
            .and_then(|origin| origin.strip_prefix("mcp:"))
        {
            Some(server) => ToolCallKind::Mcp {
                server: server.to_owned(),
                // The model's name is `mcp__<server>__<tool>` (see corvid-mcp).
                tool: tool
                    .strip_prefix(&format!("mcp__{server}__"))
                    .unwrap_or(tool)
                    .to_owned(),
            },
            None => ToolCallKind::Other,
        },
    }
}

/// The one line every face shows as a proposal's title.
pub(crate) fn proposal_title(kind: &ProposalKind) -> String {
    match kind {
        ProposalKind::Edit { path, .. } => format!("Edit {path}"),
        ProposalKind::Write { path, .. } => format!("Write {path}"),
        ProposalKind::Command { command, .. } => {
            let first = command.lines().next().unwrap_or_default();
            if command.lines().nth(1).is_some() {
                format!("Run {first} …")
            } else {
                format!("Run {first}")
            }
        }
        ProposalKind::Other { summary, tool } if summary.is_empty() => format!("Call {tool}"),
        ProposalKind::Other { summary, .. } => summary.clone(),
        ProposalKind::Plan { .. } => "Carry out this plan?".to_owned(),
    }
}

/// The decisions a proposal allows: "always" only with a rule to keep, and saving it to one of
/// `files` (as an allow, or as a deny for "never") only when the rule has a form in Claude
/// Code's syntax.
pub(crate) fn decisions(always: Option<&ApprovalRule>, files: &[RuleFile]) -> Vec<DecisionKind> {
    let mut decisions = vec![DecisionKind::Approve];
    let savable = always.is_some_and(|rule| crate::permissions::claude_rule(rule).is_some());
    if always.is_some() {
        decisions.push(DecisionKind::ApproveAlways);
        if savable {
            decisions.extend(files.iter().map(|file| match file {
                RuleFile::Project => DecisionKind::SaveAlwaysProject,
                RuleFile::User => DecisionKind::SaveAlwaysUser,
            }));
        }
    }
    decisions.push(DecisionKind::Reject);
    if savable {
        decisions.extend(files.iter().map(|file| match file {
            RuleFile::Project => DecisionKind::SaveNeverProject,
            RuleFile::User => DecisionKind::SaveNeverUser,
        }));
    }
    decisions
}

/// The sandbox notice in words.
pub(crate) fn notice(sandbox: Option<&SandboxNotice>) -> Option<String> {
    sandbox.map(SandboxNotice::describe)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_name_what_would_happen() {
        let command = ProposalKind::Command {
            command: "cargo test\ncargo fmt".into(),
            cwd: ".".into(),
        };
        assert_eq!(proposal_title(&command), "Run cargo test …");
        let edit = ProposalKind::Edit {
            path: "src/lib.rs".into(),
            diff: String::new(),
        };
        assert_eq!(proposal_title(&edit), "Edit src/lib.rs");
        assert_eq!(decisions(None, &[RuleFile::Project]).len(), 2);
        let always = ApprovalRule::command_prefix("cargo test");
        assert_eq!(
            decisions(Some(&always), &[RuleFile::Project, RuleFile::User]),
            [
                DecisionKind::Approve,
                DecisionKind::ApproveAlways,
                DecisionKind::SaveAlwaysProject,
                DecisionKind::SaveAlwaysUser,
                DecisionKind::Reject,
                DecisionKind::SaveNeverProject,
                DecisionKind::SaveNeverUser
            ]
        );
    }
}

//! The agent's approval requests as `session/request_permission` (a client request in ACP too):
//! its title, sandbox notice, diff or command and the decisions it allows, as the engine made
//! them; the client's answer becomes the request's `response`. (Read-only mode is the engine's own policy: it refuses
//! changes without proposing them.)

use std::sync::Arc;

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
};
use agent_client_protocol::{Client, Error};
use corvid_protocol::{ApprovalDecision, DecisionKind, ProposalNotification, Response, RuleFile};

use super::live::Live;
use crate::updates;

/// The permission options' ids.
const ALLOW_ONCE: &str = "allow_once";
const ALLOW_ALWAYS: &str = "allow_always";
const SAVE_PROJECT: &str = "allow_always_project";
const SAVE_USER: &str = "allow_always_user";
const REJECT_ONCE: &str = "reject_once";
const NEVER_PROJECT: &str = "reject_always_project";
const NEVER_USER: &str = "reject_always_user";
/// A plan: the client's next prompt is the user's version of it.
const EDIT_PLAN: &str = "edit_plan";

impl Live {
    /// An approval request becomes a permission request. The answer is awaited on its own
    /// task; a cancel stops the wait (the engine closes the request). Another face may answer
    /// first: then this answer is refused, and the call's own updates say what happened.
    pub(super) fn ask(
        self: &Arc<Self>,
        cx: &ConnectionTo<Client>,
        proposal: ProposalNotification,
    ) -> Result<(), Error> {
        let known = self.state.lock().calls.get(&proposal.call_id).cloned();
        let fields = match &known {
            Some((call, described)) => updates::pending_fields(call, described),
            None => ToolCallUpdateFields::new().status(ToolCallStatus::Pending),
        }
        .title(proposal.title.clone())
        .content(updates::proposal_content(&proposal, &self.project));
        self.send(
            cx,
            updates::status(&proposal.call_id, ToolCallStatus::Pending),
        )?;
        let request = RequestPermissionRequest::new(
            self.id.clone(),
            ToolCallUpdate::new(proposal.call_id.clone(), fields),
            permission_options(&proposal),
        );
        let sent = cx.send_request(request);
        let mut cancelled = self.cancel.subscribe();
        let live = Arc::clone(self);
        let connection = cx.clone();
        cx.spawn(async move {
            let answer = tokio::select! {
                answer = sent.block_task() => answer,
                _ = cancelled.changed() => return Ok(()),
            };
            let decision = match answer {
                Ok(response) => match response.outcome {
                    RequestPermissionOutcome::Selected(selected) => {
                        match selected.option_id.0.as_ref() {
                            ALLOW_ONCE => ApprovalDecision::Approve,
                            ALLOW_ALWAYS => match proposal.always_scope.clone() {
                                Some(scope) => ApprovalDecision::ApproveAlways { scope },
                                None => ApprovalDecision::Approve,
                            },
                            id @ (NEVER_PROJECT | NEVER_USER) => {
                                match proposal.always_scope.clone() {
                                    Some(scope) => ApprovalDecision::SaveNever {
                                        scope,
                                        file: if id == NEVER_PROJECT {
                                            RuleFile::Project
                                        } else {
                                            RuleFile::User
                                        },
                                    },
                                    None => ApprovalDecision::Reject { feedback: None },
                                }
                            }
                            // The plan waits; the client's next prompt is the edited plan.
                            EDIT_PLAN => return live.edit_plan(&connection, &proposal),
                            id @ (SAVE_PROJECT | SAVE_USER) => {
                                match proposal.always_scope.clone() {
                                    Some(scope) => ApprovalDecision::SaveAlways {
                                        scope,
                                        file: if id == SAVE_PROJECT {
                                            RuleFile::Project
                                        } else {
                                            RuleFile::User
                                        },
                                    },
                                    None => ApprovalDecision::Approve,
                                }
                            }
                            _ => ApprovalDecision::Reject {
                                feedback: feedback_of(&response.meta, &selected.meta),
                            },
                        }
                    }
                    // The client withdrew the question: treat it as a no.
                    _ => ApprovalDecision::Reject { feedback: None },
                },
                Err(error) => {
                    // Nobody answered (the client went away, or could not ask): the turn stops
                    // as cancelled, instead of a "no" in the user's name that would send the
                    // model on for nobody.
                    tracing::debug!(%error, "the permission request failed; cancelling the turn");
                    live.cancel();
                    return Ok(());
                }
            };
            if matches!(
                decision,
                ApprovalDecision::Approve
                    | ApprovalDecision::ApproveAlways { .. }
                    | ApprovalDecision::SaveAlways { .. }
            ) {
                live.send(
                    &connection,
                    updates::status(&proposal.call_id, ToolCallStatus::InProgress),
                )?;
            }
            let reply = live
                .link
                .respond(Response::new(proposal.proposal_id, decision));
            if let Err(error) = reply.into_result() {
                tracing::debug!(%error.message, "the permission answer was not taken");
            }
            Ok(())
        })
    }
}

/// The decisions the proposal allows: allow, "always allow" with the rule's own words (saved or
/// not), reject, and "never" (a deny rule saved). A plan (plan mode) is approved to be carried
/// out, edited (the next prompt is the user's version), or rejected to keep planning.
fn permission_options(proposal: &ProposalNotification) -> Vec<PermissionOption> {
    let plan = matches!(proposal.kind, corvid_protocol::ProposalKind::Plan { .. });
    let (allow, reject) = if plan {
        ("Approve the plan and carry it out", "Keep planning")
    } else {
        ("Allow", "Reject")
    };
    let mut options = vec![PermissionOption::new(
        ALLOW_ONCE,
        allow,
        PermissionOptionKind::AllowOnce,
    )];
    if proposal.decisions.contains(&DecisionKind::ApproveAlways)
        && let Some(scope) = &proposal.always_scope
    {
        let label = proposal
            .always_description
            .clone()
            .unwrap_or_else(|| scope.describe());
        for (decision, id, saved) in [
            (
                DecisionKind::SaveAlwaysProject,
                SAVE_PROJECT,
                " — saved in .corvid/settings.json",
            ),
            (
                DecisionKind::SaveAlwaysUser,
                SAVE_USER,
                " — saved in your settings.json",
            ),
        ] {
            if proposal.decisions.contains(&decision) {
                options.push(PermissionOption::new(
                    id,
                    format!("{label}{saved}"),
                    PermissionOptionKind::AllowAlways,
                ));
            }
        }
        options.insert(
            1,
            PermissionOption::new(ALLOW_ALWAYS, label, PermissionOptionKind::AllowAlways),
        );
    }
    if plan && proposal.decisions.contains(&DecisionKind::ApproveEdited) {
        options.push(PermissionOption::new(
            EDIT_PLAN,
            "Edit the plan (send your version as the next message)",
            PermissionOptionKind::AllowOnce,
        ));
    }
    options.push(PermissionOption::new(
        REJECT_ONCE,
        reject,
        PermissionOptionKind::RejectOnce,
    ));
    if let Some(rule) = proposal
        .always_scope
        .as_ref()
        .and_then(corvid_agent::permissions::claude_rule)
    {
        for (decision, id, saved) in [
            (
                DecisionKind::SaveNeverProject,
                NEVER_PROJECT,
                " — deny rule saved in .corvid/settings.json",
            ),
            (
                DecisionKind::SaveNeverUser,
                NEVER_USER,
                " — deny rule saved in your settings.json",
            ),
        ] {
            if proposal.decisions.contains(&decision) {
                options.push(PermissionOption::new(
                    id,
                    format!("Never: deny `{rule}`{saved}"),
                    PermissionOptionKind::RejectAlways,
                ));
            }
        }
    }
    options
}

/// "Reject with feedback": a client may put the user's words in the answer's
/// `_meta.feedback`; they reach the model as the reason.
fn feedback_of(
    response: &Option<serde_json::Map<String, serde_json::Value>>,
    selected: &Option<serde_json::Map<String, serde_json::Value>>,
) -> Option<String> {
    [selected, response]
        .into_iter()
        .flatten()
        .find_map(|meta| meta.get("feedback").and_then(|value| value.as_str()))
        .filter(|text| !text.trim().is_empty())
        .map(str::to_owned)
}

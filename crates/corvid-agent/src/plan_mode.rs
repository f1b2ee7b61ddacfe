//! Plan mode: the session explores read-only (the gate refuses every change, commands run with
//! nothing writable) and ends with a plan the user approves, edits or rejects. The model learns
//! it is in plan mode from an instruction added to each step's system prompt while the policy
//! is `plan`, and presents its plan with the agent's own `present_plan` tool, which becomes a
//! proposal of kind `plan`. An approved (or edited) plan is carried out in the same turn, under
//! the policy the session had before plan mode.

use corvid_protocol::{
    ApprovalDecision, ApprovalPolicy, DecisionKind, EventMsg, ProposalKind, TurnOutcome,
};
use corvid_tools::ToolOutput;
use corvid_wire::model::{Tool, ToolCall};
use serde_json::{Value, json};

use crate::session::Verdict;
use crate::turn::{Asked, TurnSetup, ask_about};

/// The tool's name.
pub(crate) const PRESENT_PLAN: &str = "present_plan";

/// Whether a call is the main agent's `present_plan`.
pub(crate) fn is_present_plan(name: &str) -> bool {
    name == PRESENT_PLAN
}

/// What the model is told at every step of a turn in plan mode (beside the system prompt).
pub(crate) const INSTRUCTION: &str = "# Plan mode\n\
You are in plan mode: the user wants a plan before anything changes. Read, search, fetch and \
run read-only commands (`ls`, `cat`, `git status`, `grep`) to understand the task. Do not try \
to change anything: every edit, write and changing tool is refused, and commands run with \
nothing writable. When you know what to do, call `present_plan` once with the complete plan \
in Markdown (the files to change, the changes, the commands to run, how to check the result). \
The user approves it (you then carry it out), edits it (you carry out their version) or \
rejects it with feedback (you stay in plan mode and revise).";

/// The tool the main agent is offered while the policy is `plan`.
pub(crate) fn present_plan_tool() -> Tool {
    Tool {
        name: PRESENT_PLAN.to_owned(),
        description: Some(
            "Plan mode only: present your finished plan to the user for approval. The user approves it \
             (then carry it out), edits it (carry out their version) or rejects it with feedback (revise it)."
                .to_owned(),
        ),
        parameters: json!({
            "type": "object",
            "properties": {
                "plan": {"type": "string", "description": "The complete plan, in Markdown."}
            },
            "required": ["plan"]
        }).into(),
        strict: None,
    }
}

/// The line front ends show for a `present_plan` call.
pub(crate) fn summary(arguments: &Value) -> String {
    let first = arguments
        .get("plan")
        .and_then(Value::as_str)
        .and_then(|plan| plan.lines().map(str::trim).find(|line| !line.is_empty()))
        .unwrap_or_default();
    format!("present_plan {}", first.trim_start_matches('#').trim())
}

fn output(text: String, is_error: bool) -> ToolOutput {
    ToolOutput {
        text,
        is_error,
        detail: None,
    }
}

/// Runs a `present_plan` call: the plan goes to the user as a proposal; the answer decides
/// what the model hears and which policy the session is in.
pub(crate) async fn run(
    setup: &TurnSetup,
    call: &ToolCall,
    arguments: &Value,
) -> (ToolOutput, Option<TurnOutcome>) {
    if setup.shared.gate().policy != ApprovalPolicy::Plan {
        return (
            output(
                "Not in plan mode (any more): there is no plan to present. Carry on with the work."
                    .to_owned(),
                true,
            ),
            None,
        );
    }
    let plan = arguments
        .get("plan")
        .and_then(Value::as_str)
        .map(str::trim)
        .unwrap_or_default();
    if plan.is_empty() {
        return (
            output(
                "Not presented: `plan` is empty. Call present_plan with the complete plan in Markdown."
                    .to_owned(),
                true,
            ),
            None,
        );
    }
    crate::hooks::session::notify(
        &setup.shared,
        "corvid has a plan for you to review".to_owned(),
    );
    let asked = Asked {
        kind: ProposalKind::Plan {
            plan: plan.to_owned(),
        },
        decisions: vec![
            DecisionKind::Approve,
            DecisionKind::ApproveEdited,
            DecisionKind::Reject,
        ],
        sandbox: None,
        always_scope: None,
    };
    let verdict = ask_about(setup, call, asked).await;
    let carry_out = |plan: &str, edited: bool| {
        let policy = setup.shared.leave_plan();
        setup.shared.emit(
            &setup.scope,
            EventMsg::SettingsChanged {
                model: setup.model.clone(),
                approval_policy: policy,
            },
        );
        let whose = if edited {
            "The user edited your plan and approved their version. Carry out this plan, not yours:\n\n"
        } else {
            "The user approved the plan. "
        };
        let body = if edited { plan } else { "" };
        output(
            format!(
                "{whose}{body}\n\nPlan mode is over: the session is back to the `{policy}` approval policy, so \
                 edits and commands now run (or ask, as that policy says). Carry out the plan now, step by step."
            ),
            false,
        )
    };
    match verdict {
        Verdict::Decided(
            ApprovalDecision::Approve
            | ApprovalDecision::ApproveAlways { .. }
            | ApprovalDecision::SaveAlways { .. },
        ) => (carry_out(plan, false), None),
        Verdict::Decided(ApprovalDecision::ApproveEdited { text }) if !text.trim().is_empty() => {
            (carry_out(text.trim(), true), None)
        }
        Verdict::Decided(ApprovalDecision::ApproveEdited { .. }) => (carry_out(plan, false), None),
        Verdict::Decided(
            decision @ (ApprovalDecision::Reject { .. } | ApprovalDecision::SaveNever { .. }),
        ) => {
            // A plan offers no "never" (there is no rule to save); answered anyway, it rejects.
            let feedback = match decision {
                ApprovalDecision::Reject { feedback } => feedback,
                _ => None,
            };
            match feedback.filter(|feedback| !feedback.trim().is_empty()) {
                // Feedback: revise the plan in this turn.
                Some(feedback) => (
                    output(
                        format!(
                            "The user rejected the plan. Their feedback: {feedback}\nYou are still in plan mode: revise the plan and present it again."
                        ),
                        true,
                    ),
                    None,
                ),
                // No feedback: the turn ends; the user will say what they want.
                None => (
                    output(
                        "The user rejected the plan without feedback. You are still in plan mode; wait for the user."
                            .to_owned(),
                        true,
                    ),
                    Some(TurnOutcome::Completed),
                ),
            }
        }
        unanswered @ (Verdict::Interrupted | Verdict::Cancelled | Verdict::SessionClosed) => {
            let why = match unanswered {
                Verdict::Interrupted => "the user sent a new message",
                Verdict::Cancelled => "the turn was cancelled",
                _ => "the session was closed",
            };
            (
                output(
                    format!("Not decided: {why} while the plan waited for approval."),
                    true,
                ),
                Some(TurnOutcome::Cancelled),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_is_the_plans_first_line() {
        let arguments = json!({"plan": "\n# Add a greeting\n\n1. write hello.txt"});
        assert_eq!(summary(&arguments), "present_plan Add a greeting");
    }
}

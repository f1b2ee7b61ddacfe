//! Plan mode in the terminal: Shift-Tab cycles the mode, a plan is shown and approved, edited
//! in the input, or rejected.

use super::*;

fn plan_proposal() -> ServerRequest {
    request_of(ProposalNotification {
        proposal_id: "p9".to_owned(),
        call_id: "t9".to_owned(),
        title: "Carry out this plan?".to_owned(),
        kind: ProposalKind::Plan {
            plan: "# Make x\n\n1. Write `x`.".to_owned(),
        },
        decisions: vec![
            corvid_protocol::DecisionKind::Approve,
            corvid_protocol::DecisionKind::ApproveEdited,
            corvid_protocol::DecisionKind::Reject,
        ],
        always_scope: None,
        always_description: None,
        sandbox: None,
        notice: None,
    })
}

fn last_decision(recorder: &Recorder) -> Option<ApprovalDecision> {
    decisions(recorder).last().cloned()
}

#[test]
fn shift_tab_cycles_ask_auto_edit_plan() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, recorder) = app(folder.path(), None);
    app.event(ready());
    let mut seen = Vec::new();
    for _ in 0..3 {
        app.key(key(KeyCode::BackTab));
        let Some(Op::SetApprovalPolicy { policy }) = ops(&recorder).last().cloned() else {
            panic!("Shift-Tab sets the policy: {:?}", ops(&recorder))
        };
        seen.push(policy);
        // The engine answers with the change.
        app.event(event(EventMsg::SettingsChanged {
            model: "grok-4.6".to_owned(),
            approval_policy: policy,
        }));
    }
    assert_eq!(
        seen,
        [
            ApprovalPolicy::AutoEdit,
            ApprovalPolicy::Plan,
            ApprovalPolicy::Ask
        ]
    );
}

#[test]
fn a_plan_is_shown_and_approved_edited_or_rejected() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, recorder) = app(folder.path(), None);
    app.request(plan_proposal());
    let shown = printed(&mut app);
    assert!(shown.contains("? allow: Carry out this plan?"), "{shown}");
    assert!(shown.contains("Make x"), "{shown}");
    assert!(area(&app, 100, 12).contains("2 edit"));
    app.key(key(KeyCode::Char('1')));
    assert_eq!(last_decision(&recorder), Some(ApprovalDecision::Approve));

    // 2 puts the plan in the input; Enter approves the edited text.
    app.request(plan_proposal());
    app.key(key(KeyCode::Char('2')));
    assert_eq!(app.editor.text(), "# Make x\n\n1. Write `x`.");
    app.key(key(KeyCode::End));
    typed(&mut app, " Then stop.");
    app.key(key(KeyCode::Enter));
    assert_eq!(
        last_decision(&recorder),
        Some(ApprovalDecision::ApproveEdited {
            text: "# Make x\n\n1. Write `x`. Then stop.".to_owned()
        })
    );

    // Feedback keeps planning.
    app.request(plan_proposal());
    typed(&mut app, "also update the README");
    app.key(key(KeyCode::Enter));
    assert_eq!(
        last_decision(&recorder),
        Some(ApprovalDecision::Reject {
            feedback: Some("also update the README".to_owned())
        })
    );
}

/// `approval` as the agent's request.
pub(super) fn request_of(approval: ProposalNotification) -> ServerRequest {
    ServerRequest {
        id: approval.proposal_id.clone(),
        turn_id: "s1".to_owned(),
        seq: 0,
        depth: 0,
        parent_call_id: None,
        replay: false,
        approval,
    }
}

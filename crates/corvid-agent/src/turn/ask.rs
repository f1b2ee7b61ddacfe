//! Asking the user: a call's proposal (or a plan) as the agent's request, and the wait for the
//! first answer (or a cancel).

#[allow(clippy::wildcard_imports)]
use super::*;

/// Shows the proposal and waits for the user (or a cancel).
pub(super) async fn ask(
    setup: &TurnSetup,
    call: &ToolCall,
    proposal: &corvid_tools::Proposal,
    tool: &str,
    sandbox: Option<corvid_protocol::SandboxNotice>,
    always_scope: Option<corvid_protocol::ApprovalRule>,
) -> Verdict {
    let path = proposal
        .path
        .as_ref()
        .map(|path| path.display().to_string())
        .unwrap_or_default();
    let kind = match (&proposal.diff, &proposal.command) {
        (Some(diff), _) if proposal.whole_file => ProposalKind::Write {
            path,
            diff: diff.clone(),
        },
        (Some(diff), _) => ProposalKind::Edit {
            path,
            diff: diff.clone(),
        },
        (None, Some(command)) => ProposalKind::Command {
            command: command.clone(),
            // Commands run in the project root; event paths are relative to it.
            cwd: ".".to_owned(),
        },
        _ => ProposalKind::Other {
            tool: tool.to_owned(),
            summary: proposal.summary.clone(),
        },
    };
    crate::hooks::session::notify(
        &setup.shared,
        format!(
            "corvid needs your permission to use {}",
            crate::hooks::claude_name(tool)
        ),
    );
    let decisions =
        crate::tool_facts::decisions(always_scope.as_ref(), &setup.shared.permissions.files());
    ask_about(
        setup,
        call,
        Asked {
            kind,
            decisions,
            sandbox,
            always_scope,
        },
    )
    .await
}

/// What a proposal asks the user.
pub(crate) struct Asked {
    pub(crate) kind: ProposalKind,
    pub(crate) decisions: Vec<corvid_protocol::DecisionKind>,
    pub(crate) sandbox: Option<corvid_protocol::SandboxNotice>,
    pub(crate) always_scope: Option<corvid_protocol::ApprovalRule>,
}

/// Emits a proposal for `call` and waits for the user's verdict (or a cancel).
pub(crate) async fn ask_about(setup: &TurnSetup, call: &ToolCall, asked: Asked) -> Verdict {
    let Asked {
        kind,
        decisions,
        sandbox,
        always_scope,
    } = asked;
    let proposal_id = format!("p_{}", call.id);
    let always_description = always_scope
        .as_ref()
        .map(corvid_protocol::ApprovalRule::describe);
    // Registered before anyone hears of it, so an answer sent the moment the event arrives
    // always finds it waiting; whoever answers first wins (`crate::session::Approvals`).
    let mut answer = match setup.shared.approvals.register(&proposal_id) {
        Ok(answer) => answer,
        Err(closed) => return closed,
    };
    setup.shared.journal.request(
        &setup.scope,
        ProposalNotification {
            proposal_id: proposal_id.clone(),
            call_id: call.id.clone(),
            title: crate::tool_facts::proposal_title(&kind),
            kind,
            decisions,
            always_scope,
            always_description,
            notice: crate::tool_facts::notice(sandbox.as_ref()),
            sandbox,
        },
    );
    let mut cancel = setup.cancel.clone();
    let verdict = tokio::select! {
        // A dropped reply means the map itself is gone: the session ended.
        verdict = &mut answer => verdict.unwrap_or(Verdict::SessionClosed),
        _ = cancel.wait_for(|cancelled| *cancelled) => {
            // An answer given before the cancel was seen wins (closing the session answers
            // "session closed" first, then cancels): when the proposal is no longer waiting,
            // its answer was sent under the map's lock and is already here.
            if setup.shared.approvals.withdraw(&proposal_id, &Verdict::Cancelled) {
                Verdict::Cancelled
            } else {
                answer.try_recv().unwrap_or(Verdict::Cancelled)
            }
        }
    };
    let outcome = match &verdict {
        Verdict::Decided(ApprovalDecision::Reject { .. }) => ProposalOutcome::Rejected,
        Verdict::Decided(_) => ProposalOutcome::Approved,
        Verdict::Interrupted | Verdict::Cancelled | Verdict::SessionClosed => {
            ProposalOutcome::Interrupted
        }
    };
    setup.shared.emit(
        &setup.scope,
        EventMsg::ProposalClosed {
            proposal_id,
            outcome,
        },
    );
    verdict
}

//! Editing a plan from an ACP client. A permission request can only pick an option, so "Edit the
//! plan" ends the prompt that presented it (its turn keeps waiting for the answer) and shows the
//! plan as text; the client's next prompt is the user's version, sent to the waiting turn as
//! `approve_edited`, and that prompt then follows the turn to its end. A cancel while the plan
//! waits stops the turn.

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::StopReason;
use agent_client_protocol::{Client, Error};
use corvid_protocol::{ApprovalDecision, Op, ProposalKind, ProposalNotification, Response};
use tokio::sync::oneshot;

use super::live::{Live, Turn};
use crate::updates;

/// A presented plan the user is editing.
pub(crate) struct PlanEdit {
    proposal_id: String,
    /// The submission of the turn that waits for it (its events keep that id).
    submission: String,
}

impl Live {
    /// "Edit the plan" was picked: the plan is shown to copy and change, the prompt ends, and
    /// the turn waits for the next prompt.
    pub(super) fn edit_plan(
        &self,
        cx: &ConnectionTo<Client>,
        proposal: &ProposalNotification,
    ) -> Result<(), Error> {
        let ProposalKind::Plan { plan } = &proposal.kind else {
            return Ok(());
        };
        let turn = {
            let mut state = self.state.lock();
            let turn = state.turn.take();
            if let Some(turn) = &turn {
                state.plan_edit = Some(PlanEdit {
                    proposal_id: proposal.proposal_id.clone(),
                    submission: turn.submission.clone(),
                });
            }
            turn
        };
        let Some(turn) = turn else {
            return Ok(());
        };
        self.send(
            cx,
            updates::text(format!(
                "\n\nSend your version of the plan as your next message; it is carried out as you write it (cancel to keep planning instead). The plan as presented:\n\n````markdown\n{}\n````\n",
                plan.trim_end()
            )),
        )?;
        let _ = turn.done.send(StopReason::EndTurn);
        Ok(())
    }

    /// The prompt after "Edit the plan": when a plan waits for its edit, this prompt's `text`
    /// approves the edited plan and the prompt follows the waiting turn; its stop reason comes
    /// on the receiver. `None` when no plan waits (any more).
    pub(super) fn take_plan_edit(&self, text: &str) -> Option<oneshot::Receiver<StopReason>> {
        let edit = {
            let mut state = self.state.lock();
            if state.turn.is_some() {
                return None;
            }
            let edit = state.plan_edit.take()?;
            let (done, receiver) = oneshot::channel();
            state.turn = Some(Turn {
                submission: edit.submission.clone(),
                command: false,
                cancelled: false,
                done,
            });
            (edit, receiver)
        };
        let (edit, receiver) = edit;
        let reply = self.link.respond(Response::new(
            edit.proposal_id,
            ApprovalDecision::ApproveEdited {
                text: text.to_owned(),
            },
        ));
        if let Err(error) = reply.into_result() {
            // The plan was answered elsewhere, or its turn ended: nothing waits any more, and
            // the prompt is an ordinary message.
            tracing::debug!(%error.message, "the edited plan was not taken");
            self.state.lock().turn = None;
            return None;
        }
        Some(receiver)
    }

    /// A cancel while a plan waits for its edit stops the waiting turn.
    pub(super) fn cancel_plan_edit(&self) -> bool {
        let waiting = self.state.lock().plan_edit.take().is_some();
        if waiting {
            self.link.submit(Op::Cancel);
        }
        waiting
    }
}

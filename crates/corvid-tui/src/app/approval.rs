//! Approvals: a proposal shown as a question, answered by a digit, a word or feedback, or
//! cancelled with the turn.

use corvid_protocol::{
    ApprovalDecision, ApprovalRule, ApproveParams, Op, ProposalKind, ProposalNotification,
};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;

use super::App;
use crate::render;

/// The proposal waiting for an answer.
pub(crate) struct Proposal {
    id: String,
    /// The rule "always" keeps, when the proposal offers one.
    always: Option<ApprovalRule>,
}

impl Proposal {
    pub(super) fn new(id: String, always: Option<ApprovalRule>) -> Self {
        Self { id, always }
    }
}

impl App {
    pub(super) fn cancel_turn(&mut self) {
        if self.overlay.proposal.take().is_some() {
            self.note("approval cancelled; the turn stops");
        }
        self.link.submit(Op::Cancel);
        self.hint = Some("interrupting…".to_owned());
    }

    /// "Always" for the waiting proposal: its kept rule, or once when it offers none.
    pub(super) fn always(&self) -> ApprovalDecision {
        match self
            .overlay
            .proposal
            .as_ref()
            .and_then(|proposal| proposal.always.clone())
        {
            Some(scope) => ApprovalDecision::ApproveAlways { scope },
            None => ApprovalDecision::Approve,
        }
    }

    pub(super) fn answer(&mut self, decision: ApprovalDecision) {
        let Some(proposal) = self.overlay.proposal.take() else {
            return;
        };
        let word = match &decision {
            ApprovalDecision::Approve => "approved".to_owned(),
            ApprovalDecision::ApproveAlways { .. } => "approved, and from now on".to_owned(),
            ApprovalDecision::Reject { feedback: None } => "rejected".to_owned(),
            ApprovalDecision::Reject {
                feedback: Some(feedback),
            } => format!("rejected: {feedback}"),
            ApprovalDecision::ApproveEdited { .. } => "approved, as edited".to_owned(),
        };
        self.note(format!("  {word}"));
        self.link.submit(Op::Approve(ApproveParams {
            proposal_id: proposal.id,
            decision,
        }));
    }

    /// A line from the user: the answer to a waiting proposal (`y`, `a`, `n`, or feedback that
    /// rejects it), else a message or command.
    pub fn line(&mut self, text: &str) {
        if self.overlay.proposal.is_some() && !text.trim().is_empty() {
            let decision = match text.trim() {
                "y" | "yes" => ApprovalDecision::Approve,
                "a" | "always" => self.always(),
                "n" | "no" => ApprovalDecision::Reject { feedback: None },
                feedback => ApprovalDecision::Reject {
                    feedback: Some(feedback.to_owned()),
                },
            };
            self.answer(decision);
            return;
        }
        self.submit_line(text);
    }

    /// A proposal from the engine: the question, its diff, the sandbox's reason for asking.
    pub(super) fn proposal(&mut self, proposal: ProposalNotification, depth: u32) {
        let indent = "  ".repeat(depth as usize);
        self.flush_reasoning(depth);
        // The agent's title, the same words in every face.
        self.say(Line::styled(
            format!("{indent}? allow: {}", proposal.title),
            Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
        ));
        if let ProposalKind::Edit { diff, .. } | ProposalKind::Write { diff, .. } = &proposal.kind {
            self.output.extend(render::diff(diff));
        }
        // Why a command asks even where the policy would run it: widened or unsandboxed.
        if let Some(notice) = &proposal.notice {
            self.say(Line::styled(
                format!("{indent}  ! {notice}"),
                Style::new().fg(Color::Yellow),
            ));
        }
        self.overlay.proposal = Some(Proposal::new(proposal.proposal_id, proposal.always_scope));
    }

    /// The answers' hint above the input, while a proposal waits.
    pub(super) fn approval_view(&self, lines: &mut Vec<Line<'static>>) {
        if self.overlay.proposal.is_some() {
            lines.push(Line::styled(
                "1 yes · 2 always · 3 no · or type why, Enter · Esc cancels",
                Style::new().fg(Color::Yellow),
            ));
        }
    }
}

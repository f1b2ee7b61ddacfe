//! Approvals: the agent's request shown as a question, answered by a digit, a word or
//! feedback (the request's `response`), or cancelled with the turn.

use corvid_protocol::{
    ApprovalDecision, ApprovalRule, DecisionKind, Op, ProposalKind, ProposalNotification, Response,
    ServerRequest,
};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;

use super::App;
use crate::render;

/// The proposal waiting for an answer.
pub(crate) struct Proposal {
    id: String,
    /// The rule "always" keeps, when the proposal allows "always" (a widened or unsandboxed
    /// command never does: it asks every time).
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
        };
        self.note(format!("  {word}"));
        // Another face may have answered first: then this answer is not taken, and says so.
        if let Err(error) = self
            .link
            .respond(Response::new(proposal.id, decision))
            .into_result()
        {
            self.note(format!("  (not taken: {})", error.message));
        }
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

    /// A request from the agent: shown as a question, unless the screen shows it already (a
    /// resynchronisation's replay), when only the waiting answer is restored.
    pub fn request(&mut self, request: ServerRequest) {
        let seen = request.replay && request.seq <= self.last_seq;
        self.last_seq = self.last_seq.max(request.seq);
        if seen {
            let always = allowed_always(&request.approval);
            self.overlay.proposal = Some(Proposal::new(request.approval.proposal_id, always));
            return;
        }
        self.attention = Some(format!(
            "corvid: approval needed: {}",
            request.approval.title
        ));
        self.proposal(request.approval, request.depth);
    }

    /// A proposal from the engine: the question, its diff, the sandbox's reason for asking.
    fn proposal(&mut self, proposal: ProposalNotification, depth: u32) {
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
        // "Always" only where the proposal allows it, said in the agent's words for its rule.
        let always = allowed_always(&proposal);
        if let Some(rule) = &always {
            let words = proposal
                .always_description
                .unwrap_or_else(|| rule.describe());
            self.say(Line::styled(
                format!("{indent}  2 always: {words}"),
                Style::new().fg(Color::Yellow),
            ));
        }
        self.overlay.proposal = Some(Proposal::new(proposal.proposal_id, always));
    }

    /// The answers' hint above the input, while a proposal waits.
    pub(super) fn approval_view(&self, lines: &mut Vec<Line<'static>>) {
        if let Some(proposal) = &self.overlay.proposal {
            let answers = if proposal.always.is_some() {
                "1 yes · 2 always · 3 no"
            } else {
                "1 yes · 3 no"
            };
            lines.push(Line::styled(
                format!("{answers} · or type why, Enter · Esc cancels"),
                Style::new().fg(Color::Yellow),
            ));
        }
    }
}

/// The rule "always" keeps, when the proposal allows "always" at all.
fn allowed_always(proposal: &ProposalNotification) -> Option<ApprovalRule> {
    proposal
        .always_scope
        .clone()
        .filter(|_| proposal.decisions.contains(&DecisionKind::ApproveAlways))
}

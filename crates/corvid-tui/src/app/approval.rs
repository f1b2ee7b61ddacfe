//! Approvals: the agent's request shown as a question, answered by a digit, a word or
//! feedback (the request's `response`), or cancelled with the turn. A plan (plan mode) is
//! approved, edited in the input (then Enter approves the edited text) or rejected; Shift-Tab
//! cycles the mode ask → auto-edit → plan.

use corvid_protocol::{
    ApprovalDecision, ApprovalPolicy, ApprovalRule, DecisionKind, Op, ProposalKind,
    ProposalNotification, Response, ServerRequest,
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
    /// The rule "never" saves as a deny rule (the proposal's `always_scope`).
    never: Option<ApprovalRule>,
    /// The plan, when the proposal is one (plan mode).
    plan: Option<String>,
    /// The plan is in the input being edited: Enter approves the edited text.
    editing: bool,
    /// Where "always" may also be saved (digits 4 and 5), as the proposal allows.
    saves: Vec<corvid_protocol::RuleFile>,
    /// Where "never" may be saved as a deny rule (digits 6 and 7), as the proposal allows.
    denies: Vec<corvid_protocol::RuleFile>,
}

impl Proposal {
    pub(super) fn of(proposal: ProposalNotification) -> Self {
        let always = allowed_always(&proposal);
        let plan = match proposal.kind {
            ProposalKind::Plan { plan } => Some(plan),
            _ => None,
        };
        let saves = proposal
            .decisions
            .iter()
            .filter_map(|decision| match decision {
                DecisionKind::SaveAlwaysProject => Some(corvid_protocol::RuleFile::Project),
                DecisionKind::SaveAlwaysUser => Some(corvid_protocol::RuleFile::User),
                _ => None,
            })
            .collect();
        let denies = proposal
            .decisions
            .iter()
            .filter_map(|decision| match decision {
                DecisionKind::SaveNeverProject => Some(corvid_protocol::RuleFile::Project),
                DecisionKind::SaveNeverUser => Some(corvid_protocol::RuleFile::User),
                _ => None,
            })
            .collect();
        Self {
            id: proposal.proposal_id,
            never: proposal.always_scope.clone(),
            always,
            plan,
            editing: false,
            saves,
            denies,
        }
    }
}

/// The modes Shift-Tab cycles through, in order.
const CYCLE: [ApprovalPolicy; 3] = [
    ApprovalPolicy::Ask,
    ApprovalPolicy::AutoEdit,
    ApprovalPolicy::Plan,
];

impl App {
    pub(super) fn cancel_turn(&mut self) {
        if self.overlay.proposal.take().is_some() {
            self.note("approval cancelled; the turn stops");
        }
        self.link.submit(Op::Cancel);
        self.hint = Some("interrupting…".to_owned());
    }

    /// Shift-Tab: the next mode of ask → auto-edit → plan (from any other policy, ask).
    pub(super) fn cycle_mode(&mut self) {
        let next = CYCLE
            .iter()
            .position(|policy| policy.as_str() == self.status.approval)
            .map_or(ApprovalPolicy::Ask, |index| {
                CYCLE[(index + 1) % CYCLE.len()]
            });
        self.link.submit(Op::SetApprovalPolicy { policy: next });
        self.hint = Some(format!(
            "mode: {next} (Shift-Tab cycles ask → auto-edit → plan)"
        ));
    }

    /// The second answer (digit 2): "always" for a call, "edit" for a plan, which puts the
    /// plan in the input; Enter then approves the edited text.
    pub(super) fn second_answer(&mut self) {
        let plan = self.overlay.proposal.as_mut().and_then(|proposal| {
            proposal.editing = proposal.plan.is_some();
            proposal.plan.clone()
        });
        match plan {
            Some(plan) => {
                self.editor.set(&plan);
                self.hint = Some("edit the plan; Enter approves your version".to_owned());
            }
            None => {
                let always = self.always();
                self.answer(always);
            }
        }
    }

    /// Digits 4 and 5: "always", and saved to the project's or the user's settings file; 6
    /// and 7: "never", saved as a deny rule there — when the proposal offers it; `false`
    /// (nothing done) otherwise.
    pub(super) fn save_answer(&mut self, digit: char) -> bool {
        let Some(proposal) = self.overlay.proposal.as_ref() else {
            return false;
        };
        let decision = match digit {
            '4' | '5' => proposal
                .saves
                .get(usize::from(digit == '5'))
                .copied()
                .zip(proposal.always.clone())
                .map(|(file, scope)| ApprovalDecision::SaveAlways { scope, file }),
            _ => proposal
                .denies
                .get(usize::from(digit == '7'))
                .copied()
                .zip(proposal.never.clone())
                .map(|(file, scope)| ApprovalDecision::SaveNever { scope, file }),
        };
        let Some(decision) = decision else {
            return false;
        };
        self.answer(decision);
        true
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
            ApprovalDecision::SaveAlways { file, .. } => match file {
                corvid_protocol::RuleFile::Project => {
                    "approved, and from now on (saved in .corvid/settings.json)".to_owned()
                }
                corvid_protocol::RuleFile::User => {
                    "approved, and from now on (saved in your settings.json)".to_owned()
                }
            },
            ApprovalDecision::SaveNever { file, .. } => match file {
                corvid_protocol::RuleFile::Project => {
                    "rejected, and never again (deny rule saved in .corvid/settings.json)"
                        .to_owned()
                }
                corvid_protocol::RuleFile::User => {
                    "rejected, and never again (deny rule saved in your settings.json)".to_owned()
                }
            },
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
        let editing = self
            .overlay
            .proposal
            .as_ref()
            .is_some_and(|proposal| proposal.editing);
        if editing && !text.trim().is_empty() {
            self.answer(ApprovalDecision::ApproveEdited {
                text: text.to_owned(),
            });
            return;
        }
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
            self.overlay.proposal = Some(Proposal::of(request.approval));
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
        match &proposal.kind {
            ProposalKind::Edit { diff, .. } | ProposalKind::Write { diff, .. } => {
                self.output.extend(render::diff(diff));
            }
            ProposalKind::Plan { plan } => self.output.extend(render::markdown(plan)),
            ProposalKind::Command { .. } | ProposalKind::Other { .. } => {}
        }
        // Why a command asks even where the policy would run it: widened or unsandboxed.
        if let Some(notice) = &proposal.notice {
            self.say(Line::styled(
                format!("{indent}  ! {notice}"),
                Style::new().fg(Color::Yellow),
            ));
        }
        // "Always" only where the proposal allows it, said in the agent's words for its rule.
        if let Some(rule) = &allowed_always(&proposal) {
            let words = proposal
                .always_description
                .clone()
                .unwrap_or_else(|| rule.describe());
            self.say(Line::styled(
                format!("{indent}  2 always: {words}"),
                Style::new().fg(Color::Yellow),
            ));
        }
        self.overlay.proposal = Some(Proposal::of(proposal));
    }

    /// The answers' hint above the input, while a proposal waits.
    pub(super) fn approval_view(&self, lines: &mut Vec<Line<'static>>) {
        let hint = match &self.overlay.proposal {
            None => return,
            Some(proposal) if proposal.editing => "Enter approves the edited plan · Esc cancels",
            Some(proposal) if proposal.plan.is_some() => {
                "1 approve · 2 edit · 3 keep planning · or type feedback, Enter · Esc cancels"
            }
            Some(proposal) => {
                let mut hint = if proposal.always.is_some() {
                    "1 yes · 2 always · 3 no".to_owned()
                } else {
                    "1 yes · 3 no".to_owned()
                };
                for (digit, file) in proposal.saves.iter().enumerate() {
                    hint.push_str(match (digit, file) {
                        (0, corvid_protocol::RuleFile::Project) => {
                            " · 4 always, saved in the project"
                        }
                        (0, corvid_protocol::RuleFile::User) => " · 4 always, saved for you",
                        (_, corvid_protocol::RuleFile::Project) => {
                            " · 5 always, saved in the project"
                        }
                        (_, corvid_protocol::RuleFile::User) => " · 5 always, saved for you",
                    });
                }
                for (digit, file) in proposal.denies.iter().enumerate() {
                    hint.push_str(match (digit, file) {
                        (0, corvid_protocol::RuleFile::Project) => {
                            " · 6 never, saved in the project"
                        }
                        (0, corvid_protocol::RuleFile::User) => " · 6 never, saved for you",
                        (_, corvid_protocol::RuleFile::Project) => {
                            " · 7 never, saved in the project"
                        }
                        (_, corvid_protocol::RuleFile::User) => " · 7 never, saved for you",
                    });
                }
                hint.push_str(" · or type why, Enter · Esc cancels");
                lines.push(Line::styled(hint, Style::new().fg(Color::Yellow)));
                return;
            }
        };
        lines.push(Line::styled(hint, Style::new().fg(Color::Yellow)));
    }
}

/// The rule "always" keeps, when the proposal allows "always" at all.
fn allowed_always(proposal: &ProposalNotification) -> Option<ApprovalRule> {
    proposal
        .always_scope
        .clone()
        .filter(|_| proposal.decisions.contains(&DecisionKind::ApproveAlways))
}

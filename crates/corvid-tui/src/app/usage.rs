//! Tokens and cost: counted from the engine's usage events and turn ends, the cost as the
//! engine priced it (`usage.turn_cost_usd`, the usage ledger's one price lookup, as every face
//! shows it), shown by `/status`, `/cost` and the status line.

use corvid_protocol::{TokenUsage, UsageNotification};
use ratatui::text::Line;

use super::App;

impl App {
    /// The main agent's usage after a step: the running turn's tokens and cost so far.
    pub(super) fn step_usage(&mut self, usage: UsageNotification) {
        self.usage.turn = usage.turn;
        self.usage.turn_cost = usage.turn_cost_usd;
        self.status.cost = match (self.usage.cost, self.usage.turn_cost) {
            (None, None) => None,
            (session, turn) => Some(session.unwrap_or(0.0) + turn.unwrap_or(0.0)),
        };
    }

    /// A finished turn's usage and cost join the session's.
    pub(super) fn add_turn_usage(&mut self, usage: TokenUsage) {
        self.usage.turn = TokenUsage::default();
        self.usage.session += usage;
        self.status.tokens = self.usage.session.total();
        if let Some(turn_cost) = self.usage.turn_cost.take() {
            let cost = self.usage.cost.unwrap_or(0.0) + turn_cost;
            self.usage.cost = Some(cost);
            self.status.cost = Some(cost);
        }
    }

    /// Tokens so far: the finished turns' and the running one's.
    pub(super) fn tokens_so_far(&self) -> u64 {
        self.usage.session.total() + self.usage.turn.total()
    }

    /// `/status`: the model, approvals, project, conversation, tokens and sandbox.
    pub(super) fn status_report(&mut self) {
        let lines = vec![
            format!("model      {}", self.status.model),
            format!("approvals  {}", self.status.approval),
            format!("project    {}", self.settings.project.display()),
            format!("conversation {}", self.conversation),
            format!("tokens     {}", self.tokens_so_far()),
        ];
        for line in lines {
            self.say(Line::raw(line));
        }
        if let Some(sandbox) = self.status.sandbox.clone() {
            self.say(Line::raw(format!("sandbox    {sandbox}")));
        }
    }

    /// `/cost`: the session's tokens by kind, and their cost where there is a price.
    pub(super) fn cost_report(&mut self) {
        let usage = self.usage.session + self.usage.turn;
        self.say(Line::raw(format!(
            "this session: {} input tokens ({} from cache), {} output ({} reasoning)",
            usage.total_input(),
            usage.cache_read,
            usage.output,
            usage.reasoning
        )));
        match self.usage.cost {
            Some(cost) => self.say(Line::raw(format!("cost so far: ${cost:.4}"))),
            None => self.note(
                "no price for this model: add [prices.\"<model>\"] to config.toml to see the cost",
            ),
        }
        self.note("`corvid usage` shows tokens and cost per day and model");
    }
}

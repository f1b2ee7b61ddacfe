//! Tokens and cost: counted from the engine's usage events and turn ends, priced by the
//! model's rate, shown by `/status`, `/cost` and the status line.

use corvid_protocol::TokenUsage;
use ratatui::text::Line;

use super::App;

/// A model's price in US dollars per million tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Rate {
    pub input: f64,
    pub cached_input: f64,
    pub cache_write: f64,
    pub output: f64,
}

impl Rate {
    /// What `usage` costs at this rate.
    pub fn cost(&self, usage: &TokenUsage) -> f64 {
        (usage.input as f64 * self.input
            + usage.cache_read as f64 * self.cached_input
            + usage.cache_write as f64 * self.cache_write
            + usage.output as f64 * self.output)
            / 1_000_000.0
    }
}

impl App {
    /// A finished turn's usage joins the session's, priced at the turn's model (or the
    /// session's, when the turn's has no price).
    pub(super) fn add_turn_usage(&mut self, usage: TokenUsage) {
        self.usage.turn = TokenUsage::default();
        self.usage.session += usage;
        self.status.tokens = self.usage.session.total();
        let rate = self
            .settings
            .prices
            .get(&self.turn.model)
            .or_else(|| self.settings.prices.get(&self.status.model));
        if let Some(rate) = rate {
            let cost = self.usage.cost.unwrap_or(0.0) + rate.cost(&usage);
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

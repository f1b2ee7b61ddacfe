//! One request's bookkeeping: where it went, how long it took, what it cost — for the log line
//! and the usage ledger. Prompt text is kept only when `log_prompts` is on.
//!
//! Every exchange gets its row: one dropped before it finished — its handler cancelled when
//! the client went away mid-request, or cut off at shutdown — is recorded as `cancelled`.

use std::time::Instant;

use corvid_store::{Billing, Outcome, PriceMicros, Tokens, UsageRecord, now_ms};
use corvid_wire::model::Usage;

use crate::log_text::Clean;
use crate::state::AppState;
use corvid_wire::Dialect;

#[derive(Debug)]
pub(crate) struct Exchange {
    pub(crate) state: AppState,
    /// The inbound route, e.g. `chat_completions`, `messages`.
    pub(crate) route: &'static str,
    pub(crate) inbound: Dialect,
    pub(crate) provider: String,
    /// The upstream model.
    pub(crate) model: String,
    pub(crate) started: Instant,
    pub(crate) attempts: u32,
    pub(crate) prompt: Option<String>,
    /// Who pays, in team mode (the gate's ticket; its row settles the budget hold).
    pub(crate) ticket: Option<crate::access::Ticket>,
    /// Which pool key and which task rule served it (see `routed`).
    pub(crate) tag: crate::routed::Tag,
}

impl Drop for Exchange {
    fn drop(&mut self) {
        // `finish` and `take` move the provider's name out; one still here was never finished
        // (provider names are never empty).
        if !self.provider.is_empty() {
            self.finish(0, Outcome::Cancelled, None, None);
        }
    }
}

impl Exchange {
    /// This exchange, moved out of a body being dropped: the names go with it and `self`
    /// keeps empty ones.
    pub(crate) fn take(&mut self) -> Exchange {
        Exchange {
            state: self.state.clone(),
            route: self.route,
            inbound: self.inbound,
            provider: std::mem::take(&mut self.provider),
            model: std::mem::take(&mut self.model),
            started: self.started,
            attempts: self.attempts,
            prompt: self.prompt.take(),
            ticket: self.ticket.take(),
            tag: self.tag,
        }
    }

    /// Logs the outcome and records it in the ledger. Called once per exchange: the names
    /// move into the ledger row rather than being copied.
    pub(crate) fn finish(
        &mut self,
        status: u16,
        outcome: Outcome,
        ttfb_ms: Option<u64>,
        usage: Option<Usage>,
    ) {
        self.finish_at(Instant::now(), status, outcome, ttfb_ms, usage);
    }

    /// `finish` for an exchange that ended at `ended`, earlier than now (its bookkeeping ran
    /// later, on the bookkeeping thread).
    pub(crate) fn finish_at(
        &mut self,
        ended: Instant,
        status: u16,
        outcome: Outcome,
        ttfb_ms: Option<u64>,
        usage: Option<Usage>,
    ) {
        let latency_ms = ended.saturating_duration_since(self.started).as_millis() as u64;
        let started_ms_ago = self.started.elapsed().as_millis() as i64;
        let usage = usage.unwrap_or_default();
        tracing::info!(
            route = self.route,
            inbound = self.inbound.as_str(),
            provider = %Clean(&self.provider),
            model = %Clean(&self.model),
            status,
            outcome = outcome.as_str(),
            attempts = self.attempts,
            key = self.tag.key_index,
            rule = self.tag.rule,
            ttfb_ms,
            duration_ms = latency_ms,
            input_tokens = usage.total_input(),
            output_tokens = usage.output,
            "request finished"
        );
        let tokens = Tokens {
            input: usage.input,
            cache_read: usage.cache_read,
            cache_write: usage.cache_write,
            output: usage.output,
            reasoning: usage.reasoning,
        };
        let billing = self.ticket.take().map(|ticket| {
            let price = corvid_store::price_of(&self.state.config().prices, &self.model)
                .map(|price| PriceMicros::from_price(&price))
                .unwrap_or_default();
            Billing {
                request_id: ticket.request_id,
                key_id: Some(ticket.key_id),
                team_id: ticket.team_id,
                price,
                cost_micros: price.cost(&tokens),
            }
        });
        self.state.record(UsageRecord {
            at: now_ms() - started_ms_ago,
            front_end: corvid_store::FRONT_END_GATEWAY.to_owned(),
            route: self.route.to_owned(),
            inbound: self.inbound.as_str().to_owned(),
            provider: std::mem::take(&mut self.provider),
            model: std::mem::take(&mut self.model),
            status,
            outcome,
            latency_ms,
            ttfb_ms,
            tokens,
            attempts: self.attempts,
            prompt: self.prompt.take(),
            billing,
            key_index: self.tag.key_index,
            rule: self.tag.rule.map(str::to_owned),
        });
    }
}

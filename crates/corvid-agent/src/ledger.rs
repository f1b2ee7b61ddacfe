//! The agent's model calls in the usage ledger. Every call — the main agent's steps, a
//! subagent's, the last answer at the step cap — becomes one row of the same ledger the gateway
//! writes, tagged with the front end that made it (`chat`, `exec`, …), so `corvid usage`
//! counts agent turns beside gateway requests.
//!
//! The agent sees canonical events, not HTTP: a call whose reply started is recorded with
//! status 200, one that failed before with 0; `attempts` is what the model client says it
//! sent (its retries before any output), as the gateway's rows count them.

use std::time::Instant;

use corvid_store::{Outcome, ROUTE_AGENT, Tokens, UsageRecord, now_ms};
use corvid_wire::model::{StreamEvent, Usage};

use crate::session::Shared;

/// The `inbound` of an agent row: the agent speaks corvid's canonical model, no API dialect.
const INBOUND_CANONICAL: &str = "canonical";

/// What one model call did, measured as it runs.
pub(crate) struct CallMeter {
    started: Instant,
    at: i64,
    /// The model asked for (an alias, `provider/model`, a bare name).
    requested: String,
    /// Time to the first event of the reply.
    ttfb_ms: Option<u64>,
    /// Whether the reply started (the client answered with a stream).
    replied: bool,
    /// Requests the model client sent for this call.
    attempts: u32,
    /// The target that answered, when the client says (else the requested name is resolved).
    served_by: Option<crate::ModelRoute>,
    usage: Usage,
}

/// How a call ended, as far as the ledger cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CallEnd {
    Answered,
    Failed,
    Cancelled,
}

impl CallMeter {
    pub(crate) fn start(requested: &str) -> Self {
        Self {
            started: Instant::now(),
            at: now_ms(),
            requested: requested.to_owned(),
            ttfb_ms: None,
            replied: false,
            attempts: 1,
            served_by: None,
            usage: Usage::default(),
        }
    }

    /// The reply came from `route` (a route's fallback, say).
    pub(crate) fn served_by(&mut self, route: Option<crate::ModelRoute>) {
        self.served_by = route;
    }

    /// The client answered with a stream after `attempts` requests.
    pub(crate) fn replied(&mut self, attempts: u32) {
        self.replied = true;
        self.attempts = attempts;
    }

    /// The client gave up before a reply after `attempts` requests.
    pub(crate) fn failed(&mut self, attempts: u32) {
        self.attempts = attempts;
    }

    /// One event of the reply.
    pub(crate) fn saw(&mut self, event: &StreamEvent) {
        if self.ttfb_ms.is_none() {
            self.ttfb_ms = Some(elapsed_ms(self.started));
        }
        if let StreamEvent::Usage(usage) = event {
            self.usage = *usage;
        }
    }

    /// The ledger row for this call.
    pub(crate) fn record(
        &self,
        end: CallEnd,
        front_end: &str,
        route: Option<crate::ModelRoute>,
    ) -> UsageRecord {
        let outcome = match end {
            CallEnd::Answered => Outcome::Ok,
            CallEnd::Cancelled => Outcome::Cancelled,
            CallEnd::Failed if self.replied => Outcome::StreamError,
            CallEnd::Failed => Outcome::Error,
        };
        let (provider, model) = match route {
            Some(route) => (route.provider, route.model),
            None => (String::new(), self.requested.clone()),
        };
        let usage = self.usage;
        UsageRecord {
            at: self.at,
            front_end: front_end.to_owned(),
            route: ROUTE_AGENT.to_owned(),
            inbound: INBOUND_CANONICAL.to_owned(),
            provider,
            model,
            status: if self.replied { 200 } else { 0 },
            outcome,
            latency_ms: elapsed_ms(self.started),
            ttfb_ms: self.ttfb_ms,
            tokens: Tokens {
                input: usage.input,
                cache_read: usage.cache_read,
                cache_write: usage.cache_write,
                output: usage.output,
                reasoning: usage.reasoning,
            },
            attempts: self.attempts,
            // The agent never logs prompts in the ledger; conversations hold them.
            prompt: None,
            billing: None,
            key_index: None,
            rule: None,
        }
    }

    /// Writes this call's row (awaited, so a front end that exits after the turn loses none).
    pub(crate) async fn finish(&self, shared: &Shared, end: CallEnd) {
        let route = self
            .served_by
            .clone()
            .or_else(|| shared.model.route(&self.requested));
        let record = self.record(end, &shared.settings.front_end, route);
        if let Err(error) = shared.with_store(move |store| store.record(&record)).await {
            tracing::warn!(%error, "could not record the model call in the usage ledger");
        }
    }
}

fn elapsed_ms(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests;

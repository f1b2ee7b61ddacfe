//! The usage ledger / request log: one row per model request — each gateway request and each
//! model call the agent makes — tagged with the front end that made it, and the queries over it.

use std::time::{SystemTime, UNIX_EPOCH};

use corvid_config::Price;
use rusqlite::{Connection, Row, params};

use crate::{Store, StoreError};

/// Token counts in corvid's canonical split (the same as `corvid_wire::Usage`): `input` excludes
/// cache reads and writes; `output` includes `reasoning`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tokens {
    /// Input tokens neither read from nor written to a cache.
    pub input: u64,
    /// Input tokens read from a cache.
    pub cache_read: u64,
    /// Input tokens written to a cache.
    pub cache_write: u64,
    /// All output tokens, reasoning included.
    pub output: u64,
    /// The reasoning share of `output`.
    pub reasoning: u64,
}

impl Tokens {
    /// Every input token: fresh, cache read and cache written.
    pub fn total_input(&self) -> u64 {
        self.input
            .saturating_add(self.cache_read)
            .saturating_add(self.cache_write)
    }
}

/// What it costs in US dollars: each count times its price per million tokens. Reasoning is
/// part of `output` and is not charged a second time.
pub fn cost(tokens: &Tokens, price: &Price) -> f64 {
    // u64 → f64 is exact below 2^53 tokens, far beyond any real count.
    let dollars = tokens.input as f64 * price.input
        + tokens.cache_read as f64 * price.cached_input
        + tokens.cache_write as f64 * price.cache_write
        + tokens.output as f64 * price.output;
    dollars / 1e6
}

/// The cost of `tokens` of `model`, by the one price lookup the ledger uses: `prices` (the
/// configured `[prices]`) keyed by the model a ledger row names (the upstream name, after
/// aliases), then the catalog shipped with corvid; `None` when neither prices it.
pub fn priced(
    prices: &std::collections::BTreeMap<String, Price>,
    model: &str,
    tokens: &Tokens,
) -> Option<f64> {
    price_of(prices, model).map(|price| cost(tokens, &price))
}

/// The price `priced` charges for `model`: `prices` first, then the catalog.
pub fn price_of(prices: &std::collections::BTreeMap<String, Price>, model: &str) -> Option<Price> {
    prices
        .get(model)
        .copied()
        .or_else(|| corvid_config::catalog().price(model))
}

/// How a request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Answered in full.
    Ok,
    /// Failed before a response started (an error status went to the client).
    Error,
    /// Failed after the response started (an in-stream error event went to the client).
    StreamError,
    /// The client went away before the answer was complete.
    Cancelled,
}

impl Outcome {
    /// The name stored in the `outcome` column.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Error => "error",
            Self::StreamError => "stream_error",
            Self::Cancelled => "cancelled",
        }
    }
}

/// The front end of every gateway request.
pub const FRONT_END_GATEWAY: &str = "gateway";

/// The `route` of an agent's model call (the gateway's rows name their endpoint instead).
pub const ROUTE_AGENT: &str = "agent";

/// One model request, as written to the ledger: a gateway request, or one model call of the
/// agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageRecord {
    /// When the request arrived, in Unix milliseconds (see [`now_ms`]).
    pub at: i64,
    /// Who made it: [`FRONT_END_GATEWAY`] for the HTTP APIs; `chat`, `exec`, `web`, `acp` for
    /// the agent's front ends.
    pub front_end: String,
    /// The inbound endpoint: `chat_completions`, `responses`, `messages`, `completions`, ...;
    /// [`ROUTE_AGENT`] for the agent's calls.
    pub route: String,
    /// The caller's dialect: `openai-chat`, `openai-responses`, `anthropic`, `gemini`, `fim`;
    /// `canonical` for the agent, which speaks corvid's own model.
    pub inbound: String,
    /// The provider that answered, e.g. `xai`.
    pub provider: String,
    /// The upstream model name (after aliases), which is what prices are keyed by.
    pub model: String,
    /// The upstream HTTP status, or 0 when none was received.
    pub status: u16,
    pub outcome: Outcome,
    /// From arrival to the last byte sent.
    pub latency_ms: u64,
    /// From arrival to the first byte sent, when one was sent.
    pub ttfb_ms: Option<u64>,
    pub tokens: Tokens,
    /// Upstream attempts made (1 when the first try answered).
    pub attempts: u32,
    /// The prompt text, only when the caller chose to log it (`log_prompts`); the store never
    /// fills this by itself.
    pub prompt: Option<String>,
    /// Which of the provider's pool keys sent it (by index, never the key), when it has a
    /// pool.
    pub key_index: Option<u32>,
    /// The routing rule that chose the target (`background`, `think`, …), if one did.
    pub rule: Option<String>,
    /// The request's id, client key, price and cost, when the gateway billed it (team mode).
    pub billing: Option<Billing>,
}

/// Who pays for a request and what it cost: written with its ledger row, and the row's write
/// settles the request's budget hold (once per `request_id`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Billing {
    /// Unique per request; the ledger keeps one row per id.
    pub request_id: String,
    pub key_id: Option<i64>,
    pub team_id: Option<i64>,
    /// The price when the request was made.
    pub price: crate::PriceMicros,
    /// `price.cost(tokens)`, in µ$.
    pub cost_micros: i64,
}

/// The current time in Unix milliseconds, for [`UsageRecord::at`].
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX)
        })
}

/// Usage of one model from one front end on one UTC day.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageRow {
    /// `YYYY-MM-DD`, UTC.
    pub day: String,
    /// The upstream model name.
    pub model: String,
    /// The provider that served it (one model name served by two providers is two rows).
    pub provider: String,
    /// The front end that made the requests (see [`UsageRecord::front_end`]).
    pub front_end: String,
    pub requests: u64,
    /// Requests whose outcome was `error` or `stream_error` (cancellations are not errors).
    pub errors: u64,
    pub tokens: Tokens,
}

/// Usage summed over every day and model.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UsageTotals {
    pub requests: u64,
    /// Requests whose outcome was `error` or `stream_error`.
    pub errors: u64,
    pub tokens: Tokens,
}

const INSERT: &str = "INSERT OR IGNORE INTO requests (at, route, inbound, provider, model, status,
        outcome, latency_ms, ttfb_ms, input, cache_read, cache_write, output, reasoning, attempts,
        prompt, front_end, key_index, rule, request_id, key_id, team_id, cost_micros, price_input,
        price_cached_input, price_cache_write, price_output)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19,
        ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27)";

/// The aggregate columns shared by both queries, in the order `read_aggregate` expects.
const AGGREGATES: &str = "COUNT(*),
    COALESCE(SUM(outcome IN ('error', 'stream_error')), 0),
    COALESCE(SUM(input), 0), COALESCE(SUM(cache_read), 0), COALESCE(SUM(cache_write), 0),
    COALESCE(SUM(output), 0), COALESCE(SUM(reasoning), 0)";

impl Store {
    /// Writes one record. The gateway should use a [`crate::UsageRecorder`] instead, which
    /// batches writes on a background thread.
    pub fn record(&mut self, record: &UsageRecord) -> Result<(), StoreError> {
        self.record_all(std::slice::from_ref(record))
    }

    /// Writes several records in one transaction (one fsync in WAL mode instead of one each).
    pub fn record_all(&mut self, records: &[UsageRecord]) -> Result<(), StoreError> {
        self.record_batch(records, Pace::Eager)
    }

    /// [`Store::record_all`], for a background thread: `Pace::Yielding` offers the CPU to
    /// any thread that is ready between rows (see [`Pace`]).
    pub(crate) fn record_batch(
        &mut self,
        records: &[UsageRecord],
        pace: Pace,
    ) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        insert(&tx, records, pace)?;
        pace.between_steps();
        tx.commit()?;
        Ok(())
    }

    /// Usage grouped by UTC day, model, provider and front end, in that order; only
    /// requests at or after `since_ms` (Unix milliseconds) when given.
    pub fn usage_by_day_and_model(
        &self,
        since_ms: Option<i64>,
    ) -> Result<Vec<UsageRow>, StoreError> {
        let sql = format!(
            "SELECT strftime('%Y-%m-%d', at / 1000, 'unixepoch') AS day, model, front_end,
                    provider, {AGGREGATES}
             FROM requests WHERE ?1 IS NULL OR at >= ?1
             GROUP BY day, model, provider, front_end ORDER BY day, model, provider, front_end"
        );
        let mut statement = self.conn.prepare(&sql)?;
        let rows = statement.query_map([since_ms], |row| {
            let (requests, errors, tokens) = read_aggregate(row, 4)?;
            Ok(UsageRow {
                day: row.get(0)?,
                model: row.get(1)?,
                provider: row.get(3)?,
                front_end: row.get(2)?,
                requests,
                errors,
                tokens,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Usage summed over everything at or after `since_ms` (all of it when `None`).
    pub fn totals(&self, since_ms: Option<i64>) -> Result<UsageTotals, StoreError> {
        let sql = format!("SELECT {AGGREGATES} FROM requests WHERE ?1 IS NULL OR at >= ?1");
        let totals = self.conn.query_row(&sql, [since_ms], |row| {
            let (requests, errors, tokens) = read_aggregate(row, 0)?;
            Ok(UsageTotals {
                requests,
                errors,
                tokens,
            })
        })?;
        Ok(totals)
    }
}

/// How a batch of writes shares the CPU.
///
/// The usage writer commits every few milliseconds a batch of the rows that requests left
/// behind, some 200 µs of work for 50 rows. Run in one go, that burst delays whichever request
/// arrives meanwhile when the writer and the serving thread share a CPU (a small machine, a
/// container with one CPU, a busy laptop): the scheduler lets a running thread finish its time
/// slice before a woken one runs, whatever their niceness. That was corvid's p99 at
/// concurrency 1: every ~11 ms one request took ~300 µs longer (`crates/corvid-bench`, issue
/// 25). Offering the CPU between rows bounds such a delay to one row's insert; when nothing
/// else is ready, `sched_yield` returns at once. A writer that has fallen behind writes eagerly
/// (see the recorder).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pace {
    /// One go: a caller waiting for the result (a command, a test).
    Eager,
    /// Yield between rows: the background writer.
    Yielding,
}

impl Pace {
    fn between_steps(self) {
        if self == Pace::Yielding {
            std::thread::yield_now();
        }
    }
}

/// Inserts `records` with one prepared statement; the caller owns the transaction. The
/// statement comes from the connection's cache: the recorder commits small batches often (at
/// most 10 ms apart), and compiling the INSERT again for each cost more than the row itself.
pub(crate) fn insert(
    conn: &Connection,
    records: &[UsageRecord],
    pace: Pace,
) -> Result<(), StoreError> {
    let mut statement = conn.prepare_cached(INSERT)?;
    for record in records {
        pace.between_steps();
        let billing = record.billing.as_ref();
        let price = billing.map(|billing| billing.price);
        let inserted = statement.execute(params![
            record.at,
            record.route,
            record.inbound,
            record.provider,
            record.model,
            record.status,
            record.outcome.as_str(),
            to_sql_int(record.latency_ms),
            record.ttfb_ms.map(to_sql_int),
            to_sql_int(record.tokens.input),
            to_sql_int(record.tokens.cache_read),
            to_sql_int(record.tokens.cache_write),
            to_sql_int(record.tokens.output),
            to_sql_int(record.tokens.reasoning),
            record.attempts,
            record.prompt,
            record.front_end,
            record.key_index,
            record.rule,
            billing.map(|billing| &billing.request_id),
            billing.and_then(|billing| billing.key_id),
            billing.and_then(|billing| billing.team_id),
            billing.map(|billing| billing.cost_micros),
            price.map(|price| price.input),
            price.map(|price| price.cached_input),
            price.map(|price| price.cache_write),
            price.map(|price| price.output),
        ])?;
        // A request id already written (a retried batch) settles nothing a second time.
        if inserted == 1
            && let Some(billing) = billing
        {
            // A failed attempt keeps the hold for a routing fallback's next one (the gate
            // releases it when the request answers an error).
            crate::team::settle_sqlite(
                conn,
                &billing.request_id,
                billing.cost_micros,
                billing.key_id,
                record.outcome != crate::Outcome::Error,
            )?;
        }
    }
    Ok(())
}

/// SQLite integers are signed 64-bit; counts beyond that are clamped.
fn to_sql_int(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

fn from_sql_int(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

/// Reads `requests, errors, input, cache_read, cache_write, output, reasoning` from `first` on.
fn read_aggregate(row: &Row<'_>, first: usize) -> rusqlite::Result<(u64, u64, Tokens)> {
    let column = |offset: usize| row.get::<_, i64>(first + offset).map(from_sql_int);
    Ok((
        column(0)?,
        column(1)?,
        Tokens {
            input: column(2)?,
            cache_read: column(3)?,
            cache_write: column(4)?,
            output: column(5)?,
            reasoning: column(6)?,
        },
    ))
}

#[cfg(test)]
pub(crate) mod tests;

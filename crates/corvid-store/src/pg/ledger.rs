//! The ledger on PostgreSQL: one transaction per batch inserts the rows (a request id already
//! written is skipped, so a retried batch counts nothing twice), charges the rows it inserted
//! to their key's and team's budgets and releases their requests' holds, and adds them to the
//! daily rollup by day, key, team and model.

use std::time::{Duration, Instant};

use tokio::runtime::Handle;

use super::{PgStore, RedisCounter};
use crate::{Outcome, StoreError, UsageRecord};

/// How often the writer makes sure the coming days have their partitions.
const PARTITION_CHECK: Duration = Duration::from_secs(3600);

/// The recorder's PostgreSQL sink: runs each batch on `handle`'s runtime from the writer thread.
#[derive(Debug)]
pub struct PgLedger {
    store: PgStore,
    handle: Handle,
    partitions_checked: Option<Instant>,
    /// Settled after PostgreSQL, when Redis counts holds.
    redis: Option<RedisCounter>,
}

impl PgLedger {
    /// A sink writing through `store` on the runtime of `handle` (the writer thread itself is
    /// not a runtime thread).
    pub fn new(store: PgStore, handle: Handle) -> Self {
        Self {
            store,
            handle,
            partitions_checked: None,
            redis: None,
        }
    }

    /// The same sink, settling each batch's holds in Redis too once PostgreSQL has.
    pub fn with_redis(self, redis: Option<RedisCounter>) -> Self {
        Self { redis, ..self }
    }

    /// Writes `records` in one transaction.
    pub(crate) fn write(&mut self, records: &[UsageRecord]) -> Result<(), StoreError> {
        if self
            .partitions_checked
            .is_none_or(|at| at.elapsed() >= PARTITION_CHECK)
        {
            let store = self.store.clone();
            let ensured = self.handle.block_on(async move {
                let client = store.client().await?;
                client
                    .execute("SELECT corvid_ensure_partitions(8)", &[])
                    .await?;
                Ok::<_, StoreError>(())
            });
            match ensured {
                Ok(()) => self.partitions_checked = Some(Instant::now()),
                // Rows still land, in the default partition.
                Err(error) => {
                    tracing::warn!(%error, "could not create the coming days' ledger partitions")
                }
            }
        }
        let store = self.store.clone();
        let columns = Columns::of(records);
        let redis = self.redis.clone();
        self.handle.block_on(async move {
            let settled = write_batch(&store, &columns).await?;
            if let Some(redis) = redis
                && let Err(error) = redis.settle(&settled).await
            {
                // Its budget entries expire and are seeded from PostgreSQL again.
                tracing::debug!(%error, "cannot settle holds in Redis");
            }
            Ok(())
        })
    }
}

/// The batch as one array per column, for `unnest`.
struct Columns {
    at: Vec<i64>,
    request_id: Vec<String>,
    key_id: Vec<Option<i64>>,
    team_id: Vec<Option<i64>>,
    front_end: Vec<String>,
    route: Vec<String>,
    inbound: Vec<String>,
    provider: Vec<String>,
    model: Vec<String>,
    status: Vec<i32>,
    outcome: Vec<String>,
    latency_ms: Vec<i64>,
    ttfb_ms: Vec<Option<i64>>,
    tokens: [Vec<i64>; 5],
    attempts: Vec<i32>,
    cost_micros: Vec<i64>,
    prices: [Vec<Option<i64>>; 4],
    prompt: Vec<Option<String>>,
}

fn int(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

impl Columns {
    fn of(records: &[UsageRecord]) -> Self {
        let mut columns = Columns {
            at: Vec::new(),
            request_id: Vec::new(),
            key_id: Vec::new(),
            team_id: Vec::new(),
            front_end: Vec::new(),
            route: Vec::new(),
            inbound: Vec::new(),
            provider: Vec::new(),
            model: Vec::new(),
            status: Vec::new(),
            outcome: Vec::new(),
            latency_ms: Vec::new(),
            ttfb_ms: Vec::new(),
            tokens: Default::default(),
            attempts: Vec::new(),
            cost_micros: Vec::new(),
            prices: Default::default(),
            prompt: Vec::new(),
        };
        for record in records {
            let billing = record.billing.as_ref();
            columns.at.push(record.at);
            columns
                .request_id
                .push(billing.map_or_else(crate::team::new_request_id, |b| b.request_id.clone()));
            columns.key_id.push(billing.and_then(|b| b.key_id));
            columns.team_id.push(billing.and_then(|b| b.team_id));
            columns.front_end.push(record.front_end.clone());
            columns.route.push(record.route.clone());
            columns.inbound.push(record.inbound.clone());
            columns.provider.push(record.provider.clone());
            columns.model.push(record.model.clone());
            columns.status.push(i32::from(record.status));
            columns.outcome.push(record.outcome.as_str().to_owned());
            columns.latency_ms.push(int(record.latency_ms));
            columns.ttfb_ms.push(record.ttfb_ms.map(int));
            let tokens = &record.tokens;
            for (column, value) in columns.tokens.iter_mut().zip([
                tokens.input,
                tokens.cache_read,
                tokens.cache_write,
                tokens.output,
                tokens.reasoning,
            ]) {
                column.push(int(value));
            }
            columns
                .attempts
                .push(i32::try_from(record.attempts).unwrap_or(i32::MAX));
            columns
                .cost_micros
                .push(billing.map_or(0, |billing| billing.cost_micros));
            let price = billing.map(|billing| billing.price);
            for (column, value) in columns.prices.iter_mut().zip([
                price.map(|p| p.input),
                price.map(|p| p.cached_input),
                price.map(|p| p.cache_write),
                price.map(|p| p.output),
            ]) {
                column.push(value);
            }
            columns.prompt.push(record.prompt.clone());
        }
        columns
    }
}

const INSERT: &str = "INSERT INTO usage_events (at, request_id, key_id, team_id, front_end, route,
        inbound, provider, model, status, outcome, latency_ms, ttfb_ms, input, cache_read,
        cache_write, output, reasoning, attempts, cost_micros, price_input, price_cached_input,
        price_cache_write, price_output, prompt)
    SELECT to_timestamp(at / 1000.0), request_id, key_id, team_id, front_end, route, inbound,
        provider, model, status, outcome, latency_ms, ttfb_ms, input, cache_read, cache_write,
        output, reasoning, attempts, cost_micros, price_input, price_cached_input,
        price_cache_write, price_output, prompt
    FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::bigint[], $5::text[], $6::text[],
        $7::text[], $8::text[], $9::text[], $10::int[], $11::text[], $12::bigint[],
        $13::bigint[], $14::bigint[], $15::bigint[], $16::bigint[], $17::bigint[],
        $18::bigint[], $19::int[], $20::bigint[], $21::bigint[], $22::bigint[], $23::bigint[],
        $24::bigint[], $25::text[])
        AS r (at, request_id, key_id, team_id, front_end, route, inbound, provider, model,
              status, outcome, latency_ms, ttfb_ms, input, cache_read, cache_write, output,
              reasoning, attempts, cost_micros, price_input, price_cached_input,
              price_cache_write, price_output, prompt)
    ON CONFLICT DO NOTHING
    RETURNING request_id, key_id, team_id, model, cost_micros,
        to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD'),
        outcome, input + cache_read + cache_write, output";

/// The rollup of the inserted rows, in primary-key order (two writers never deadlock on it).
const ROLLUP: &str = "INSERT INTO usage_daily AS d (day, key_id, team_id, model, requests, errors,
        input, output, cost_micros)
    SELECT day::date, COALESCE(key_id, 0), COALESCE(team_id, 0), model, count(*),
        count(*) FILTER (WHERE outcome IN ('error', 'stream_error')), sum(input), sum(output),
        sum(cost)
    FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::text[], $5::text[], $6::bigint[],
        $7::bigint[], $8::bigint[]) AS r (day, key_id, team_id, model, outcome, input, output, cost)
    GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
    ON CONFLICT (day, key_id, team_id, model) DO UPDATE SET
        requests = d.requests + excluded.requests, errors = d.errors + excluded.errors,
        input = d.input + excluded.input, output = d.output + excluded.output,
        cost_micros = d.cost_micros + excluded.cost_micros";

/// Writes one batch; returns the inserted rows' request ids and costs (those with a key).
/// Whether an inserted row ends its request's hold: a failed attempt (outcome `error`) may be
/// followed by a routing fallback's next one, which the hold still covers; when none follows,
/// the gate releases the hold on the error answer.
fn releases_hold(row: &tokio_postgres::Row) -> bool {
    row.get::<_, &str>(6) != Outcome::Error.as_str()
}

async fn write_batch(store: &PgStore, c: &Columns) -> Result<Vec<(String, i64)>, StoreError> {
    let mut client = store.client().await?;
    let tx = client.transaction().await?;
    let inserted = tx
        .query(
            INSERT,
            &[
                &c.at,
                &c.request_id,
                &c.key_id,
                &c.team_id,
                &c.front_end,
                &c.route,
                &c.inbound,
                &c.provider,
                &c.model,
                &c.status,
                &c.outcome,
                &c.latency_ms,
                &c.ttfb_ms,
                &c.tokens[0],
                &c.tokens[1],
                &c.tokens[2],
                &c.tokens[3],
                &c.tokens[4],
                &c.attempts,
                &c.cost_micros,
                &c.prices[0],
                &c.prices[1],
                &c.prices[2],
                &c.prices[3],
                &c.prompt,
            ],
        )
        .await?;
    if !inserted.is_empty() {
        let ids: Vec<String> = inserted.iter().map(|row| row.get(0)).collect();
        let costs: Vec<i64> = inserted.iter().map(|row| row.get(4)).collect();
        let keys: Vec<Option<i64>> = inserted.iter().map(|row| row.get(1)).collect();
        let releases: Vec<bool> = inserted.iter().map(releases_hold).collect();
        tx.execute(
            "SELECT corvid_settle($1, $2, $3, $4)",
            &[&ids, &costs, &keys, &releases],
        )
        .await?;
        tx.execute(
            ROLLUP,
            &[
                &inserted
                    .iter()
                    .map(|row| row.get::<_, String>(5))
                    .collect::<Vec<_>>(),
                &inserted
                    .iter()
                    .map(|row| row.get::<_, Option<i64>>(1))
                    .collect::<Vec<_>>(),
                &inserted
                    .iter()
                    .map(|row| row.get::<_, Option<i64>>(2))
                    .collect::<Vec<_>>(),
                &inserted
                    .iter()
                    .map(|row| row.get::<_, String>(3))
                    .collect::<Vec<_>>(),
                &inserted
                    .iter()
                    .map(|row| row.get::<_, String>(6))
                    .collect::<Vec<_>>(),
                &inserted
                    .iter()
                    .map(|row| row.get::<_, i64>(7))
                    .collect::<Vec<_>>(),
                &inserted
                    .iter()
                    .map(|row| row.get::<_, i64>(8))
                    .collect::<Vec<_>>(),
                &costs,
            ],
        )
        .await?;
    }
    tx.commit().await?;
    Ok(inserted
        .iter()
        .filter(|row| row.get::<_, Option<i64>>(1).is_some() && releases_hold(row))
        .map(|row| (row.get(0), row.get(4)))
        .collect())
}

//! Redis as a shared counter in front of PostgreSQL (`[store] redis_url`).
//!
//! A hold is decided by one Lua script covering every budget of the key (its own, its team's)
//! and its rate window, atomically: a refusal or a rate limit costs PostgreSQL nothing. An
//! admitted hold is then written to PostgreSQL by the same conditional function as without
//! Redis (budgets only; the rate window lives in Redis), so PostgreSQL stays the record and the
//! last word: were Redis ever behind, PostgreSQL refuses, and the Redis hold is undone — its
//! budgets and its slot in the rate window, since a request PostgreSQL refused (a budget, the
//! daily quota) is never made and must not count against the key's requests per minute.
//!
//! - A budget Redis does not know (first use, a flush, a restart, its entry expired) is seeded
//!   from PostgreSQL — the window's spend plus the open holds — before anything is admitted.
//!   Entries expire after [`RESEED_AFTER`], so a settlement Redis missed is forgotten soon.
//! - The ledger settles in PostgreSQL, then in Redis (`settle`); a release does the same.
//! - When Redis does not answer within [`REDIS_TIMEOUT`], holds go through PostgreSQL alone
//!   (rate limits included) and Redis is left alone for [`REDIS_BACKOFF`]: never fail-open,
//!   and a budgeted request fails closed only when PostgreSQL cannot answer either.
//!
//! Every key shares the hash tag `{corvid:<database>}`, so the scripts stay within one Cluster
//! slot and one Redis can serve several databases.

use std::sync::Arc;

use parking_lot::Mutex;
use std::time::{Duration, Instant};

use redis::aio::ConnectionManager;
use redis::{Script, Value};

use super::PgStore;
use crate::StoreError;
use crate::team::{
    BudgetState, ClientKey, Hold, KeyInfo, KeySpec, Refusal, TeamInfo, TeamSpec, TeamStore,
    UsageBy, UsageGroup,
};

/// How long a Redis call may take before PostgreSQL answers instead.
const REDIS_TIMEOUT: Duration = Duration::from_millis(250);
/// After Redis failed, how long holds skip it.
const REDIS_BACKOFF: Duration = Duration::from_secs(1);
/// How long a seeded budget entry lives before it is seeded from PostgreSQL again.
const RESEED_AFTER: Duration = Duration::from_secs(10);

/// Why a Redis step did not answer.
#[derive(Debug, thiserror::Error)]
pub enum RedisError {
    #[error("Redis error: {0}")]
    Redis(#[from] redis::RedisError),
    #[error("Redis did not answer within {0:?}")]
    Timeout(Duration),
    #[error("Redis is skipped for a moment after failing")]
    Backoff,
    #[error("unexpected answer from Redis: {0}")]
    Answer(String),
}

/// The connection and scripts; cheap to clone.
#[derive(Clone)]
pub struct RedisCounter {
    connection: ConnectionManager,
    /// `{corvid:<database>}:`, before every key.
    prefix: Arc<str>,
    failed_at: Arc<Mutex<Option<Instant>>>,
    reserve: Arc<Script>,
    seed: Arc<Script>,
    settle: Arc<Script>,
    undo: Arc<Script>,
}

impl std::fmt::Debug for RedisCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The URL may hold a password: nothing of it.
        f.write_str("RedisCounter")
    }
}

/// What the reserve script decided.
enum Decision {
    Held,
    Refused(Refusal),
    /// The budget at this index must be seeded first.
    Miss(usize),
}

impl RedisCounter {
    /// A counter on `url` (`redis://[:password@]host:port[/db]`) for the PostgreSQL database
    /// `database`. Connects lazily, so corvid starts while Redis is down; must be called within
    /// a Tokio runtime.
    pub fn connect(url: &str, database: &str) -> Result<Self, StoreError> {
        let client = redis::Client::open(url)
            .map_err(|error| StoreError::Config(format!("the Redis URL is invalid: {error}")))?;
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(Some(REDIS_TIMEOUT))
            .set_response_timeout(Some(REDIS_TIMEOUT))
            .set_number_of_retries(1)
            .set_max_delay(REDIS_BACKOFF);
        let connection = ConnectionManager::new_lazy_with_config(client, config)
            .map_err(|error| StoreError::Config(format!("cannot set up Redis: {error}")))?;
        Ok(Self {
            connection,
            prefix: format!("{{corvid:{database}}}:").into(),
            failed_at: Arc::default(),
            reserve: Arc::new(Script::new(include_str!("counter/reserve.lua"))),
            seed: Arc::new(Script::new(include_str!("counter/seed.lua"))),
            settle: Arc::new(Script::new(include_str!("counter/settle.lua"))),
            undo: Arc::new(Script::new(include_str!("counter/undo.lua"))),
        })
    }

    fn budget_key(&self, id: i64) -> String {
        format!("{}b:{id}", self.prefix)
    }

    fn hold_key(&self, request_id: &str) -> String {
        format!("{}h:{request_id}", self.prefix)
    }

    /// Runs `step` unless Redis failed within [`REDIS_BACKOFF`]; a failure starts the backoff.
    async fn guarded<T, F>(&self, step: F) -> Result<T, RedisError>
    where
        F: Future<Output = Result<T, redis::RedisError>>,
    {
        let failed = *self.failed_at.lock();
        if failed.is_some_and(|at| at.elapsed() < REDIS_BACKOFF) {
            return Err(RedisError::Backoff);
        }
        let result = match tokio::time::timeout(REDIS_TIMEOUT, step).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(error)) => Err(RedisError::Redis(error)),
            Err(_) => Err(RedisError::Timeout(REDIS_TIMEOUT)),
        };
        if result.is_err() {
            *self.failed_at.lock() = Some(Instant::now());
        }
        result
    }

    /// Takes `hold` in Redis, seeding unknown budgets from `pg` first.
    async fn reserve(&self, pg: &PgStore, hold: &Hold) -> Result<Option<Refusal>, HoldError> {
        // Each seed makes one more budget known; a budget whose window ends between the seed
        // and the reserve is seeded again.
        for _ in 0..=hold.budget_ids.len() + 1 {
            match self.decide(hold).await? {
                Decision::Held => return Ok(None),
                Decision::Refused(refusal) => return Ok(Some(refusal)),
                Decision::Miss(index) => {
                    let id = hold.budget_ids.get(index).copied().unwrap_or_default();
                    let budget = pg
                        .budgets_by_id(&[id])
                        .await
                        .map_err(HoldError::Postgres)?
                        .into_iter()
                        .next()
                        .ok_or_else(|| {
                            HoldError::Redis(RedisError::Answer(format!("no budget {id}")))
                        })?;
                    self.seed_budget(&budget).await?;
                }
            }
        }
        Err(HoldError::Redis(RedisError::Answer(
            "budgets kept missing".to_owned(),
        )))
    }

    async fn decide(&self, hold: &Hold) -> Result<Decision, RedisError> {
        let mut invocation = self.reserve.prepare_invoke();
        for id in &hold.budget_ids {
            invocation.key(self.budget_key(*id));
        }
        invocation
            .key(format!("{}r:{}", self.prefix, hold.key_id))
            .key(self.hold_key(&hold.request_id))
            .arg(hold.budget_ids.len())
            .arg(hold.amount_micros)
            .arg(hold.tokens)
            .arg(hold.rpm.map_or(-1, i64::from))
            .arg(
                hold.tpm
                    .map_or(-1, |tpm| i64::try_from(tpm).unwrap_or(i64::MAX)),
            )
            .arg(u64::try_from(hold.lease.as_millis()).unwrap_or(u64::MAX))
            .arg(hold_record(hold));
        let mut connection = self.connection.clone();
        let answer: Vec<Value> = self
            .guarded(invocation.invoke_async(&mut connection))
            .await?;
        let text = |index: usize| -> String {
            match answer.get(index) {
                Some(Value::BulkString(bytes)) => String::from_utf8_lossy(bytes).into_owned(),
                Some(Value::SimpleString(text)) => text.clone(),
                Some(Value::Int(number)) => number.to_string(),
                _ => String::new(),
            }
        };
        let number = |index: usize| text(index).parse::<i64>().unwrap_or_default();
        let unsigned = |index: usize| u64::try_from(number(index)).unwrap_or_default();
        Ok(match text(0).as_str() {
            "ok" => Decision::Held,
            "miss" => Decision::Miss(usize::try_from(number(1) - 1).unwrap_or_default()),
            "budget" => Decision::Refused(Refusal::Budget {
                scope: text(4),
                cap_micros: number(2),
                resets_at_ms: number(3),
            }),
            "rpm" => Decision::Refused(Refusal::Rpm {
                limit: unsigned(1),
                retry_after_s: unsigned(2),
            }),
            "tpm" => Decision::Refused(Refusal::Tpm {
                limit: unsigned(1),
                retry_after_s: unsigned(2),
            }),
            other => return Err(RedisError::Answer(other.to_owned())),
        })
    }

    async fn seed_budget(&self, budget: &BudgetState) -> Result<(), RedisError> {
        let mut invocation = self.seed.prepare_invoke();
        invocation
            .key(self.budget_key(budget.id))
            .arg(budget.cap_micros)
            .arg(budget.spent_micros + budget.reserved_micros)
            .arg(budget.resets_at_ms)
            .arg(&budget.scope)
            .arg(u64::try_from(RESEED_AFTER.as_millis()).unwrap_or(u64::MAX));
        let mut connection = self.connection.clone();
        let _: i64 = self
            .guarded(invocation.invoke_async(&mut connection))
            .await?;
        Ok(())
    }

    /// Settles the holds of `requests` (`(request id, cost in µ$)`; a routing fallback's
    /// `<id>.<n>` settles `<id>`'s hold) after PostgreSQL did.
    pub async fn settle(&self, requests: &[(String, i64)]) -> Result<(), RedisError> {
        if requests.is_empty() {
            return Ok(());
        }
        let mut invocation = self.settle.prepare_invoke();
        invocation.arg(format!("{}b:", self.prefix));
        for (request_id, cost) in requests {
            let hold = request_id.split('.').next().unwrap_or(request_id);
            invocation.key(self.hold_key(hold)).arg(*cost);
        }
        let mut connection = self.connection.clone();
        let _: i64 = self
            .guarded(invocation.invoke_async(&mut connection))
            .await?;
        Ok(())
    }

    /// Undoes the hold of `request_id` that PostgreSQL did not record: its amount leaves its
    /// budgets and its request and tokens leave the key's rate window (the request is never
    /// made, so it must not count against the key's requests per minute).
    async fn undo(&self, request_id: &str) -> Result<(), RedisError> {
        let mut invocation = self.undo.prepare_invoke();
        invocation
            .key(self.hold_key(request_id))
            .arg(format!("{}b:", self.prefix));
        let mut connection = self.connection.clone();
        let _: i64 = self
            .guarded(invocation.invoke_async(&mut connection))
            .await?;
        Ok(())
    }

    /// Extends the records of running requests' holds to `lease` from now.
    async fn renew(&self, request_ids: &[String], lease: Duration) -> Result<(), RedisError> {
        if request_ids.is_empty() {
            return Ok(());
        }
        let lease_ms = u64::try_from(lease.as_millis()).unwrap_or(u64::MAX);
        let mut pipeline = redis::pipe();
        for request_id in request_ids {
            pipeline
                .cmd("PEXPIRE")
                .arg(self.hold_key(request_id))
                .arg(lease_ms)
                .ignore();
        }
        let mut connection = self.connection.clone();
        self.guarded(pipeline.query_async::<()>(&mut connection))
            .await
    }

    /// Forgets the budgets of `hold` (PostgreSQL disagreed with Redis): the next hold seeds
    /// them again.
    async fn forget(&self, hold: &Hold) -> Result<(), RedisError> {
        let keys: Vec<String> = hold
            .budget_ids
            .iter()
            .map(|id| self.budget_key(*id))
            .collect();
        if keys.is_empty() {
            return Ok(());
        }
        let mut connection = self.connection.clone();
        let _: i64 = self
            .guarded(redis::cmd("DEL").arg(keys).query_async(&mut connection))
            .await?;
        Ok(())
    }
}

/// What Redis keeps of a hold until it is settled or undone: `amount|budget,budget` (the
/// script appends the rate window it took); nothing when PostgreSQL records nothing of the hold
/// (no budget, no daily quota), as then there is nothing to settle or undo.
fn hold_record(hold: &Hold) -> String {
    if !recorded_in_postgres(hold) {
        return String::new();
    }
    let ids: Vec<String> = hold.budget_ids.iter().map(i64::to_string).collect();
    format!("{}|{}", hold.amount_micros.max(0), ids.join(","))
}

/// Whether PostgreSQL keeps anything of `hold` once Redis admitted it: its budgets and the
/// daily request quota are PostgreSQL's, the rate window is Redis' alone.
fn recorded_in_postgres(hold: &Hold) -> bool {
    !hold.budget_ids.is_empty() || hold.daily_requests.is_some()
}

/// Why Redis could not decide a hold: Redis itself (PostgreSQL decides instead), or
/// PostgreSQL while seeding (then neither can).
enum HoldError {
    Redis(RedisError),
    Postgres(StoreError),
}

impl From<RedisError> for HoldError {
    fn from(error: RedisError) -> Self {
        Self::Redis(error)
    }
}

/// [`PgStore`] with holds decided in Redis first; everything else is PostgreSQL's.
#[derive(Debug, Clone)]
pub struct RedisFront {
    pg: PgStore,
    redis: RedisCounter,
}

impl RedisFront {
    pub fn new(pg: PgStore, redis: RedisCounter) -> Self {
        Self { pg, redis }
    }

    /// Writes a hold Redis admitted to PostgreSQL (budgets and the daily request quota: the
    /// rate window is Redis'), undoing it in Redis when PostgreSQL refuses or fails.
    async fn record(&self, hold: &Hold) -> Result<Option<Refusal>, StoreError> {
        if !recorded_in_postgres(hold) {
            return Ok(None);
        }
        let budgets_only = Hold {
            rpm: None,
            tpm: None,
            ..hold.clone()
        };
        let recorded = self.pg.hold(&budgets_only).await;
        if !matches!(recorded, Ok(None)) {
            if let Err(error) = self.redis.undo(&hold.request_id).await {
                tracing::debug!(%error, "cannot undo a Redis hold");
            }
            // Only a budget PostgreSQL refused means Redis' copy of it was behind.
            if matches!(recorded, Ok(Some(Refusal::Budget { .. })))
                && let Err(error) = self.redis.forget(hold).await
            {
                tracing::debug!(%error, "cannot reset Redis budgets");
            }
        }
        recorded
    }
}

#[async_trait::async_trait]
impl TeamStore for RedisFront {
    async fn create_team(&self, spec: &TeamSpec) -> Result<TeamInfo, StoreError> {
        self.pg.create_team(spec).await
    }
    async fn list_teams(&self) -> Result<Vec<TeamInfo>, StoreError> {
        self.pg.list_teams().await
    }
    async fn create_key(&self, spec: &KeySpec) -> Result<(KeyInfo, ClientKey), StoreError> {
        self.pg.create_key(spec).await
    }
    async fn list_keys(&self) -> Result<Vec<KeyInfo>, StoreError> {
        self.pg.list_keys().await
    }
    async fn revoke_key(&self, name: &str) -> Result<bool, StoreError> {
        self.pg.revoke_key(name).await
    }
    async fn key_by_public_id(
        &self,
        public_id: &str,
    ) -> Result<Option<(KeyInfo, [u8; 32])>, StoreError> {
        self.pg.key_by_public_id(public_id).await
    }

    async fn hold(&self, hold: &Hold) -> Result<Option<Refusal>, StoreError> {
        match self.redis.reserve(&self.pg, hold).await {
            Ok(Some(refusal)) => Ok(Some(refusal)),
            Ok(None) => self.record(hold).await,
            Err(HoldError::Postgres(error)) => Err(error),
            Err(HoldError::Redis(error)) => {
                tracing::debug!(%error, "Redis did not decide a hold; PostgreSQL does");
                self.pg.hold(hold).await
            }
        }
    }

    async fn release(&self, request_id: &str) -> Result<(), StoreError> {
        self.pg.release(request_id).await?;
        if let Err(error) = self.redis.settle(&[(request_id.to_owned(), 0)]).await {
            tracing::debug!(%error, "cannot release a Redis hold; its entry expires");
        }
        Ok(())
    }
    async fn heartbeat(&self, instance: &str) -> Result<(), StoreError> {
        self.pg.heartbeat(instance).await
    }
    async fn renew(
        &self,
        instance: &str,
        request_ids: &[String],
        lease: Duration,
    ) -> Result<(), StoreError> {
        self.pg.renew(instance, request_ids, lease).await?;
        if let Err(error) = self.redis.renew(request_ids, lease).await {
            tracing::debug!(%error, "cannot renew Redis holds; their budgets are seeded again");
        }
        Ok(())
    }
    async fn sweep(&self, dead_after: Duration) -> Result<u64, StoreError> {
        self.pg.sweep(dead_after).await
    }
    async fn budgets(&self) -> Result<Vec<BudgetState>, StoreError> {
        self.pg.budgets().await
    }
    async fn usage_by(&self, by: UsageBy, since_ms: i64) -> Result<Vec<UsageGroup>, StoreError> {
        self.pg.usage_by(by, since_ms).await
    }
    async fn requests_today(&self, key_id: i64) -> Result<u64, StoreError> {
        self.pg.requests_today(key_id).await
    }
    async fn ping(&self) -> Result<(), StoreError> {
        self.pg.ping().await
    }
}

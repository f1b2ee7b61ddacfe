//! PostgreSQL, team mode's store: several corvid instances share its keys, budgets and ledger.
//!
//! - [`PgStore::connect`] builds a connection pool (deadpool); nothing is created or changed.
//! - [`PgStore::migrate`] (only from `corvid migrate`) applies the schema under an advisory
//!   lock; [`PgStore::check_schema`] (from `corvid serve`) refuses a database whose version is
//!   not this corvid's.
//! - [`PgStore`] implements [`crate::team::TeamStore`] (`teams.rs`) and writes the ledger
//!   (`ledger.rs`): batches of rows, their holds settled and their daily rollups upserted in
//!   the same transaction.
//! - [`PgConversations`] is the agent's store there (conversations, messages, checkpoints), so
//!   every instance lists and opens the same conversations.
//! - [`PgStore::watch_keys`] drops changed keys from an instance's key cache (LISTEN/NOTIFY).
//! - [`RedisFront`] puts Redis in front of it for holds and rate limits (`counter.rs`).

mod conversations;
mod counter;
mod ledger;
mod schema;
mod teams;
mod watch;

use std::str::FromStr;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use tokio_postgres::NoTls;

pub use conversations::PgConversations;
pub use counter::{RedisCounter, RedisError, RedisFront};
pub use ledger::PgLedger;

use crate::StoreError;

/// How long a request waits for a pooled connection (or a new one) before the store counts as
/// unreachable: a budgeted request answers 503 instead of hanging.
const CHECKOUT_TIMEOUT: Duration = Duration::from_millis(750);

/// A pool of connections to one PostgreSQL database.
#[derive(Clone)]
pub struct PgStore {
    pool: Pool,
    config: tokio_postgres::Config,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The URL may hold a password: only where it points.
        f.debug_struct("PgStore")
            .field("hosts", &self.config.get_hosts().len())
            .field("dbname", &self.config.get_dbname())
            .finish()
    }
}

impl PgStore {
    /// A pool for `url` (`postgres://user[:password]@host[:port]/db`) of at most `max_size`
    /// connections. Connects lazily.
    pub fn connect(url: &str, max_size: usize) -> Result<PgStore, StoreError> {
        let mut config = tokio_postgres::Config::from_str(url)
            .map_err(|error| StoreError::Config(format!("the database URL is invalid: {error}")))?;
        config.connect_timeout(CHECKOUT_TIMEOUT);
        config.application_name("corvid");
        let manager = Manager::from_config(
            config.clone(),
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(max_size.max(1))
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(CHECKOUT_TIMEOUT))
            .create_timeout(Some(CHECKOUT_TIMEOUT))
            .recycle_timeout(Some(CHECKOUT_TIMEOUT))
            .build()
            .map_err(|error| StoreError::Config(error.to_string()))?;
        Ok(PgStore { pool, config })
    }

    /// The database's name (what Redis keys are namespaced by).
    pub fn database_name(&self) -> &str {
        self.config.get_dbname().unwrap_or("corvid")
    }

    /// A pooled connection, or [`StoreError::Unreachable`].
    pub(crate) async fn client(&self) -> Result<deadpool_postgres::Object, StoreError> {
        self.pool
            .get()
            .await
            .map_err(|error| StoreError::Unreachable(error.to_string()))
    }

    /// The schema version this corvid needs.
    pub fn needed_version() -> i64 {
        i64::try_from(schema::STEPS.len()).unwrap_or(i64::MAX)
    }

    /// The database's schema version (0 before the first `corvid migrate`).
    pub async fn schema_version(&self) -> Result<i64, StoreError> {
        let client = self.client().await?;
        let exists: bool = client
            .query_one("SELECT to_regclass('corvid_schema') IS NOT NULL", &[])
            .await?
            .get(0);
        if !exists {
            return Ok(0);
        }
        let row = client
            .query_one(
                "SELECT COALESCE(max(version), 0)::bigint FROM corvid_schema",
                &[],
            )
            .await?;
        Ok(row.get(0))
    }

    /// Refuses a database whose schema is not exactly this corvid's.
    pub async fn check_schema(&self) -> Result<(), StoreError> {
        let found = self.schema_version().await?;
        let needed = Self::needed_version();
        if found == needed {
            return Ok(());
        }
        Err(StoreError::SchemaMismatch {
            found,
            needed,
            hint: if found > needed {
                " with a corvid at least as new as the one that migrated it (this one is older)"
            } else {
                ""
            },
        })
    }

    /// Applies the missing schema steps, each in its own transaction, while holding a session
    /// advisory lock: a second `corvid migrate` waits for the first, then finds nothing to do.
    /// Returns the versions applied.
    pub async fn migrate(&self) -> Result<Vec<i64>, StoreError> {
        // A connection of its own, outside the pool: the session lock must stay on it.
        let (mut client, connection) = self.config.connect(NoTls).await?;
        let driver = tokio::spawn(connection);
        let result = async {
            client
                .execute("SELECT pg_advisory_lock($1)", &[&schema::MIGRATE_LOCK])
                .await?;
            client
                .batch_execute(
                    "CREATE TABLE IF NOT EXISTS corvid_schema (
                         version    bigint      PRIMARY KEY,
                         applied_at timestamptz NOT NULL DEFAULT now())",
                )
                .await?;
            let found: i64 = client
                .query_one(
                    "SELECT COALESCE(max(version), 0)::bigint FROM corvid_schema",
                    &[],
                )
                .await?
                .get(0);
            let needed = Self::needed_version();
            if found > needed {
                return Err(StoreError::SchemaMismatch {
                    found,
                    needed,
                    hint: " with a newer corvid (this one is older than the database)",
                });
            }
            let mut applied = Vec::new();
            for (index, step) in schema::STEPS.iter().enumerate() {
                let version = i64::try_from(index + 1).unwrap_or(i64::MAX);
                if version <= found {
                    continue;
                }
                let tx = client.transaction().await?;
                tx.batch_execute(step).await?;
                tx.execute(
                    "INSERT INTO corvid_schema (version) VALUES ($1)",
                    &[&version],
                )
                .await?;
                tx.commit().await?;
                applied.push(version);
            }
            client
                .execute("SELECT pg_advisory_unlock($1)", &[&schema::MIGRATE_LOCK])
                .await?;
            Ok(applied)
        }
        .await;
        drop(client);
        let _ = driver.await;
        result
    }
}

//! [`TeamStore`] on the embedded SQLite file: each call runs on a blocking thread, holding the
//! process's one connection; a hold is one `IMMEDIATE` transaction (SQLite has one writer, so
//! the check and the take cannot interleave with another instance's).

use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::{
    BudgetSpec, BudgetState, ClientKey, Hold, KeyInfo, KeySpec, Period, Refusal, TeamInfo,
    TeamSpec, TeamStore, UsageBy, UsageGroup, window_of,
};
use crate::{SharedStore, StoreError, now_ms};

/// Keys, teams and budgets in the SQLite store.
#[derive(Debug, Clone)]
pub struct SqliteTeams {
    store: SharedStore,
}

/// The name of the key that stands for the local user (requests without a key).
pub const LOCAL_KEY: &str = "local";

impl SqliteTeams {
    pub fn new(store: SharedStore) -> Self {
        Self { store }
    }

    /// The key that stands for the one local user, with `budget` as its budget (created, or its
    /// cap updated; `None` removes it). Its secret is thrown away: no client can present it.
    pub async fn local_key(&self, budget: Option<BudgetSpec>) -> Result<KeyInfo, StoreError> {
        self.run(move |conn| {
            let tx = conn.transaction()?;
            let budget_id = match budget {
                Some(budget) => Some(insert_budget(&tx, &format!("key:{LOCAL_KEY}"), budget)?),
                None => None,
            };
            let key = ClientKey::generate();
            tx.execute(
                "INSERT INTO client_keys (name, public_id, secret_hash, budget_id, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (name) DO UPDATE SET budget_id = excluded.budget_id",
                params![
                    LOCAL_KEY,
                    key.public_id(),
                    key.secret_hash().to_vec(),
                    budget_id,
                    now_ms() / 1000
                ],
            )?;
            tx.commit()?;
            keys_where(conn, "k.name = ?1", LOCAL_KEY)?
                .into_iter()
                .next()
                .map(|(info, _)| info)
                .ok_or_else(|| StoreError::NotFound(format!("key {LOCAL_KEY}")))
        })
        .await
    }

    async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let store = self.store.clone();
        tokio::task::spawn_blocking(move || work(&mut store.lock().conn))
            .await
            .map_err(|_| StoreError::WriterStopped)?
    }
}

/// Settles a written row: `cost` µ$ goes to `key`'s budget and its team's, and, when `release`
/// (the row ends its request), the hold of the row's request (its id up to a `.`: a routing
/// fallback's later attempts are `<id>.<n>`) is released. Runs inside the ledger's transaction.
pub(crate) fn settle_sqlite(
    conn: &Connection,
    request_id: &str,
    cost: i64,
    key: Option<i64>,
    release: bool,
) -> Result<(), StoreError> {
    if release {
        let hold = request_id.split('.').next().unwrap_or(request_id);
        release_hold(conn, hold, false)?;
    }
    if let Some(key) = key
        && cost != 0
    {
        conn.prepare_cached(
            "UPDATE budgets SET spent = spent + ?2 WHERE id IN (
                 SELECT budget_id FROM client_keys WHERE id = ?1
                 UNION SELECT t.budget_id FROM client_keys k JOIN teams t ON t.id = k.team_id
                 WHERE k.id = ?1)",
        )?
        .execute(params![key, cost])?;
    }
    Ok(())
}

/// Removes a hold; `spend` settles it at its estimate (a dead instance's request) instead of
/// giving it back.
fn release_hold(conn: &Connection, hold: &str, spend: bool) -> Result<(), StoreError> {
    let mut gone = conn.prepare_cached(
        "DELETE FROM reservations WHERE request_id = ?1 RETURNING budget_id, amount",
    )?;
    let held: Vec<(i64, i64)> = gone
        .query_map([hold], |row| Ok((row.get(0)?, row.get(1)?)))?
        .collect::<Result<_, _>>()?;
    for (budget, amount) in held {
        conn.prepare_cached(
            "UPDATE budgets SET reserved = MAX(reserved - ?2, 0), spent = spent + ?3 WHERE id = ?1",
        )?
        .execute(params![budget, amount, if spend { amount } else { 0 }])?;
    }
    Ok(())
}

fn insert_budget(conn: &Connection, scope: &str, spec: BudgetSpec) -> Result<i64, StoreError> {
    let (start, _) = window_of(spec.period, now_ms());
    conn.execute(
        "INSERT INTO budgets (scope, cap_micros, period, window_start) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (scope) DO UPDATE SET cap_micros = excluded.cap_micros,
             period = excluded.period",
        params![scope, spec.cap_micros, spec.period.as_str(), start],
    )?;
    Ok(
        conn.query_row("SELECT id FROM budgets WHERE scope = ?1", [scope], |row| {
            row.get(0)
        })?,
    )
}

fn budget(conn: &Connection, id: i64) -> Result<BudgetState, StoreError> {
    let now = now_ms();
    Ok(conn.query_row(
        "SELECT id, scope, cap_micros, period, window_start, spent, reserved FROM budgets
         WHERE id = ?1",
        [id],
        |row| {
            let period = Period::parse(&row.get::<_, String>(3)?).unwrap_or(Period::Day);
            let (start, end) = window_of(period, now);
            let window_start: i64 = row.get(4)?;
            Ok(BudgetState {
                id: row.get(0)?,
                scope: row.get(1)?,
                cap_micros: row.get(2)?,
                period,
                spent_micros: if window_start < start { 0 } else { row.get(5)? },
                reserved_micros: row.get(6)?,
                resets_at_ms: end,
            })
        },
    )?)
}

const KEY_COLUMNS: &str = "k.id, k.name, k.public_id, k.team_id, t.name, k.models, k.rpm, k.tpm,
    k.revoked_at IS NOT NULL, k.budget_id, t.budget_id, k.secret_hash, k.daily_requests";

fn read_key(conn: &Connection, row: &rusqlite::Row<'_>) -> rusqlite::Result<(KeyInfo, [u8; 32])> {
    let models: String = row.get(5)?;
    let mut budgets = Vec::new();
    for column in [9, 10] {
        if let Some(id) = row.get::<_, Option<i64>>(column)? {
            budgets.push(id);
        }
    }
    let hash: Vec<u8> = row.get(11)?;
    let info = KeyInfo {
        id: row.get(0)?,
        name: row.get(1)?,
        public_id: row.get(2)?,
        team_id: row.get(3)?,
        team: row.get(4)?,
        models: models
            .split(',')
            .filter(|part| !part.is_empty())
            .map(str::to_owned)
            .collect(),
        rpm: row.get(6)?,
        tpm: row
            .get::<_, Option<i64>>(7)?
            .and_then(|tpm| u64::try_from(tpm).ok()),
        daily_requests: row.get(12)?,
        revoked: row.get(8)?,
        budgets: budgets
            .into_iter()
            .map(|id| budget(conn, id))
            .collect::<Result<_, _>>()
            .map_err(|_| rusqlite::Error::InvalidQuery)?,
    };
    let mut digest = [0u8; 32];
    if hash.len() == 32 {
        digest.copy_from_slice(&hash);
    }
    Ok((info, digest))
}

fn keys_where(
    conn: &Connection,
    condition: &str,
    value: &str,
) -> Result<Vec<(KeyInfo, [u8; 32])>, StoreError> {
    let sql = format!(
        "SELECT {KEY_COLUMNS} FROM client_keys k LEFT JOIN teams t ON t.id = k.team_id
         WHERE {condition} ORDER BY k.name"
    );
    let mut statement = conn.prepare(&sql)?;
    let rows = statement.query_map([value], |row| read_key(conn, row))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn teams(conn: &Connection) -> Result<Vec<TeamInfo>, StoreError> {
    let mut statement = conn.prepare("SELECT id, name, budget_id FROM teams ORDER BY name")?;
    let rows: Vec<(i64, String, Option<i64>)> = statement
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?
        .collect::<Result<_, _>>()?;
    rows.into_iter()
        .map(|(id, name, budget_id)| {
            Ok(TeamInfo {
                id,
                name,
                budget: budget_id.map(|id| budget(conn, id)).transpose()?,
            })
        })
        .collect()
}

fn take_hold(conn: &mut Connection, hold: &Hold) -> Result<Option<Refusal>, StoreError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let now = now_ms();
    let mut ids = hold.budget_ids.clone();
    ids.sort_unstable();
    for id in &ids {
        let state = budget(&tx, *id)?;
        let (start, end) = window_of(state.period, now);
        tx.execute(
            "UPDATE budgets SET spent = 0, window_start = ?2 WHERE id = ?1 AND window_start < ?2",
            params![id, start],
        )?;
        if state.spent_micros + state.reserved_micros + hold.amount_micros > state.cap_micros {
            tx.commit()?;
            return Ok(Some(Refusal::Budget {
                scope: state.scope,
                cap_micros: state.cap_micros,
                resets_at_ms: end,
            }));
        }
    }
    let minute = now / 60_000;
    if hold.rpm.is_some() || hold.tpm.is_some() {
        let (requests, tokens): (i64, i64) = tx
            .query_row(
                "SELECT requests, tokens FROM rate_windows WHERE key_id = ?1 AND minute = ?2",
                params![hold.key_id, minute],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()?
            .unwrap_or((0, 0));
        let retry_after_s = u64::try_from(60 - (now % 60_000) / 1000).unwrap_or(60);
        if let Some(rpm) = hold.rpm
            && requests + 1 > i64::from(rpm)
        {
            return Ok(Some(Refusal::Rpm {
                limit: u64::from(rpm),
                retry_after_s,
            }));
        }
        let wanted = i64::try_from(hold.tokens).unwrap_or(i64::MAX);
        if let Some(tpm) = hold.tpm
            && tokens.saturating_add(wanted) > i64::try_from(tpm).unwrap_or(i64::MAX)
        {
            return Ok(Some(Refusal::Tpm {
                limit: tpm,
                retry_after_s,
            }));
        }
        tx.execute(
            "INSERT INTO rate_windows (key_id, minute, requests, tokens) VALUES (?1, ?2, 1, ?3)
             ON CONFLICT (key_id, minute) DO UPDATE SET requests = requests + 1,
                 tokens = tokens + excluded.tokens",
            params![hold.key_id, minute, wanted],
        )?;
    }
    if let Some(limit) = hold.daily_requests {
        const DAY: i64 = 86_400_000;
        let day = now.div_euclid(DAY);
        let made: i64 = tx
            .query_row(
                "SELECT requests FROM daily_requests WHERE key_id = ?1 AND day = ?2",
                params![hold.key_id, day],
                |row| row.get(0),
            )
            .optional()?
            .unwrap_or(0);
        if made + 1 > i64::from(limit) {
            return Ok(Some(Refusal::DailyRequests {
                limit: u64::from(limit),
                resets_at_ms: (day + 1) * DAY,
            }));
        }
        tx.execute(
            "INSERT INTO daily_requests (key_id, day, requests) VALUES (?1, ?2, 1)
             ON CONFLICT (key_id, day) DO UPDATE SET requests = requests + 1",
            params![hold.key_id, day],
        )?;
        tx.execute("DELETE FROM daily_requests WHERE day < ?1", [day - 1])?;
    }
    let expires = now + i64::try_from(hold.lease.as_millis()).unwrap_or(i64::MAX / 2);
    for id in &ids {
        tx.execute(
            "UPDATE budgets SET reserved = reserved + ?2 WHERE id = ?1",
            params![id, hold.amount_micros],
        )?;
        tx.execute(
            "INSERT INTO reservations (request_id, budget_id, amount, instance_id, expires_at)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                hold.request_id,
                id,
                hold.amount_micros,
                hold.instance,
                expires
            ],
        )?;
    }
    tx.commit()?;
    Ok(None)
}

fn sweep(conn: &mut Connection, dead_after: Duration) -> Result<u64, StoreError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let now = now_ms();
    let dead_before = now - i64::try_from(dead_after.as_millis()).unwrap_or(i64::MAX / 2);
    let expired: Vec<String> = tx
        .prepare(
            "SELECT DISTINCT request_id FROM reservations WHERE expires_at < ?1
             OR instance_id NOT IN (SELECT id FROM instances WHERE heartbeat_at >= ?2)",
        )?
        .query_map(params![now, dead_before], |row| row.get(0))?
        .collect::<Result<_, _>>()?;
    let mut count = 0;
    for request_id in expired {
        // Settled at the estimate: a stream may have used tokens before its instance died.
        release_hold(&tx, &request_id, true)?;
        count += 1;
    }
    tx.execute(
        "DELETE FROM rate_windows WHERE minute < ?1",
        [now / 60_000 - 2],
    )?;
    tx.commit()?;
    Ok(count)
}

fn usage_by(conn: &Connection, by: UsageBy, since_ms: i64) -> Result<Vec<UsageGroup>, StoreError> {
    let (group, join) = match by {
        UsageBy::Key => (
            "COALESCE(k.name, '-')",
            "LEFT JOIN client_keys k ON k.id = r.key_id",
        ),
        UsageBy::Team => (
            "COALESCE(t.name, '-')",
            "LEFT JOIN teams t ON t.id = r.team_id",
        ),
        UsageBy::Model => ("r.model", ""),
        UsageBy::Day => ("strftime('%Y-%m-%d', r.at / 1000, 'unixepoch')", ""),
    };
    let sql = format!(
        "SELECT {group} AS grp, COUNT(*), COALESCE(SUM(r.outcome IN ('error', 'stream_error')), 0),
                COALESCE(SUM(r.input + r.cache_read + r.cache_write), 0), COALESCE(SUM(r.output), 0),
                COALESCE(SUM(r.cost_micros), 0)
         FROM requests r {join} WHERE r.at >= ?1 GROUP BY grp ORDER BY grp"
    );
    let mut statement = conn.prepare(&sql)?;
    let rows = statement.query_map([since_ms], |row| {
        Ok(UsageGroup {
            group: row.get(0)?,
            requests: row.get(1)?,
            errors: row.get(2)?,
            input_tokens: row.get(3)?,
            output_tokens: row.get(4)?,
            cost_micros: row.get(5)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

#[async_trait::async_trait]
impl TeamStore for SqliteTeams {
    async fn create_team(&self, spec: &TeamSpec) -> Result<TeamInfo, StoreError> {
        let spec = spec.clone();
        self.run(move |conn| {
            let tx = conn.transaction()?;
            let budget_id = spec
                .budget
                .map(|budget| insert_budget(&tx, &format!("team:{}", spec.name), budget))
                .transpose()?;
            tx.execute(
                "INSERT INTO teams (name, budget_id, created_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT (name) DO UPDATE SET budget_id = COALESCE(excluded.budget_id, budget_id)",
                params![spec.name, budget_id, now_ms() / 1000],
            )?;
            tx.commit()?;
            teams(conn)?
                .into_iter()
                .find(|team| team.name == spec.name)
                .ok_or(StoreError::NotFound(format!("team {}", spec.name)))
        })
        .await
    }

    async fn list_teams(&self) -> Result<Vec<TeamInfo>, StoreError> {
        self.run(|conn| teams(conn)).await
    }

    async fn create_key(&self, spec: &KeySpec) -> Result<(KeyInfo, ClientKey), StoreError> {
        let spec = spec.clone();
        self.run(move |conn| {
            let key = ClientKey::generate();
            let tx = conn.transaction()?;
            let team_id = match &spec.team {
                Some(team) => Some(
                    tx.query_row("SELECT id FROM teams WHERE name = ?1", [team], |row| {
                        row.get::<_, i64>(0)
                    })
                    .optional()?
                    .ok_or_else(|| StoreError::NotFound(format!("team {team}")))?,
                ),
                None => None,
            };
            let budget_id = spec
                .budget
                .map(|budget| insert_budget(&tx, &format!("key:{}", spec.name), budget))
                .transpose()?;
            tx.execute(
                "INSERT INTO client_keys (name, public_id, secret_hash, team_id, budget_id, models,
                     rpm, tpm, created_at, daily_requests)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                params![
                    spec.name,
                    key.public_id(),
                    key.secret_hash().to_vec(),
                    team_id,
                    budget_id,
                    spec.models.join(","),
                    spec.rpm,
                    spec.tpm.map(|tpm| i64::try_from(tpm).unwrap_or(i64::MAX)),
                    now_ms() / 1000,
                    spec.daily_requests
                ],
            )
            .map_err(|error| StoreError::conflict_or(error, format!("key {}", spec.name)))?;
            tx.commit()?;
            let (info, _) = keys_where(conn, "k.public_id = ?1", key.public_id())?
                .into_iter()
                .next()
                .ok_or_else(|| StoreError::NotFound(format!("key {}", spec.name)))?;
            Ok((info, key))
        })
        .await
    }

    async fn list_keys(&self) -> Result<Vec<KeyInfo>, StoreError> {
        self.run(|conn| {
            Ok(keys_where(conn, "?1 = ?1", "")?
                .into_iter()
                .map(|(info, _)| info)
                .collect())
        })
        .await
    }

    async fn revoke_key(&self, name: &str) -> Result<bool, StoreError> {
        let name = name.to_owned();
        self.run(move |conn| {
            Ok(conn.execute(
                "UPDATE client_keys SET revoked_at = ?2 WHERE name = ?1 AND revoked_at IS NULL",
                params![name, now_ms() / 1000],
            )? == 1)
        })
        .await
    }

    async fn key_by_public_id(
        &self,
        public_id: &str,
    ) -> Result<Option<(KeyInfo, [u8; 32])>, StoreError> {
        let public_id = public_id.to_owned();
        self.run(move |conn| {
            Ok(keys_where(conn, "k.public_id = ?1", &public_id)?
                .into_iter()
                .next())
        })
        .await
    }

    async fn hold(&self, hold: &Hold) -> Result<Option<Refusal>, StoreError> {
        let hold = hold.clone();
        self.run(move |conn| take_hold(conn, &hold)).await
    }

    async fn release(&self, request_id: &str) -> Result<(), StoreError> {
        let request_id = request_id.to_owned();
        self.run(move |conn| {
            let tx = conn.transaction()?;
            release_hold(&tx, &request_id, false)?;
            tx.commit()?;
            Ok(())
        })
        .await
    }

    async fn heartbeat(&self, instance: &str) -> Result<(), StoreError> {
        let instance = instance.to_owned();
        self.run(move |conn| {
            conn.execute(
                "INSERT INTO instances (id, heartbeat_at) VALUES (?1, ?2)
                 ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at",
                params![instance, now_ms()],
            )?;
            Ok(())
        })
        .await
    }

    async fn renew(
        &self,
        instance: &str,
        request_ids: &[String],
        lease: Duration,
    ) -> Result<(), StoreError> {
        let instance = instance.to_owned();
        let request_ids = request_ids.to_vec();
        let until = now_ms() + i64::try_from(lease.as_millis()).unwrap_or(i64::MAX / 2);
        self.run(move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            for request_id in &request_ids {
                tx.prepare_cached(
                    "UPDATE reservations SET expires_at = ?3
                     WHERE request_id = ?1 AND instance_id = ?2",
                )?
                .execute(params![request_id, instance, until])?;
            }
            tx.commit()?;
            Ok(())
        })
        .await
    }

    async fn sweep(&self, dead_after: Duration) -> Result<u64, StoreError> {
        self.run(move |conn| sweep(conn, dead_after)).await
    }

    async fn budgets(&self) -> Result<Vec<BudgetState>, StoreError> {
        self.run(|conn| {
            let ids: Vec<i64> = conn
                .prepare("SELECT id FROM budgets ORDER BY scope")?
                .query_map([], |row| row.get(0))?
                .collect::<Result<_, _>>()?;
            ids.into_iter().map(|id| budget(conn, id)).collect()
        })
        .await
    }

    async fn usage_by(&self, by: UsageBy, since_ms: i64) -> Result<Vec<UsageGroup>, StoreError> {
        self.run(move |conn| usage_by(conn, by, since_ms)).await
    }

    async fn requests_today(&self, key_id: i64) -> Result<u64, StoreError> {
        let day = now_ms().div_euclid(86_400_000);
        self.run(move |conn| {
            let made: Option<i64> = conn
                .query_row(
                    "SELECT requests FROM daily_requests WHERE key_id = ?1 AND day = ?2",
                    params![key_id, day],
                    |row| row.get(0),
                )
                .optional()?;
            Ok(u64::try_from(made.unwrap_or(0)).unwrap_or(0))
        })
        .await
    }

    async fn ping(&self) -> Result<(), StoreError> {
        self.run(|conn| {
            conn.query_row("SELECT 1", [], |_| Ok(()))?;
            Ok(())
        })
        .await
    }
}

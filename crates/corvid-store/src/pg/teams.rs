//! [`TeamStore`] on PostgreSQL: keys, teams, budgets, holds.

use std::time::Duration;

use tokio_postgres::Row;
use tokio_postgres::error::SqlState;

use super::PgStore;
use crate::StoreError;
use crate::team::{
    BudgetSpec, BudgetState, ClientKey, Hold, KeyInfo, KeySpec, Period, Refusal, TeamInfo,
    TeamSpec, TeamStore, UsageBy, UsageGroup,
};

/// A budget row as of now: a window that has ended reads as spent 0.
const BUDGET_COLUMNS: &str = "b.id, b.scope, b.cap_micros, b.period,
    CASE WHEN b.window_start < date_trunc(b.period, now() AT TIME ZONE 'UTC') THEN 0
         ELSE b.spent END,
    b.reserved,
    (extract(epoch FROM (date_trunc(b.period, now() AT TIME ZONE 'UTC')
        + ('1 ' || b.period)::interval)) * 1000)::bigint";

fn read_budget(row: &Row, first: usize) -> BudgetState {
    BudgetState {
        id: row.get(first),
        scope: row.get(first + 1),
        cap_micros: row.get(first + 2),
        period: Period::parse(row.get(first + 3)).unwrap_or(Period::Day),
        spent_micros: row.get(first + 4),
        reserved_micros: row.get(first + 5),
        resets_at_ms: row.get(first + 6),
    }
}

const KEY_SELECT: &str = "SELECT k.id, k.name, k.public_id, k.team_id, t.name, k.models, k.rpm,
        k.tpm, k.revoked_at IS NOT NULL, k.secret_hash, k.budget_id, t.budget_id, k.daily_requests
    FROM client_keys k LEFT JOIN teams t ON t.id = k.team_id";

fn exists_or(error: tokio_postgres::Error, what: String) -> StoreError {
    if error.code() == Some(&SqlState::UNIQUE_VIOLATION) {
        StoreError::Exists(what)
    } else {
        StoreError::Postgres(error)
    }
}

impl PgStore {
    pub(crate) async fn budgets_by_id(&self, ids: &[i64]) -> Result<Vec<BudgetState>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let client = self.client().await?;
        let sql =
            format!("SELECT {BUDGET_COLUMNS} FROM budgets b WHERE b.id = ANY($1) ORDER BY b.id");
        let rows = client.query(&sql, &[&ids]).await?;
        Ok(rows.iter().map(|row| read_budget(row, 0)).collect())
    }

    async fn keys_where(
        &self,
        condition: &str,
        value: &str,
    ) -> Result<Vec<(KeyInfo, [u8; 32])>, StoreError> {
        let client = self.client().await?;
        let sql = format!("{KEY_SELECT} WHERE {condition} ORDER BY k.name");
        let rows = client.query(&sql, &[&value]).await?;
        drop(client);
        let mut keys = Vec::with_capacity(rows.len());
        for row in rows {
            let hash: Vec<u8> = row.get(9);
            let mut digest = [0u8; 32];
            if hash.len() == 32 {
                digest.copy_from_slice(&hash);
            }
            let budget_ids: Vec<i64> = [row.get::<_, Option<i64>>(10), row.get(11)]
                .into_iter()
                .flatten()
                .collect();
            let info = KeyInfo {
                id: row.get(0),
                name: row.get(1),
                public_id: row.get(2),
                team_id: row.get(3),
                team: row.get(4),
                models: row.get(5),
                rpm: row
                    .get::<_, Option<i32>>(6)
                    .and_then(|rpm| u32::try_from(rpm).ok()),
                tpm: row
                    .get::<_, Option<i64>>(7)
                    .and_then(|tpm| u64::try_from(tpm).ok()),
                daily_requests: row
                    .get::<_, Option<i32>>(12)
                    .and_then(|daily| u32::try_from(daily).ok()),
                revoked: row.get(8),
                budgets: self.budgets_by_id(&budget_ids).await?,
            };
            keys.push((info, digest));
        }
        Ok(keys)
    }
}

async fn upsert_budget(
    tx: &tokio_postgres::Transaction<'_>,
    scope: &str,
    spec: BudgetSpec,
) -> Result<i64, StoreError> {
    let row = tx
        .query_one(
            "INSERT INTO budgets (scope, cap_micros, period, window_start)
             VALUES ($1, $2, $3, date_trunc($3, now() AT TIME ZONE 'UTC'))
             ON CONFLICT (scope) DO UPDATE SET cap_micros = excluded.cap_micros,
                 period = excluded.period
             RETURNING id",
            &[&scope, &spec.cap_micros, &spec.period.as_str()],
        )
        .await?;
    Ok(row.get(0))
}

#[async_trait::async_trait]
impl TeamStore for PgStore {
    async fn create_team(&self, spec: &TeamSpec) -> Result<TeamInfo, StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let budget_id = match spec.budget {
            Some(budget) => Some(upsert_budget(&tx, &format!("team:{}", spec.name), budget).await?),
            None => None,
        };
        let row = tx
            .query_one(
                "INSERT INTO teams (name, budget_id) VALUES ($1, $2)
                 ON CONFLICT (name) DO UPDATE SET budget_id = COALESCE(excluded.budget_id,
                     teams.budget_id)
                 RETURNING id, budget_id",
                &[&spec.name, &budget_id],
            )
            .await?;
        tx.commit().await?;
        let id: i64 = row.get(0);
        let budget_id: Option<i64> = row.get(1);
        drop(client);
        let budget = match budget_id {
            Some(id) => self.budgets_by_id(&[id]).await?.into_iter().next(),
            None => None,
        };
        Ok(TeamInfo {
            id,
            name: spec.name.clone(),
            budget,
        })
    }

    async fn list_teams(&self) -> Result<Vec<TeamInfo>, StoreError> {
        let client = self.client().await?;
        let rows = client
            .query("SELECT id, name, budget_id FROM teams ORDER BY name", &[])
            .await?;
        drop(client);
        let mut teams = Vec::new();
        for row in rows {
            let budget_id: Option<i64> = row.get(2);
            let budget = match budget_id {
                Some(id) => self.budgets_by_id(&[id]).await?.into_iter().next(),
                None => None,
            };
            teams.push(TeamInfo {
                id: row.get(0),
                name: row.get(1),
                budget,
            });
        }
        Ok(teams)
    }

    async fn create_key(&self, spec: &KeySpec) -> Result<(KeyInfo, ClientKey), StoreError> {
        let key = ClientKey::generate();
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let team_id: Option<i64> = match &spec.team {
            Some(team) => Some(
                tx.query_opt("SELECT id FROM teams WHERE name = $1", &[team])
                    .await?
                    .ok_or_else(|| StoreError::NotFound(format!("team {team}")))?
                    .get(0),
            ),
            None => None,
        };
        let budget_id = match spec.budget {
            Some(budget) => Some(upsert_budget(&tx, &format!("key:{}", spec.name), budget).await?),
            None => None,
        };
        let rpm = spec.rpm.map(|rpm| i32::try_from(rpm).unwrap_or(i32::MAX));
        let tpm = spec.tpm.map(|tpm| i64::try_from(tpm).unwrap_or(i64::MAX));
        let daily = spec
            .daily_requests
            .map(|daily| i32::try_from(daily).unwrap_or(i32::MAX));
        tx.execute(
            "INSERT INTO client_keys (name, public_id, secret_hash, team_id, budget_id, models,
                 rpm, tpm, daily_requests) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            &[
                &spec.name,
                &key.public_id(),
                &key.secret_hash().as_slice(),
                &team_id,
                &budget_id,
                &spec.models,
                &rpm,
                &tpm,
                &daily,
            ],
        )
        .await
        .map_err(|error| exists_or(error, format!("key {}", spec.name)))?;
        tx.commit().await?;
        drop(client);
        let (info, _) = self
            .keys_where("k.public_id = $1", key.public_id())
            .await?
            .into_iter()
            .next()
            .ok_or_else(|| StoreError::NotFound(format!("key {}", spec.name)))?;
        Ok((info, key))
    }

    async fn list_keys(&self) -> Result<Vec<KeyInfo>, StoreError> {
        Ok(self
            .keys_where("$1 = $1", "")
            .await?
            .into_iter()
            .map(|(info, _)| info)
            .collect())
    }

    async fn revoke_key(&self, name: &str) -> Result<bool, StoreError> {
        let client = self.client().await?;
        let changed = client
            .execute(
                "UPDATE client_keys SET revoked_at = now() WHERE name = $1 AND revoked_at IS NULL",
                &[&name],
            )
            .await?;
        Ok(changed == 1)
    }

    async fn key_by_public_id(
        &self,
        public_id: &str,
    ) -> Result<Option<(KeyInfo, [u8; 32])>, StoreError> {
        Ok(self
            .keys_where("k.public_id = $1", public_id)
            .await?
            .into_iter()
            .next())
    }

    async fn hold(&self, hold: &Hold) -> Result<Option<Refusal>, StoreError> {
        let client = self.client().await?;
        let tokens = i64::try_from(hold.tokens).unwrap_or(i64::MAX);
        let rpm = hold.rpm.map(|rpm| i32::try_from(rpm).unwrap_or(i32::MAX));
        let tpm = hold.tpm.map(|tpm| i64::try_from(tpm).unwrap_or(i64::MAX));
        let lease = i64::try_from(hold.lease.as_millis()).unwrap_or(i64::MAX / 2);
        let daily = hold
            .daily_requests
            .map(|daily| i32::try_from(daily).unwrap_or(i32::MAX));
        let row = client
            .query_opt(
                "SELECT kind, scope, cap,
                        (extract(epoch FROM resets_at) * 1000)::bigint,
                        greatest(ceil(extract(epoch FROM resets_at - (now() AT TIME ZONE 'UTC'))), 1)::bigint
                 FROM corvid_reserve($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                &[
                    &hold.request_id,
                    &hold.key_id,
                    &hold.budget_ids,
                    &hold.amount_micros,
                    &tokens,
                    &rpm,
                    &tpm,
                    &hold.instance,
                    &lease,
                    &daily,
                ],
            )
            .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let kind: &str = row.get(0);
        let limit: i64 = row.get(2);
        let retry_after_s = u64::try_from(row.get::<_, i64>(4)).unwrap_or(60);
        Ok(Some(match kind {
            "rpm" => Refusal::Rpm {
                limit: u64::try_from(limit).unwrap_or(0),
                retry_after_s,
            },
            "tpm" => Refusal::Tpm {
                limit: u64::try_from(limit).unwrap_or(0),
                retry_after_s,
            },
            "daily" => Refusal::DailyRequests {
                limit: u64::try_from(limit).unwrap_or(0),
                resets_at_ms: row.get(3),
            },
            _ => Refusal::Budget {
                scope: row.get(1),
                cap_micros: limit,
                resets_at_ms: row.get(3),
            },
        }))
    }

    async fn release(&self, request_id: &str) -> Result<(), StoreError> {
        let client = self.client().await?;
        client
            .execute(
                "SELECT corvid_settle(ARRAY[$1::text], ARRAY[0::bigint], ARRAY[NULL::bigint])",
                &[&request_id],
            )
            .await?;
        Ok(())
    }

    async fn heartbeat(&self, instance: &str) -> Result<(), StoreError> {
        let client = self.client().await?;
        client
            .execute(
                "INSERT INTO instances (id, heartbeat_at) VALUES ($1, now())
                 ON CONFLICT (id) DO UPDATE SET heartbeat_at = now()",
                &[&instance],
            )
            .await?;
        Ok(())
    }

    async fn renew(
        &self,
        instance: &str,
        request_ids: &[String],
        lease: Duration,
    ) -> Result<(), StoreError> {
        let client = self.client().await?;
        let lease_ms = i64::try_from(lease.as_millis()).unwrap_or(i64::MAX / 2);
        client
            .execute(
                "UPDATE reservations SET expires_at = now() + make_interval(secs => $3::bigint / 1000.0)
                 WHERE request_id = ANY ($1) AND instance_id = $2",
                &[&request_ids, &instance, &lease_ms],
            )
            .await?;
        Ok(())
    }

    async fn sweep(&self, dead_after: Duration) -> Result<u64, StoreError> {
        let client = self.client().await?;
        let dead_ms = i64::try_from(dead_after.as_millis()).unwrap_or(i64::MAX / 2);
        let row = client
            .query_one("SELECT corvid_sweep($1)", &[&dead_ms])
            .await?;
        Ok(u64::try_from(row.get::<_, i64>(0)).unwrap_or(0))
    }

    async fn budgets(&self) -> Result<Vec<BudgetState>, StoreError> {
        let client = self.client().await?;
        let sql = format!("SELECT {BUDGET_COLUMNS} FROM budgets b ORDER BY b.scope");
        let rows = client.query(&sql, &[]).await?;
        Ok(rows.iter().map(|row| read_budget(row, 0)).collect())
    }

    async fn usage_by(&self, by: UsageBy, since_ms: i64) -> Result<Vec<UsageGroup>, StoreError> {
        let (group, join) = match by {
            UsageBy::Key => (
                "COALESCE(k.name, '-')",
                "LEFT JOIN client_keys k ON k.id = u.key_id",
            ),
            UsageBy::Team => (
                "COALESCE(t.name, '-')",
                "LEFT JOIN teams t ON t.id = u.team_id",
            ),
            UsageBy::Model => ("u.model", ""),
            UsageBy::Day => ("to_char(u.day, 'YYYY-MM-DD')", ""),
        };
        // The daily rollup answers without scanning the ledger.
        let sql = format!(
            "SELECT {group} AS grp, sum(u.requests)::bigint, sum(u.errors)::bigint,
                    sum(u.input)::bigint, sum(u.output)::bigint, sum(u.cost_micros)::bigint
             FROM usage_daily u {join}
             WHERE u.day >= (to_timestamp($1::bigint / 1000.0) AT TIME ZONE 'UTC')::date
             GROUP BY grp ORDER BY grp"
        );
        let client = self.client().await?;
        let rows = client.query(&sql, &[&since_ms]).await?;
        Ok(rows
            .iter()
            .map(|row| UsageGroup {
                group: row.get(0),
                requests: row.get(1),
                errors: row.get(2),
                input_tokens: row.get(3),
                output_tokens: row.get(4),
                cost_micros: row.get(5),
            })
            .collect())
    }

    async fn requests_today(&self, key_id: i64) -> Result<u64, StoreError> {
        // A key with a daily quota: the requests it admitted; else the rollup's rows written.
        let client = self.client().await?;
        let row = client
            .query_one(
                "SELECT COALESCE(
                     (SELECT requests::bigint FROM key_daily_requests
                      WHERE key_id = $1 AND day = (now() AT TIME ZONE 'UTC')::date),
                     (SELECT sum(requests)::bigint FROM usage_daily
                      WHERE key_id = $1 AND day = (now() AT TIME ZONE 'UTC')::date),
                     0)",
                &[&key_id],
            )
            .await?;
        Ok(u64::try_from(row.get::<_, i64>(0)).unwrap_or(0))
    }

    async fn ping(&self) -> Result<(), StoreError> {
        let client = self.client().await?;
        client.query_one("SELECT 1", &[]).await?;
        Ok(())
    }
}

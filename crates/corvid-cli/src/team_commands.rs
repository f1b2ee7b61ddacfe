//! Team mode's commands: `corvid migrate`, `corvid keys …`, `corvid teams …`, `corvid usage
//! --by …`, and the store `corvid serve` puts behind the gateway's key and budget gate.
//! Every command works on the configured store: PostgreSQL when `[store] url` (or
//! `CORVID_DATABASE_URL`) is set, else the SQLite file.

use std::fmt::Write as _;
use std::sync::Arc;

use anyhow::Context as _;
use clap::Subcommand;
use corvid_config::Loaded;
use corvid_store::pg::PgStore;
use corvid_store::team::{
    BudgetSpec, BudgetState, KeySpec, Period, SqliteTeams, TeamSpec, TeamStore, UsageBy,
};
use corvid_store::{micros_to_usd, usd_to_micros};

/// PostgreSQL connections per instance (keys, holds, the ledger writer share them).
const POOL_SIZE: usize = 16;

#[derive(Debug, Subcommand)]
pub(crate) enum KeysCommand {
    /// Create a client key; the key is printed once, alone on the last line.
    Create {
        #[arg(long)]
        name: String,
        /// The team whose budget the key also spends.
        #[arg(long)]
        team: Option<String>,
        /// The key's own budget per period, in US dollars.
        #[arg(long, value_name = "USD")]
        budget_usd: Option<f64>,
        /// day or month (UTC).
        #[arg(long, default_value = "month")]
        period: String,
        /// Comma-separated model patterns the key may use (`grok*,anthropic/*`).
        #[arg(long)]
        models: Option<String>,
        /// Requests per minute.
        #[arg(long)]
        rpm: Option<u32>,
        /// Tokens per minute (estimated input + output cap).
        #[arg(long)]
        tpm: Option<u64>,
        /// Requests per UTC day, counted when admitted (429 with `Retry-After` past it).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        daily_requests: Option<u32>,
    },
    /// List the keys (never their secrets) and their budgets.
    List,
    /// Revoke a key: every instance refuses it within `[store] key_cache_ms`.
    Revoke { name: String },
}

#[derive(Debug, Subcommand)]
pub(crate) enum TeamsCommand {
    /// Create a team (or change its budget).
    Create {
        #[arg(long)]
        name: String,
        #[arg(long, value_name = "USD")]
        budget_usd: Option<f64>,
        /// day or month (UTC).
        #[arg(long, default_value = "month")]
        period: String,
    },
    /// List the teams and their budgets.
    List,
}

/// What `corvid usage --by` groups by.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum By {
    Key,
    Team,
    Model,
    Day,
}

/// The configured store's keys, teams and budgets. On PostgreSQL the schema must be current.
pub(crate) async fn team_store(loaded: &Loaded) -> anyhow::Result<Arc<dyn TeamStore>> {
    match postgres(loaded)? {
        Some(store) => {
            store.check_schema().await?;
            Ok(Arc::new(store))
        }
        None => Ok(Arc::new(SqliteTeams::new(crate::compose::open_store(
            loaded,
        )?))),
    }
}

/// The PostgreSQL pool when the store is PostgreSQL.
pub(crate) fn postgres(loaded: &Loaded) -> anyhow::Result<Option<PgStore>> {
    let Some(url) = loaded.config.store.url.as_deref() else {
        return Ok(None);
    };
    Ok(Some(PgStore::connect(url, POOL_SIZE)?))
}

/// The gateway over PostgreSQL: the schema checked (a mismatch stops `serve`, naming
/// `corvid migrate`), the ledger written there, keys and budgets checked against it.
pub(crate) async fn postgres_gateway(
    loaded: &Loaded,
    state: corvid_gateway::AppState,
    store: &PgStore,
) -> anyhow::Result<corvid_gateway::AppState> {
    store
        .check_schema()
        .await
        .context("corvid serve cannot use this database")?;
    let config = &loaded.config;
    let redis = match config.store.redis_url.as_deref() {
        Some(url) => Some(corvid_store::pg::RedisCounter::connect(
            url,
            store.database_name(),
        )?),
        None => None,
    };
    let recorder = corvid_store::UsageRecorder::spawn_postgres(
        corvid_store::pg::PgLedger::new(store.clone(), tokio::runtime::Handle::current())
            .with_redis(redis.clone()),
        corvid_store::RecorderOptions::default(),
    )?;
    let required = config.store.keys_required(&config.host);
    let teams: Arc<dyn corvid_store::team::TeamStore> = match redis.clone() {
        Some(redis) => Arc::new(corvid_store::pg::RedisFront::new(store.clone(), redis)),
        None => Arc::new(store.clone()),
    };
    let access = corvid_gateway::Access::new(teams, &config.store, required)
        .with_admin_key(admin_key(loaded));
    tokio::spawn(access.clone().maintain());
    tokio::spawn(store.clone().watch_keys(access.key_cache().clone()));
    tracing::info!(
        keys_required = required,
        redis = redis.is_some(),
        "team mode: keys, budgets, usage and conversations on PostgreSQL"
    );
    Ok(state.with_recorder(recorder).with_access(access))
}

/// The admin API's key (`CORVID_ADMIN_KEY`, from the process or the env file); `None` keeps the
/// admin API off.
pub(crate) fn admin_key(loaded: &Loaded) -> Option<String> {
    loaded.secret("CORVID_ADMIN_KEY")
}

/// The gateway over the SQLite store: keys are required beyond loopback (`require_keys`), and a
/// client that sends a corvid key gets its budgets and limits checked on loopback too.
pub(crate) async fn sqlite_gate(
    loaded: &Loaded,
    state: corvid_gateway::AppState,
    store: Option<&corvid_store::SharedStore>,
) -> anyhow::Result<corvid_gateway::AppState> {
    let config = &loaded.config;
    let required = config.store.keys_required(&config.host);
    let Some(store) = store else {
        // Without the store no key can be checked: refuse to serve rather than serve openly.
        anyhow::ensure!(
            !required,
            "client keys are required (corvid listens beyond loopback, or require_keys = true) but the store cannot be opened"
        );
        return Ok(state);
    };
    let access = corvid_gateway::Access::new(
        Arc::new(SqliteTeams::new(Arc::clone(store))),
        &config.store,
        required,
    )
    .with_admin_key(admin_key(loaded));
    let budget = config.store.daily_budget_usd.map(|usd| BudgetSpec {
        cap_micros: usd_to_micros(usd),
        period: Period::Day,
    });
    let access = if budget.is_some() || config.store.daily_requests.is_some() {
        let mut local = SqliteTeams::new(Arc::clone(store))
            .local_key(budget)
            .await
            .context("cannot set up the daily budget")?;
        local.daily_requests = config.store.daily_requests;
        access.with_local_key(local)
    } else {
        access
    };
    tokio::spawn(access.clone().maintain());
    Ok(state.with_access(access))
}

/// `corvid status`'s lines on the local user's daily budget and request quota (SQLite,
/// `daily_budget_usd`, `daily_requests`).
pub(crate) async fn daily_budget_line(loaded: &Loaded) -> Option<String> {
    let config = &loaded.config.store;
    if config.is_postgres()
        || (config.daily_budget_usd.is_none() && config.daily_requests.is_none())
    {
        return None;
    }
    let store = SqliteTeams::new(crate::compose::open_store(loaded).ok()?);
    let local = store
        .list_keys()
        .await
        .ok()?
        .into_iter()
        .find(|key| key.name == corvid_store::team::LOCAL_KEY);
    let mut lines = Vec::new();
    if let Some(usd) = config.daily_budget_usd {
        let scope = format!("key:{}", corvid_store::team::LOCAL_KEY);
        let budget = local
            .as_ref()
            .and_then(|key| key.budgets.iter().find(|budget| budget.scope == scope));
        lines.push(match budget {
            Some(budget) => format!(
                "daily budget: ${:.4} of ${usd:.2} spent today (UTC), ${:.4} held",
                micros_to_usd(budget.spent_micros),
                micros_to_usd(budget.reserved_micros)
            ),
            None => format!("daily budget: ${usd:.2} (applies once `corvid serve` runs)"),
        });
    }
    if let Some(limit) = config.daily_requests {
        let made = match &local {
            Some(key) => store.requests_today(key.id).await.ok()?,
            None => 0,
        };
        lines.push(format!(
            "daily requests: {made} of {limit} made today (UTC); resets at midnight UTC"
        ));
    }
    Some(lines.join("\n"))
}

/// `corvid migrate`.
pub(crate) async fn migrate(loaded: &Loaded) -> anyhow::Result<String> {
    let Some(store) = postgres(loaded)? else {
        let path = loaded.paths.database();
        crate::compose::open_store(loaded)?;
        return Ok(format!(
            "the SQLite store {} is current (it migrates itself when opened)\n",
            path.display()
        ));
    };
    let applied = store.migrate().await.context("migration failed")?;
    let version = PgStore::needed_version();
    Ok(if applied.is_empty() {
        format!("the schema is current (version {version}); nothing to do\n")
    } else {
        format!(
            "applied schema version{} {}; the schema is at version {version}\n",
            if applied.len() == 1 { "" } else { "s" },
            applied
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

fn budget(usd: Option<f64>, period: &str) -> anyhow::Result<Option<BudgetSpec>> {
    let Some(usd) = usd else {
        return Ok(None);
    };
    anyhow::ensure!(
        usd.is_finite() && usd >= 0.0,
        "--budget-usd must be a positive amount"
    );
    let period = Period::parse(period)
        .with_context(|| format!("--period must be day or month, got {period:?}"))?;
    Ok(Some(BudgetSpec {
        cap_micros: usd_to_micros(usd),
        period,
    }))
}

fn describe(budget: &BudgetState) -> String {
    format!(
        "${:.2}/{} (spent ${:.6}, held ${:.6})",
        micros_to_usd(budget.cap_micros),
        budget.period.as_str(),
        micros_to_usd(budget.spent_micros),
        micros_to_usd(budget.reserved_micros)
    )
}

pub(crate) async fn keys(loaded: &Loaded, command: KeysCommand) -> anyhow::Result<String> {
    let store = team_store(loaded).await?;
    let mut out = String::new();
    match command {
        KeysCommand::Create {
            name,
            team,
            budget_usd,
            period,
            models,
            rpm,
            tpm,
            daily_requests,
        } => {
            let spec = KeySpec {
                name,
                team,
                budget: budget(budget_usd, &period)?,
                models: models
                    .unwrap_or_default()
                    .split(',')
                    .map(str::trim)
                    .filter(|pattern| !pattern.is_empty())
                    .map(str::to_owned)
                    .collect(),
                rpm,
                tpm,
                daily_requests,
            };
            let (info, key) = store.create_key(&spec).await?;
            let _ = writeln!(
                out,
                "created key {} (id cv-{}){}",
                info.name,
                info.public_id,
                info.team
                    .as_deref()
                    .map(|team| format!(" in team {team}"))
                    .unwrap_or_default()
            );
            let _ = writeln!(
                out,
                "it is shown only now; store it where the client reads it:"
            );
            let _ = writeln!(out, "{}", key.reveal());
        }
        KeysCommand::List => {
            let keys = store.list_keys().await?;
            if keys.is_empty() {
                out.push_str("no client keys (create one with `corvid keys create --name NAME`)\n");
            }
            for key in keys {
                let _ = write!(
                    out,
                    "{}  cv-{}-…  {}",
                    key.name,
                    key.public_id,
                    if key.revoked { "revoked" } else { "active" }
                );
                if let Some(team) = &key.team {
                    let _ = write!(out, "  team {team}");
                }
                if !key.models.is_empty() {
                    let _ = write!(out, "  models {}", key.models.join(","));
                }
                if let Some(rpm) = key.rpm {
                    let _ = write!(out, "  rpm {rpm}");
                }
                if let Some(tpm) = key.tpm {
                    let _ = write!(out, "  tpm {tpm}");
                }
                if let Some(daily) = key.daily_requests {
                    let _ = write!(out, "  {daily} requests/day");
                }
                for budget in &key.budgets {
                    let _ = write!(out, "  {} {}", budget.scope, describe(budget));
                }
                out.push('\n');
            }
        }
        KeysCommand::Revoke { name } => {
            anyhow::ensure!(
                store.revoke_key(&name).await?,
                "no active key called {name}"
            );
            let _ = writeln!(out, "revoked key {name}");
        }
    }
    Ok(out)
}

pub(crate) async fn teams(loaded: &Loaded, command: TeamsCommand) -> anyhow::Result<String> {
    let store = team_store(loaded).await?;
    let mut out = String::new();
    match command {
        TeamsCommand::Create {
            name,
            budget_usd,
            period,
        } => {
            let team = store
                .create_team(&TeamSpec {
                    name,
                    budget: budget(budget_usd, &period)?,
                })
                .await?;
            let _ = writeln!(out, "team {} ready", team.name);
        }
        TeamsCommand::List => {
            let teams = store.list_teams().await?;
            if teams.is_empty() {
                out.push_str("no teams (create one with `corvid teams create --name NAME`)\n");
            }
            for team in teams {
                let budget = team
                    .budget
                    .as_ref()
                    .map(describe)
                    .unwrap_or_else(|| "no budget".to_owned());
                let _ = writeln!(out, "{}  {budget}", team.name);
            }
        }
    }
    Ok(out)
}

/// `corvid usage --by key|team|model|day`.
pub(crate) async fn usage_by(
    loaded: &Loaded,
    by: By,
    days: Option<u32>,
    json: bool,
) -> anyhow::Result<String> {
    let store = team_store(loaded).await?;
    let by = match by {
        By::Key => UsageBy::Key,
        By::Team => UsageBy::Team,
        By::Model => UsageBy::Model,
        By::Day => UsageBy::Day,
    };
    let since = days.map_or(0, |days| {
        let today = corvid_store::now_ms().div_euclid(86_400_000) * 86_400_000;
        today - i64::from(days.max(1) - 1) * 86_400_000
    });
    let groups = store.usage_by(by, since).await?;
    if json {
        let rows: Vec<serde_json::Value> = groups
            .iter()
            .map(|group| {
                serde_json::json!({
                    "group": group.group,
                    "requests": group.requests,
                    "errors": group.errors,
                    "input_tokens": group.input_tokens,
                    "output_tokens": group.output_tokens,
                    "cost_micros": group.cost_micros,
                })
            })
            .collect();
        return Ok(format!("{}\n", serde_json::Value::Array(rows)));
    }
    let mut out = format!(
        "{:<24} {:>9} {:>7} {:>12} {:>12} {:>14}\n",
        "group", "requests", "errors", "input", "output", "cost (USD)"
    );
    for group in &groups {
        let _ = writeln!(
            out,
            "{:<24} {:>9} {:>7} {:>12} {:>12} {:>14.6}",
            group.group,
            group.requests,
            group.errors,
            group.input_tokens,
            group.output_tokens,
            micros_to_usd(group.cost_micros)
        );
    }
    Ok(out)
}

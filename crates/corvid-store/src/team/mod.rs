//! Team mode's records: client keys, teams, budgets and the holds (reservations) requests
//! take against them, behind one async trait, [`TeamStore`], with a SQLite and a PostgreSQL
//! implementation.
//!
//! A client key reads `cv-<12-char public id>-<40-char secret>`. The store keeps the public id
//! and the SHA-256 of the secret; a lookup finds the row by public id and compares the hashes
//! in constant time. The key itself is shown once, when it is created.
//!
//! Budgets are integer micro-dollars per window (a UTC day or month). A request holds its
//! estimated cost against every budget it falls under (its key's, its team's) in one atomic
//! step that refuses when any of them would go over; the ledger writer settles the hold to the
//! actual cost in the transaction that writes the request's row, once per request id.

mod cache;
mod key;
mod sqlite;

use std::time::Duration;

pub use cache::KeyCache;
pub use key::{ClientKey, KeyFormatError, admin_key_matches};
pub(crate) use sqlite::settle_sqlite;
pub use sqlite::{LOCAL_KEY, SqliteTeams};

use crate::StoreError;

/// A budget's window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Period {
    Day,
    Month,
}

impl Period {
    /// The name stored and typed (`day`, `month`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Day => "day",
            Self::Month => "month",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text.trim().to_ascii_lowercase().as_str() {
            "day" | "daily" => Some(Self::Day),
            "month" | "monthly" => Some(Self::Month),
            _ => None,
        }
    }
}

/// A cap per window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetSpec {
    pub cap_micros: i64,
    pub period: Period,
}

/// What `corvid keys create` asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeySpec {
    pub name: String,
    pub team: Option<String>,
    pub budget: Option<BudgetSpec>,
    /// Model patterns the key may use (`grok*`, `anthropic/*`); empty means every model.
    pub models: Vec<String>,
    pub rpm: Option<u32>,
    pub tpm: Option<u64>,
    /// Requests per UTC day (`--daily-requests`), counted when admitted.
    pub daily_requests: Option<u32>,
}

/// What `corvid teams create` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamSpec {
    pub name: String,
    pub budget: Option<BudgetSpec>,
}

/// A budget as it stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BudgetState {
    pub id: i64,
    /// `key:alice` or `team:eng`.
    pub scope: String,
    pub cap_micros: i64,
    pub period: Period,
    /// Spent in the current window (a window that has ended reads 0).
    pub spent_micros: i64,
    /// Held by requests in flight.
    pub reserved_micros: i64,
    /// When the current window ends, Unix milliseconds.
    pub resets_at_ms: i64,
}

/// A client key, without its secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyInfo {
    pub id: i64,
    pub name: String,
    pub public_id: String,
    pub team_id: Option<i64>,
    pub team: Option<String>,
    pub models: Vec<String>,
    pub rpm: Option<u32>,
    pub tpm: Option<u64>,
    /// Requests per UTC day: the key's `--daily-requests`, or for the local user (SQLite)
    /// `[store] daily_requests`.
    pub daily_requests: Option<u32>,
    pub revoked: bool,
    /// The key's own budget and its team's, when set.
    pub budgets: Vec<BudgetState>,
}

impl KeyInfo {
    /// Whether the key may use `model` (the name the client sent) routed to
    /// `provider`/`upstream`: no patterns means every model; otherwise a pattern must match the
    /// requested name, the upstream name, or `provider/upstream`.
    pub fn allows_model(&self, requested: &str, provider: &str, upstream: &str) -> bool {
        if self.models.is_empty() {
            return true;
        }
        let qualified = format!("{provider}/{upstream}");
        self.models.iter().any(|pattern| {
            [requested, upstream, qualified.as_str()]
                .iter()
                .any(|name| glob_matches(pattern, name))
        })
    }

    /// Whether a request with this key takes a hold (it has a budget or a rate limit).
    pub fn needs_hold(&self) -> bool {
        !self.budgets.is_empty()
            || self.rpm.is_some()
            || self.tpm.is_some()
            || self.daily_requests.is_some()
    }
}

/// `*` matches any run of characters (`/` included); everything else matches itself.
pub fn glob_matches(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == name;
    }
    let (first, rest) = (parts[0], &parts[1..]);
    let Some(mut remaining) = name.strip_prefix(first) else {
        return false;
    };
    let last = rest.len() - 1;
    for (index, part) in rest.iter().enumerate() {
        if index == last {
            return remaining.ends_with(part);
        }
        match remaining.find(part) {
            Some(at) => remaining = &remaining[at + part.len()..],
            None => return false,
        }
    }
    true
}

/// A team, with its budget when it has one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamInfo {
    pub id: i64,
    pub name: String,
    pub budget: Option<BudgetState>,
}

/// A request's hold: its estimated cost against every budget of its key, and its share of the
/// key's rate limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hold {
    pub request_id: String,
    pub key_id: i64,
    pub budget_ids: Vec<i64>,
    pub amount_micros: i64,
    /// Estimated tokens, counted against the key's `tpm`.
    pub tokens: u64,
    pub rpm: Option<u32>,
    pub tpm: Option<u64>,
    /// Requests per UTC day, counted in the same step as the budgets and rate limits.
    pub daily_requests: Option<u32>,
    /// The instance taking the hold (its heartbeat keeps the hold alive).
    pub instance: String,
    /// How long the hold lasts at most.
    pub lease: Duration,
}

/// Why a hold was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// A budget would go over its cap.
    Budget {
        scope: String,
        cap_micros: i64,
        resets_at_ms: i64,
    },
    /// Requests per minute.
    Rpm { limit: u64, retry_after_s: u64 },
    /// Tokens per minute.
    Tpm { limit: u64, retry_after_s: u64 },
    /// Requests per UTC day.
    DailyRequests { limit: u64, resets_at_ms: i64 },
}

/// One group of `corvid usage --by …`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageGroup {
    /// The key's or team's name, the model, or the `YYYY-MM-DD` day; `-` for none.
    pub group: String,
    pub requests: i64,
    pub errors: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cost_micros: i64,
}

/// What `corvid usage --by` groups by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UsageBy {
    Key,
    Team,
    Model,
    Day,
}

/// Keys, teams, budgets and holds, on either store.
#[async_trait::async_trait]
pub trait TeamStore: Send + Sync + std::fmt::Debug {
    async fn create_team(&self, spec: &TeamSpec) -> Result<TeamInfo, StoreError>;
    async fn list_teams(&self) -> Result<Vec<TeamInfo>, StoreError>;
    /// Creates a key; the returned [`ClientKey`] is the only time its secret exists outside
    /// the caller.
    async fn create_key(&self, spec: &KeySpec) -> Result<(KeyInfo, ClientKey), StoreError>;
    async fn list_keys(&self) -> Result<Vec<KeyInfo>, StoreError>;
    /// Revokes the key called `name`; false when there is none (or it was revoked already).
    async fn revoke_key(&self, name: &str) -> Result<bool, StoreError>;
    /// The key with this public id and the SHA-256 of its secret.
    async fn key_by_public_id(
        &self,
        public_id: &str,
    ) -> Result<Option<(KeyInfo, [u8; 32])>, StoreError>;
    /// Takes `hold` atomically against every budget and limit, or refuses and takes nothing.
    async fn hold(&self, hold: &Hold) -> Result<Option<Refusal>, StoreError>;
    /// Gives a hold back unspent (the request never reached a provider).
    async fn release(&self, request_id: &str) -> Result<(), StoreError>;
    /// Records that `instance` is alive.
    async fn heartbeat(&self, instance: &str) -> Result<(), StoreError>;
    /// Extends to `lease` from now the holds `instance` took for `request_ids`, requests still
    /// running (a stream longer than the lease is not swept under its feet).
    async fn renew(
        &self,
        instance: &str,
        request_ids: &[String],
        lease: Duration,
    ) -> Result<(), StoreError>;
    /// Settles the holds whose lease ended or whose instance stopped heartbeating for
    /// `dead_after`, at their estimate; returns how many.
    async fn sweep(&self, dead_after: Duration) -> Result<u64, StoreError>;
    /// Every budget as it stands.
    async fn budgets(&self) -> Result<Vec<BudgetState>, StoreError>;
    /// Usage grouped by key, team, model or day, at or after `since_ms`.
    async fn usage_by(&self, by: UsageBy, since_ms: i64) -> Result<Vec<UsageGroup>, StoreError>;
    /// Requests admitted today (UTC) for the key `key_id`, as a daily quota counts them.
    async fn requests_today(&self, key_id: i64) -> Result<u64, StoreError>;
    /// Whether the store answers.
    async fn ping(&self) -> Result<(), StoreError>;
}

/// A fresh request id: 32 random hex digits (what the ledger keys a request and its hold by).
pub fn new_request_id() -> String {
    use rand::Rng;
    let bits: u128 = rand::rng().random();
    format!("{bits:032x}")
}

/// The end of the window of `period` that contains `now_ms` (UTC), in Unix milliseconds, and
/// its start.
pub fn window_of(period: Period, now_ms: i64) -> (i64, i64) {
    const DAY: i64 = 86_400_000;
    let day_start = now_ms.div_euclid(DAY) * DAY;
    match period {
        Period::Day => (day_start, day_start + DAY),
        Period::Month => {
            let (year, month, _) = civil_from_days(day_start / DAY);
            let start = days_from_civil(year, month, 1) * DAY;
            let (next_year, next_month) = if month == 12 {
                (year + 1, 1)
            } else {
                (year, month + 1)
            };
            (start, days_from_civil(next_year, next_month, 1) * DAY)
        }
    }
}

/// Days since 1970-01-01 → (year, month, day) (proleptic Gregorian).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year - era * 400;
    let month = i64::from(month);
    let doy = (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests;

//! `[store]` in `config.toml`: where the ledger, keys and budgets live, and whether clients
//! must present a corvid key.
//!
//! ```toml
//! [store]
//! url = "postgres://corvid@db.lan/corvid"   # or CORVID_DATABASE_URL; absent: the SQLite file
//! require_keys = true                       # default: true when corvid listens beyond loopback
//! lease_s = 600                             # how long a dead instance's budget hold lasts
//! key_cache_ms = 2000                       # how stale a key lookup may be (revocations)
//! daily_budget_usd = 5.0                    # one user's daily budget (requests without a key)
//! daily_requests = 500                      # one user's daily request quota (likewise)
//! ```
//!
//! A database URL may carry a password: put it in the env file as `CORVID_DATABASE_URL`
//! rather than in `config.toml`.

use std::time::Duration;

use crate::ConfigError;

/// The store settings.
#[derive(Debug, Clone, PartialEq)]
pub struct StoreConfig {
    /// `postgres://…` for team mode; `None` keeps the embedded SQLite file.
    pub url: Option<String>,
    /// `redis://…`, an optional shared counter in front of PostgreSQL.
    pub redis_url: Option<String>,
    /// Clients must present a corvid key; `None` means "when listening beyond loopback".
    pub require_keys: Option<bool>,
    /// How long a budget reservation outlives an instance that stopped heartbeating.
    pub lease: Duration,
    /// How long a key lookup is cached (a revocation takes at most this long to reach every
    /// instance).
    pub key_cache: Duration,
    /// Output tokens assumed for a request that sets no output cap, for its budget hold.
    pub default_output_tokens: u64,
    /// A daily budget in US dollars for requests without a client key (one user on loopback).
    pub daily_budget_usd: Option<f64>,
    /// A daily quota of requests for requests without a client key (one user on loopback).
    pub daily_requests: Option<u32>,
}

impl Default for StoreConfig {
    fn default() -> Self {
        Self {
            url: None,
            redis_url: None,
            require_keys: None,
            lease: Duration::from_secs(600),
            key_cache: Duration::from_millis(2000),
            default_output_tokens: 4096,
            daily_budget_usd: None,
            daily_requests: None,
        }
    }
}

impl StoreConfig {
    /// Whether the store is PostgreSQL.
    pub fn is_postgres(&self) -> bool {
        self.url
            .as_deref()
            .is_some_and(|url| url.starts_with("postgres://") || url.starts_with("postgresql://"))
    }

    /// Whether clients must present a key when corvid binds `host`.
    pub fn keys_required(&self, host: &str) -> bool {
        self.require_keys.unwrap_or_else(|| !is_loopback(host))
    }
}

fn is_loopback(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    bare.eq_ignore_ascii_case("localhost")
        || bare
            .parse::<std::net::IpAddr>()
            .is_ok_and(|address| address.is_loopback())
}

const STORE_KEYS: &[&str] = &[
    "url",
    "redis_url",
    "require_keys",
    "lease_s",
    "key_cache_ms",
    "default_output_tokens",
    "daily_budget_usd",
    "daily_requests",
];

/// Reads `[store]`; `env_url` (`CORVID_DATABASE_URL`) wins over `url`, `env_redis`
/// (`CORVID_REDIS_URL`) over `redis_url`, `env_require` (`CORVID_REQUIRE_KEYS`) over
/// `require_keys`.
pub(crate) fn read_store(
    value: Option<&toml::Value>,
    source: &str,
    env_url: Option<String>,
    env_redis: Option<String>,
    env_require: Option<bool>,
) -> Result<StoreConfig, ConfigError> {
    let mut store = StoreConfig::default();
    let invalid = |key: &str, message: String| ConfigError::Invalid {
        key: format!("store.{key}"),
        source_name: source.to_owned(),
        message,
    };
    if let Some(value) = value {
        let table = value.as_table().ok_or_else(|| ConfigError::Invalid {
            key: "store".to_owned(),
            source_name: source.to_owned(),
            message: "expected a [store] table".to_owned(),
        })?;
        for key in table.keys() {
            if !STORE_KEYS.contains(&key.as_str()) {
                return Err(invalid(
                    key,
                    format!("unknown key (accepted: {})", STORE_KEYS.join(", ")),
                ));
            }
        }
        let text = |key: &str| -> Result<Option<String>, ConfigError> {
            match table.get(key) {
                None => Ok(None),
                Some(toml::Value::String(text)) if !text.trim().is_empty() => {
                    Ok(Some(text.trim().to_owned()))
                }
                Some(other) => Err(invalid(
                    key,
                    format!("expected a non-empty string, got a {}", other.type_str()),
                )),
            }
        };
        let whole = |key: &str, low: i64, high: i64| -> Result<Option<u64>, ConfigError> {
            match table.get(key) {
                None => Ok(None),
                Some(toml::Value::Integer(number)) if (low..=high).contains(number) => {
                    Ok(u64::try_from(*number).ok())
                }
                Some(other) => Err(invalid(
                    key,
                    format!("expected a whole number from {low} to {high}, got {other:?}"),
                )),
            }
        };
        store.url = text("url")?;
        store.redis_url = text("redis_url")?;
        store.require_keys = match table.get("require_keys") {
            None => None,
            Some(toml::Value::Boolean(flag)) => Some(*flag),
            Some(other) => {
                return Err(invalid(
                    "require_keys",
                    format!("expected true or false, got a {}", other.type_str()),
                ));
            }
        };
        if let Some(seconds) = whole("lease_s", 1, 86_400)? {
            store.lease = Duration::from_secs(seconds);
        }
        if let Some(millis) = whole("key_cache_ms", 0, 60_000)? {
            store.key_cache = Duration::from_millis(millis);
        }
        if let Some(tokens) = whole("default_output_tokens", 1, 10_000_000)? {
            store.default_output_tokens = tokens;
        }
        store.daily_requests = whole("daily_requests", 1, i64::from(u32::MAX))?
            .and_then(|requests| u32::try_from(requests).ok());
        store.daily_budget_usd = match table.get("daily_budget_usd") {
            None => None,
            Some(toml::Value::Float(usd)) if usd.is_finite() && *usd >= 0.0 => Some(*usd),
            Some(toml::Value::Integer(usd)) if *usd >= 0 => Some(*usd as f64),
            Some(other) => {
                return Err(invalid(
                    "daily_budget_usd",
                    format!("expected an amount of US dollars, got {other:?}"),
                ));
            }
        };
    }
    if let Some(url) = env_url {
        store.url = Some(url.trim().to_owned());
    }
    if let Some(url) = env_redis {
        store.redis_url = Some(url.trim().to_owned());
    }
    if env_require.is_some() {
        store.require_keys = env_require;
    }
    if let Some(url) = &store.url
        && !store.is_postgres()
    {
        return Err(invalid(
            "url",
            format!(
                "expected a postgres:// or postgresql:// URL, got one starting {:?}",
                url.split(':').next().unwrap_or_default()
            ),
        ));
    }
    Ok(store)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> toml::Value {
        toml::from_str::<toml::Table>(text)
            .map(toml::Value::Table)
            .unwrap()
    }

    #[test]
    fn defaults_keep_sqlite_and_require_keys_beyond_loopback() {
        let store = read_store(None, "config.toml", None, None, None).unwrap();
        assert!(!store.is_postgres());
        assert!(!store.keys_required("127.0.0.1"));
        assert!(!store.keys_required("[::1]"));
        assert!(store.keys_required("0.0.0.0"));
    }

    #[test]
    fn the_environment_wins_and_bad_urls_are_refused() {
        let table = parse(
            "url = \"postgres://a/b\"\nrequire_keys = false\nlease_s = 5\ndaily_requests = 50",
        );
        let store = read_store(
            Some(&table),
            "config.toml",
            Some("postgresql://c/d".into()),
            None,
            Some(true),
        )
        .unwrap();
        assert_eq!(store.url.as_deref(), Some("postgresql://c/d"));
        assert_eq!(store.require_keys, Some(true));
        assert_eq!(store.lease, Duration::from_secs(5));
        assert_eq!(store.daily_requests, Some(50));
        let bad = parse("url = \"mysql://x\"");
        assert!(read_store(Some(&bad), "config.toml", None, None, None).is_err());
        let unknown = parse("nope = 1");
        assert!(read_store(Some(&unknown), "config.toml", None, None, None).is_err());
    }
}

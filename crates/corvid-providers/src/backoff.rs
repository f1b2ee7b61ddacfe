//! When to try a failed upstream call again: the backoff schedule, `Retry-After` values, and
//! [`Retries`], the one retry step every backend's loop takes (HTTP providers and the Zed
//! account alike), so the rules — what may be retried, how long to wait, how often — live here
//! once.

use std::time::{Duration, SystemTime};

use crate::error::{ProviderError, Retry};

/// The longest `Retry-After` corvid waits out itself; a longer one goes back to the client.
pub(crate) const MAX_RETRY_AFTER: Duration = Duration::from_secs(30);

/// Delay before retry number `attempt` (0-based): `min(0.5·2^attempt, 8)·(0.5 + rand[0,1))`
/// seconds, the supergrok-zed schedule.
pub fn backoff_delay(attempt: u32) -> Duration {
    let base = (0.5 * 2f64.powi(attempt.min(16) as i32)).min(8.0);
    let jitter = 0.5 + rand::random::<f64>();
    Duration::from_secs_f64(base * jitter)
}

/// The retries of one call: how many were made, and whether another may follow a failure.
#[derive(Debug)]
pub(crate) struct Retries {
    max: u32,
    made: u32,
}

impl Retries {
    /// At most `max` retries (`max_retries` in config.toml).
    pub(crate) fn new(max: u32) -> Self {
        Self { max, made: 0 }
    }

    /// After `error` (before any output reached the caller): how long to wait before trying
    /// again, or `None` to give up — the error says no ([`ProviderError::retry`]), the retries
    /// are spent, or the upstream asks for a wait longer than corvid waits itself (it goes back
    /// to the caller as `Retry-After`). Logs the retry.
    pub(crate) fn after(&mut self, error: &ProviderError) -> Option<Duration> {
        let delay = match error.retry() {
            Retry::No => return None,
            Retry::After(_) if self.made >= self.max => return None,
            Retry::After(Some(wait)) if wait > MAX_RETRY_AFTER => return None,
            Retry::After(Some(wait)) => wait,
            Retry::After(None) => backoff_delay(self.made),
        };
        self.made += 1;
        tracing::warn!(
            error = %crate::error_chain(error),
            retry = self.made,
            of = self.max,
            delay_ms = delay.as_millis() as u64,
            "upstream call failed before any output; retrying"
        );
        Some(delay)
    }
}

/// Parses a `Retry-After` value: delta seconds (fractions allowed, as some servers send) or an
/// HTTP date. A date in the past is zero.
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(
        when.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_follows_the_seed_schedule() {
        for (attempt, base) in [(0, 0.5), (1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (9, 8.0)] {
            for _ in 0..50 {
                let delay = backoff_delay(attempt).as_secs_f64();
                assert!(
                    delay >= base * 0.5 && delay < base * 1.5,
                    "attempt {attempt}: {delay}"
                );
            }
        }
    }

    #[test]
    fn retries_follow_the_errors_decision_the_longest_wait_and_the_budget() {
        use crate::error::Refusal;
        use corvid_wire::model::ErrorKind;
        let refused = |retryable, retry_after| {
            ProviderError::Refused(Refusal {
                status: http::StatusCode::SERVICE_UNAVAILABLE,
                kind: ErrorKind::Overloaded,
                code: None,
                message: "overloaded".to_owned(),
                retry_after,
                retryable,
            })
        };
        let mut retries = Retries::new(2);
        assert_eq!(
            retries.after(&refused(false, None)),
            None,
            "the error says no"
        );
        assert_eq!(
            retries.after(&refused(true, Some(Duration::from_secs(3)))),
            Some(Duration::from_secs(3)),
            "the upstream's wait"
        );
        assert_eq!(
            retries.after(&refused(true, Some(Duration::from_secs(31)))),
            None,
            "longer than corvid waits itself: back to the caller"
        );
        let second = retries.after(&refused(true, None)).unwrap().as_secs_f64();
        assert!(
            (0.5..1.5).contains(&second),
            "the schedule's second step: {second}"
        );
        assert_eq!(
            retries.after(&refused(true, None)),
            None,
            "the budget is spent"
        );
    }

    #[test]
    fn retry_after_forms() {
        assert_eq!(parse_retry_after("2"), Some(Duration::from_secs(2)));
        assert_eq!(parse_retry_after("1.5"), Some(Duration::from_millis(1500)));
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"),
            Some(Duration::ZERO)
        );
        let future = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(120));
        let parsed = parse_retry_after(&future).unwrap();
        assert!(parsed > Duration::from_secs(100) && parsed <= Duration::from_secs(120));
        assert_eq!(parse_retry_after("soon"), None);
        assert_eq!(parse_retry_after("-3"), None);
    }
}

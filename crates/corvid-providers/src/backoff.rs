use std::time::{Duration, SystemTime};

/// The longest `Retry-After` corvid waits out itself; a longer one goes back to the client.
pub(crate) const MAX_RETRY_AFTER: Duration = Duration::from_secs(30);

/// Delay before retry number `attempt` (0-based): `min(0.5·2^attempt, 8)·(0.5 + rand[0,1))`
/// seconds, the supergrok-zed schedule.
pub fn backoff_delay(attempt: u32) -> Duration {
    let base = (0.5 * 2f64.powi(attempt.min(16) as i32)).min(8.0);
    let jitter = 0.5 + rand::random::<f64>();
    Duration::from_secs_f64(base * jitter)
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

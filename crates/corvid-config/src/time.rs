//! Reading timestamps (Unix seconds, UTC: the protocol's `*_at`, a token's expiry) as a calendar
//! date and time, for the front ends, status lines and logs that show them. No time zone but
//! UTC, no clock: just the arithmetic. It sits in this leaf crate so that every crate that shows
//! a time (corvid-auth, the agent, the faces) can reach it without depending on another.

/// A moment in UTC, proleptic Gregorian.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UtcTime {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
}

impl UtcTime {
    /// The moment `unix_seconds` after 1970-01-01T00:00:00Z (negative: before it).
    pub fn from_unix(unix_seconds: i64) -> Self {
        let days = unix_seconds.div_euclid(86_400);
        let of_day = unix_seconds.rem_euclid(86_400);
        let (year, month, day) = civil_from_days(days);
        Self {
            year,
            month,
            day,
            // In 0..86_400, so every part fits.
            hour: (of_day / 3_600) as u32,
            minute: (of_day % 3_600 / 60) as u32,
            second: (of_day % 60) as u32,
        }
    }

    /// `2030-03-17`.
    pub fn date(&self) -> String {
        format!("{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }

    /// `2030-03-17T17:46:40Z`.
    pub fn rfc3339(&self) -> String {
        format!(
            "{}T{:02}:{:02}:{:02}Z",
            self.date(),
            self.hour,
            self.minute,
            self.second
        )
    }
}

/// Days since 1970-01-01 to (year, month, day): Howard Hinnant's civil-from-days.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    // Both in range by construction (1..=31 and 1..=12).
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::UtcTime;

    #[test]
    fn unix_seconds_read_as_dates_across_leap_days_centuries_and_before_1970() {
        for (seconds, expected) in [
            (0, "1970-01-01T00:00:00Z"),
            (951_782_400, "2000-02-29T00:00:00Z"),
            (1_900_000_000, "2030-03-17T17:46:40Z"),
            (-60, "1969-12-31T23:59:00Z"),
            (1_764_547_200 + 3661, "2025-12-01T01:01:01Z"),
            (4_107_542_399, "2100-02-28T23:59:59Z"),
            (4_107_542_400, "2100-03-01T00:00:00Z"),
        ] {
            assert_eq!(UtcTime::from_unix(seconds).rfc3339(), expected, "{seconds}");
        }
        assert_eq!(UtcTime::from_unix(1_764_633_600).date(), "2025-12-02");
    }
}

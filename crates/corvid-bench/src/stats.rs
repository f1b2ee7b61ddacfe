//! Percentiles and ratios. Samples are durations in nanoseconds; reports
//! are in microseconds.

use serde::Serialize;

/// Nearest-rank percentile of an ascending slice: the smallest sample such
/// that at least `percent`% of the samples are less than or equal to it.
pub(crate) fn percentile(sorted: &[u64], percent: f64) -> Option<u64> {
    if sorted.is_empty() || !(0.0..=100.0).contains(&percent) {
        return None;
    }
    // Nearest rank is 1-based: ceil(p/100 × n), at least 1.
    let rank = (percent / 100.0 * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted.get(rank.min(sorted.len()) - 1).copied()
}

/// p50 / p99 / mean of one series, in microseconds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub(crate) struct Summary {
    pub(crate) samples: usize,
    pub(crate) p50_us: f64,
    pub(crate) p99_us: f64,
    pub(crate) mean_us: f64,
}

impl Summary {
    /// `None` when there are no samples.
    pub(crate) fn of(mut nanos: Vec<u64>) -> Option<Self> {
        nanos.sort_unstable();
        let p50 = percentile(&nanos, 50.0)?;
        let p99 = percentile(&nanos, 99.0)?;
        let total: u128 = nanos.iter().map(|&sample| u128::from(sample)).sum();
        let mean = total as f64 / nanos.len() as f64;
        Some(Self {
            samples: nanos.len(),
            p50_us: micros(p50),
            p99_us: micros(p99),
            mean_us: mean / 1_000.0,
        })
    }
}

fn micros(nanos: u64) -> f64 {
    nanos as f64 / 1_000.0
}

/// What a hop adds on top of the direct connection, in microseconds. It can
/// come out slightly negative through noise; it is reported as measured.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub(crate) struct Added {
    pub(crate) p50_us: f64,
    pub(crate) p99_us: f64,
}

impl Added {
    pub(crate) fn over(target: &Summary, direct: &Summary) -> Self {
        Self {
            p50_us: target.p50_us - direct.p50_us,
            p99_us: target.p99_us - direct.p99_us,
        }
    }
}

/// `numerator / denominator`, or `None` when the denominator is not a
/// positive number (an "added" figure of zero or less makes a ratio
/// meaningless rather than infinite).
pub(crate) fn ratio(numerator: f64, denominator: f64) -> Option<f64> {
    if denominator > 0.0 && numerator.is_finite() && denominator.is_finite() {
        Some(numerator / denominator)
    } else {
        None
    }
}

#[cfg(test)]
mod tests;

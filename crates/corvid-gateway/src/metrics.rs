//! `/metrics`: requests, errors, tokens, cost, latency and time to first byte in Prometheus'
//! text format, from the same records as the usage ledger.
//!
//! Labels are bounded: `provider`, `model`, `status`, `instance` (`CORVID_INSTANCE`, else the
//! host name). A model no provider lists and no price names is counted as `other`, so made-up
//! model names cannot grow the series. Latencies are true histograms with explicit buckets, so
//! they sum across instances.

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::fmt::Write as _;

use corvid_store::{Outcome, UsageRecord};

/// Upper bounds of the latency buckets, in seconds.
const BUCKETS: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0,
];

#[derive(Debug, Default, Clone)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    sum: f64,
    count: u64,
}

impl Histogram {
    fn observe(&mut self, seconds: f64) {
        for (count, bound) in self.counts.iter_mut().zip(BUCKETS) {
            if seconds <= bound {
                *count += 1;
            }
        }
        self.sum += seconds;
        self.count += 1;
    }
}

#[derive(Debug, Default, Clone)]
struct Series {
    requests: u64,
    errors: u64,
    input_tokens: u64,
    output_tokens: u64,
    cost_micros: u64,
    latency: Histogram,
    ttfb: Histogram,
}

/// A metric family: its name, its help text, and how to read it from a series.
type Family<T> = (&'static str, &'static str, fn(&Series) -> T);

/// The process's counters.
#[derive(Debug)]
pub(crate) struct Metrics {
    instance: String,
    series: Mutex<BTreeMap<(String, String, u16), Series>>,
}

impl Metrics {
    pub(crate) fn new() -> Self {
        let instance = std::env::var("CORVID_INSTANCE")
            .ok()
            .filter(|name| !name.trim().is_empty())
            .or_else(|| {
                std::fs::read_to_string("/proc/sys/kernel/hostname")
                    .ok()
                    .map(|name| name.trim().to_owned())
            })
            .unwrap_or_else(|| "local".to_owned());
        Self {
            instance,
            series: Mutex::default(),
        }
    }

    /// Counts `record`; `known` says whether its model may be a label of its own.
    pub(crate) fn observe(&self, record: &UsageRecord, known: bool) {
        let model = if known {
            record.model.as_str()
        } else {
            "other"
        };
        let key = (record.provider.clone(), model.to_owned(), record.status);
        let mut series = self.series.lock();
        let entry = series.entry(key).or_default();
        entry.requests += 1;
        if matches!(record.outcome, Outcome::Error | Outcome::StreamError) {
            entry.errors += 1;
        }
        entry.input_tokens += record.tokens.total_input();
        entry.output_tokens += record.tokens.output;
        if let Some(billing) = &record.billing {
            entry.cost_micros += u64::try_from(billing.cost_micros).unwrap_or(0);
        }
        entry.latency.observe(record.latency_ms as f64 / 1000.0);
        if let Some(ttfb) = record.ttfb_ms {
            entry.ttfb.observe(ttfb as f64 / 1000.0);
        }
    }

    /// The text exposition.
    pub(crate) fn render(&self) -> String {
        let series = self.series.lock().clone();
        let mut out = String::new();
        let labels = |(provider, model, status): &(String, String, u16)| {
            format!(
                "provider=\"{}\",model=\"{}\",status=\"{status}\",instance=\"{}\"",
                escape(provider),
                escape(model),
                escape(&self.instance)
            )
        };
        let counters: [Family<u64>; 5] = [
            ("corvid_requests_total", "Requests answered.", |s| {
                s.requests
            }),
            (
                "corvid_request_errors_total",
                "Requests that failed.",
                |s| s.errors,
            ),
            (
                "corvid_input_tokens_total",
                "Input tokens, cached included.",
                |s| s.input_tokens,
            ),
            (
                "corvid_output_tokens_total",
                "Output tokens, reasoning included.",
                |s| s.output_tokens,
            ),
            (
                "corvid_cost_micro_dollars_total",
                "Billed cost in micro-dollars.",
                |s| s.cost_micros,
            ),
        ];
        for (name, help, value) in counters {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
            for (key, entry) in &series {
                let _ = writeln!(out, "{name}{{{}}} {}", labels(key), value(entry));
            }
        }
        let histograms: [Family<Histogram>; 2] = [
            (
                "corvid_request_duration_seconds",
                "From arrival to the last byte.",
                |s| s.latency.clone(),
            ),
            (
                "corvid_time_to_first_byte_seconds",
                "From arrival to the first byte.",
                |s| s.ttfb.clone(),
            ),
        ];
        for (name, help, histogram) in histograms {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
            for (key, entry) in &series {
                let histogram = histogram(entry);
                let labels = labels(key);
                for (count, bound) in histogram.counts.iter().zip(BUCKETS) {
                    let _ = writeln!(out, "{name}_bucket{{{labels},le=\"{bound}\"}} {count}");
                }
                let _ = writeln!(
                    out,
                    "{name}_bucket{{{labels},le=\"+Inf\"}} {}",
                    histogram.count
                );
                let _ = writeln!(out, "{name}_sum{{{labels}}} {}", histogram.sum);
                let _ = writeln!(out, "{name}_count{{{labels}}} {}", histogram.count);
            }
        }
        out
    }
}

fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use corvid_store::Tokens;

    fn record(model: &str, latency_ms: u64) -> UsageRecord {
        UsageRecord {
            at: 0,
            front_end: "gateway".into(),
            route: "chat_completions".into(),
            inbound: "openai-chat".into(),
            provider: "xai".into(),
            model: model.into(),
            status: 200,
            outcome: Outcome::Ok,
            latency_ms,
            ttfb_ms: Some(1),
            tokens: Tokens {
                input: 3,
                output: 2,
                ..Tokens::default()
            },
            attempts: 1,
            prompt: None,
            key_index: None,
            rule: None,
            billing: None,
        }
    }

    #[test]
    fn unknown_models_share_one_series_and_latency_is_a_histogram() {
        let metrics = Metrics::new();
        metrics.observe(&record("grok-4", 30), true);
        for index in 0..1000 {
            metrics.observe(&record(&format!("bogus-{index}"), 3), false);
        }
        let text = metrics.render();
        let requests: Vec<&str> = text
            .lines()
            .filter(|line| line.starts_with("corvid_requests_total{"))
            .collect();
        assert_eq!(requests.len(), 2, "{requests:?}");
        assert!(text.contains("model=\"other\""));
        assert!(!text.contains("bogus-"));
        assert!(
            text.contains(
                "corvid_request_duration_seconds_bucket{provider=\"xai\",model=\"grok-4\""
            )
        );
        assert!(text.contains("le=\"0.05\"} 1"));
        assert!(text.contains("# TYPE corvid_request_duration_seconds histogram"));
    }
}

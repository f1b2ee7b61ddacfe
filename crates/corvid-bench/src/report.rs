//! Figures per target, the derived "added" numbers and ratios, the target
//! checks, and their output as a table (stdout) and JSON (file).

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::Context as _;
use serde::Serialize;

use crate::load::Throughput;
use crate::procs::Memory;
use crate::run::Settings;
use crate::stats::{Added, Summary, ratio};

mod table;

/// Target names, in the order the report lists them.
pub(crate) const DIRECT: &str = "direct";
pub(crate) const FLOOR: &str = "floor";
/// corvid passing OpenAI chat through.
pub(crate) const CORVID: &str = "corvid";
/// corvid translating Anthropic Messages to OpenAI chat and the answer back.
pub(crate) const TRANSLATION: &str = "translation";
/// The Claude Code-sized request (~4.7 KB, three tools) straight to the mock: the baseline of
/// the three targets below.
pub(crate) const DIRECT_CC: &str = "direct-cc";
/// corvid passing the Claude Code-sized request through, as OpenAI chat.
pub(crate) const CORVID_CC: &str = "corvid-cc";
/// corvid translating the Claude Code-sized request from Anthropic Messages to chat.
pub(crate) const ANTHROPIC_CC: &str = "anthropic-cc";
/// corvid translating the Claude Code-sized request from OpenAI Responses to chat.
pub(crate) const RESPONSES_CC: &str = "responses-cc";

/// Issue 25's targets, each translation of the Claude Code-sized request relative to corvid
/// passing the same conversation through.
const MAX_TRANSLATED_ADDED_P50_RATIO: f64 = 1.5;
const MIN_TRANSLATED_THROUGHPUT_RATIO: f64 = 0.6;

/// Issue targets, corvid relative to the floor.
const MAX_ADDED_P50_RATIO: f64 = 1.5;
const MIN_THROUGHPUT_RATIO: f64 = 0.7;
/// Issue 25's tail and throughput targets for the pass-through (its throughput is measured at
/// concurrency 10: `--concurrency 10`).
const MAX_ADDED_P99_RATIO: f64 = 2.0;
const MIN_THROUGHPUT_RATIO_ISSUE_25: f64 = 0.8;
const MAX_IDLE_RSS_KIB: u64 = 15 * 1024;
/// "Flat under load": from the middle to the end of the throughput window,
/// RSS may grow by at most 1 MiB plus 5% (allocator noise), no more.
const FLAT_SLACK_KIB: u64 = 1024;
const FLAT_SLACK_FRACTION: f64 = 0.05;

/// Memory readings of one process at the points where the phases change.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub(crate) struct MemoryTrace {
    pub(crate) idle: Option<Memory>,
    pub(crate) after_latency: Option<Memory>,
    pub(crate) mid_load: Option<Memory>,
    pub(crate) after_load: Option<Memory>,
    pub(crate) settled: Option<Memory>,
}

#[derive(Debug, Serialize)]
pub(crate) struct TargetReport {
    pub(crate) name: String,
    pub(crate) ready_ms: Option<f64>,
    pub(crate) error: Option<String>,
    pub(crate) latency: Option<Summary>,
    pub(crate) added_latency: Option<Added>,
    pub(crate) throughput: Option<Throughput>,
    pub(crate) ttfb: Option<Summary>,
    pub(crate) added_ttfb: Option<Added>,
    pub(crate) memory: Option<MemoryTrace>,
}

impl TargetReport {
    pub(crate) fn new(name: &str, ready_after: Option<Duration>) -> Self {
        Self {
            name: name.to_owned(),
            ready_ms: ready_after.map(|ready| ready.as_secs_f64() * 1_000.0),
            error: None,
            latency: None,
            added_latency: None,
            throughput: None,
            ttfb: None,
            added_ttfb: None,
            memory: None,
        }
    }
}

/// One target's figures divided by another's.
#[derive(Debug, Default, Serialize)]
pub(crate) struct Ratios {
    pub(crate) added_latency_p50: Option<f64>,
    pub(crate) added_latency_p99: Option<f64>,
    pub(crate) throughput: Option<f64>,
    pub(crate) added_ttfb_p50: Option<f64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Verdict {
    Pass,
    Miss,
    /// Not measured (corvid unavailable or failed).
    Skip,
}

impl Verdict {
    fn of(measured: Option<bool>) -> Self {
        match measured {
            Some(true) => Self::Pass,
            Some(false) => Self::Miss,
            None => Self::Skip,
        }
    }
}

#[derive(Debug, Serialize)]
pub(crate) struct Check {
    pub(crate) target: &'static str,
    pub(crate) verdict: Verdict,
    pub(crate) detail: String,
}

#[derive(Debug, Serialize)]
pub(crate) struct Report {
    pub(crate) unix_time: u64,
    pub(crate) cpus: usize,
    pub(crate) settings: Settings,
    pub(crate) corvid_program: String,
    /// The CPU the sequential phases ran on, when they were pinned (see `pin`).
    pub(crate) pinned_cpu: Option<u32>,
    pub(crate) targets: Vec<TargetReport>,
    pub(crate) corvid_to_floor: Ratios,
    pub(crate) translation_to_floor: Ratios,
    /// What translating costs over passing through, in the same corvid.
    pub(crate) translation_to_corvid: Ratios,
    /// The Claude Code-sized request: Anthropic → chat over the chat pass-through.
    pub(crate) anthropic_cc_to_corvid_cc: Ratios,
    /// The Claude Code-sized request: Responses → chat over the chat pass-through.
    pub(crate) responses_cc_to_corvid_cc: Ratios,
    pub(crate) checks: Vec<Check>,
}

impl Report {
    /// `targets` are found by name; `direct` is the baseline of every "added" figure.
    pub(crate) fn new(
        settings: Settings,
        corvid_program: &Path,
        mut targets: Vec<TargetReport>,
    ) -> Self {
        // Each request shape has its own direct baseline.
        let baseline = |name: &str| {
            let direct = targets.iter().find(|target| target.name == name);
            (
                direct.and_then(|direct| direct.latency),
                direct.and_then(|direct| direct.ttfb),
            )
        };
        let (short, claude_code) = (baseline(DIRECT), baseline(DIRECT_CC));
        for target in targets
            .iter_mut()
            .filter(|target| target.name != DIRECT && target.name != DIRECT_CC)
        {
            let (latency, ttfb) = if target.name.ends_with("-cc") {
                claude_code
            } else {
                short
            };
            target.added_latency = added(target.latency, latency);
            target.added_ttfb = added(target.ttfb, ttfb);
        }
        let named = |name: &str| targets.iter().find(|target| target.name == name);
        let (floor, corvid, translation) = (named(FLOOR), named(CORVID), named(TRANSLATION));
        let ratios = Ratios::of(corvid, floor);
        let translation_to_floor = Ratios::of(translation, floor);
        let translation_to_corvid = Ratios::of(translation, corvid);
        let anthropic_cc_to_corvid_cc = Ratios::of(named(ANTHROPIC_CC), named(CORVID_CC));
        let responses_cc_to_corvid_cc = Ratios::of(named(RESPONSES_CC), named(CORVID_CC));
        let mut checks = checks(&ratios, corvid.and_then(|corvid| corvid.memory));
        checks.extend(translation_checks(
            &anthropic_cc_to_corvid_cc,
            &responses_cc_to_corvid_cc,
        ));
        Self {
            unix_time: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|now| now.as_secs())
                .unwrap_or(0),
            cpus: std::thread::available_parallelism()
                .map(usize::from)
                .unwrap_or(0),
            settings,
            corvid_program: corvid_program.display().to_string(),
            pinned_cpu: None,
            targets,
            corvid_to_floor: ratios,
            translation_to_floor,
            translation_to_corvid,
            anthropic_cc_to_corvid_cc,
            responses_cc_to_corvid_cc,
            checks,
        }
    }

    pub(crate) fn print(&self) {
        table::print(self);
    }

    pub(crate) fn write_json(&self, path: &Path) -> anyhow::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("create {}", dir.display()))?;
        }
        let json = serde_json::to_string_pretty(self)?;
        std::fs::write(path, json + "\n").with_context(|| format!("write {}", path.display()))
    }
}

impl Ratios {
    fn of(target: Option<&TargetReport>, reference: Option<&TargetReport>) -> Self {
        Self {
            added_latency_p50: relative(target, reference, |target| {
                target.added_latency.map(|added| added.p50_us)
            }),
            added_latency_p99: relative(target, reference, |target| {
                target.added_latency.map(|added| added.p99_us)
            }),
            throughput: relative(target, reference, |target| {
                target.throughput.as_ref().map(|load| load.rps)
            }),
            added_ttfb_p50: relative(target, reference, |target| {
                target.added_ttfb.map(|added| added.p50_us)
            }),
        }
    }
}

fn added(target: Option<Summary>, direct: Option<Summary>) -> Option<Added> {
    Some(Added::over(&target?, &direct?))
}

fn relative(
    target: Option<&TargetReport>,
    reference: Option<&TargetReport>,
    figure: impl Fn(&TargetReport) -> Option<f64>,
) -> Option<f64> {
    ratio(figure(target?)?, figure(reference?)?)
}

pub(crate) fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// Whether RSS stayed flat from the middle to the end of the load window.
pub(crate) fn flat(mid_load_kib: u64, after_load_kib: u64) -> bool {
    let slack = FLAT_SLACK_KIB + (mid_load_kib as f64 * FLAT_SLACK_FRACTION) as u64;
    after_load_kib <= mid_load_kib + slack
}

fn checks(ratios: &Ratios, memory: Option<MemoryTrace>) -> Vec<Check> {
    let memory = memory.unwrap_or_default();
    let idle = memory.idle.map(|idle| idle.rss_kib);
    let load = memory.mid_load.zip(memory.after_load);
    vec![
        Check {
            target: "corvid added p50 ≤ 1.5× floor's",
            verdict: Verdict::of(
                ratios
                    .added_latency_p50
                    .map(|value| value <= MAX_ADDED_P50_RATIO),
            ),
            detail: times(ratios.added_latency_p50),
        },
        Check {
            target: "corvid throughput ≥ 0.7× floor's",
            verdict: Verdict::of(ratios.throughput.map(|value| value >= MIN_THROUGHPUT_RATIO)),
            detail: times(ratios.throughput),
        },
        Check {
            target: "corvid added p99 ≤ 2× floor's",
            verdict: Verdict::of(
                ratios
                    .added_latency_p99
                    .map(|value| value <= MAX_ADDED_P99_RATIO),
            ),
            detail: times(ratios.added_latency_p99),
        },
        Check {
            target: "corvid throughput ≥ 0.8× floor's (at --concurrency 10)",
            verdict: Verdict::of(
                ratios
                    .throughput
                    .map(|value| value >= MIN_THROUGHPUT_RATIO_ISSUE_25),
            ),
            detail: times(ratios.throughput),
        },
        Check {
            target: "corvid RSS ≤ 15 MiB idle",
            verdict: Verdict::of(idle.map(|idle| idle <= MAX_IDLE_RSS_KIB)),
            detail: idle.map_or_else(
                || "not measured".to_owned(),
                |idle| format!("{:.1} MiB", mib(idle)),
            ),
        },
        Check {
            target: "corvid RSS flat under sustained load",
            verdict: Verdict::of(load.map(|(mid, end)| flat(mid.rss_kib, end.rss_kib))),
            detail: load.map_or_else(
                || "not measured".to_owned(),
                |(mid, end)| {
                    format!(
                        "mid-load {:.1} MiB → end of load {:.1} MiB",
                        mib(mid.rss_kib),
                        mib(end.rss_kib)
                    )
                },
            ),
        },
    ]
}

/// Issue 25: each translation of the Claude Code-sized request against its pass-through.
fn translation_checks(anthropic: &Ratios, responses: &Ratios) -> Vec<Check> {
    let mut checks = Vec::new();
    for (ratios, p50_target, rps_target) in [
        (
            anthropic,
            "anthropic-cc added p50 ≤ 1.5× corvid-cc's",
            "anthropic-cc throughput ≥ 0.6× corvid-cc's",
        ),
        (
            responses,
            "responses-cc added p50 ≤ 1.5× corvid-cc's",
            "responses-cc throughput ≥ 0.6× corvid-cc's",
        ),
    ] {
        checks.push(Check {
            target: p50_target,
            verdict: Verdict::of(
                ratios
                    .added_latency_p50
                    .map(|value| value <= MAX_TRANSLATED_ADDED_P50_RATIO),
            ),
            detail: times(ratios.added_latency_p50),
        });
        checks.push(Check {
            target: rps_target,
            verdict: Verdict::of(
                ratios
                    .throughput
                    .map(|value| value >= MIN_TRANSLATED_THROUGHPUT_RATIO),
            ),
            detail: times(ratios.throughput),
        });
    }
    checks
}

fn times(value: Option<f64>) -> String {
    value.map_or_else(|| "not measured".to_owned(), |value| format!("{value:.2}×"))
}

#[cfg(test)]
mod tests;

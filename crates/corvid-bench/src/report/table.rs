//! The human-readable table on stdout.

use super::{Report, TargetReport, Verdict, mib};
use crate::procs::Memory;
use crate::stats::{Added, Summary};

const DASH: &str = "—";

pub(super) fn print(report: &Report) {
    let settings = &report.settings;
    println!(
        "corvid-bench: loopback, {} CPUs shared by the servers and the load generator",
        report.cpus
    );
    for target in &report.targets {
        if let Some(ready) = target.ready_ms {
            println!("  {} ready {ready:.1} ms after spawn", target.name);
        }
    }
    println!("  corvid binary: {}", report.corvid_program);
    let floor_shape = if settings.floor_one_thread {
        "one thread (--floor-one-thread)"
    } else {
        "a worker per core"
    };
    println!("  floor runtime: {floor_shape}");
    match (report.pinned_cpu, settings.pin) {
        (Some(cpu), _) => println!(
            "  sequential phases: every process pinned to CPU {cpu} (--no-pin to let them float)"
        ),
        (None, true) => println!("  sequential phases: not pinned (taskset failed; see above)"),
        (None, false) => println!("  sequential phases: not pinned (--no-pin)"),
    }

    println!(
        "\nNon-streamed latency (concurrency 1, {} requests per target)",
        settings.requests
    );
    sequential(&report.targets, |target| {
        (target.latency, target.added_latency)
    });

    println!(
        "\nThroughput (concurrency {}, {} s per target)",
        settings.concurrency, settings.seconds
    );
    println!(
        "  {:<12} {:>10} {:>10} {:>10} {:>8}",
        "target", "req/s", "p50 µs", "p99 µs", "errors"
    );
    for target in &report.targets {
        match (&target.throughput, &target.error) {
            (Some(load), _) => println!(
                "  {:<12} {:>10.0} {:>10} {:>10} {:>8}",
                target.name,
                load.rps,
                us(load.latency.map(|latency| latency.p50_us)),
                us(load.latency.map(|latency| latency.p99_us)),
                load.errors
            ),
            (None, error) => unavailable(&target.name, error.as_deref()),
        }
    }

    println!(
        "\nStreamed time to first byte (concurrency 1, {} requests per target)",
        settings.stream_requests
    );
    sequential(&report.targets, |target| (target.ttfb, target.added_ttfb));

    println!("\nMemory, RSS in MiB (peak = VmHWM)");
    println!(
        "  {:<12} {:>8} {:>14} {:>9} {:>11} {:>8} {:>7}",
        "process", "idle", "after-latency", "mid-load", "after-load", "settled", "peak"
    );
    for target in &report.targets {
        let Some(memory) = target.memory else {
            continue;
        };
        let peak = [
            memory.settled,
            memory.after_load,
            memory.mid_load,
            memory.idle,
        ]
        .into_iter()
        .flatten()
        .map(|sample| sample.peak_kib)
        .max();
        println!(
            "  {:<12} {:>8} {:>14} {:>9} {:>11} {:>8} {:>7}",
            target.name,
            rss(memory.idle),
            rss(memory.after_latency),
            rss(memory.mid_load),
            rss(memory.after_load),
            rss(memory.settled),
            peak.map_or_else(|| DASH.to_owned(), |kib| format!("{:.1}", mib(kib)))
        );
    }

    println!();
    for (label, ratios) in [
        ("corvid / floor", &report.corvid_to_floor),
        ("translation / floor", &report.translation_to_floor),
        ("translation / corvid", &report.translation_to_corvid),
        (
            "anthropic-cc / corvid-cc",
            &report.anthropic_cc_to_corvid_cc,
        ),
        (
            "responses-cc / corvid-cc",
            &report.responses_cc_to_corvid_cc,
        ),
    ] {
        println!(
            "{label}: added p50 {}, added p99 {}, throughput {}, added TTFB p50 {}",
            times(ratios.added_latency_p50),
            times(ratios.added_latency_p99),
            times(ratios.throughput),
            times(ratios.added_ttfb_p50)
        );
    }
    println!("\nTargets (informational)");
    for check in &report.checks {
        let verdict = match check.verdict {
            Verdict::Pass => "PASS",
            Verdict::Miss => "MISS",
            Verdict::Skip => "SKIP",
        };
        println!("  {verdict}  {}: {}", check.target, check.detail);
    }
}

fn sequential(
    targets: &[TargetReport],
    figures: impl Fn(&TargetReport) -> (Option<Summary>, Option<Added>),
) {
    println!(
        "  {:<12} {:>10} {:>10} {:>10} {:>11} {:>11}",
        "target", "p50 µs", "p99 µs", "mean µs", "added p50", "added p99"
    );
    for target in targets {
        match (figures(target), &target.error) {
            ((Some(summary), added), _) => println!(
                "  {:<12} {:>10} {:>10} {:>10} {:>11} {:>11}",
                target.name,
                us(Some(summary.p50_us)),
                us(Some(summary.p99_us)),
                us(Some(summary.mean_us)),
                signed(added.map(|added| added.p50_us)),
                signed(added.map(|added| added.p99_us))
            ),
            ((None, _), error) => unavailable(&target.name, error.as_deref()),
        }
    }
}

fn unavailable(name: &str, error: Option<&str>) {
    // Errors are recorded as "<phase>: <details>"; the details went to
    // stderr when they happened and are in the JSON.
    match error.and_then(|error| error.split_once(':')) {
        Some((phase, _)) => {
            println!("  {name:<12} unavailable (failed during {phase}; see stderr)")
        }
        None => println!("  {name:<12} not measured"),
    }
}

fn us(value: Option<f64>) -> String {
    value.map_or_else(|| DASH.to_owned(), |value| format!("{value:.1}"))
}

fn signed(value: Option<f64>) -> String {
    value.map_or_else(|| DASH.to_owned(), |value| format!("{value:+.1}"))
}

fn rss(sample: Option<Memory>) -> String {
    sample.map_or_else(
        || DASH.to_owned(),
        |sample| format!("{:.1}", mib(sample.rss_kib)),
    )
}

fn times(value: Option<f64>) -> String {
    value.map_or_else(|| "n/a".to_owned(), |value| format!("{value:.2}×"))
}

use super::*;

fn summary(p50_us: f64, p99_us: f64) -> Option<Summary> {
    Some(Summary {
        samples: 100,
        p50_us,
        p99_us,
        mean_us: p50_us,
    })
}

fn target(name: &str, latency: Option<Summary>, rps: f64) -> TargetReport {
    let mut report = TargetReport::new(name, None);
    report.latency = latency;
    report.throughput = Some(Throughput {
        requests: 1_000,
        errors: 0,
        rps,
        latency: None,
        first_error: None,
    });
    report
}

fn settings() -> Settings {
    Settings {
        requests: 100,
        concurrency: 4,
        seconds: 1.0,
        stream_requests: 10,
        rounds: 1,
        quick: true,
        floor_one_thread: false,
        pin: true,
    }
}

#[test]
fn ratios_compare_corvid_with_the_floor() {
    let targets = vec![
        target("direct", summary(100.0, 150.0), 10_000.0),
        target("floor", summary(180.0, 250.0), 6_000.0),
        target("corvid", summary(200.0, 300.0), 5_400.0),
    ];
    let report = Report::new(settings(), Path::new("corvid"), targets);
    assert_eq!(
        report.targets[2].added_latency,
        Some(Added {
            p50_us: 100.0,
            p99_us: 150.0
        })
    );
    assert_eq!(report.corvid_to_floor.added_latency_p50, Some(1.25));
    assert_eq!(report.corvid_to_floor.added_latency_p99, Some(1.5));
    assert_eq!(report.corvid_to_floor.throughput, Some(0.9));
    assert_eq!(report.checks[0].verdict, Verdict::Pass);
    assert_eq!(report.checks[1].verdict, Verdict::Pass);
    assert_eq!(report.checks[2].verdict, Verdict::Pass, "added p99 1.5×");
    assert_eq!(report.checks[3].verdict, Verdict::Pass, "throughput 0.9×");
    assert_eq!(report.checks[4].verdict, Verdict::Skip);
}

#[test]
fn a_tail_over_twice_the_floors_misses_issue_25s_target() {
    let targets = vec![
        target("direct", summary(100.0, 150.0), 10_000.0),
        target("floor", summary(180.0, 250.0), 6_000.0),
        target("corvid", summary(200.0, 400.0), 4_500.0),
    ];
    let report = Report::new(settings(), Path::new("corvid"), targets);
    assert_eq!(report.corvid_to_floor.added_latency_p99, Some(2.5));
    let verdict = |name: &str| {
        report
            .checks
            .iter()
            .find(|check| check.target.starts_with(name))
            .map(|check| check.verdict)
    };
    assert_eq!(verdict("corvid added p99"), Some(Verdict::Miss));
    assert_eq!(
        verdict("corvid throughput ≥ 0.8×"),
        Some(Verdict::Miss),
        "0.75×"
    );
    assert_eq!(verdict("corvid throughput ≥ 0.7×"), Some(Verdict::Pass));
}

#[test]
fn missing_corvid_skips_every_check() {
    let mut corvid = TargetReport::new("corvid", None);
    corvid.error = Some("start: no such file".to_owned());
    let targets = vec![
        target("direct", summary(100.0, 150.0), 10_000.0),
        target("floor", summary(180.0, 250.0), 6_000.0),
        corvid,
    ];
    let report = Report::new(settings(), Path::new("/bin/false"), targets);
    assert_eq!(report.corvid_to_floor.added_latency_p50, None);
    assert!(
        report
            .checks
            .iter()
            .all(|check| check.verdict == Verdict::Skip)
    );
}

#[test]
fn flat_allows_noise_but_not_growth() {
    assert!(flat(10_240, 10_240));
    assert!(flat(10_240, 10_240 + 1_024 + 512));
    assert!(!flat(10_240, 14_000));
}

#[test]
fn translation_is_compared_with_the_floor_and_with_corvid() {
    let targets = vec![
        target(CORVID, summary(200.0, 300.0), 5_400.0),
        target(DIRECT, summary(100.0, 150.0), 10_000.0),
        target(FLOOR, summary(180.0, 250.0), 6_000.0),
        target(TRANSLATION, summary(260.0, 400.0), 4_500.0),
    ];
    let report = Report::new(settings(), Path::new("corvid"), targets);
    let translation = &report.targets[3];
    assert_eq!(
        translation.added_latency,
        Some(Added {
            p50_us: 160.0,
            p99_us: 250.0
        })
    );
    assert_eq!(report.corvid_to_floor.added_latency_p50, Some(1.25));
    assert_eq!(report.translation_to_floor.added_latency_p50, Some(2.0));
    assert_eq!(report.translation_to_floor.throughput, Some(0.75));
    assert_eq!(report.translation_to_corvid.added_latency_p50, Some(1.6));
    assert_eq!(report.translation_to_corvid.added_ttfb_p50, None);
    // The issue's targets are corvid's pass-through only.
    assert_eq!(report.checks[0].verdict, Verdict::Pass);
}

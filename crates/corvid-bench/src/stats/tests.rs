use super::*;

#[test]
fn percentile_uses_nearest_rank() {
    let samples: Vec<u64> = (1..=100).collect();
    assert_eq!(percentile(&samples, 50.0), Some(50));
    assert_eq!(percentile(&samples, 99.0), Some(99));
    assert_eq!(percentile(&samples, 100.0), Some(100));
    assert_eq!(percentile(&samples, 0.0), Some(1));
}

#[test]
fn percentile_of_small_and_empty_series() {
    assert_eq!(percentile(&[], 50.0), None);
    assert_eq!(percentile(&[7], 99.0), Some(7));
    // ceil(0.5 × 3) = 2nd sample; ceil(0.99 × 3) = 3rd.
    assert_eq!(percentile(&[10, 20, 30], 50.0), Some(20));
    assert_eq!(percentile(&[10, 20, 30], 99.0), Some(30));
    assert_eq!(percentile(&[10, 20], 101.0), None);
}

#[test]
fn summary_sorts_and_converts_to_micros() {
    let nanos: Vec<u64> = (1..=200).rev().map(|index| index * 1_000).collect();
    let summary = Summary::of(nanos).unwrap();
    assert_eq!(
        summary,
        Summary {
            samples: 200,
            p50_us: 100.0,
            p99_us: 198.0,
            mean_us: 100.5
        }
    );
    assert_eq!(Summary::of(Vec::new()), None);
}

#[test]
fn added_is_target_minus_direct() {
    let direct = Summary {
        samples: 10,
        p50_us: 80.0,
        p99_us: 120.0,
        mean_us: 85.0,
    };
    let floor = Summary {
        samples: 10,
        p50_us: 150.0,
        p99_us: 260.0,
        mean_us: 155.0,
    };
    assert_eq!(
        Added::over(&floor, &direct),
        Added {
            p50_us: 70.0,
            p99_us: 140.0
        }
    );
}

#[test]
fn ratio_refuses_non_positive_denominators() {
    assert_eq!(ratio(105.0, 70.0), Some(1.5));
    assert_eq!(ratio(7_000.0, 10_000.0), Some(0.7));
    assert_eq!(ratio(5.0, 0.0), None);
    assert_eq!(ratio(5.0, -3.0), None);
    assert_eq!(ratio(f64::NAN, 3.0), None);
}

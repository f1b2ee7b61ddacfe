use std::path::Path;

use pretty_assertions::assert_eq;

use super::*;
use crate::usage::tests::{NOV_29, sample};

fn rows_in(path: &Path) -> u64 {
    Store::open(path).unwrap().totals(None).unwrap().requests
}

fn file_store() -> (tempfile::TempDir, std::path::PathBuf, Store) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("corvid.db");
    let store = Store::open(&path).unwrap();
    (dir, path, store)
}

/// Options under which only `max_batch` or an explicit flush writes (no timer in the way).
fn no_timer(capacity: usize, max_batch: usize) -> RecorderOptions {
    RecorderOptions {
        capacity,
        max_batch,
        max_delay: Duration::from_secs(3_600),
    }
}

#[test]
fn full_batches_are_written_as_they_fill_and_flush_writes_the_rest() {
    let (_dir, path, store) = file_store();
    let (open_gate, gate) = mpsc::channel();
    let recorder = spawn_gated(
        Arc::new(Mutex::new(store)),
        no_timer(1_024, 256),
        Some(gate),
    )
    .unwrap();
    for index in 0..600 {
        recorder.record(sample(NOV_29 + index, "grok-4.6"));
    }
    open_gate.send(()).unwrap();
    recorder.flush().unwrap();

    assert_eq!(rows_in(&path), 600);
    assert_eq!(
        recorder.stats(),
        RecorderStats {
            queued: 600,
            dropped: 0,
            written: 600,
            failed: 0,
            // 256 + 256 when full, then 88 on flush.
            batches: 3,
        }
    );
}

#[test]
fn by_default_a_finished_row_waits_at_most_ten_milliseconds_for_its_commit() {
    // The bound the README gives for what a crash can lose.
    assert!(RecorderOptions::default().max_delay <= Duration::from_millis(10));
    let (_dir, path, store) = file_store();
    let recorder = UsageRecorder::spawn(store).unwrap();
    recorder.record(sample(NOV_29, "grok-4.6"));
    let give_up = Instant::now() + Duration::from_secs(10);
    // Committed without a flush and with the handle alive: a killed process keeps it.
    while rows_in(&path) == 0 {
        assert!(Instant::now() < give_up, "the row was never committed");
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn a_partial_batch_is_written_after_max_delay_without_a_flush() {
    let (_dir, path, store) = file_store();
    let options = RecorderOptions {
        capacity: 16,
        max_batch: 256,
        max_delay: Duration::from_millis(20),
    };
    let recorder = UsageRecorder::spawn_with(store, options).unwrap();
    recorder.record(sample(NOV_29, "grok-4.6"));
    // Poll instead of sleeping a fixed time; the deadline only bounds a hang.
    let give_up = Instant::now() + Duration::from_secs(10);
    while recorder.stats().written == 0 {
        assert!(Instant::now() < give_up, "the timer never wrote the batch");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(rows_in(&path), 1);
    assert_eq!(recorder.stats().batches, 1);
}

#[test]
fn dropping_the_last_handle_writes_what_is_queued() {
    let (_dir, path, store) = file_store();
    let (open_gate, gate) = mpsc::channel::<()>();
    let recorder = spawn_gated(Arc::new(Mutex::new(store)), no_timer(64, 256), Some(gate)).unwrap();
    let clone = recorder.clone();
    for index in 0..5 {
        recorder.record(sample(NOV_29 + index, "grok-4.6"));
    }
    drop(recorder);
    // The clone keeps the writer alive and can still record.
    clone.record(sample(NOV_29 + 10, "grok-4.6"));
    drop(open_gate);
    drop(clone);
    assert_eq!(rows_in(&path), 6);
}

#[test]
fn record_never_blocks_when_the_channel_is_full_and_counts_drops() {
    let (_dir, path, store) = file_store();
    let (open_gate, gate) = mpsc::channel();
    // The writer does not read until the gate opens, so the channel fills after 4 records;
    // if `record` blocked, this test would hang on the 5th.
    let recorder = spawn_gated(Arc::new(Mutex::new(store)), no_timer(4, 256), Some(gate)).unwrap();
    for index in 0..10 {
        recorder.record(sample(NOV_29 + index, "grok-4.6"));
    }
    let stats = recorder.stats();
    assert_eq!((stats.queued, stats.dropped), (4, 6));

    open_gate.send(()).unwrap();
    recorder.flush().unwrap();
    assert_eq!(rows_in(&path), 4);
    // Drops keep being counted after the first (rate-limited) warning.
    assert_eq!(recorder.stats().dropped, 6);
}

#[test]
fn a_failed_write_is_counted_and_reported_by_the_next_flush() {
    let (_dir, path, store) = file_store();
    let recorder = UsageRecorder::spawn_with(store, no_timer(16, 256)).unwrap();
    // Another connection renames the table under the writer, so its next insert fails.
    Store::open(&path)
        .unwrap()
        .conn
        .execute_batch("ALTER TABLE requests RENAME TO requests_moved")
        .unwrap();
    recorder.record(sample(NOV_29, "grok-4.6"));
    assert!(matches!(recorder.flush(), Err(StoreError::Sqlite(_))));
    let stats = recorder.stats();
    assert_eq!((stats.written, stats.failed, stats.batches), (0, 1, 0));
    // The error was reported once; the next flush starts clean.
    recorder.flush().unwrap();
}

#[test]
fn a_recorder_over_the_process_store_writes_through_that_one_handle() {
    // An in-memory database exists only in its one connection: the rows can be read back
    // through the shared handle only if the writer used that very connection.
    let store: SharedStore = Arc::new(Mutex::new(Store::open_in_memory().unwrap()));
    let recorder = UsageRecorder::spawn_shared(Arc::clone(&store)).unwrap();
    recorder.record(sample(NOV_29, "grok-4.6"));
    recorder.flush().unwrap();
    assert_eq!(store.lock().totals(None).unwrap().requests, 1);
    // The agent's own rows go through the same handle meanwhile.
    store
        .lock()
        .record(&sample(NOV_29 + 1, "grok-4.6"))
        .unwrap();
    recorder.record(sample(NOV_29 + 2, "grok-4.6"));
    drop(recorder);
    assert_eq!(store.lock().totals(None).unwrap().requests, 3);
}

#[test]
fn the_writer_yields_only_while_it_keeps_up() {
    use crate::usage::Pace;
    let max = RecorderOptions::default().max_batch;
    // A batch closed by its deadline with nothing behind it: offer the CPU between rows.
    assert_eq!(pace_for(50, max, 0), Pace::Yielding);
    assert_eq!(pace_for(1, max, YIELD_BELOW_PENDING - 1), Pace::Yielding);
    // Behind: a full batch, or records waiting behind it — write in one go.
    assert_eq!(pace_for(max, max, 0), Pace::Eager);
    assert_eq!(pace_for(10, max, YIELD_BELOW_PENDING), Pace::Eager);
    assert_eq!(pace_for(1, 1, 0), Pace::Eager, "a batch of one row is full");
}

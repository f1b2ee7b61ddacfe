//! The non-blocking usage writer for the gateway's hot path.
//!
//! Concurrency model: every [`UsageRecorder`] clone shares one bounded `std::sync::mpsc`
//! channel whose only receiver is one background thread that writes through a [`SharedStore`]
//! (its own, or the process's one store, shared with the agent: [`UsageRecorder::spawn_shared`];
//! the thread holds the store's lock only while it commits a batch). Request
//! handlers call [`UsageRecorder::record`], which uses `try_send`: when the channel is full the
//! record is dropped and counted, so a slow disk can never stall a response. The writer thread
//! collects records into a batch and writes the batch in one transaction when it reaches
//! `max_batch` rows, when `max_delay` has passed since the batch's first row, when someone calls
//! [`UsageRecorder::flush`], or when the last handle is dropped. No async runtime is involved.
//!
//! What a crash can lose: a committed row survives a killed process (SQLite's WAL); a row still
//! in the channel or the partial batch does not. The default `max_delay` keeps that to the rows
//! of the last 10 ms (or 256 rows under heavy load). A shorter delay costs no request anything
//! — `record` is a `try_send` either way — only more, smaller transactions on this thread.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TryRecvError, TrySendError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::{SharedStore, Store, StoreError, UsageRecord};

/// How often the batching writer looks up from its sleep.
const BATCH_TICK: Duration = Duration::from_millis(5);

/// The writer yields between rows only while fewer records than this wait behind its batch.
const YIELD_BELOW_PENDING: usize = 64;

/// At most one "records dropped" warning per this period.
const DROP_WARNING_INTERVAL: Duration = Duration::from_secs(60);

/// Tuning for a [`UsageRecorder`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecorderOptions {
    /// Records that may wait in the channel; beyond this, `record` drops.
    pub capacity: usize,
    /// Rows written per transaction at most.
    pub max_batch: usize,
    /// How long a record may wait in a partial batch before the batch is written.
    pub max_delay: Duration,
}

impl Default for RecorderOptions {
    fn default() -> Self {
        Self {
            capacity: 16384,
            max_batch: 256,
            // What a `kill -9` can lose; see the module comment.
            max_delay: Duration::from_millis(10),
        }
    }
}

/// Counters of a [`UsageRecorder`] since it started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecorderStats {
    /// Records accepted into the channel.
    pub queued: u64,
    /// Records dropped because the channel was full or the writer had stopped.
    pub dropped: u64,
    /// Rows committed to the database.
    pub written: u64,
    /// Rows lost because their transaction failed.
    pub failed: u64,
    /// Transactions committed.
    pub batches: u64,
}

/// A cheap, cloneable handle that records usage without blocking.
///
/// When the last clone is dropped, the writer thread writes what it still holds and is joined
/// (a short blocking wait, meant for shutdown).
#[derive(Debug, Clone)]
pub struct UsageRecorder {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    /// `None` only while `Drop` runs: dropping the sender is what tells the writer to finish.
    sender: Option<SyncSender<Message>>,
    writer: Option<JoinHandle<()>>,
    counters: Arc<Counters>,
    /// When the last "dropped" warning was logged; only locked on the drop path, with
    /// `try_lock`, so `record` still never waits.
    last_drop_warning: Mutex<Option<Instant>>,
}

#[derive(Debug, Default)]
struct Counters {
    /// Flushes waiting: the writer cuts its batching sleep short for them.
    flushes: AtomicU64,
    /// The last handle is gone: the writer stops sleeping and drains.
    closed: std::sync::atomic::AtomicBool,
    queued: AtomicU64,
    dropped: AtomicU64,
    written: AtomicU64,
    failed: AtomicU64,
    batches: AtomicU64,
}

enum Message {
    Record(Box<UsageRecord>),
    /// Write the pending batch now and report whether every write since the last flush
    /// succeeded.
    Flush(SyncSender<Result<(), StoreError>>),
}

impl UsageRecorder {
    /// Starts the writer thread with default options; it owns `store` from now on.
    pub fn spawn(store: Store) -> Result<UsageRecorder, StoreError> {
        Self::spawn_with(store, RecorderOptions::default())
    }

    /// Starts the writer thread with `options`.
    pub fn spawn_with(store: Store, options: RecorderOptions) -> Result<UsageRecorder, StoreError> {
        spawn_gated(SharedStore::new(store.into()), options, None)
    }

    /// Starts the writer thread over a store the process shares (the agent's sessions write
    /// conversations and their own ledger rows through the same handle), default options.
    pub fn spawn_shared(store: SharedStore) -> Result<UsageRecorder, StoreError> {
        spawn_gated(store, RecorderOptions::default(), None)
    }

    /// Starts the writer thread over PostgreSQL (team mode). A batch that fails because the
    /// database is unreachable is kept and retried, so an outage delays rows without losing
    /// them (up to the channel's capacity; see `RecorderOptions::capacity`).
    pub fn spawn_postgres(
        ledger: crate::pg::PgLedger,
        options: RecorderOptions,
    ) -> Result<UsageRecorder, StoreError> {
        spawn_sink(Sink::Postgres(Box::new(ledger)), options, None)
    }

    /// Hands `record` to the writer thread. Never blocks: when the channel is full (or the
    /// writer has stopped) the record is dropped, counted, and a warning is logged at most
    /// once a minute.
    pub fn record(&self, record: UsageRecord) {
        let Some(sender) = &self.shared.sender else {
            return;
        };
        match sender.try_send(Message::Record(Box::new(record))) {
            Ok(()) => {
                self.shared.counters.queued.fetch_add(1, Ordering::Relaxed);
            }
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => self.note_drop(),
        }
    }

    /// Blocks until everything recorded before this call is committed. Returns the first
    /// write error since the previous flush, if any (those rows are lost).
    pub fn flush(&self) -> Result<(), StoreError> {
        let sender = self
            .shared
            .sender
            .as_ref()
            .ok_or(StoreError::WriterStopped)?;
        let (reply, answer) = mpsc::sync_channel(1);
        self.shared.counters.flushes.fetch_add(1, Ordering::SeqCst);
        let sent = sender.send(Message::Flush(reply));
        let result = match sent {
            Ok(()) => answer
                .recv()
                .map_err(|_| StoreError::WriterStopped)
                .and_then(|result| result),
            Err(_) => Err(StoreError::WriterStopped),
        };
        self.shared.counters.flushes.fetch_sub(1, Ordering::SeqCst);
        result
    }

    /// The counters so far.
    pub fn stats(&self) -> RecorderStats {
        let counters = &self.shared.counters;
        RecorderStats {
            queued: counters.queued.load(Ordering::Relaxed),
            dropped: counters.dropped.load(Ordering::Relaxed),
            written: counters.written.load(Ordering::Relaxed),
            failed: counters.failed.load(Ordering::Relaxed),
            batches: counters.batches.load(Ordering::Relaxed),
        }
    }

    fn note_drop(&self) {
        let dropped = self.shared.counters.dropped.fetch_add(1, Ordering::Relaxed) + 1;
        // Contended means another thread is deciding about the warning right now: skip.
        let Some(mut last) = self.shared.last_drop_warning.try_lock() else {
            return;
        };
        let now = Instant::now();
        if last.is_none_or(|at| now.duration_since(at) >= DROP_WARNING_INTERVAL) {
            *last = Some(now);
            tracing::warn!(
                dropped,
                "usage writer is behind; usage records are being dropped"
            );
        }
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // Closing the channel makes the writer drain what is queued, write it, and return.
        self.counters.closed.store(true, Ordering::SeqCst);
        drop(self.sender.take());
        if let Some(writer) = self.writer.take()
            && writer.join().is_err()
        {
            tracing::error!("the usage writer thread panicked");
        }
    }
}

/// Starts the writer; with a `gate`, the thread waits for a message (or the gate's closing)
/// before it reads anything, which lets tests fill the channel deterministically.
fn spawn_gated(
    store: SharedStore,
    options: RecorderOptions,
    gate: Option<Receiver<()>>,
) -> Result<UsageRecorder, StoreError> {
    spawn_sink(Sink::Sqlite(store), options, gate)
}

/// Where the writer commits batches.
#[derive(Debug)]
enum Sink {
    Sqlite(SharedStore),
    Postgres(Box<crate::pg::PgLedger>),
}

/// Retries of a batch PostgreSQL could not take, at shutdown (while serving: until it does).
const SHUTDOWN_RETRIES: u32 = 8;

fn spawn_sink(
    sink: Sink,
    options: RecorderOptions,
    gate: Option<Receiver<()>>,
) -> Result<UsageRecorder, StoreError> {
    let (sender, receiver) = mpsc::sync_channel(options.capacity.max(1));
    let counters = Arc::new(Counters::default());
    let writer = Writer {
        sink,
        receiver,
        options,
        counters: Arc::clone(&counters),
        batch: Vec::with_capacity(options.max_batch.max(1)),
        error: None,
    };
    let handle = std::thread::Builder::new()
        .name("corvid-usage-writer".to_owned())
        .spawn(move || {
            if let Some(gate) = gate {
                // Either a message or a dropped sender opens the gate.
                let _ = gate.recv();
            }
            writer.run();
        })
        .map_err(StoreError::Spawn)?;
    Ok(UsageRecorder {
        shared: Arc::new(Shared {
            sender: Some(sender),
            writer: Some(handle),
            counters,
            last_drop_warning: Mutex::new(None),
        }),
    })
}

struct Writer {
    sink: Sink,
    receiver: Receiver<Message>,
    options: RecorderOptions,
    counters: Arc<Counters>,
    batch: Vec<UsageRecord>,
    /// The first failed write since the last flush, reported by the next flush.
    error: Option<StoreError>,
}

impl Writer {
    fn run(mut self) {
        loop {
            // Wait (parked) for the first message of a batch.
            let Ok(first) = self.receiver.recv() else {
                self.write();
                return;
            };
            self.take(first);
            // Then let the batch fill while sleeping: senders do not wake a sleeping thread,
            // so a busy gateway pays no wake-up per request. A waiting flush, a full batch or
            // the deadline ends the sleep.
            let deadline = Instant::now() + self.options.max_delay;
            while Instant::now() < deadline
                && self.counters.flushes.load(Ordering::SeqCst) == 0
                && !self.counters.closed.load(Ordering::SeqCst)
                && self.batch.len() + self.counters_pending() < self.options.max_batch.max(1)
            {
                std::thread::sleep(
                    BATCH_TICK.min(deadline.saturating_duration_since(Instant::now())),
                );
            }
            loop {
                match self.receiver.try_recv() {
                    Ok(message) => self.take(message),
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => {
                        // Every handle is gone and the queue is drained.
                        self.write();
                        return;
                    }
                }
            }
            self.write();
        }
    }

    /// Records accepted but not yet taken from the channel.
    fn counters_pending(&self) -> usize {
        let queued = self.counters.queued.load(Ordering::Relaxed);
        let taken = self.counters.written.load(Ordering::Relaxed)
            + self.counters.failed.load(Ordering::Relaxed)
            + self.batch.len() as u64;
        usize::try_from(queued.saturating_sub(taken)).unwrap_or(usize::MAX)
    }

    fn take(&mut self, message: Message) {
        match message {
            Message::Record(record) => {
                self.batch.push(*record);
                if self.batch.len() >= self.options.max_batch.max(1) {
                    self.write();
                }
            }
            Message::Flush(reply) => {
                self.write();
                // The flusher may have given up waiting; nothing to do then.
                let _ = reply.send(self.error.take().map_or(Ok(()), Err));
            }
        }
    }

    fn write(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        let rows = self.batch.len() as u64;
        let pace = pace_for(
            self.batch.len(),
            self.options.max_batch,
            self.counters_pending(),
        );
        let written = match &mut self.sink {
            Sink::Sqlite(store) => store.lock().record_batch(&self.batch, pace),
            Sink::Postgres(ledger) => {
                let mut attempt = 0u32;
                loop {
                    match ledger.write(&self.batch) {
                        Err(error)
                            if error.is_unreachable()
                                && (!self.counters.closed.load(Ordering::SeqCst)
                                    || attempt < SHUTDOWN_RETRIES) =>
                        {
                            if attempt == 0 {
                                tracing::warn!(rows, error = %error_chain(&error), "the database is unreachable; usage rows wait and are retried");
                            }
                            attempt = attempt.saturating_add(1);
                            std::thread::sleep(Duration::from_millis(
                                (50u64 << attempt.min(5)).min(1000),
                            ));
                        }
                        other => break other,
                    }
                }
            }
        };
        match written {
            Ok(()) => {
                self.counters.written.fetch_add(rows, Ordering::Relaxed);
                self.counters.batches.fetch_add(1, Ordering::Relaxed);
            }
            Err(error) => {
                self.counters.failed.fetch_add(rows, Ordering::Relaxed);
                tracing::warn!(rows, error = %error_chain(&error), "could not write usage records");
                self.error.get_or_insert(error);
            }
        }
        self.batch.clear();
    }
}

/// How the writer paces a batch of `batch` rows with `pending` more records waiting: yielding
/// between rows keeps a small batch from delaying a request on a shared CPU; a writer that is
/// behind (a full batch, records waiting) must not yield, or a busy CPU would starve it until
/// the channel fills and records are dropped.
fn pace_for(batch: usize, max_batch: usize, pending: usize) -> crate::usage::Pace {
    if batch < max_batch.max(1) && pending < YIELD_BELOW_PENDING {
        crate::usage::Pace::Yielding
    } else {
        crate::usage::Pace::Eager
    }
}

fn error_chain(error: &StoreError) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests;

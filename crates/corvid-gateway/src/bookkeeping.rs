//! Work a finished response leaves behind — reading usage out of a whole reply, the log line,
//! the ledger row — done on a thread of its own, in batches, instead of on the thread that
//! serves requests.
//!
//! hyper drops a response body before it flushes the body's last bytes, so whatever the body
//! does when dropped sits between the upstream's reply and the client's; and anything the
//! serving thread does after that sits in front of the next request. Jobs therefore go to a
//! bookkeeping thread. While requests keep coming it wakes every `TICK` and runs what has
//! queued up, so handing a job over costs no system call; when the queue runs dry it blocks
//! until the next job. Measured with every bench process on one core, three runs each:
//! corvid's added p50 minus the floor's was 6.6-7.2 µs with the work on the serving thread,
//! 4.8-5.8 µs with it here, and 3.9-4.4 µs with no ledger work at all. The same CPU is spent
//! either way; batched, it delays only the few requests that meet a batch.

use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::time::Duration;

use tokio::sync::oneshot;

type Job = Box<dyn FnOnce() + Send>;

/// How long jobs wait for company while requests keep coming.
const TICK: Duration = Duration::from_millis(2);

/// The jobs of one tick after each of which the thread offers the CPU (a tick holds a few at
/// one request at a time; many only when the thread is behind).
const YIELD_FOR_JOBS: usize = 16;

#[derive(Debug, Clone)]
pub(crate) struct Bookkeeper {
    /// `None` when the thread could not be started: jobs then run where they are handed in.
    jobs: Option<mpsc::Sender<Job>>,
}

impl Bookkeeper {
    /// Starts the bookkeeping thread. It ends when the last `Bookkeeper` is dropped, after
    /// the jobs already handed in.
    pub(crate) fn start() -> Self {
        let (jobs, queue) = mpsc::channel::<Job>();
        let started = std::thread::Builder::new()
            .name("corvid-bookkeeping".to_owned())
            .spawn(move || run(&queue));
        match started {
            Ok(_) => Self { jobs: Some(jobs) },
            Err(error) => {
                tracing::warn!(%error, "no bookkeeping thread; ledger work runs inline");
                Self { jobs: None }
            }
        }
    }

    /// Runs `job` soon, on the bookkeeping thread.
    pub(crate) fn later(&self, job: impl FnOnce() + Send + 'static) {
        let Some(jobs) = &self.jobs else {
            return job();
        };
        // The thread is gone only if a job panicked: do the work here rather than lose it.
        if let Err(mpsc::SendError(job)) = jobs.send(Box::new(job)) {
            job();
        }
    }

    /// Resolves once every job handed in before this call has run.
    pub(crate) async fn settle(&self) {
        let (done, finished) = oneshot::channel();
        self.later(move || {
            let _ = done.send(());
        });
        let _ = finished.await;
    }
}

/// The thread: block for a job; then, while more keep coming, sleep a tick and run what
/// queued up meanwhile. A sender wakes the thread only when it is blocked, not asleep.
fn run(queue: &Receiver<Job>) {
    while let Ok(job) = queue.recv() {
        job();
        loop {
            std::thread::sleep(TICK);
            let mut ran = false;
            let mut ran_this_tick = 0;
            loop {
                match queue.try_recv() {
                    Ok(job) => {
                        job();
                        ran = true;
                        // A tick's jobs run back to back; offer the CPU between the first
                        // few so a request arriving meanwhile on a shared CPU waits for one
                        // job, not all of them (the usage writer does the same between rows).
                        // Past those the thread is behind: yielding on a busy CPU would
                        // starve it while its queue, which holds finished replies, grows.
                        if ran_this_tick < YIELD_FOR_JOBS {
                            std::thread::yield_now();
                        }
                        ran_this_tick += 1;
                    }
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => return,
                }
            }
            if !ran {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    #[tokio::test]
    async fn jobs_run_in_order_off_the_callers_thread_and_settle_waits_for_them() {
        let bookkeeper = Bookkeeper::start();
        let done = Arc::new(Mutex::new(Vec::new()));
        let caller = std::thread::current().id();
        for index in 0..100 {
            let done = Arc::clone(&done);
            bookkeeper.later(move || {
                done.lock()
                    .unwrap()
                    .push((index, std::thread::current().id()))
            });
        }
        bookkeeper.settle().await;
        let done = done.lock().unwrap();
        assert_eq!(
            done.iter().map(|(index, _)| *index).collect::<Vec<_>>(),
            (0..100).collect::<Vec<_>>()
        );
        assert!(done.iter().all(|(_, thread)| *thread != caller));
    }

    #[test]
    fn the_thread_ends_with_the_last_handle_after_the_queued_jobs() {
        let bookkeeper = Bookkeeper::start();
        let done = Arc::new(Mutex::new(0));
        for _ in 0..10 {
            let done = Arc::clone(&done);
            bookkeeper.later(move || *done.lock().unwrap() += 1);
        }
        drop(bookkeeper);
        // The jobs hold the only other references; once all ran, only ours is left.
        for _ in 0..500 {
            if Arc::strong_count(&done) == 1 {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        assert_eq!(*done.lock().unwrap(), 10);
    }
}

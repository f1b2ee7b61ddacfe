//! Work a finished response leaves behind — reading usage out of a whole reply, the log line,
//! the ledger row — done after the client has its bytes instead of before.
//!
//! hyper drops a response body before it flushes the body's last bytes, so whatever the body
//! does when dropped sits between the upstream's reply and the client's. The relay hands that
//! work to one task per server instead, which runs once the connection task yields. (A task
//! spawned per response measured no better than doing the work in place.)

use tokio::sync::{mpsc, oneshot};

type Job = Box<dyn FnOnce() + Send>;

#[derive(Debug, Clone)]
pub(crate) struct Bookkeeper {
    /// `None` outside a runtime: jobs then run where they are handed in.
    jobs: Option<mpsc::UnboundedSender<Job>>,
}

impl Bookkeeper {
    /// Starts the bookkeeping task on the current runtime, if there is one. The task ends
    /// when the last `Bookkeeper` is dropped, after the jobs already handed in.
    pub(crate) fn start() -> Self {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return Self { jobs: None };
        };
        let (jobs, mut queue) = mpsc::unbounded_channel::<Job>();
        runtime.spawn(async move {
            while let Some(job) = queue.recv().await {
                job();
            }
        });
        Self { jobs: Some(jobs) }
    }

    /// Runs `job` soon, after the current task yields.
    pub(crate) fn later(&self, job: impl FnOnce() + Send + 'static) {
        let Some(jobs) = &self.jobs else {
            return job();
        };
        // The task is gone only when its runtime is shutting down: do the job here.
        if let Err(mpsc::error::SendError(job)) = jobs.send(Box::new(job)) {
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

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    #[tokio::test]
    async fn jobs_run_in_order_after_the_caller_yields_and_settle_waits_for_them() {
        let bookkeeper = Bookkeeper::start();
        let done = Arc::new(Mutex::new(Vec::new()));
        for index in 0..3 {
            let done = Arc::clone(&done);
            bookkeeper.later(move || done.lock().unwrap().push(index));
        }
        assert!(
            done.lock().unwrap().is_empty(),
            "nothing runs before a yield"
        );
        bookkeeper.settle().await;
        assert_eq!(*done.lock().unwrap(), [0, 1, 2]);
    }

    #[test]
    fn outside_a_runtime_jobs_run_at_once() {
        let bookkeeper = Bookkeeper::start();
        let done = Arc::new(Mutex::new(false));
        let flag = Arc::clone(&done);
        bookkeeper.later(move || *flag.lock().unwrap() = true);
        assert!(*done.lock().unwrap());
    }
}

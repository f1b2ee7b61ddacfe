//! Counts each scripted stream as completed or abandoned when the server drops it.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::server::Shared;

/// Counts a stream as completed or abandoned when the server drops it.
pub(super) struct StreamGuard {
    pub(super) shared: Arc<Shared>,
    pub(super) finished: bool,
}

impl StreamGuard {
    pub(super) fn mark_finished(&mut self) {
        self.finished = true;
    }
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        let counter = if self.finished {
            &self.shared.streams_completed
        } else {
            &self.shared.streams_abandoned
        };
        counter.fetch_add(1, Ordering::SeqCst);
    }
}

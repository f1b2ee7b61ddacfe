//! The end of the shutdown grace, as the bodies still streaming see it: `serve` closes the
//! gate, and every relayed or translated body that is waiting for its upstream ends at once
//! with an in-stream error in its client's dialect — so the client hears why, and the body's
//! ledger row is written like any other.
//!
//! A body looks at the gate only when its upstream has nothing for it (a wait of its own). At
//! its first wait it registers its task's waker once; later waits read one atomic flag. Bodies
//! whose bytes are already there never touch it.

use std::future::Future as _;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::Context;

use tokio::sync::Notify;
use tokio::sync::futures::OwnedNotified;

/// What bodies say when the gate closes on them.
pub(crate) const MESSAGE: &str = "corvid is shutting down; the response was cut short";

/// The gate, shared by the state and `serve`.
#[derive(Debug, Default)]
pub(crate) struct Closing {
    closed: AtomicBool,
    notify: Arc<Notify>,
}

impl Closing {
    /// Closes the gate and wakes every waiting body.
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }
}

/// One body's look at the gate.
pub(crate) struct Watch {
    closing: Arc<Closing>,
    /// Registered with the waker of the task that polls the body (hyper's connection task,
    /// the same for every poll), so `close` wakes it.
    waiter: Option<Pin<Box<OwnedNotified>>>,
}

impl Watch {
    pub(crate) fn new(closing: Arc<Closing>) -> Self {
        Self {
            closing,
            waiter: None,
        }
    }

    /// Called while the body waits: whether the gate is closed; if not, the task is woken
    /// when it closes.
    pub(crate) fn closed(&mut self, cx: &mut Context<'_>) -> bool {
        if self.closing.is_closed() {
            return true;
        }
        if self.waiter.is_some() {
            return false;
        }
        let waiter = self
            .waiter
            .insert(Box::pin(Arc::clone(&self.closing.notify).notified_owned()));
        // Registered before the second look, so a `close` between the two is not missed.
        waiter.as_mut().enable();
        self.closing.is_closed() || waiter.as_mut().poll(cx).is_ready()
    }
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        out.debug_struct("Watch")
            .field("armed", &self.waiter.is_some())
            .finish()
    }
}

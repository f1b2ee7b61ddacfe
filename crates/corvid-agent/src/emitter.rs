//! Numbering and sending events. Cheap to clone; every clone shares the sequence.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use corvid_protocol::{Event, EventMsg};
use tokio::sync::mpsc;

#[derive(Debug, Clone)]
pub(crate) struct Emitter {
    sender: mpsc::UnboundedSender<Event>,
    seq: Arc<AtomicU64>,
}

/// Where an event belongs: the submission it answers, and for subagents their depth and the
/// `task` call that started them.
#[derive(Debug, Clone, Default)]
pub(crate) struct Scope {
    pub(crate) id: String,
    pub(crate) depth: u32,
    pub(crate) parent_call_id: Option<String>,
}

impl Emitter {
    pub(crate) fn new(sender: mpsc::UnboundedSender<Event>) -> Self {
        Self {
            sender,
            seq: Arc::new(AtomicU64::new(0)),
        }
    }

    pub(crate) fn emit(&self, scope: &Scope, msg: EventMsg) {
        let at = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|elapsed| elapsed.as_secs() as i64)
            .unwrap_or_default();
        let event = Event {
            id: scope.id.clone(),
            seq: self.seq.fetch_add(1, Ordering::SeqCst) + 1,
            depth: scope.depth,
            parent_call_id: scope.parent_call_id.clone(),
            at,
            msg,
        };
        // A front end that went away stops listening; the engine finishes what it was doing.
        let _ = self.sender.send(event);
    }
}

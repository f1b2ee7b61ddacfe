//! Where an event belongs (`Scope`) and the engine's side of the session's journal (`Emitter`).
//! Cheap to clone; every clone numbers events from the same sequence.

use std::sync::Arc;

use corvid_protocol::{ConversationSummary, EventMsg, HistoryEntry, ProposalNotification};

use crate::journal::Journal;

#[derive(Clone)]
pub(crate) struct Emitter {
    journal: Arc<Journal>,
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
    pub(crate) fn new(journal: Arc<Journal>) -> Self {
        Self { journal }
    }

    pub(crate) fn emit(&self, scope: &Scope, msg: EventMsg) {
        // Listeners that went away or lag never hold the engine up (see `crate::journal`).
        self.journal.emit(scope, msg);
    }

    /// Asks the faces to approve a proposal (a request frame, answered through `Approvals`).
    pub(crate) fn request(&self, scope: &Scope, approval: ProposalNotification) {
        self.journal.request(scope, approval);
    }

    pub(crate) fn emit_with_history(
        &self,
        scope: &Scope,
        msg: EventMsg,
        conversation: ConversationSummary,
        history: Vec<HistoryEntry>,
    ) {
        self.journal
            .emit_with_history(scope, msg, conversation, history);
    }

    pub(crate) fn set_conversation(
        &self,
        conversation: ConversationSummary,
        history: Vec<HistoryEntry>,
    ) {
        self.journal.set_conversation(conversation, history);
    }

    pub(crate) fn close(&self) {
        self.journal.close();
    }
}

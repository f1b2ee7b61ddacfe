//! One open session: its engine link, what the client was offered, and the prompt running.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::Mutex;

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    SessionConfigOption, SessionModeState, SessionNotification, SessionUpdate, StopReason,
};
use agent_client_protocol::{Client, Error};
use corvid_protocol::ToolCallNotification;
use tokio::sync::{oneshot, watch};

use crate::options::{self, Mode};
use crate::sessions::{SessionLink, Sessions};
use crate::updates::Described;

/// One open session.
pub(super) struct Live {
    pub(super) id: String,
    pub(super) project: PathBuf,
    pub(super) link: Arc<dyn SessionLink>,
    pub(super) models: Vec<String>,
    /// The service, for the context window of the model the session moves to.
    pub(super) sessions: Arc<dyn Sessions>,
    /// The project's skills and custom commands, offered as slash commands (as last announced).
    pub(super) commands: Mutex<Vec<corvid_protocol::commands::ProjectCommand>>,
    /// Numbers the prompts' submissions.
    pub(super) next: std::sync::atomic::AtomicU64,
    /// The conversation's history when it was opened (replayed by `session/load`).
    pub(super) history: Vec<corvid_protocol::HistoryEntry>,
    /// The kernel sandbox its commands run in, as a sentence for the approvals option.
    pub(super) sandbox: String,
    /// Bumped by every cancel: waiting permission requests stop waiting.
    pub(super) cancel: watch::Sender<u64>,
    pub(super) state: Mutex<State>,
}

pub(super) struct State {
    pub(super) mode: Mode,
    pub(super) model: String,
    /// The model's context window in tokens, for usage updates.
    pub(super) window: u64,
    pub(super) turn: Option<Turn>,
    /// The calls of this session, for permission requests and results.
    pub(super) calls: HashMap<String, (ToolCallNotification, Described)>,
    /// A running command's output so far, by call (ACP replaces a call's content, so each
    /// update carries it all, cut to its tail).
    pub(super) outputs: HashMap<String, String>,
    /// Calls announced while the model was still writing them (`tool_call_progress`).
    pub(super) preparing: HashSet<String>,
    /// A plan the user chose to edit: its turn waits for the next prompt (`plan_edit.rs`).
    pub(super) plan_edit: Option<super::plan_edit::PlanEdit>,
}

/// The prompt being answered.
pub(super) struct Turn {
    /// The submission whose events are this prompt's.
    pub(super) submission: String,
    /// A slash command answered by one event rather than a turn.
    pub(super) command: bool,
    pub(super) cancelled: bool,
    pub(super) done: oneshot::Sender<StopReason>,
}

impl Live {
    fn settings(&self) -> (Mode, String) {
        let state = self.state.lock();
        (state.mode, state.model.clone())
    }

    /// The session's modes and config options, as new, load and resume answer them.
    pub(super) fn options(&self) -> (SessionModeState, Vec<SessionConfigOption>) {
        let (mode, model) = self.settings();
        (
            options::mode_state(mode),
            options::config_options(mode, &model, &self.models, &self.sandbox),
        )
    }

    pub(super) fn send(
        &self,
        cx: &ConnectionTo<Client>,
        update: SessionUpdate,
    ) -> Result<(), Error> {
        cx.send_notification(SessionNotification::new(self.id.clone(), update))
    }
}

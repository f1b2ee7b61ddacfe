//! Live settings as the page sees them: a way to ask the program hosting the page (`corvid
//! serve`, corvid-desktop) to apply the settings files now — the settings page and its sign-ins
//! ask after they write them — and what the last look at those files found (an edit that could
//! not be applied, a change that needs a restart), for the Status tab.
//!
//! A page built without a host that reloads (tests, embedders) has [`Reloads::default`]: asking
//! answers `None`, and the settings page says a restart is needed instead.

use std::sync::Arc;

use parking_lot::Mutex;
use std::time::Duration;

use serde::Serialize;
use tokio::sync::{mpsc, oneshot};

/// How long the settings page waits for the host to apply its change.
const APPLY_TIMEOUT: Duration = Duration::from_secs(30);

/// What the host did with the settings files when asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReloadOutcome {
    /// Loaded and in use for every request from now on; `needs_restart` names what is still
    /// as it was at the start (the host and port the socket is bound to).
    Applied { needs_restart: Option<String> },
    /// Not valid: the running settings stay, for this reason.
    Refused(String),
}

/// What the last look at the settings files found, for the Status tab (and the tray).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SettingsNote {
    /// The files hold an edit that could not be applied (the running settings are older).
    pub error: Option<String>,
    /// A change applies only after a restart (host, port).
    pub restart_needed: Option<String>,
    /// How many times the settings were applied since the start.
    pub reloads: u64,
}

/// A request to apply the settings files now, answered once done.
pub type ReloadRequest = oneshot::Sender<ReloadOutcome>;

/// The page's side of live settings, and what outlives one version of them (the sign-ins under
/// way). Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct Reloads {
    requests: Option<mpsc::UnboundedSender<ReloadRequest>>,
    note: Arc<Mutex<SettingsNote>>,
    sign_ins: Arc<crate::signin::SignIns>,
    /// Where a restart is asked of the host, when it can restart itself.
    restart: Option<Arc<tokio::sync::Notify>>,
}

impl Reloads {
    /// A live one, and the requests the host answers.
    pub fn channel() -> (Self, mpsc::UnboundedReceiver<ReloadRequest>) {
        let (sender, receiver) = mpsc::unbounded_channel();
        (
            Self {
                requests: Some(sender),
                note: Arc::default(),
                sign_ins: Arc::default(),
                restart: None,
            },
            receiver,
        )
    }

    /// The same, with restarts asked through `restart` (a host that can start itself again
    /// on the settings files, for what cannot change live: host and port).
    pub fn with_restart(self, restart: Arc<tokio::sync::Notify>) -> Self {
        Self {
            restart: Some(restart),
            ..self
        }
    }

    /// Asks the host to restart (gracefully: streams finish, the ledger is committed); false
    /// when it cannot restart itself.
    pub fn restart(&self) -> bool {
        match &self.restart {
            Some(restart) => {
                restart.notify_one();
                true
            }
            None => false,
        }
    }

    /// Asks the host to apply the settings files now; `None` when no host reloads them (or it
    /// did not answer in time).
    pub async fn apply_now(&self) -> Option<ReloadOutcome> {
        let requests = self.requests.as_ref()?;
        let (answer, answered) = oneshot::channel();
        requests.send(answer).ok()?;
        tokio::time::timeout(APPLY_TIMEOUT, answered)
            .await
            .ok()?
            .ok()
    }

    /// What the last look at the settings files found.
    pub fn note(&self) -> SettingsNote {
        self.note.lock().clone()
    }

    pub(crate) fn sign_ins(&self) -> Arc<crate::signin::SignIns> {
        Arc::clone(&self.sign_ins)
    }

    /// Records what a look at the settings files found (the host calls it).
    pub fn set_note(&self, note: SettingsNote) {
        *self.note.lock() = note;
    }
}

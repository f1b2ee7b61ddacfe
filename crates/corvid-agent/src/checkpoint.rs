//! Checkpoints and undo: before a turn first changes the project (an edit, a write, a command),
//! the project is snapshotted in a shadow repository outside it ([`shadow`]); when the turn ends
//! it is snapshotted again, and the pair is kept in the store under the turn's number. `/undo`
//! puts back the files one turn changed, `/diff` shows each turn's changes.
//!
//! Undo is all or nothing: when a file the turn changed is no longer as the turn left it (the
//! user edited it, or a later turn did), the undo is refused and names the files, so nobody's
//! later work is overwritten. After an undo, the model is told at the start of the next message.
//!
//! The session owns its [`Checkpoints`] and hands each operation what it uses (the store, the
//! journal and scope its warnings go to, the conversation): nothing here knows the session.

mod shadow;

use std::path::Path;

use corvid_protocol::{ErrorClass, ErrorNotification, EventMsg, ReplyOk, TurnChanges};
use corvid_store::{CheckpointRecord, SharedConversations};

use crate::journal::Journal;
use crate::scope::Scope;
use crate::store_work;
use shadow::{RestoreError, ShadowError, ShadowRepo};

/// The checkpoint state of a session: its shadow repository (absent when checkpoints are off)
/// and the running turn's snapshot.
#[derive(Debug)]
pub(crate) struct Checkpoints {
    repo: Option<ShadowRepo>,
    turn: tokio::sync::Mutex<TurnCheckpoint>,
    /// A note for the model about an undo, put before the next user message.
    note: parking_lot::Mutex<Option<String>>,
}

#[derive(Debug, Default)]
struct TurnCheckpoint {
    turn: Option<u32>,
    before: Option<String>,
    /// The snapshot was tried and failed this turn (warned once, not retried).
    failed: bool,
}

impl Checkpoints {
    /// Checkpoints for `project` kept under `root`; `None` turns them off.
    pub(crate) fn new(root: Option<&Path>, project: &Path) -> Self {
        Self {
            repo: root.map(|root| ShadowRepo::new(root, project)),
            turn: tokio::sync::Mutex::new(TurnCheckpoint::default()),
            note: parking_lot::Mutex::new(None),
        }
    }

    /// A turn begins: its first change will be preceded by a snapshot.
    pub(crate) async fn begin(&self, turn: u32) {
        *self.turn.lock().await = TurnCheckpoint {
            turn: Some(turn),
            ..TurnCheckpoint::default()
        };
    }

    /// The note about an undo for the model, once.
    pub(crate) fn take_note(&self) -> Option<String> {
        self.note.lock().take()
    }

    fn add_note(&self, note: String) {
        let mut slot = self.note.lock();
        *slot = Some(match slot.take() {
            Some(earlier) => format!("{earlier}\n{note}"),
            None => note,
        });
    }
    /// Called before a tool that may change files runs: snapshots the project the first time in
    /// a turn. A failure is a warning (the tool still runs; that turn cannot be undone).
    pub(crate) async fn before_change(&self, journal: &Journal, scope: &Scope) {
        let Some(repo) = &self.repo else {
            return;
        };
        let mut state = self.turn.lock().await;
        if state.turn.is_none() || state.before.is_some() || state.failed {
            return;
        }
        match repo.snapshot().await {
            Ok(tree) => state.before = Some(tree),
            Err(error) => {
                state.failed = true;
                journal.emit(
                    scope,
                    EventMsg::Warning {
                        message: format!(
                            "No checkpoint for this turn, so it cannot be undone: {error}."
                        ),
                    },
                );
            }
        }
    }

    /// Called when a turn has ended: snapshots the project again and keeps the pair when the
    /// turn changed something.
    pub(crate) async fn finish(
        &self,
        store: &SharedConversations,
        journal: &Journal,
        scope: &Scope,
        conversation: &str,
    ) {
        let Some(repo) = &self.repo else {
            return;
        };
        let taken = std::mem::take(&mut *self.turn.lock().await);
        let (Some(turn), Some(before)) = (taken.turn, taken.before) else {
            return;
        };
        let after = match repo.snapshot().await {
            Ok(after) => after,
            Err(error) => {
                journal.emit(
                    scope,
                    EventMsg::Warning {
                        message: format!(
                            "No checkpoint after this turn, so it cannot be undone: {error}."
                        ),
                    },
                );
                return;
            }
        };
        if after == before {
            return;
        }
        let conversation = conversation.to_owned();
        if let Err(error) = store_work::run(store, move |store| {
            store.record_checkpoint(&conversation, turn, &before, &after)
        })
        .await
        {
            tracing::warn!(%error, "could not save the turn's checkpoint");
        }
    }

    /// `/undo`: puts back the files of `turn` (the latest turn not undone when `None`); every
    /// listener hears `undone`, and the reply says the same.
    pub(crate) async fn undo(
        &self,
        store: &SharedConversations,
        journal: &Journal,
        scope: &Scope,
        conversation: &str,
        turn: Option<u32>,
    ) -> Result<ReplyOk, ErrorNotification> {
        let repo = self.repo()?;
        let records = records(store, conversation).await?;
        let target = match turn {
            Some(number) => records.iter().find(|record| record.turn == number),
            None => records
                .iter()
                .rev()
                .find(|record| record.undone_at.is_none()),
        };
        let record = match (target, turn) {
            (Some(record), _) if record.undone_at.is_some() => {
                return Err(refusal(
                    format!("turn {} was undone already", record.turn),
                    "The conversation's diff shows the turns that can still be undone.",
                ));
            }
            (Some(record), _) => record,
            (None, Some(number)) => {
                return Err(refusal(
                    format!("turn {number} changed no files in this conversation"),
                    "The conversation's diff shows which turns changed files.",
                ));
            }
            (None, None) => {
                return Err(refusal(
                    "nothing to undo: no turn of this conversation changed files (or all were undone)".to_owned(),
                    "Nothing to do.",
                ));
            }
        };
        match repo.restore(&record.before, &record.after).await {
            Ok(files) => {
                let number = record.turn;
                let id = conversation.to_owned();
                if let Err(error) =
                    store_work::run(store, move |store| store.mark_undone(&id, number)).await
                {
                    tracing::warn!(%error, "could not mark the turn undone");
                }
                let files: Vec<_> = files.iter().map(|file| file.to_protocol()).collect();
                let names: Vec<&str> = files.iter().map(|file| file.path.as_str()).collect();
                self.add_note(format!(
                    "[The user undid turn {number}: these files are back as they were before it: {}. Read them again before relying on what that turn did.]",
                    names.join(", ")
                ));
                journal.emit(
                    scope,
                    EventMsg::Undone {
                        turn: number,
                        files: files.clone(),
                    },
                );
                Ok(ReplyOk::Undone {
                    turn: number,
                    files,
                })
            }
            Err(RestoreError::Conflicts(paths)) => Err(refusal(
                format!(
                    "undo of turn {} refused, nothing was restored: these files changed after that turn (by you or a later turn): {}",
                    record.turn,
                    paths.join(", ")
                ),
                "Undo the later turns first, or put the files back by hand (the turn's diff shows what it changed).",
            )),
            Err(RestoreError::Failed(error)) => Err(checkpoint_failed(&error)),
        }
    }

    /// `rewind` with files: puts back the files of every turn from `first` on that changed
    /// some and was not undone, newest first; the files put back. Stops at the first refusal
    /// (the turns after it stay undone, as `/undo` would leave them).
    pub(crate) async fn undo_since(
        &self,
        store: &SharedConversations,
        journal: &Journal,
        scope: &Scope,
        conversation: &str,
        first: u32,
    ) -> Result<Vec<corvid_protocol::FileChange>, ErrorNotification> {
        if self.repo.is_none() {
            return Ok(Vec::new());
        }
        let records = records(store, conversation).await?;
        let mut files = Vec::new();
        for record in records
            .iter()
            .rev()
            .filter(|record| record.turn >= first && record.undone_at.is_none())
        {
            if let ReplyOk::Undone {
                files: put_back, ..
            } = self
                .undo(store, journal, scope, conversation, Some(record.turn))
                .await?
            {
                files.extend(put_back);
            }
        }
        // The model will not see those turns again: no note about undoing them.
        let _ = self.take_note();
        Ok(files)
    }

    /// `/diff`: each turn's changes (only `turn` when given), oldest first.
    pub(crate) async fn diff(
        &self,
        store: &SharedConversations,
        conversation: &str,
        turn: Option<u32>,
    ) -> Result<ReplyOk, ErrorNotification> {
        let repo = self.repo()?;
        let records = records(store, conversation).await?;
        let mut turns = Vec::new();
        for record in records
            .iter()
            .filter(|record| record.undone_at.is_none())
            .filter(|record| turn.is_none_or(|number| record.turn == number))
        {
            let changes = repo
                .changes(&record.before, &record.after)
                .await
                .map_err(|error| checkpoint_failed(&error))?;
            let diff = repo
                .diff(&record.before, &record.after)
                .await
                .map_err(|error| checkpoint_failed(&error))?;
            turns.push(TurnChanges {
                turn: record.turn,
                files: changes.iter().map(|change| change.to_protocol()).collect(),
                diff,
            });
        }
        Ok(ReplyOk::Diff { turns })
    }

    fn repo(&self) -> Result<&ShadowRepo, ErrorNotification> {
        self.repo.as_ref().ok_or_else(|| {
            ErrorNotification::new(
                ErrorClass::NotConfigured,
                "checkpoints are off in this session, so there is nothing to undo or show",
            )
            .with_next_action(
                "Start a new session with checkpoints on (the default; they live in corvid's data folder).",
            )
        })
    }
}

/// The conversation's checkpoints, oldest first.
async fn records(
    store: &SharedConversations,
    conversation: &str,
) -> Result<Vec<CheckpointRecord>, ErrorNotification> {
    let id = conversation.to_owned();
    store_work::run(store, move |store| store.checkpoints(&id))
        .await
        .map_err(|error| store_work::failure(&error))
}

fn refusal(message: String, next_action: &str) -> ErrorNotification {
    ErrorNotification::invalid(message).with_next_action(next_action)
}

fn checkpoint_failed(error: &ShadowError) -> ErrorNotification {
    match error {
        ShadowError::GitMissing => {
            ErrorNotification::new(ErrorClass::NotConfigured, error.to_string())
                .with_next_action("Install git (any recent version) and start corvid again.")
        }
        _ => ErrorNotification::new(ErrorClass::Internal, error.to_string())
            .with_next_action("Try again; if it persists, report it with the message."),
    }
}

#[cfg(test)]
mod tests;

//! What the agent keeps per turn besides messages: the checkpoint of each turn that changed
//! files (the project's tree before and after it, as ids in the agent's shadow repository, and
//! whether it was undone), and replacing a conversation's messages when it is compacted.
//!
//! The trees themselves live in the shadow repository; the store only remembers which belong to
//! which turn, so `/undo` and `/diff` work after a restart.

use rusqlite::params;

use crate::{Store, StoreError};

/// One turn's checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointRecord {
    /// The turn, counted from 1 within the conversation.
    pub turn: u32,
    /// The project's tree before the turn's first change.
    pub before: String,
    /// The project's tree when the turn ended.
    pub after: String,
    /// When it was undone (Unix seconds), if it was.
    pub undone_at: Option<i64>,
}

impl Store {
    /// Records (or replaces) the checkpoint of `turn`.
    pub fn record_checkpoint(
        &mut self,
        conversation: &str,
        turn: u32,
        before: &str,
        after: &str,
    ) -> Result<(), StoreError> {
        self.conn.execute(
            "INSERT INTO checkpoints (conversation_id, turn, before_tree, after_tree, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (conversation_id, turn) DO UPDATE SET
                 before_tree = excluded.before_tree, after_tree = excluded.after_tree,
                 undone_at = NULL, created_at = excluded.created_at",
            params![conversation, turn, before, after, crate::now_ms() / 1000],
        )?;
        Ok(())
    }

    /// A conversation's checkpoints, oldest turn first.
    pub fn checkpoints(&self, conversation: &str) -> Result<Vec<CheckpointRecord>, StoreError> {
        let mut statement = self.conn.prepare(
            "SELECT turn, before_tree, after_tree, undone_at FROM checkpoints
             WHERE conversation_id = ?1 ORDER BY turn",
        )?;
        let rows = statement.query_map(params![conversation], |row| {
            Ok(CheckpointRecord {
                turn: row.get(0)?,
                before: row.get(1)?,
                after: row.get(2)?,
                undone_at: row.get(3)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Marks `turn` undone; false when it has no checkpoint or was undone already.
    pub fn mark_undone(&mut self, conversation: &str, turn: u32) -> Result<bool, StoreError> {
        let changed = self.conn.execute(
            "UPDATE checkpoints SET undone_at = ?3
             WHERE conversation_id = ?1 AND turn = ?2 AND undone_at IS NULL",
            params![conversation, turn, crate::now_ms() / 1000],
        )?;
        Ok(changed > 0)
    }

    /// The highest turn number the conversation has used (in its usage or its checkpoints), so
    /// that a resumed conversation numbers its next turn after it; 0 for a new one.
    pub fn last_turn(&self, conversation: &str) -> Result<u32, StoreError> {
        let turn: i64 = self.conn.query_row(
            "SELECT MAX(COALESCE((SELECT MAX(turn) FROM step_usage WHERE conversation_id = ?1), 0),
                        COALESCE((SELECT MAX(turn) FROM checkpoints WHERE conversation_id = ?1), 0))",
            params![conversation],
            |row| row.get(0),
        )?;
        Ok(u32::try_from(turn).unwrap_or(0))
    }

    /// Replaces all of a conversation's messages with `messages` (role, JSON) in one
    /// transaction, numbering them from 1 (a compacted history); returns the last sequence number.
    pub fn replace_messages(
        &mut self,
        conversation: &str,
        messages: &[(&str, &str)],
    ) -> Result<i64, StoreError> {
        let now = crate::now_ms() / 1000;
        let tx = self.conn.transaction()?;
        tx.execute(
            "DELETE FROM messages WHERE conversation_id = ?1",
            params![conversation],
        )?;
        let mut seq = 0_i64;
        for (role, content) in messages {
            seq += 1;
            tx.execute(
                "INSERT INTO messages (conversation_id, seq, role, content, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![conversation, seq, role, content, now],
            )?;
        }
        tx.execute(
            "UPDATE conversations SET updated_at = ?2 WHERE id = ?1",
            params![conversation, now],
        )?;
        tx.commit()?;
        Ok(seq)
    }
}

#[cfg(test)]
mod tests;

//! The agent's conversations: several per project, their messages (opaque JSON the agent
//! owns), which one is current, and token usage per step.

use rusqlite::{OptionalExtension, params};

use crate::usage::Tokens;
use crate::{Store, StoreError};

/// One conversation in a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversationSummary {
    pub id: String,
    pub title: String,
    pub model: Option<String>,
    /// Unix seconds.
    pub created_at: i64,
    pub updated_at: i64,
    pub message_count: u64,
}

/// A stored message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredMessage {
    pub seq: i64,
    pub role: String,
    /// JSON written by the agent.
    pub content: String,
}

fn now_secs() -> i64 {
    crate::now_ms() / 1000
}

impl Store {
    /// Starts a conversation in `project` and makes it the current one.
    pub fn create_conversation(
        &mut self,
        project: &str,
        model: Option<&str>,
    ) -> Result<String, StoreError> {
        let id = format!("c_{:016x}", rand_id());
        let now = now_secs();
        let tx = self.conn.transaction()?;
        tx.execute(
            "INSERT INTO conversations (id, project, title, model, created_at, updated_at) VALUES (?1, ?2, '', ?3, ?4, ?4)",
            params![id, project, model, now],
        )?;
        tx.execute(
            "INSERT INTO project_state (project, current_conversation) VALUES (?1, ?2)
             ON CONFLICT (project) DO UPDATE SET current_conversation = excluded.current_conversation",
            params![project, id],
        )?;
        tx.commit()?;
        Ok(id)
    }

    /// The project's conversations, most recently updated first.
    pub fn list_conversations(
        &self,
        project: &str,
    ) -> Result<Vec<ConversationSummary>, StoreError> {
        let mut statement = self.conn.prepare(
            "SELECT c.id, c.title, c.model, c.created_at, c.updated_at,
                    (SELECT COUNT(*) FROM messages m WHERE m.conversation_id = c.id)
             FROM conversations c WHERE c.project = ?1 ORDER BY c.updated_at DESC, c.rowid DESC",
        )?;
        let rows = statement.query_map(params![project], |row| {
            Ok(ConversationSummary {
                id: row.get(0)?,
                title: row.get(1)?,
                model: row.get(2)?,
                created_at: row.get(3)?,
                updated_at: row.get(4)?,
                message_count: row.get::<_, i64>(5)?.max(0) as u64,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One conversation, if it exists in `project`.
    pub fn conversation(
        &self,
        project: &str,
        id: &str,
    ) -> Result<Option<ConversationSummary>, StoreError> {
        Ok(self
            .list_conversations(project)?
            .into_iter()
            .find(|summary| summary.id == id))
    }

    /// The project's current conversation, if any.
    pub fn current_conversation(&self, project: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT current_conversation FROM project_state WHERE project = ?1",
                params![project],
                |row| row.get::<_, Option<String>>(0),
            )
            .optional()?
            .flatten())
    }

    /// Makes `id` the project's current conversation; false when it is not one of the project's.
    pub fn switch_conversation(&mut self, project: &str, id: &str) -> Result<bool, StoreError> {
        let exists: bool = self.conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM conversations WHERE id = ?1 AND project = ?2)",
            params![id, project],
            |row| row.get(0),
        )?;
        if exists {
            self.conn.execute(
                "INSERT INTO project_state (project, current_conversation) VALUES (?1, ?2)
                 ON CONFLICT (project) DO UPDATE SET current_conversation = excluded.current_conversation",
                params![project, id],
            )?;
        }
        Ok(exists)
    }

    /// Deletes a conversation with its messages and usage; false when there was none.
    pub fn delete_conversation(&mut self, project: &str, id: &str) -> Result<bool, StoreError> {
        let deleted = self.conn.execute(
            "DELETE FROM conversations WHERE id = ?1 AND project = ?2",
            params![id, project],
        )?;
        Ok(deleted > 0)
    }

    /// Empties a conversation (messages and usage), keeping it.
    pub fn clear_conversation(&mut self, id: &str) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        tx.execute(
            "DELETE FROM messages WHERE conversation_id = ?1",
            params![id],
        )?;
        tx.execute(
            "DELETE FROM step_usage WHERE conversation_id = ?1",
            params![id],
        )?;
        tx.execute(
            "UPDATE conversations SET title = '', updated_at = ?2 WHERE id = ?1",
            params![id, now_secs()],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Sets a conversation's title (the agent derives it from the first message).
    pub fn set_title(&mut self, id: &str, title: &str) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE conversations SET title = ?2 WHERE id = ?1",
            params![id, title],
        )?;
        Ok(())
    }

    /// Sets the model a conversation uses.
    pub fn set_conversation_model(&mut self, id: &str, model: &str) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE conversations SET model = ?2 WHERE id = ?1",
            params![id, model],
        )?;
        Ok(())
    }

    /// Appends messages in order (one transaction); returns the last sequence number.
    pub fn append_messages(
        &mut self,
        id: &str,
        messages: &[(&str, &str)],
    ) -> Result<i64, StoreError> {
        let now = now_secs();
        let tx = self.conn.transaction()?;
        let mut seq: i64 = tx.query_row(
            "SELECT COALESCE(MAX(seq), 0) FROM messages WHERE conversation_id = ?1",
            params![id],
            |row| row.get(0),
        )?;
        for (role, content) in messages {
            seq += 1;
            tx.execute(
                "INSERT INTO messages (conversation_id, seq, role, content, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![id, seq, role, content, now],
            )?;
        }
        tx.execute(
            "UPDATE conversations SET updated_at = ?2 WHERE id = ?1",
            params![id, now],
        )?;
        tx.commit()?;
        Ok(seq)
    }

    /// Marks the conversation's last message as the end of a turn that stopped in the agent's
    /// sight (the user cancelled it, or it failed), not by a crash.
    pub fn mark_turn_ended(&mut self, id: &str) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE conversations SET ended_at_seq = \
             (SELECT MAX(seq) FROM messages WHERE conversation_id = ?1) WHERE id = ?1",
            params![id],
        )?;
        Ok(())
    }

    /// The seq [`Store::mark_turn_ended`] last recorded, if any.
    pub fn turn_ended_at(&self, id: &str) -> Result<Option<i64>, StoreError> {
        let ended = self
            .conn
            .query_row(
                "SELECT ended_at_seq FROM conversations WHERE id = ?1",
                params![id],
                |row| row.get::<_, Option<i64>>(0),
            )
            .optional()?;
        Ok(ended.flatten())
    }

    /// A conversation's messages, oldest first.
    pub fn messages(&self, id: &str) -> Result<Vec<StoredMessage>, StoreError> {
        let mut statement = self.conn.prepare(
            "SELECT seq, role, content FROM messages WHERE conversation_id = ?1 ORDER BY seq",
        )?;
        let rows = statement.query_map(params![id], |row| {
            Ok(StoredMessage {
                seq: row.get(0)?,
                role: row.get(1)?,
                content: row.get(2)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Records one model step's tokens.
    pub fn record_step_usage(
        &mut self,
        id: &str,
        turn: u32,
        step: u32,
        model: &str,
        tokens: &Tokens,
    ) -> Result<(), StoreError> {
        self.conn.execute(
            "INSERT INTO step_usage (conversation_id, turn, step, model, input, cache_read, cache_write, output, reasoning, at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                id,
                turn,
                step,
                model,
                tokens.input as i64,
                tokens.cache_read as i64,
                tokens.cache_write as i64,
                tokens.output as i64,
                tokens.reasoning as i64,
                crate::now_ms()
            ],
        )?;
        Ok(())
    }

    /// A conversation's tokens so far: per turn (in turn order) and the total.
    pub fn conversation_usage(&self, id: &str) -> Result<(Vec<(u32, Tokens)>, Tokens), StoreError> {
        let mut statement = self.conn.prepare(
            "SELECT turn, SUM(input), SUM(cache_read), SUM(cache_write), SUM(output), SUM(reasoning)
             FROM step_usage WHERE conversation_id = ?1 GROUP BY turn ORDER BY turn",
        )?;
        let rows = statement.query_map(params![id], |row| {
            let count = |index| row.get::<_, i64>(index).map(|value| value.max(0) as u64);
            Ok((
                row.get::<_, u32>(0)?,
                Tokens {
                    input: count(1)?,
                    cache_read: count(2)?,
                    cache_write: count(3)?,
                    output: count(4)?,
                    reasoning: count(5)?,
                },
            ))
        })?;
        let turns: Vec<(u32, Tokens)> = rows.collect::<Result<_, _>>()?;
        let total = turns
            .iter()
            .fold(Tokens::default(), |sum, (_, tokens)| Tokens {
                input: sum.input + tokens.input,
                cache_read: sum.cache_read + tokens.cache_read,
                cache_write: sum.cache_write + tokens.cache_write,
                output: sum.output + tokens.output,
                reasoning: sum.reasoning + tokens.reasoning,
            });
        Ok((turns, total))
    }
}

/// A random 64-bit id from the standard library's hasher seeds (no extra dependency).
fn rand_id() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_i64(crate::now_ms());
    hasher.finish()
}

#[cfg(test)]
mod tests;

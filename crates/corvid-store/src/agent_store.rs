//! The seam between the agent and its store: everything the agent (and the page's reports)
//! keeps — conversations, their messages, titles, models, step usage, checkpoints, the
//! agent's own rows in the usage ledger — as one object-safe trait, so the same agent runs on
//! the local SQLite file ([`Store`]) or on PostgreSQL ([`crate::pg::PgConversations`]).
//!
//! The methods are blocking, like [`Store`]'s: callers run them off the async threads (the
//! agent's `with_store` does). [`SharedConversations`] is the one such store of a process;
//! a [`crate::SharedStore`] coerces to it, so on SQLite the agent and the gateway's ledger
//! writer keep sharing one connection.

use std::sync::Arc;

use parking_lot::Mutex;

use crate::{
    CheckpointRecord, ConversationSummary, Store, StoreError, StoredMessage, Tokens, UsageRecord,
    UsageRow, UsageTotals,
};

/// The agent's store, SQLite or PostgreSQL: see the module's documentation. Each method does
/// what [`Store`]'s method of the same name does.
pub trait ConversationStore: Send {
    /// Starts a conversation in `project` and makes it the current one; returns its id.
    fn create_conversation(
        &mut self,
        project: &str,
        model: Option<&str>,
    ) -> Result<String, StoreError>;
    /// The project's conversations, most recently updated first.
    fn list_conversations(&self, project: &str) -> Result<Vec<ConversationSummary>, StoreError>;
    /// One conversation, if it exists in `project`.
    fn conversation(
        &self,
        project: &str,
        id: &str,
    ) -> Result<Option<ConversationSummary>, StoreError>;
    /// The project's current conversation, if any.
    fn current_conversation(&self, project: &str) -> Result<Option<String>, StoreError>;
    /// Makes `id` the project's current conversation; false when it is not one of the project's.
    fn switch_conversation(&mut self, project: &str, id: &str) -> Result<bool, StoreError>;
    /// Deletes a conversation with its messages, usage and checkpoints; false when there was none.
    fn delete_conversation(&mut self, project: &str, id: &str) -> Result<bool, StoreError>;
    /// Empties a conversation (messages and usage), keeping it.
    fn clear_conversation(&mut self, id: &str) -> Result<(), StoreError>;
    /// Sets a conversation's title.
    fn set_title(&mut self, id: &str, title: &str) -> Result<(), StoreError>;
    /// Sets the model a conversation uses.
    fn set_conversation_model(&mut self, id: &str, model: &str) -> Result<(), StoreError>;
    /// Appends messages (role, JSON) in order, in one transaction; returns the last seq.
    fn append_messages(&mut self, id: &str, messages: &[(&str, &str)]) -> Result<i64, StoreError>;
    /// Replaces all of a conversation's messages (a compacted history); returns the last seq.
    fn replace_messages(
        &mut self,
        conversation: &str,
        messages: &[(&str, &str)],
    ) -> Result<i64, StoreError>;
    /// Marks the last message as the end of a turn that stopped in the agent's sight.
    fn mark_turn_ended(&mut self, id: &str) -> Result<(), StoreError>;
    /// The seq `mark_turn_ended` last recorded, if any.
    fn turn_ended_at(&self, id: &str) -> Result<Option<i64>, StoreError>;
    /// A conversation's messages, oldest first.
    fn messages(&self, id: &str) -> Result<Vec<StoredMessage>, StoreError>;
    /// Records one model step's tokens.
    fn record_step_usage(
        &mut self,
        id: &str,
        turn: u32,
        step: u32,
        model: &str,
        tokens: &Tokens,
    ) -> Result<(), StoreError>;
    /// A conversation's tokens so far: per turn (in turn order) and the total.
    fn conversation_usage(&self, id: &str) -> Result<(Vec<(u32, Tokens)>, Tokens), StoreError>;
    /// Records (or replaces) the checkpoint of `turn`.
    fn record_checkpoint(
        &mut self,
        conversation: &str,
        turn: u32,
        before: &str,
        after: &str,
    ) -> Result<(), StoreError>;
    /// A conversation's checkpoints, oldest turn first.
    fn checkpoints(&self, conversation: &str) -> Result<Vec<CheckpointRecord>, StoreError>;
    /// Marks `turn` undone; false when it has no checkpoint or was undone already.
    fn mark_undone(&mut self, conversation: &str, turn: u32) -> Result<bool, StoreError>;
    /// The highest turn number the conversation has used; 0 for a new one.
    fn last_turn(&self, conversation: &str) -> Result<u32, StoreError>;
    /// Writes one of the agent's model calls to the usage ledger.
    fn record(&mut self, record: &UsageRecord) -> Result<(), StoreError>;
    /// Usage grouped by UTC day, model, provider and front end (the page's report).
    fn usage_by_day_and_model(&self, since_ms: Option<i64>) -> Result<Vec<UsageRow>, StoreError>;
    /// Usage summed over everything at or after `since_ms`.
    fn totals(&self, since_ms: Option<i64>) -> Result<UsageTotals, StoreError>;
}

/// The one agent store of a process, behind a lock taken for one piece of work at a time.
pub type SharedConversations = Arc<Mutex<dyn ConversationStore>>;

/// The SQLite store: each method is [`Store`]'s own.
impl ConversationStore for Store {
    fn create_conversation(
        &mut self,
        project: &str,
        model: Option<&str>,
    ) -> Result<String, StoreError> {
        Store::create_conversation(self, project, model)
    }
    fn list_conversations(&self, project: &str) -> Result<Vec<ConversationSummary>, StoreError> {
        Store::list_conversations(self, project)
    }
    fn conversation(
        &self,
        project: &str,
        id: &str,
    ) -> Result<Option<ConversationSummary>, StoreError> {
        Store::conversation(self, project, id)
    }
    fn current_conversation(&self, project: &str) -> Result<Option<String>, StoreError> {
        Store::current_conversation(self, project)
    }
    fn switch_conversation(&mut self, project: &str, id: &str) -> Result<bool, StoreError> {
        Store::switch_conversation(self, project, id)
    }
    fn delete_conversation(&mut self, project: &str, id: &str) -> Result<bool, StoreError> {
        Store::delete_conversation(self, project, id)
    }
    fn clear_conversation(&mut self, id: &str) -> Result<(), StoreError> {
        Store::clear_conversation(self, id)
    }
    fn set_title(&mut self, id: &str, title: &str) -> Result<(), StoreError> {
        Store::set_title(self, id, title)
    }
    fn set_conversation_model(&mut self, id: &str, model: &str) -> Result<(), StoreError> {
        Store::set_conversation_model(self, id, model)
    }
    fn append_messages(&mut self, id: &str, messages: &[(&str, &str)]) -> Result<i64, StoreError> {
        Store::append_messages(self, id, messages)
    }
    fn replace_messages(
        &mut self,
        conversation: &str,
        messages: &[(&str, &str)],
    ) -> Result<i64, StoreError> {
        Store::replace_messages(self, conversation, messages)
    }
    fn mark_turn_ended(&mut self, id: &str) -> Result<(), StoreError> {
        Store::mark_turn_ended(self, id)
    }
    fn turn_ended_at(&self, id: &str) -> Result<Option<i64>, StoreError> {
        Store::turn_ended_at(self, id)
    }
    fn messages(&self, id: &str) -> Result<Vec<StoredMessage>, StoreError> {
        Store::messages(self, id)
    }
    fn record_step_usage(
        &mut self,
        id: &str,
        turn: u32,
        step: u32,
        model: &str,
        tokens: &Tokens,
    ) -> Result<(), StoreError> {
        Store::record_step_usage(self, id, turn, step, model, tokens)
    }
    fn conversation_usage(&self, id: &str) -> Result<(Vec<(u32, Tokens)>, Tokens), StoreError> {
        Store::conversation_usage(self, id)
    }
    fn record_checkpoint(
        &mut self,
        conversation: &str,
        turn: u32,
        before: &str,
        after: &str,
    ) -> Result<(), StoreError> {
        Store::record_checkpoint(self, conversation, turn, before, after)
    }
    fn checkpoints(&self, conversation: &str) -> Result<Vec<CheckpointRecord>, StoreError> {
        Store::checkpoints(self, conversation)
    }
    fn mark_undone(&mut self, conversation: &str, turn: u32) -> Result<bool, StoreError> {
        Store::mark_undone(self, conversation, turn)
    }
    fn last_turn(&self, conversation: &str) -> Result<u32, StoreError> {
        Store::last_turn(self, conversation)
    }
    fn record(&mut self, record: &UsageRecord) -> Result<(), StoreError> {
        Store::record(self, record)
    }
    fn usage_by_day_and_model(&self, since_ms: Option<i64>) -> Result<Vec<UsageRow>, StoreError> {
        Store::usage_by_day_and_model(self, since_ms)
    }
    fn totals(&self, since_ms: Option<i64>) -> Result<UsageTotals, StoreError> {
        Store::totals(self, since_ms)
    }
}

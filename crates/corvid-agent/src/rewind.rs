//! Rewind and fork: the user's messages a conversation can go back to, going back to one
//! (the messages from it on leave the conversation; the files those turns changed are put back
//! when asked, through the checkpoints), and copying the conversation into a new one.

use corvid_protocol::{ErrorNotification, EventMsg, ReplyOk, UserMessageEntry};
use corvid_wire::model::{Message, Part, Role};

use crate::engine::Engine;
use crate::history;
use crate::scope::Scope;

/// What the engine adds to a user's message, which is not what the user wrote.
const ADDED_PREFIXES: [&str; 3] = [
    "[The user undid turn",
    "[The user invoked the skill",
    "<hook-context>",
];

/// The user's messages that start turns, with where each is in `history` and what the user
/// wrote: not tool results, not a Stop hook's note, not a compaction's summary.
pub(crate) fn user_turns(history: &[Message]) -> Vec<(usize, String)> {
    history
        .iter()
        .enumerate()
        .filter(|(_, message)| {
            message.role == Role::User
                && !message
                    .parts
                    .iter()
                    .any(|part| matches!(part, Part::ToolResult(_)))
                && !crate::compaction::is_summary(message)
        })
        .filter_map(|(position, message)| {
            let text = typed_text(message);
            (!text.trim().is_empty() && !text.starts_with("[Stop hook]"))
                .then_some((position, text))
        })
        .collect()
}

/// A user message's text without what the engine added to it (an undo's note, a skill's
/// instruction, hooks' context): what the user wrote, as faces show it.
pub(crate) fn typed_text(message: &Message) -> String {
    message
        .parts
        .iter()
        .filter_map(|part| match part {
            Part::Text { text }
                if !ADDED_PREFIXES.iter().any(|prefix| text.starts_with(prefix)) =>
            {
                Some(text.as_str())
            }
            _ => None,
        })
        .collect()
}

fn no_message(message: u32, count: usize) -> ErrorNotification {
    ErrorNotification::invalid(format!(
        "there is no message {} to go back to (this conversation has {count})",
        message + 1
    ))
    .with_next_action("/rewind without a number lists them.")
}

impl Engine {
    /// `user_messages`: what `rewind` and `fork` may start from.
    pub(crate) fn user_messages(&self) -> ReplyOk {
        ReplyOk::UserMessages {
            messages: user_turns(&self.history)
                .into_iter()
                .enumerate()
                .map(|(index, (_, text))| UserMessageEntry {
                    index: u32::try_from(index).unwrap_or(u32::MAX),
                    text,
                })
                .collect(),
        }
    }

    /// `rewind`: the conversation ends before the `message`-th user message; with
    /// `restore_files`, the removed turns' file changes are undone first (newest first, all or
    /// nothing per turn: a refusal leaves the conversation whole).
    pub(crate) async fn rewind(
        &mut self,
        scope: &Scope,
        message: u32,
        restore_files: bool,
    ) -> Result<ReplyOk, ErrorNotification> {
        let turns = user_turns(&self.history);
        let index = usize::try_from(message).unwrap_or(usize::MAX);
        let Some((position, text)) = turns.get(index).cloned() else {
            return Err(no_message(message, turns.len()));
        };
        let removed = u32::try_from(turns.len() - index).unwrap_or(u32::MAX);
        let files = if restore_files {
            // Each turn adds one of these messages, so the removed ones are the last turns.
            let first = self.turns.saturating_sub(removed) + 1;
            let shared = &self.shared;
            shared
                .checkpoints
                .undo_since(
                    shared.store(),
                    &shared.journal,
                    scope,
                    &self.conversation,
                    first,
                )
                .await?
        } else {
            Vec::new()
        };
        self.history.truncate(position);
        crate::persist::replace_all(&self.shared, &self.conversation, &self.history).await;
        let summary = self.summary().await;
        self.shared.emit(
            scope,
            EventMsg::ConversationOpened {
                conversation: summary,
                history: history::entries(
                    &self.history,
                    &self.config.project,
                    &self.shared.call_facts,
                ),
            },
        );
        Ok(ReplyOk::Rewound {
            text,
            removed,
            files,
        })
    }

    /// `fork`: a new conversation holding this one's messages before the `message`-th user
    /// message (all of them when absent), titled after this one.
    pub(crate) async fn fork(&self, message: Option<u32>) -> Result<ReplyOk, ErrorNotification> {
        let (end, text) = match message {
            None => (self.history.len(), None),
            Some(message) => {
                let turns = user_turns(&self.history);
                let index = usize::try_from(message).unwrap_or(usize::MAX);
                let Some((position, text)) = turns.get(index).cloned() else {
                    return Err(no_message(message, turns.len()));
                };
                (position, Some(text))
            }
        };
        let copied = self.history[..end].to_vec();
        let title = self.summary().await.title;
        let (project, model) = (self.project_key.clone(), self.model.clone());
        let conversation_id = self
            .shared
            .with_store(move |store| {
                let id = store.create_conversation(&project, Some(&model))?;
                let fork_title = if title.is_empty() {
                    "fork".to_owned()
                } else {
                    format!("{title} (fork)")
                };
                store.set_title(&id, &fork_title)?;
                Ok(id)
            })
            .await
            .map_err(|error| crate::engine::store_failure(&error))?;
        crate::persist::replace_all(&self.shared, &conversation_id, &copied).await;
        Ok(ReplyOk::Forked {
            conversation_id,
            text,
        })
    }
}

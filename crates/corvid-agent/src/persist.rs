//! The conversation on disk while a turn runs. The user's message is saved when the turn starts
//! and each step — the assistant's message with the results of its tool calls — in one
//! transaction when it completes, so a crash (even `kill -9`) loses at most the step in flight,
//! never the steps before it. A step is never half saved; what a crash can leave (a stored tool
//! call without its results, from a build that saved differently) is repaired when the
//! conversation is loaded, and a last turn cut short by a crash is reported. A turn that ended
//! in the agent's sight (the user cancelled it, or it failed) is marked in the store, beside the
//! messages and never in them, so reopening it does not warn.

use corvid_store::{ConversationStore, StoreError};
use corvid_wire::model::{Message, Part, Role, ToolResult, ToolResultContent};

use crate::session::Shared;

/// The result given, on load, to a stored call whose result was never saved.
pub(crate) const CRASHED_RESULT: &str =
    "No result: corvid stopped before this tool call finished; it may or may not have run.";

/// Appends `messages` to the conversation in one transaction (off the async threads, awaited so
/// the writes stay in order). A failure is logged: the turn goes on with its history in memory.
pub(crate) async fn save(shared: &Shared, conversation: &str, messages: &[Message]) {
    let encoded = encode(messages);
    if encoded.is_empty() {
        return;
    }
    let conversation = conversation.to_owned();
    let saved = shared
        .with_store(move |store| append(store, &conversation, &encoded))
        .await;
    if let Err(error) = saved {
        tracing::warn!(%error, "could not save messages");
    }
}

/// Replaces the stored messages with `history` whole (after a compaction), in one transaction.
pub(crate) async fn replace_all(shared: &Shared, conversation: &str, history: &[Message]) {
    let encoded = encode(history);
    let conversation = conversation.to_owned();
    let saved = shared
        .with_store(move |store| {
            let pairs: Vec<(&str, &str)> = encoded
                .iter()
                .map(|(role, json)| (*role, json.as_str()))
                .collect();
            store.replace_messages(&conversation, &pairs)
        })
        .await;
    if let Err(error) = saved {
        tracing::warn!(%error, "could not save the compacted history");
    }
}

fn encode(messages: &[Message]) -> Vec<(&'static str, String)> {
    messages
        .iter()
        .filter_map(|message| {
            let role = match message.role {
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            serde_json::to_string(message).ok().map(|json| (role, json))
        })
        .collect()
}

fn append(
    store: &mut dyn ConversationStore,
    conversation: &str,
    encoded: &[(&'static str, String)],
) -> Result<i64, StoreError> {
    let pairs: Vec<(&str, &str)> = encoded
        .iter()
        .map(|(role, json)| (*role, json.as_str()))
        .collect();
    store.append_messages(conversation, &pairs)
}

/// Records that the conversation's last turn ended in the agent's sight (cancelled or failed),
/// so [`load`] does not report it as cut short. Logged, not fatal, when the store refuses.
pub(crate) async fn mark_turn_ended(shared: &Shared, conversation: &str) {
    let conversation = conversation.to_owned();
    let marked = shared
        .with_store(move |store| store.mark_turn_ended(&conversation))
        .await;
    if let Err(error) = marked {
        tracing::warn!(%error, "could not record how the turn ended");
    }
}

/// A stored conversation, ready to go on: unreadable messages are skipped (with a warning), a
/// trailing tool call without results gets them (saved, so the store is whole again), and an
/// unfinished last turn is reported.
pub(crate) fn load(
    store: &mut dyn ConversationStore,
    conversation: &str,
    warnings: &mut Vec<String>,
) -> Result<Vec<Message>, StoreError> {
    let mut history = Vec::new();
    let stored_messages = store.messages(conversation)?;
    let last_seq = stored_messages.last().map(|stored| stored.seq);
    for stored in stored_messages {
        match serde_json::from_str::<Message>(&stored.content) {
            Ok(message) => history.push(message),
            Err(error) => warnings.push(format!(
                "skipped an unreadable stored message #{}: {error}",
                stored.seq
            )),
        }
    }
    if let Some(results) = missing_results(&history) {
        append(store, conversation, &encode(std::slice::from_ref(&results)))?;
        history.push(results);
        warnings.push(
            "the last turn stopped during a tool call (corvid was stopped); the call was marked as unfinished"
                .to_owned(),
        );
    } else if history
        .last()
        .is_some_and(|message| message.role == Role::User)
        && store.turn_ended_at(conversation)? != last_seq
    {
        warnings.push(
            "the last turn did not finish; the steps it completed are kept, and the next message continues from them"
                .to_owned(),
        );
    }
    Ok(history)
}

/// When the history ends with tool calls and no results, the results that answer them.
fn missing_results(history: &[Message]) -> Option<Message> {
    let last = history.last().filter(|last| last.role == Role::Assistant)?;
    let parts: Vec<Part> = last
        .parts
        .iter()
        .filter_map(|part| match part {
            Part::ToolCall(call) => Some(Part::ToolResult(ToolResult {
                call_id: call.id.clone(),
                name: Some(call.name.clone()),
                content: vec![ToolResultContent::Text {
                    text: CRASHED_RESULT.to_owned(),
                }],
                is_error: true,
            })),
            _ => None,
        })
        .collect();
    (!parts.is_empty()).then_some(Message {
        role: Role::User,
        parts,
    })
}

#[cfg(test)]
mod tests;

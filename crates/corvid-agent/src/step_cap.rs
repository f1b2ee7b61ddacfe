//! The step cap. After `max_steps` steps that may call tools, the turn makes one last call in
//! which the model may not call any (`tool_choice: none`), told why, so the turn ends with the
//! model's own summary rather than mid-work. The tool definitions stay in that request:
//! Anthropic (and Bedrock) reject a history holding tool calls when no tools are defined.
//!
//! The note lives in that one request only. It is not part of the history, not saved, and so
//! never merges into the user's next message.

use corvid_wire::model::{Message, Part, Role};

use crate::history;

/// What the model is told on its last call.
pub(crate) fn note(max_steps: u32) -> String {
    format!(
        "Step limit reached ({max_steps} model steps in one turn): no more tool calls are possible in this turn. Stop here and summarise what is done and what is left, so the user can decide how to go on."
    )
}

/// The messages of the last call: the history so far, repaired, with the note after it.
pub(crate) fn last_messages(messages: &[Message], max_steps: u32) -> Vec<Message> {
    let mut with_note = messages.to_vec();
    with_note.push(Message::text(Role::User, note(max_steps)));
    history::repair(&with_note)
}

/// The last reply without tool calls (a model that calls one anyway cannot have it run, and a
/// call left unanswered would only be repaired away later).
pub(crate) fn without_calls(message: Message) -> Message {
    Message {
        role: message.role,
        parts: message
            .parts
            .into_iter()
            .filter(|part| !matches!(part, Part::ToolCall(_)))
            .collect(),
    }
}

//! The conversation as the model sees it: canonical messages, stored as JSON, repaired before
//! sending so a provider never sees a history it would reject.

use std::collections::HashSet;

use corvid_protocol::{HistoryEntry, ToolCallNotification, ToolResultNotification};
use corvid_wire::model::{Message, Part, Role, ToolResult, ToolResultContent};

/// The text a result gets when its call never ran (an interrupted turn, a crash).
pub(crate) const MISSING_RESULT: &str = "No result: the turn ended before this tool ran.";

/// A history a provider accepts: every tool call answered in the next user message, no result
/// without its call, no empty messages, roles alternating.
pub fn repair(messages: &[Message]) -> Vec<Message> {
    let mut repaired: Vec<Message> = Vec::with_capacity(messages.len());
    let mut index = 0;
    while index < messages.len() {
        let message = &messages[index];
        match message.role {
            Role::Assistant => {
                let calls: Vec<&str> = message
                    .parts
                    .iter()
                    .filter_map(|part| match part {
                        Part::ToolCall(call) => Some(call.id.as_str()),
                        _ => None,
                    })
                    .collect();
                push_merged(&mut repaired, message.clone());
                if !calls.is_empty() {
                    // The answers must come next; keep the ones that match, add the missing.
                    let next = messages
                        .get(index + 1)
                        .filter(|next| next.role == Role::User);
                    let mut answered = HashSet::new();
                    let mut results = Vec::new();
                    let mut rest = Vec::new();
                    if let Some(next) = next {
                        for part in &next.parts {
                            match part {
                                Part::ToolResult(result)
                                    if calls.contains(&result.call_id.as_str()) =>
                                {
                                    if answered.insert(result.call_id.clone()) {
                                        results.push(part.clone());
                                    }
                                }
                                Part::ToolResult(_) => {}
                                other => rest.push(other.clone()),
                            }
                        }
                        index += 1;
                    }
                    for call in &calls {
                        if !answered.contains(*call) {
                            results.push(Part::ToolResult(ToolResult {
                                call_id: (*call).to_owned(),
                                name: None,
                                content: vec![ToolResultContent::Text {
                                    text: MISSING_RESULT.to_owned(),
                                }],
                                is_error: true,
                            }));
                        }
                    }
                    results.extend(rest);
                    repaired.push(Message {
                        role: Role::User,
                        parts: results,
                    });
                }
            }
            Role::User => {
                // Results here answer no call of the message before: drop them.
                let parts: Vec<Part> = message
                    .parts
                    .iter()
                    .filter(|part| !matches!(part, Part::ToolResult(_)))
                    .cloned()
                    .collect();
                if !parts.is_empty() {
                    push_merged(
                        &mut repaired,
                        Message {
                            role: Role::User,
                            parts,
                        },
                    );
                }
            }
        }
        index += 1;
    }
    repaired.retain(|message| !message.parts.is_empty());
    repaired
}

/// Appends, merging into the previous message when the role repeats.
fn push_merged(messages: &mut Vec<Message>, message: Message) {
    match messages.last_mut() {
        Some(last) if last.role == message.role && !has_calls(last) => {
            last.parts.extend(message.parts)
        }
        _ => messages.push(message),
    }
}

fn has_calls(message: &Message) -> bool {
    message
        .parts
        .iter()
        .any(|part| matches!(part, Part::ToolCall(_)))
}

/// The text parts of a message, joined.
pub(crate) fn text_of(message: &Message) -> String {
    message
        .parts
        .iter()
        .filter_map(|part| match part {
            Part::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("")
}

fn has_images(message: &Message) -> bool {
    message
        .parts
        .iter()
        .any(|part| matches!(part, Part::Image(_)))
}

/// What the user wrote, then `[image]` for each image the message carried (the model keeps
/// the images themselves; a reloaded view shows where they were).
fn with_image_marks(typed: String, message: &Message) -> String {
    let count = message
        .parts
        .iter()
        .filter(|part| matches!(part, Part::Image(_)))
        .count();
    if count == 0 {
        return typed;
    }
    let marks = vec!["[image]"; count].join(" ");
    if typed.is_empty() {
        marks
    } else {
        format!("{typed}\n{marks}")
    }
}

/// The history as front ends show it (call summaries with paths relative to `project`; each
/// call's kind and locations as `facts` knows them).
pub(crate) fn entries(
    messages: &[Message],
    project: &std::path::Path,
    facts: &crate::tool_facts::CallFacts,
) -> Vec<HistoryEntry> {
    let mut entries = Vec::new();
    for message in messages {
        let text = text_of(message);
        match message.role {
            // What the user wrote, without the notes the engine added to it.
            Role::User if !text.is_empty() || has_images(message) => {
                let typed = with_image_marks(crate::rewind::typed_text(message), message);
                if !typed.is_empty() {
                    entries.push(HistoryEntry::User { text: typed });
                }
            }
            Role::Assistant if !text.is_empty() => entries.push(HistoryEntry::Assistant { text }),
            _ => {}
        }
        for part in &message.parts {
            match part {
                Part::ToolCall(call) => {
                    let arguments = crate::tool_view::shown_arguments(&call.arguments);
                    // As announced, never guessed from the tool's name.
                    let (kind, locations) = facts.of(&call.id, &call.name);
                    entries.push(HistoryEntry::ToolCall(ToolCallNotification {
                        call_id: call.id.clone(),
                        tool: call.name.clone(),
                        kind,
                        summary: crate::tool_view::summarize(project, &call.name, &arguments),
                        arguments,
                        locations,
                    }))
                }
                Part::ToolResult(result) => {
                    entries.push(HistoryEntry::ToolResult(ToolResultNotification {
                        call_id: result.call_id.clone(),
                        ok: !result.is_error,
                        output: result
                            .content
                            .iter()
                            .filter_map(|content| match content {
                                ToolResultContent::Text { text } => Some(text.as_str()),
                                ToolResultContent::Image(_) => None,
                            })
                            .collect::<Vec<_>>()
                            .join("\n"),
                        truncation: None,
                        change: facts.change_of(&result.call_id),
                    }))
                }
                _ => {}
            }
        }
    }
    entries
}

#[cfg(test)]
mod tests;

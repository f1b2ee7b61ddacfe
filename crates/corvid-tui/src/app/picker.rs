//! Conversations: `/list`'s lines, the `/resume` picker, and a switched-to conversation's
//! history printed into the scrollback.

use std::collections::HashMap;

use corvid_protocol::{ConversationSummary, HistoryEntry, Op};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;

use super::App;
use crate::render;

/// The open `/resume` picker: the conversations, and the one selected.
pub(super) struct Picker {
    items: Vec<ConversationSummary>,
    selected: usize,
}

impl App {
    pub(super) fn picker_key(&mut self, key: KeyEvent) {
        let Some(picker) = &mut self.overlay.picker else {
            return;
        };
        match key.code {
            KeyCode::Up => picker.selected = picker.selected.saturating_sub(1),
            KeyCode::Down => {
                picker.selected = (picker.selected + 1).min(picker.items.len().saturating_sub(1))
            }
            KeyCode::Enter => {
                if let Some(item) = picker.items.get(picker.selected) {
                    self.link.submit(Op::SwitchConversation {
                        conversation_id: item.id.clone(),
                    });
                }
                self.overlay.picker = None;
            }
            KeyCode::Esc => self.overlay.picker = None,
            KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.overlay.picker = None
            }
            _ => {}
        }
    }

    /// The engine's list of conversations: the picker when `/resume` asked for it, else a
    /// line each with the current one marked.
    pub(super) fn conversation_list(
        &mut self,
        conversations: Vec<ConversationSummary>,
        current: Option<String>,
    ) {
        if std::mem::take(&mut self.overlay.want_picker) {
            if conversations.is_empty() {
                self.hint = Some("no conversations yet".to_owned());
            } else {
                self.overlay.picker = Some(Picker {
                    items: conversations,
                    selected: 0,
                });
            }
            return;
        }
        for conversation in conversations {
            let mark = if current.as_ref() == Some(&conversation.id) {
                "*"
            } else {
                " "
            };
            self.say(Line::raw(format!(
                "{mark} {}  {} ({})",
                conversation.id,
                title_or_untitled(&conversation.title),
                render::plural(conversation.message_count, "message")
            )));
        }
    }

    /// The session moved to `conversation`: its title, then its history.
    pub(super) fn conversation_switched(
        &mut self,
        conversation: ConversationSummary,
        history: Vec<HistoryEntry>,
    ) {
        self.conversation = conversation.id.clone();
        self.say(Line::styled(
            format!(
                "── {} ({}) ──",
                title_or_untitled(&conversation.title),
                conversation.id
            ),
            Style::new().fg(Color::Cyan),
        ));
        let mut calls = HashMap::new();
        for entry in history {
            match entry {
                HistoryEntry::User { text } => self.you(&text),
                HistoryEntry::Assistant { text } => self
                    .output
                    .extend(render::markdown_within(&text, self.width)),
                HistoryEntry::ToolCall(call) => {
                    calls.insert(call.call_id, call.summary);
                }
                HistoryEntry::ToolResult(result) => {
                    let summary = calls.remove(&result.call_id).unwrap_or_default();
                    self.say(render::tool_line(
                        &summary,
                        Some((result.ok, &result.output)),
                        0,
                    ));
                }
            }
        }
    }

    /// The picker's rows above the input, while it is open.
    pub(super) fn picker_view(&self, lines: &mut Vec<Line<'static>>) {
        let Some(picker) = &self.overlay.picker else {
            return;
        };
        lines.push(Line::styled(
            "resume which conversation? (↑/↓, Enter, Esc)",
            Style::new().fg(Color::DarkGray),
        ));
        let first = picker.selected.saturating_sub(4);
        for (index, item) in picker.items.iter().enumerate().skip(first).take(5) {
            let style = if index == picker.selected {
                Style::new().add_modifier(Modifier::REVERSED)
            } else {
                Style::new()
            };
            lines.push(Line::styled(
                format!(
                    "{} {} · {}",
                    item.id,
                    title_or_untitled(&item.title),
                    render::plural(item.message_count, "message")
                ),
                style,
            ));
        }
    }
}

fn title_or_untitled(title: &str) -> &str {
    if title.is_empty() {
        "(untitled)"
    } else {
        title
    }
}

//! Rewind and fork: the `/rewind` picker of your earlier messages (Enter goes back to one, `f`
//! also puts the files back, `n` forks a new conversation there), and the replies: the message
//! comes back into the input to edit and send again; a fork is opened.

use corvid_protocol::{FileChange, Op, UserMessageEntry};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;

use super::App;

/// The open `/rewind` picker: the messages, and the one selected (the latest at first).
pub(crate) struct MessagePicker {
    items: Vec<UserMessageEntry>,
    selected: usize,
}

impl App {
    pub(super) fn messages_key(&mut self, key: KeyEvent) {
        let Some(picker) = &mut self.overlay.messages else {
            return;
        };
        let chosen = picker.items.get(picker.selected).map(|item| item.index);
        let op = match key.code {
            KeyCode::Up => {
                picker.selected = picker.selected.saturating_sub(1);
                None
            }
            KeyCode::Down => {
                picker.selected = (picker.selected + 1).min(picker.items.len().saturating_sub(1));
                None
            }
            KeyCode::Enter => chosen.map(|message| Op::Rewind {
                message,
                restore_files: false,
            }),
            KeyCode::Char('f') => chosen.map(|message| Op::Rewind {
                message,
                restore_files: true,
            }),
            KeyCode::Char('n') => chosen.map(|message| Op::Fork {
                message: Some(message),
            }),
            KeyCode::Esc => {
                self.overlay.messages = None;
                return;
            }
            KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.overlay.messages = None;
                return;
            }
            _ => None,
        };
        if let Some(op) = op {
            self.overlay.messages = None;
            self.link.submit(op);
        }
    }

    /// `user_messages`: the picker when it answers `/rewind`'s request, else a line each.
    pub(super) fn user_messages(&mut self, for_picker: bool, items: Vec<UserMessageEntry>) {
        if items.is_empty() {
            self.hint = Some("no message of yours to go back to yet".to_owned());
            return;
        }
        if for_picker {
            self.overlay.messages = Some(MessagePicker {
                selected: items.len() - 1,
                items,
            });
            return;
        }
        for item in items {
            self.say(Line::raw(format!(
                "{:>3}  {}",
                item.index + 1,
                first_line(&item.text)
            )));
        }
    }

    /// `rewound`: the message is back in the input, to edit and send again.
    pub(super) fn rewound(&mut self, text: &str, removed: u32, files: &[FileChange]) {
        let messages = if removed == 1 { "message" } else { "messages" };
        self.note(format!(
            "rewound: {removed} {messages} of yours and what followed left the conversation; edit and send"
        ));
        if !files.is_empty() {
            let names: Vec<&str> = files.iter().map(|file| file.path.as_str()).collect();
            self.note(format!("files put back: {}", names.join(", ")));
        }
        self.editor.set(text);
    }

    /// `forked`: the new conversation is opened, with the message to edit in the input.
    pub(super) fn forked(&mut self, conversation_id: String, text: Option<String>) {
        self.note(format!("forked into {conversation_id}"));
        self.link.submit(Op::OpenConversation {
            conversation_id: Some(conversation_id),
        });
        if let Some(text) = text {
            self.editor.set(&text);
        }
    }

    /// The picker's rows above the input, while it is open.
    pub(super) fn messages_view(&self, lines: &mut Vec<Line<'static>>) {
        let Some(picker) = &self.overlay.messages else {
            return;
        };
        lines.push(Line::styled(
            "go back to which message? (↑/↓; Enter: rewind · f: rewind and put files back · n: fork here · Esc)",
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
                format!("{:>3}  {}", item.index + 1, first_line(&item.text)),
                style,
            ));
        }
    }
}

fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("");
    let mut shown: String = line.chars().take(100).collect();
    if line.chars().count() > 100 || text.lines().nth(1).is_some() {
        shown.push('…');
    }
    shown
}

//! Keys: editing, history, completion, interrupting and exiting. The search and the picker
//! take the keys while they are open.

use std::time::Instant;

use corvid_protocol::ApprovalDecision;
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;

use super::App;
use super::events::reasoning_lines;
use super::search::Search;
use crate::editor::Editor;
use crate::mention;

impl App {
    pub fn key(&mut self, key: KeyEvent) {
        if key.kind == KeyEventKind::Release {
            return;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        if !matches!(key.code, KeyCode::Char('c') if ctrl) {
            self.interrupt_armed = None;
            if self
                .hint
                .as_deref()
                .is_some_and(|hint| hint.starts_with("Ctrl-C"))
            {
                self.hint = None;
            }
        }
        if self.overlay.search.is_some() {
            self.search_key(key, ctrl);
            return;
        }
        if self.overlay.picker.is_some() {
            self.picker_key(key);
            return;
        }
        if self.overlay.messages.is_some() {
            self.messages_key(key);
            return;
        }
        match key.code {
            KeyCode::Char('c') if ctrl => self.interrupt(),
            KeyCode::Char('d') if ctrl => {
                if self.editor.is_empty() {
                    self.exit();
                } else {
                    self.editor.delete();
                }
            }
            KeyCode::Char('r') if ctrl => self.overlay.search = Some(Search::default()),
            KeyCode::Char('t') if ctrl => {
                self.show_reasoning = !self.show_reasoning;
                let reasoning = self.last_reasoning.clone();
                if self.show_reasoning && !reasoning.is_empty() {
                    self.output.extend(reasoning_lines(&reasoning, 0));
                }
                self.hint = Some(format!(
                    "reasoning {}",
                    if self.show_reasoning {
                        "shown"
                    } else {
                        "folded"
                    }
                ));
            }
            KeyCode::Char('o') if ctrl => match self.last_result.clone() {
                Some((summary, output)) => {
                    self.say(Line::styled(
                        format!("── {summary} ──"),
                        Style::new().add_modifier(Modifier::BOLD),
                    ));
                    for line in output.lines() {
                        self.say(Line::raw(line.to_owned()));
                    }
                }
                None => self.hint = Some("no tool result to show yet".to_owned()),
            },
            KeyCode::Char('v') if ctrl => self.paste_clipboard_image(),
            KeyCode::Char('u') if ctrl => self.editor.set(""),
            KeyCode::Char('w') if ctrl => self.editor.delete_word(),
            KeyCode::Char('a') if ctrl => self.editor.home(),
            KeyCode::Char('e') if ctrl => self.editor.end(),
            KeyCode::Char('j') if ctrl => self.editor.insert("\n"),
            // Digits answer at once (as in Claude Code); letters are typed, so an answer in
            // words ("y", "always", "no, use ls") needs Enter and feedback that happens to
            // start with `y` or `a` never approves by accident.
            KeyCode::Char(c @ '1'..='3')
                if self.overlay.proposal.is_some() && self.editor.is_empty() && !ctrl =>
            {
                match c {
                    '1' => self.answer(ApprovalDecision::Approve),
                    '2' => self.second_answer(),
                    _ => self.answer(ApprovalDecision::Reject { feedback: None }),
                }
            }
            // 4 and 5 save "always" to a settings file, 6 and 7 "never" (a deny rule), where
            // the proposal offers it.
            KeyCode::Char(c @ ('4'..='7'))
                if self.overlay.proposal.is_some()
                    && self.editor.is_empty()
                    && !ctrl
                    && self.save_answer(c) => {}
            KeyCode::Char(c) if !ctrl => self.editor.insert(&c.to_string()),
            KeyCode::Enter if shift || alt => self.editor.insert("\n"),
            KeyCode::Enter => self.enter(),
            KeyCode::Esc => {
                if self.overlay.proposal.is_some() || self.busy() {
                    self.cancel_turn();
                } else {
                    self.hint = None;
                }
            }
            KeyCode::Backspace if self.editor.is_empty() && self.detach_last() => {}
            KeyCode::Backspace => self.editor.backspace(),
            KeyCode::Delete => self.editor.delete(),
            KeyCode::Left => self.editor.left(),
            KeyCode::Right => self.editor.right(),
            KeyCode::Home => self.editor.home(),
            KeyCode::End => self.editor.end(),
            KeyCode::Up => {
                if self.editor.on_first_line() {
                    let current = self.editor.text();
                    if let Some(entry) = self.recall.up(&current).map(str::to_owned) {
                        self.editor.set(&entry);
                    }
                } else {
                    move_line(&mut self.editor, -1);
                }
            }
            KeyCode::Down => {
                if self.editor.on_last_line() {
                    if let Some(entry) = self.recall.down() {
                        self.editor.set(&entry);
                    }
                } else {
                    move_line(&mut self.editor, 1);
                }
            }
            KeyCode::BackTab => self.cycle_mode(),
            KeyCode::Tab if shift => self.cycle_mode(),
            KeyCode::Tab => self.complete(),
            _ => {}
        }
    }

    fn interrupt(&mut self) {
        if self.overlay.proposal.is_some() || self.busy() {
            self.cancel_turn();
            return;
        }
        if !self.editor.is_empty() {
            self.editor.set("");
            return;
        }
        if self.interrupt_armed.is_some() {
            self.exit();
        } else {
            self.interrupt_armed = Some(Instant::now());
            self.hint = Some("Ctrl-C again to exit (or Ctrl-D, /quit)".to_owned());
        }
    }

    fn complete(&mut self) {
        let word = self.editor.current_word();
        let candidates: Vec<String> =
            if word.starts_with('/') && self.editor.text().starts_with(&word) {
                self.all_commands()
                    .into_iter()
                    .map(|(name, _)| name)
                    .filter(|name| name.starts_with(&word))
                    .collect()
            } else if let Some(partial) = word.strip_prefix('@') {
                mention::complete(&self.settings.project, partial)
                    .into_iter()
                    .map(|path| format!("@{path}"))
                    .collect()
            } else {
                Vec::new()
            };
        match candidates.as_slice() {
            [] => self.hint = Some("no completion".to_owned()),
            [only] => {
                let suffix = if only.ends_with('/') { "" } else { " " };
                self.editor.replace_word(&format!("{only}{suffix}"));
                self.hint = None;
            }
            many => {
                let common = common_prefix(many);
                if common.len() > word.len() {
                    self.editor.replace_word(&common);
                }
                self.hint = Some(many.join("  "));
            }
        }
    }

    fn enter(&mut self) {
        let text = self.editor.take();
        self.line(&text);
    }
}

fn move_line(editor: &mut Editor, direction: i32) {
    let (_, column) = editor.cursor_position();
    if direction < 0 {
        editor.home();
        editor.left();
        editor.home();
    } else {
        editor.end();
        editor.right();
    }
    for _ in 0..column {
        let before = editor.cursor_position().0;
        editor.right();
        if editor.cursor_position().0 != before {
            editor.left();
            break;
        }
    }
}

fn common_prefix(items: &[String]) -> String {
    let Some(first) = items.first() else {
        return String::new();
    };
    let mut prefix = first.clone();
    for item in items {
        while !item.starts_with(&prefix) {
            prefix.pop();
        }
    }
    prefix
}

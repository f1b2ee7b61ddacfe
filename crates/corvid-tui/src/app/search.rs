//! Ctrl-R: searching the input history, and the search's line in place of the input.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use super::App;
use crate::render;

/// An open history search: what is typed, and the entry it found.
#[derive(Default)]
pub(super) struct Search {
    query: String,
    found: Option<usize>,
}

impl App {
    pub(super) fn search_key(&mut self, key: KeyEvent, ctrl: bool) {
        let Some(search) = &mut self.overlay.search else {
            return;
        };
        match key.code {
            KeyCode::Char('r') if ctrl => {
                search.found = self
                    .recall
                    .search(&search.query, search.found)
                    .map(|(index, _)| index)
                    .or(search.found);
            }
            KeyCode::Char('c') if ctrl => self.overlay.search = None,
            KeyCode::Esc => self.overlay.search = None,
            KeyCode::Char(c) if !ctrl => {
                search.query.push(c);
                search.found = self
                    .recall
                    .search(&search.query, None)
                    .map(|(index, _)| index);
            }
            KeyCode::Backspace => {
                search.query.pop();
                search.found = self
                    .recall
                    .search(&search.query, None)
                    .map(|(index, _)| index);
            }
            KeyCode::Enter | KeyCode::Right | KeyCode::Tab => {
                if let Some(entry) = search
                    .found
                    .and_then(|index| self.recall.entries.get(index))
                {
                    let entry = entry.clone();
                    self.editor.set(&entry);
                }
                self.overlay.search = None;
            }
            _ => {}
        }
    }

    /// The search's row in place of the input, and the cursor's row and column, while a
    /// search is open.
    pub(super) fn search_view(
        &self,
        width: u16,
        prompt: Style,
    ) -> Option<(Vec<Line<'static>>, (usize, usize))> {
        let search = self.overlay.search.as_ref()?;
        let found = search
            .found
            .and_then(|index| self.recall.entries.get(index))
            .map_or("", String::as_str);
        let label = format!("search `{}`: ", search.query);
        let column = label.width().min(usize::from(width.saturating_sub(1)));
        let line = Line::from(vec![
            Span::styled(label, prompt),
            Span::raw(found.lines().next().unwrap_or("").to_owned()),
        ]);
        Some((render::wrap(&[line], width), (0, column)))
    }
}

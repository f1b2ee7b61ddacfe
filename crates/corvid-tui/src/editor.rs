//! The input box: multi-line text with a cursor, and the user's earlier messages to step
//! through with ↑/↓ or search with Ctrl-R.

/// The text being typed, as characters, with the cursor as a character index.
#[derive(Debug, Default, Clone)]
pub(crate) struct Editor {
    text: Vec<char>,
    cursor: usize,
}

impl Editor {
    pub(crate) fn text(&self) -> String {
        self.text.iter().collect()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    pub(crate) fn set(&mut self, text: &str) {
        self.text = text.chars().collect();
        self.cursor = self.text.len();
    }

    pub(crate) fn take(&mut self) -> String {
        let text = self.text();
        self.set("");
        text
    }

    pub(crate) fn insert(&mut self, text: &str) {
        for c in text.chars().filter(|c| *c != '\r') {
            self.text.insert(self.cursor, c);
            self.cursor += 1;
        }
    }

    pub(crate) fn backspace(&mut self) {
        if self.cursor > 0 {
            self.cursor -= 1;
            self.text.remove(self.cursor);
        }
    }

    pub(crate) fn delete(&mut self) {
        if self.cursor < self.text.len() {
            self.text.remove(self.cursor);
        }
    }

    pub(crate) fn left(&mut self) {
        self.cursor = self.cursor.saturating_sub(1);
    }

    pub(crate) fn right(&mut self) {
        self.cursor = (self.cursor + 1).min(self.text.len());
    }

    pub(crate) fn home(&mut self) {
        while self.cursor > 0 && self.text[self.cursor - 1] != '\n' {
            self.cursor -= 1;
        }
    }

    pub(crate) fn end(&mut self) {
        while self.cursor < self.text.len() && self.text[self.cursor] != '\n' {
            self.cursor += 1;
        }
    }

    /// Deletes the word before the cursor (Ctrl-W).
    pub(crate) fn delete_word(&mut self) {
        while self.cursor > 0 && self.text[self.cursor - 1] == ' ' {
            self.backspace();
        }
        while self.cursor > 0
            && self.text[self.cursor - 1] != ' '
            && self.text[self.cursor - 1] != '\n'
        {
            self.backspace();
        }
    }

    /// Whether the cursor is on the first line (so ↑ goes to history).
    pub(crate) fn on_first_line(&self) -> bool {
        !self.text[..self.cursor].contains(&'\n')
    }

    /// Whether the cursor is on the last line (so ↓ goes to history).
    pub(crate) fn on_last_line(&self) -> bool {
        !self.text[self.cursor..].contains(&'\n')
    }

    /// The line and column of the cursor.
    pub(crate) fn cursor_position(&self) -> (usize, usize) {
        let before = &self.text[..self.cursor];
        let row = before.iter().filter(|c| **c == '\n').count();
        let column = before.iter().rev().take_while(|c| **c != '\n').count();
        (row, column)
    }

    /// The word the cursor is at the end of (for completion).
    pub(crate) fn current_word(&self) -> String {
        let start = self.text[..self.cursor]
            .iter()
            .rposition(|c| c.is_whitespace())
            .map_or(0, |index| index + 1);
        self.text[start..self.cursor].iter().collect()
    }

    /// Replaces the word before the cursor.
    pub(crate) fn replace_word(&mut self, with: &str) {
        let word = self.current_word().chars().count();
        for _ in 0..word {
            self.backspace();
        }
        self.insert(with);
    }
}

/// Earlier messages, oldest first, and where ↑/↓ is in them.
#[derive(Debug, Default)]
pub(crate) struct Recall {
    pub entries: Vec<String>,
    position: Option<usize>,
    draft: String,
}

impl Recall {
    pub(crate) fn new(entries: Vec<String>) -> Self {
        Self {
            entries,
            position: None,
            draft: String::new(),
        }
    }

    pub(crate) fn push(&mut self, entry: &str) {
        if self.entries.last().map(String::as_str) != Some(entry) {
            self.entries.push(entry.to_owned());
        }
        self.position = None;
    }

    /// The previous entry, keeping what was being typed for when ↓ comes back.
    pub(crate) fn up(&mut self, current: &str) -> Option<&str> {
        let next = match self.position {
            None => {
                self.draft = current.to_owned();
                self.entries.len().checked_sub(1)?
            }
            Some(position) => position.checked_sub(1)?,
        };
        self.position = Some(next);
        self.entries.get(next).map(String::as_str)
    }

    pub(crate) fn down(&mut self) -> Option<String> {
        let position = self.position?;
        if position + 1 < self.entries.len() {
            self.position = Some(position + 1);
            self.entries.get(position + 1).cloned()
        } else {
            self.position = None;
            Some(std::mem::take(&mut self.draft))
        }
    }

    /// The newest entry containing `query`, before `before` (an index) when given.
    pub(crate) fn search(&self, query: &str, before: Option<usize>) -> Option<(usize, &str)> {
        let end = before.unwrap_or(self.entries.len()).min(self.entries.len());
        self.entries[..end]
            .iter()
            .enumerate()
            .rev()
            .find(|(_, entry)| entry.contains(query))
            .map(|(index, entry)| (index, entry.as_str()))
    }
}

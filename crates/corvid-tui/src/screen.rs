//! The chat's part of the terminal: a region at the bottom that is exactly as tall as what it
//! shows (the streaming answer's tail, an approval, the input, the status line), growing and
//! shrinking with it, and finished lines pushed above it into the terminal's own scrollback.
//!
//! ratatui's inline viewport keeps the height it was created with, so a short input sat above
//! rows of blank space and a long one did not fit. Here ratatui renders the frames (widgets
//! into a buffer) and this module places them: lines go in by being written where the area was
//! (scrolling the whole screen at the bottom row, which every terminal turns into scrollback),
//! the area is put back below them, as tall as the next frame needs, and a frame writes only
//! the cells that changed since the last.

use ratatui::backend::{Backend, ClearType};
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect, Size};
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget};

pub(crate) struct Screen<B: Backend> {
    backend: B,
    /// Where the area is and how tall; `y` may equal the screen's height after lines were
    /// written down to its last row (the next frame then scrolls to make room).
    area: Rect,
    size: Size,
    /// What the area shows now, so a frame writes only the cells that change.
    shown: Buffer,
    /// The area's rows were written over (by inserted lines or a resize): redraw it all.
    stale: bool,
    /// The cursor's row inside the area at the last frame, to find the area after a resize.
    cursor_row: u16,
}

impl<B: Backend> Screen<B> {
    /// Starts with the area on the cursor's `row` (where the shell left it).
    pub(crate) fn new(backend: B, row: u16) -> Result<Self, B::Error> {
        let size = backend.size()?;
        let area = Rect::new(0, row.min(size.height.saturating_sub(1)), size.width, 1);
        Ok(Self {
            backend,
            area,
            size,
            shown: Buffer::empty(Rect::ZERO),
            stale: true,
            cursor_row: 0,
        })
    }

    pub(crate) fn width(&self) -> u16 {
        self.size.width
    }

    pub(crate) fn height(&self) -> u16 {
        self.size.height
    }

    /// The area's first row (where the shell's prompt goes after the chat).
    pub(crate) fn top(&self) -> u16 {
        self.area.y.min(self.size.height.saturating_sub(1))
    }

    pub(crate) fn size(&self) -> Size {
        self.size
    }

    pub(crate) fn backend_mut(&mut self) -> &mut B {
        &mut self.backend
    }

    #[cfg(test)]
    pub(crate) fn backend(&self) -> &B {
        &self.backend
    }

    /// Puts `lines` (each at most the width, as `render::wrap` makes them) above the area: they
    /// are written from the area's first row down, and once they reach the bottom the whole
    /// screen scrolls, so what leaves the top goes into the terminal's scrollback.
    pub(crate) fn insert(&mut self, lines: Vec<Line<'static>>) -> Result<(), B::Error> {
        if lines.is_empty() || self.size.height == 0 {
            return Ok(());
        }
        let bottom = self.size.height - 1;
        let mut row = self.erase_from(self.area.y)?;
        let strip = Rect::new(0, 0, self.size.width, 1);
        let blank = Buffer::empty(strip);
        for line in lines {
            if row > bottom {
                self.scroll(1)?;
                row = bottom;
            }
            let mut drawn = Buffer::empty(strip);
            line.render(strip, &mut drawn);
            // Only what differs from blank, so a wide character is written once.
            let cells = blank.diff(&drawn);
            self.backend
                .draw(cells.into_iter().map(|(x, _, cell)| (x, row, cell)))?;
            row += 1;
        }
        self.area.y = row;
        self.stale = true;
        Ok(())
    }

    /// Draws `lines` with the cursor at `cursor` (inside them), in an area exactly as tall as
    /// the lines (at most the screen): it grows downwards while there is room, then scrolls the
    /// conversation up; it shrinks from the bottom, the freed rows blank until the next lines
    /// fill them.
    pub(crate) fn draw(
        &mut self,
        lines: Vec<Line<'static>>,
        cursor: (u16, u16),
    ) -> Result<(), B::Error> {
        if self.size.height == 0 || self.size.width == 0 {
            return Ok(());
        }
        let height = u16::try_from(lines.len())
            .unwrap_or(u16::MAX)
            .clamp(1, self.size.height);
        self.place(height)?;
        let local = Rect::new(0, 0, self.size.width, height);
        let mut next = Buffer::empty(local);
        Paragraph::new(lines).render(local, &mut next);
        let top = self.area.y;
        let cells = self.shown.diff(&next);
        self.backend
            .draw(cells.into_iter().map(|(x, y, cell)| (x, top + y, cell)))?;
        self.shown = next;
        self.cursor_row = cursor.1.min(height - 1);
        let column = cursor.0.min(self.size.width - 1);
        self.backend
            .set_cursor_position(Position::new(column, top + self.cursor_row))?;
        self.backend.show_cursor()?;
        self.backend.flush()
    }

    /// The terminal is now `size`: the area is found again, and drawn afresh by the next
    /// frame. It is where the `cursor` is, as the terminal reports it (one that rewraps its
    /// lines, or pulls lines back from its scrollback when it grows, moves the cursor with the
    /// text). Without a report: a full screen stays full, so the area goes to the bottom;
    /// else it stays where the last frame left it.
    pub(crate) fn resize(&mut self, size: Size, cursor: Option<Position>) -> Result<(), B::Error> {
        let full = self.area.y + self.area.height >= self.size.height;
        self.size = size;
        let height = self.area.height.min(size.height).max(1);
        let top = match cursor {
            Some(cursor) => cursor.y.saturating_sub(self.cursor_row),
            None if full => size.height.saturating_sub(height),
            None => self.area.y,
        }
        .min(size.height.saturating_sub(1));
        self.area = Rect::new(0, top, size.width, height);
        self.erase_from(top)?;
        self.stale = true;
        Ok(())
    }

    /// Empties the area and leaves the cursor on its first row.
    pub(crate) fn finish(&mut self) -> Result<(), B::Error> {
        let top = self.top();
        self.erase_from(top)?;
        self.backend.set_cursor_position(Position::new(0, top))?;
        self.backend.flush()
    }

    /// Moves and sizes the area for a frame `height` rows tall.
    fn place(&mut self, height: u16) -> Result<(), B::Error> {
        let mut top = self.area.y;
        if top + height > self.size.height {
            // Blank the old area first, so only the conversation scrolls away, not the input.
            self.erase_from(top)?;
            let lines = top + height - self.size.height;
            self.scroll(lines)?;
            top -= lines;
            self.stale = true;
        }
        let area = Rect::new(0, top, self.size.width, height);
        if area != self.area || self.stale {
            // Rows the old area had below the new one would stay on the screen: clear them all
            // and draw the new area whole.
            self.erase_from(top)?;
            self.area = area;
            self.shown = Buffer::empty(Rect::new(0, 0, area.width, area.height));
            self.stale = false;
        }
        Ok(())
    }

    /// Clears the screen from `row` down; returns `row`, the row to write next (nothing is
    /// cleared when it is below the last row). Row by row: tmux copies the whole screen into
    /// its scrollback when it is cleared from the top-left corner (`scroll-on-clear`), which
    /// would keep an old input area there.
    fn erase_from(&mut self, row: u16) -> Result<u16, B::Error> {
        for y in row..self.size.height {
            self.backend.set_cursor_position(Position::new(0, y))?;
            self.backend.clear_region(ClearType::CurrentLine)?;
        }
        Ok(row)
    }

    /// Scrolls the whole screen up by `lines`: new lines at the bottom row, as a shell's output
    /// does, so the top rows go into the scrollback.
    fn scroll(&mut self, lines: u16) -> Result<(), B::Error> {
        if lines == 0 {
            return Ok(());
        }
        self.backend
            .set_cursor_position(Position::new(0, self.size.height.saturating_sub(1)))?;
        self.backend.append_lines(lines)
    }
}

#[cfg(test)]
mod tests;

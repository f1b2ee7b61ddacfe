//! The input area: what streams, the running tool, overlays, queued messages, the editor,
//! hints and the status line.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use super::App;
use crate::render;

/// Rows a hint may take under the input.
const HINT_ROWS: usize = 3;

/// Lines of a running command's output shown under its line.
const TOOL_OUTPUT_LINES: usize = 3;

impl App {
    /// The input area: what streams, the proposal prompt, queued messages, the editor, hints
    /// and the status line, for a terminal `width` wide, in at most `height` rows, and the
    /// cursor's column and row in it. As many rows as it needs: the screen sizes the area to
    /// them. When they do not fit, the status line stays, then the input around the cursor,
    /// then the newest of what is above it.
    pub fn view(&self, width: u16, height: u16) -> (Vec<Line<'static>>, (u16, u16)) {
        let dim = Style::new().fg(Color::DarkGray);
        let above = render::wrap(&self.view_above(width), width);
        let (input, (cursor_row, cursor_column)) = self.view_input(width);
        let hint = self.hint.clone().unwrap_or_default();
        let mut below = render::wrap(&[Line::styled(hint, dim)], width);
        // A long hint (many completions) stays a hint, not a page.
        below.truncate(HINT_ROWS);
        let mut status = self.status.clone();
        status.tokens = self.tokens_so_far();
        status.busy = self
            .turn
            .since
            .map(|at| (at.elapsed().as_secs(), self.frame));
        status.preparing = self.turn.preparing.clone();
        below.push(render::status_line(&status, width));
        let height = usize::from(height.max(1));
        // The hint's rows go first, then the status line, so the input always has a row.
        while below.len() + 1 > height && !below.is_empty() {
            below.remove(0);
        }
        let room = height - below.len();
        let input_start = (cursor_row + 1).saturating_sub(room);
        let shown_input = input.len().saturating_sub(input_start).min(room);
        let above_room = room - shown_input;
        let above_start = above.len().saturating_sub(above_room);
        let above_shown = above.len() - above_start;
        let mut lines: Vec<Line<'static>> = above.into_iter().skip(above_start).collect();
        lines.extend(input.into_iter().skip(input_start).take(shown_input));
        lines.extend(below);
        let row = above_shown + cursor_row - input_start;
        let cursor = (
            u16::try_from(cursor_column).unwrap_or(0),
            u16::try_from(row).unwrap_or(0),
        );
        (lines, cursor)
    }

    /// What stands above the input: the streaming answer, the running tool and its
    /// output, the approval prompt, the `/resume` picker, the queued messages.
    fn view_above(&self, width: u16) -> Vec<Line<'static>> {
        let dim = Style::new().fg(Color::DarkGray);
        let mut lines: Vec<Line<'static>> = Vec::new();
        if !self.turn.streaming.is_empty() {
            // The answer so far, rendered as it will be kept; `view` shows its newest rows
            // that fit, and the whole of it goes into the scrollback when it is complete.
            lines.extend(render::wrap(
                &render::markdown_within(&self.turn.streaming, width),
                width,
            ));
        } else if !self.turn.reasoning.is_empty() {
            lines.push(Line::styled(
                "thinking…",
                dim.add_modifier(Modifier::ITALIC),
            ));
        }
        // While it waits for approval, the call is the question above: no second line for it.
        if let Some(tool) = self
            .turn
            .running_tool
            .as_ref()
            .filter(|_| self.overlay.proposal.is_none())
        {
            lines.push(Line::styled(format!("• {tool}"), dim));
            let tail: Vec<&str> = self.turn.tool_output.lines().collect();
            let keep = tail.len().saturating_sub(TOOL_OUTPUT_LINES);
            for line in &tail[keep..] {
                let line: String = line.chars().take(usize::from(width).max(8) - 4).collect();
                lines.push(Line::styled(
                    format!("    {line}"),
                    dim.add_modifier(Modifier::DIM),
                ));
            }
        }
        self.approval_view(&mut lines);
        self.picker_view(&mut lines);
        self.messages_view(&mut lines);
        for (queued, images) in &self.queue {
            let first = queued.lines().next().unwrap_or("");
            let mut line = format!("queued: {first}");
            if !images.is_empty() {
                line.push_str(&format!(" {}", super::attach::chips(images)));
            }
            lines.push(Line::styled(line, dim));
        }
        self.attachments_view(&mut lines);
        lines
    }

    /// The input's rows — each line after its prompt, broken at the width so that every
    /// character is shown — and the cursor's row and column among them.
    fn view_input(&self, width: u16) -> (Vec<Line<'static>>, (usize, usize)) {
        let prompt = Style::new().fg(Color::Cyan);
        if let Some(search) = self.search_view(width, prompt) {
            return search;
        }
        // Two columns of prompt; a terminal narrower than that still gets one for the text.
        let room = usize::from(width).saturating_sub(2).max(1);
        let (cursor_line, cursor_char) = self.editor.cursor_position();
        let mut rows = Vec::new();
        let mut cursor = (0, 2);
        for (index, line) in self.editor.text().split('\n').enumerate() {
            let chars: Vec<char> = line.chars().collect();
            let (pieces, at) =
                break_line(&chars, room, (index == cursor_line).then_some(cursor_char));
            if let Some((row, column)) = at {
                cursor = (rows.len() + row, column + 2);
            }
            for (number, piece) in pieces.into_iter().enumerate() {
                let prefix = if index == 0 && number == 0 {
                    "› "
                } else {
                    "  "
                };
                rows.push(Line::from(vec![
                    Span::styled(prefix, prompt),
                    Span::raw(piece),
                ]));
            }
        }
        let column = cursor.1.min(usize::from(width.saturating_sub(1)));
        (rows, (cursor.0, column))
    }
}

/// One input line broken into pieces at most `room` columns wide, and where the character
/// `cursor` (an index, may be the line's end) is among them. A line whose end is the cursor
/// and exactly fills its last piece gets an empty piece for the cursor to stand on.
fn break_line(
    chars: &[char],
    room: usize,
    cursor: Option<usize>,
) -> (Vec<String>, Option<(usize, usize)>) {
    let mut pieces = vec![String::new()];
    let mut used = 0;
    let mut at = None;
    for (index, c) in chars.iter().enumerate() {
        let w = unicode_width::UnicodeWidthChar::width(*c).unwrap_or(0);
        if used + w > room {
            pieces.push(String::new());
            used = 0;
        }
        if cursor == Some(index) {
            at = Some((pieces.len() - 1, used));
        }
        if let Some(piece) = pieces.last_mut() {
            piece.push(*c);
        }
        used += w;
    }
    if cursor.is_some() && at.is_none() {
        if used >= room {
            pieces.push(String::new());
            used = 0;
        }
        at = Some((pieces.len() - 1, used));
    }
    (pieces, at)
}

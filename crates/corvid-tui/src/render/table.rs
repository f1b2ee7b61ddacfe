//! Markdown tables laid out to a terminal's width: columns squeezed when too wide, with
//! cells wrapping inside them.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use super::lines::wrap;

/// A table as it is read: its rows of cells, the cell being read, and how many rows head it.
#[derive(Default)]
pub(super) struct Table {
    pub(super) rows: Vec<Vec<String>>,
    pub(super) cell: String,
    pub(super) head_rows: usize,
}

pub(super) fn render_table(table: &Table, width: usize) -> Vec<Line<'static>> {
    let columns = table.rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut widths = vec![0; columns];
    for row in &table.rows {
        for (index, cell) in row.iter().enumerate() {
            widths[index] = widths[index].max(cell.width());
        }
    }
    // Too wide: the widest column gives up a column at a time (down to a few), and cells
    // wrap inside their column.
    let room = width.saturating_sub(3 * columns.saturating_sub(1));
    while widths.iter().sum::<usize>() > room {
        let Some((widest, _)) = widths
            .iter()
            .enumerate()
            .filter(|(_, width)| **width > TABLE_COLUMN_MIN)
            .max_by_key(|(_, width)| **width)
        else {
            break;
        };
        widths[widest] -= 1;
    }
    let border = Style::new().fg(Color::DarkGray);
    let mut lines = Vec::new();
    for (index, row) in table.rows.iter().enumerate() {
        let style = if index < table.head_rows {
            Style::new().add_modifier(Modifier::BOLD)
        } else {
            Style::new()
        };
        let cells: Vec<Vec<String>> = widths
            .iter()
            .enumerate()
            .map(|(column, width)| {
                wrap_words(row.get(column).map(String::as_str).unwrap_or(""), *width)
            })
            .collect();
        let height = cells.iter().map(Vec::len).max().unwrap_or(1);
        for part in 0..height {
            let mut spans = Vec::new();
            for (column, width) in widths.iter().enumerate() {
                if column > 0 {
                    spans.push(Span::styled(" │ ", border));
                }
                let piece = cells[column].get(part).map(String::as_str).unwrap_or("");
                let padded = format!("{piece}{}", " ".repeat(width.saturating_sub(piece.width())));
                spans.push(Span::styled(padded, style));
            }
            lines.push(Line::from(spans));
        }
        if index + 1 == table.head_rows {
            let rule: Vec<String> = widths.iter().map(|width| "─".repeat(*width)).collect();
            lines.push(Line::styled(rule.join("─┼─"), border));
        }
    }
    lines
}

/// The narrowest a table column gets when the table is squeezed.
const TABLE_COLUMN_MIN: usize = 4;

/// Plain text in pieces at most `width` columns wide, broken at spaces where it can be.
fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let line = Line::raw(text.to_owned());
    wrap(&[line], u16::try_from(width.max(1)).unwrap_or(u16::MAX))
        .iter()
        .map(|line| {
            line.spans
                .iter()
                .map(|span| span.content.as_ref())
                .collect::<String>()
        })
        .collect()
}

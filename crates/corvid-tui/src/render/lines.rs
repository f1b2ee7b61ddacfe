//! Styled lines once rendered: wrapped to a width keeping their styles, or flattened to
//! plain text.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// Wraps styled lines at `width` columns, at a space where there is one (else inside the
/// word), keeping styles, so the number of rows a block needs is known before it is drawn.
pub fn wrap(lines: &[Line<'static>], width: u16) -> Vec<Line<'static>> {
    let width = usize::from(width.max(1));
    let mut out = Vec::new();
    for line in lines {
        if line.width() <= width {
            out.push(line.clone());
            continue;
        }
        let cells: Vec<(char, Style)> = line
            .spans
            .iter()
            .flat_map(|span| span.content.chars().map(move |c| (c, span.style)))
            .collect();
        let mut start = 0;
        while start < cells.len() {
            let mut used = 0;
            let mut end = start;
            while end < cells.len() {
                let w = unicode_width::UnicodeWidthChar::width(cells[end].0).unwrap_or(0);
                if used + w > width {
                    break;
                }
                used += w;
                end += 1;
            }
            let mut next = end;
            if end < cells.len()
                && let Some(space) = cells[start..end].iter().rposition(|(c, _)| *c == ' ')
                && space > 0
            {
                end = start + space;
                next = end + 1;
            }
            out.push(cells_to_line(&cells[start..end]));
            start = next.max(start + 1);
        }
    }
    out
}

fn cells_to_line(cells: &[(char, Style)]) -> Line<'static> {
    let mut spans: Vec<Span<'static>> = Vec::new();
    for (c, style) in cells {
        match spans.last_mut() {
            Some(last) if last.style == *style => last.content.to_mut().push(*c),
            _ => spans.push(Span::styled(c.to_string(), *style)),
        }
    }
    Line::from(spans)
}

/// Lines as plain text (for a stdout that is not a terminal).
pub fn plain(lines: &[Line<'static>]) -> String {
    let mut text = String::new();
    for line in lines {
        for span in &line.spans {
            text.push_str(&span.content);
        }
        text.push('\n');
    }
    text
}

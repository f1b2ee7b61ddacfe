//! Unified diffs as coloured lines.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;

/// A unified diff with added lines green, removed lines red and hunk headers cyan.
pub fn diff(text: &str) -> Vec<Line<'static>> {
    text.lines()
        .map(|line| {
            let style = if line.starts_with("+++") || line.starts_with("---") {
                Style::new().add_modifier(Modifier::BOLD)
            } else if line.starts_with('+') {
                Style::new().fg(Color::Green)
            } else if line.starts_with('-') {
                Style::new().fg(Color::Red)
            } else if line.starts_with("@@") {
                Style::new().fg(Color::Cyan)
            } else if line.starts_with("diff ") || line.starts_with("index ") {
                Style::new().fg(Color::DarkGray)
            } else {
                Style::new()
            };
            Line::styled(line.to_owned(), style)
        })
        .collect()
}

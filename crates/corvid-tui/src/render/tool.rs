//! One-line accounts of tool calls.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use super::counts::plural;

/// One tool call as one line: a mark, the tool's summary, and a short account of its result
/// (how many lines; the first line when it failed).
pub fn tool_line(summary: &str, result: Option<(bool, &str)>, depth: u32) -> Line<'static> {
    let indent = "  ".repeat(depth as usize);
    let mut spans = vec![Span::raw(indent)];
    match result {
        None => spans.push(Span::styled("• ", Style::new().fg(Color::DarkGray))),
        Some((true, _)) => spans.push(Span::styled("✓ ", Style::new().fg(Color::Green))),
        Some((false, _)) => spans.push(Span::styled("✗ ", Style::new().fg(Color::Red))),
    }
    spans.push(Span::styled(
        summary.to_owned(),
        Style::new().add_modifier(Modifier::BOLD),
    ));
    if let Some((ok, output)) = result {
        let count = output.lines().count();
        let note = if ok {
            format!(" · {}", plural(count as u64, "line"))
        } else {
            let first: String = output
                .lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(80)
                .collect();
            format!(" · {first}")
        };
        spans.push(Span::styled(note, Style::new().fg(Color::DarkGray)));
    }
    Line::from(spans)
}

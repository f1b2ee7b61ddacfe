//! The status line: what runs, tokens, cost, model, approvals and sandbox, fitted to the
//! terminal's width.

use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use super::counts::{bytes, tokens};

/// What the status line shows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Status {
    /// The running turn's elapsed seconds and spinner frame, when one runs.
    pub busy: Option<(u64, usize)>,
    pub model: String,
    pub approval: String,
    pub sandbox: Option<String>,
    /// The session's tokens so far.
    pub tokens: u64,
    /// Messages queued for after the turn.
    pub queued: usize,
    /// The session's cost in US dollars, when the model has a price.
    pub cost: Option<f64>,
    /// A tool call the model is still writing: the tool and the bytes so far.
    pub preparing: Option<(String, u64)>,
}

const SPINNER: &[&str] = &["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// The status line; parts are dropped from the right when the terminal is narrow.
pub fn status_line(status: &Status, width: u16) -> Line<'static> {
    let dim = Style::new().fg(Color::DarkGray);
    let mut parts: Vec<Span<'static>> = Vec::new();
    match status.busy {
        Some((seconds, frame)) => {
            let mut working = format!("{} working {}s", SPINNER[frame % SPINNER.len()], seconds);
            // A long tool call streams for minutes: say which and how far, not only a spinner.
            if let Some((tool, so_far)) = &status.preparing {
                working.push_str(&format!(" · writing {tool} call, {}", bytes(*so_far)));
            }
            parts.push(Span::styled(working, Style::new().fg(Color::Cyan)));
        }
        None => parts.push(Span::styled("ready", Style::new().fg(Color::Green))),
    }
    let mut rest = vec![format!("{} tokens", tokens(status.tokens))];
    if let Some(cost) = status.cost {
        rest.push(format!("${cost:.2}"));
    }
    rest.extend([
        status.model.clone(),
        format!("approvals {}", status.approval),
    ]);
    if let Some(sandbox) = &status.sandbox {
        rest.push(format!("sandbox {sandbox}"));
    }
    if status.queued > 0 {
        rest.insert(0, format!("{} queued", status.queued));
    }
    if status.busy.is_some() {
        rest.insert(0, "Esc interrupts".to_owned());
    }
    let mut used: usize = parts.iter().map(|span| span.content.width()).sum();
    for part in rest {
        let piece = format!(" · {part}");
        if used + piece.width() > width as usize {
            break;
        }
        used += piece.width();
        parts.push(Span::styled(piece, dim));
    }
    Line::from(parts)
}

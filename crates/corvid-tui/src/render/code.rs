//! Fenced code blocks with a light keyword, string, number and comment highlighter.

use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};

const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "case", "class", "const", "continue", "def", "else", "enum",
    "export", "false", "fn", "for", "from", "func", "function", "if", "impl", "import", "in",
    "let", "loop", "match", "mod", "mut", "None", "null", "pub", "return", "self", "Self",
    "static", "struct", "switch", "trait", "true", "type", "use", "var", "where", "while",
];

/// A fenced code block: a dim rule with the language, then each line with keywords, strings,
/// numbers and comments coloured. A light highlighter on purpose: a grammar-based one (syntect)
/// would add a large dependency and its build time for little gain in a terminal.
pub fn code_block(language: &str, code: &str) -> Vec<Line<'static>> {
    let dim = Style::new().fg(Color::DarkGray);
    let mut lines = vec![Line::styled(format!("```{language}"), dim)];
    let hash_comments = matches!(
        language,
        "sh" | "bash" | "shell" | "zsh" | "python" | "py" | "toml" | "yaml" | "yml" | "ruby"
    );
    for line in code.trim_end_matches('\n').lines() {
        lines.push(highlight_line(line, hash_comments));
    }
    lines.push(Line::styled("```", dim));
    lines
}

fn highlight_line(line: &str, hash_comments: bool) -> Line<'static> {
    let mut spans = Vec::new();
    let mut word = String::new();
    let mut chars = line.char_indices().peekable();
    let flush_word = |word: &mut String, spans: &mut Vec<Span<'static>>| {
        if word.is_empty() {
            return;
        }
        let style = if KEYWORDS.contains(&word.as_str()) {
            Style::new().fg(Color::Magenta)
        } else if word.chars().next().is_some_and(|c| c.is_ascii_digit()) {
            Style::new().fg(Color::Yellow)
        } else {
            Style::new()
        };
        spans.push(Span::styled(std::mem::take(word), style));
    };
    while let Some((index, c)) = chars.next() {
        let rest = &line[index..];
        if rest.starts_with("//") || (hash_comments && c == '#') {
            flush_word(&mut word, &mut spans);
            spans.push(Span::styled(
                rest.to_owned(),
                Style::new().fg(Color::DarkGray),
            ));
            break;
        }
        if c == '"' || c == '\'' && !hash_comments && rest.len() > 2 && rest[1..].contains('\'') {
            flush_word(&mut word, &mut spans);
            let mut literal = String::from(c);
            for (_, next) in chars.by_ref() {
                literal.push(next);
                if next == c {
                    break;
                }
            }
            spans.push(Span::styled(literal, Style::new().fg(Color::Green)));
            continue;
        }
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush_word(&mut word, &mut spans);
            spans.push(Span::raw(c.to_string()));
        }
    }
    flush_word(&mut word, &mut spans);
    merge_plain(spans)
}

/// Joins neighbouring spans of the same style, so snapshots and terminals see fewer pieces.
fn merge_plain(spans: Vec<Span<'static>>) -> Line<'static> {
    let mut merged: Vec<Span<'static>> = Vec::new();
    for span in spans {
        match merged.last_mut() {
            Some(last) if last.style == span.style => {
                last.content = format!("{}{}", last.content, span.content).into();
            }
            _ => merged.push(span),
        }
    }
    Line::from(merged)
}

//! Turning agent output into styled terminal lines: markdown (with a small code highlighter),
//! coloured diffs, one-line tool calls and the status line. Pure functions, so frames can be
//! snapshot-tested without a terminal.

use pulldown_cmark::{CodeBlockKind, Event as Md, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

/// Markdown as lines: headings, emphasis, inline code, lists, block quotes, tables and
/// highlighted code blocks. Lines are not wrapped here (see `wrap`).
pub fn markdown(text: &str) -> Vec<Line<'static>> {
    markdown_within(text, u16::MAX)
}

/// Markdown for a terminal `width` columns wide: as `markdown`, and a table wider than that
/// gets narrower columns whose cells wrap inside them, so its rows stay rows.
pub fn markdown_within(text: &str, width: u16) -> Vec<Line<'static>> {
    let mut out = MarkdownWriter {
        width: usize::from(width),
        ..MarkdownWriter::default()
    };
    let parser = Parser::new_ext(text, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH);
    for event in parser {
        out.event(event);
    }
    out.finish()
}

#[derive(Default)]
struct MarkdownWriter {
    lines: Vec<Line<'static>>,
    current: Vec<Span<'static>>,
    styles: Vec<Style>,
    lists: Vec<Option<u64>>,
    quote: usize,
    code: Option<(String, String)>,
    table: Option<Table>,
    pending_item: Option<String>,
    /// The columns a table may take.
    width: usize,
}

#[derive(Default)]
struct Table {
    rows: Vec<Vec<String>>,
    cell: String,
    head_rows: usize,
}

impl MarkdownWriter {
    fn style(&self) -> Style {
        self.styles
            .iter()
            .fold(Style::default(), |style, next| style.patch(*next))
    }

    fn push_text(&mut self, text: &str) {
        if let Some(table) = &mut self.table {
            table.cell.push_str(text);
            return;
        }
        if let Some(marker) = self.pending_item.take() {
            let indent = "  ".repeat(self.lists.len().saturating_sub(1));
            self.current.push(Span::styled(
                format!("{indent}{marker}"),
                Style::new().fg(Color::Cyan),
            ));
        }
        if self.current.is_empty() && self.quote > 0 {
            self.current.push(Span::styled(
                "│ ".repeat(self.quote),
                Style::new().fg(Color::DarkGray),
            ));
        }
        self.current
            .push(Span::styled(text.to_owned(), self.style()));
    }

    fn flush(&mut self) {
        if !self.current.is_empty() {
            self.lines
                .push(Line::from(std::mem::take(&mut self.current)));
        }
    }

    fn blank(&mut self) {
        self.flush();
        if self.lines.last().is_some_and(|line| line.width() > 0) {
            self.lines.push(Line::default());
        }
    }

    fn event(&mut self, event: Md<'_>) {
        if let Some((_, code)) = &mut self.code {
            match event {
                Md::Text(text) => code.push_str(&text),
                Md::End(TagEnd::CodeBlock) => {
                    let (language, code) = self.code.take().unwrap_or_default();
                    self.blank();
                    self.lines.extend(code_block(&language, &code));
                    self.lines.push(Line::default());
                }
                _ => {}
            }
            return;
        }
        match event {
            Md::Start(Tag::Heading { level, .. }) => {
                self.blank();
                let style = match level {
                    HeadingLevel::H1 => {
                        Style::new().add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
                    }
                    HeadingLevel::H2 => Style::new().add_modifier(Modifier::BOLD).fg(Color::Cyan),
                    _ => Style::new().add_modifier(Modifier::BOLD),
                };
                self.styles.push(style);
            }
            Md::End(TagEnd::Heading(_)) => {
                self.styles.pop();
                self.flush();
            }
            Md::Start(Tag::Paragraph) if self.pending_item.is_none() && self.lists.is_empty() => {
                self.blank();
            }
            Md::End(TagEnd::Paragraph) => self.flush(),
            Md::Start(Tag::Emphasis) => self
                .styles
                .push(Style::new().add_modifier(Modifier::ITALIC)),
            Md::Start(Tag::Strong) => self.styles.push(Style::new().add_modifier(Modifier::BOLD)),
            Md::Start(Tag::Strikethrough) => self
                .styles
                .push(Style::new().add_modifier(Modifier::CROSSED_OUT)),
            Md::Start(Tag::Link { .. }) => self.styles.push(
                Style::new()
                    .fg(Color::Blue)
                    .add_modifier(Modifier::UNDERLINED),
            ),
            Md::End(TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough | TagEnd::Link) => {
                self.styles.pop();
            }
            Md::Start(Tag::BlockQuote(_)) => {
                self.blank();
                self.quote += 1;
            }
            Md::End(TagEnd::BlockQuote(_)) => {
                self.flush();
                self.quote = self.quote.saturating_sub(1);
            }
            Md::Start(Tag::List(start)) => {
                if self.lists.is_empty() {
                    self.blank();
                } else {
                    self.flush();
                }
                self.lists.push(start);
            }
            Md::End(TagEnd::List(_)) => {
                self.flush();
                self.lists.pop();
            }
            Md::Start(Tag::Item) => {
                self.flush();
                let marker = match self.lists.last_mut() {
                    Some(Some(number)) => {
                        let marker = format!("{number}. ");
                        *number += 1;
                        marker
                    }
                    _ => "• ".to_owned(),
                };
                self.pending_item = Some(marker);
            }
            Md::End(TagEnd::Item) => {
                self.pending_item = None;
                self.flush();
            }
            Md::Start(Tag::CodeBlock(kind)) => {
                let language = match kind {
                    CodeBlockKind::Fenced(language) => language.to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((language, String::new()));
            }
            Md::Start(Tag::Table(_)) => {
                self.blank();
                self.table = Some(Table::default());
            }
            Md::End(TagEnd::TableHead) => {
                if let Some(table) = &mut self.table {
                    table.head_rows = table.rows.len();
                }
            }
            Md::Start(Tag::TableRow | Tag::TableHead) => {
                if let Some(table) = &mut self.table {
                    table.rows.push(Vec::new());
                }
            }
            Md::End(TagEnd::TableCell) => {
                if let Some(table) = &mut self.table {
                    let cell = std::mem::take(&mut table.cell);
                    if let Some(row) = table.rows.last_mut() {
                        row.push(cell);
                    }
                }
            }
            Md::End(TagEnd::Table) => {
                if let Some(table) = self.table.take() {
                    self.lines.extend(render_table(&table, self.width));
                }
            }
            Md::Text(text) => self.push_text(&text),
            // Markdown reads `<...>` as HTML; a terminal has none to render, and in a model's
            // answer it is nearly always text (`Vec<String>`, `<path>`, `a < b > c`): shown
            // as written, inline or as a block.
            Md::InlineHtml(html) => self.push_text(&html),
            Md::Start(Tag::HtmlBlock) => self.blank(),
            Md::Html(html) => {
                for piece in html.split_inclusive('\n') {
                    let line = piece.strip_suffix('\n');
                    self.push_text(line.unwrap_or(piece));
                    if line.is_some() {
                        self.flush();
                    }
                }
            }
            Md::End(TagEnd::HtmlBlock) => self.flush(),
            Md::Code(code) => {
                if let Some(table) = &mut self.table {
                    table.cell.push_str(&code);
                } else {
                    let style = self.style().fg(Color::Yellow);
                    self.styles.push(style);
                    self.push_text(&code);
                    self.styles.pop();
                }
            }
            Md::SoftBreak => self.push_text(" "),
            Md::HardBreak => self.flush(),
            Md::Rule => {
                self.blank();
                self.lines
                    .push(Line::styled("───", Style::new().fg(Color::DarkGray)));
            }
            Md::TaskListMarker(done) => self.push_text(if done { "[x] " } else { "[ ] " }),
            _ => {}
        }
    }

    fn finish(mut self) -> Vec<Line<'static>> {
        self.flush();
        while self.lines.last().is_some_and(|line| line.width() == 0) {
            self.lines.pop();
        }
        if self.lines.first().is_some_and(|line| line.width() == 0) {
            self.lines.remove(0);
        }
        self.lines
    }
}

fn render_table(table: &Table, width: usize) -> Vec<Line<'static>> {
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

/// `1 step`, `2 steps`.
pub fn plural(count: u64, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

/// `1234` → `1.2k`, for the status line.
pub fn tokens(count: u64) -> String {
    match count {
        0..1_000 => count.to_string(),
        1_000..1_000_000 => format!("{:.1}k", count as f64 / 1_000.0),
        _ => format!("{:.1}M", count as f64 / 1_000_000.0),
    }
}

/// A size as people read it: `512 bytes`, `2.1 KB`, `1.3 MB`.
pub fn bytes(count: u64) -> String {
    match count {
        0..1_024 => plural(count, "byte"),
        1_024..1_048_576 => format!("{:.1} KB", count as f64 / 1_024.0),
        _ => format!("{:.1} MB", count as f64 / 1_048_576.0),
    }
}

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

#[cfg(test)]
mod tests;

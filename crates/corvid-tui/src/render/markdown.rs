//! Markdown to styled lines: headings, emphasis, inline code, lists, block quotes and HTML
//! shown as text; code blocks and tables are handed to `code` and `table`.

use pulldown_cmark::{CodeBlockKind, Event as Md, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use super::code::code_block;
use super::table::{Table, render_table};

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

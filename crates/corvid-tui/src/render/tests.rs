use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::{Color, Modifier};
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

use super::*;

/// The lines drawn into a terminal `width` wide, as the screen shows them (styles dropped by
/// the backend's text form; colours are checked separately).
fn screen(lines: Vec<Line<'static>>, width: u16) -> String {
    let lines = wrap(&lines, width);
    let height = u16::try_from(lines.len().max(1)).unwrap();
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|frame| frame.render_widget(Paragraph::new(lines), frame.area()))
        .unwrap();
    let buffer = terminal.backend().buffer().clone();
    let mut text = String::new();
    for y in 0..buffer.area.height {
        let mut row = String::new();
        for x in 0..buffer.area.width {
            row.push_str(buffer[(x, y)].symbol());
        }
        text.push_str(row.trim_end());
        text.push('\n');
    }
    text
}

const MARKDOWN: &str = "# Plan\n\nWe fix **the sign** in `lib.rs`, *carefully*.\n\n## Steps\n\n1. read the file\n2. edit it\n   - keep the tests\n\n> a quote\n\n| file | change |\n|------|--------|\n| lib.rs | sign |\n| main.rs | none |\n\n```rust\nfn add(a: i32) -> i32 { a + 1 } // one more\nlet s = \"text\";\n```\n";

#[test]
fn markdown_frame() {
    insta::assert_snapshot!(screen(markdown(MARKDOWN), 60));
}

#[test]
fn markdown_styles_headings_code_and_emphasis() {
    let lines = markdown(MARKDOWN);
    let heading = &lines[0].spans[0];
    assert!(heading.style.add_modifier.contains(Modifier::BOLD));
    let inline_code = lines
        .iter()
        .flat_map(|line| &line.spans)
        .find(|span| span.content == "lib.rs")
        .unwrap();
    assert_eq!(inline_code.style.fg, Some(Color::Yellow));
    let keyword = lines
        .iter()
        .flat_map(|line| &line.spans)
        .find(|span| span.content == "fn")
        .unwrap();
    assert_eq!(keyword.style.fg, Some(Color::Magenta));
    let comment = lines
        .iter()
        .flat_map(|line| &line.spans)
        .find(|span| span.content.starts_with("// one"))
        .unwrap();
    assert_eq!(comment.style.fg, Some(Color::DarkGray));
}

const DIFF: &str = "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,3 +1,3 @@\n fn sign(x: i32) -> i32 {\n-    -x\n+    x\n }\n";

#[test]
fn diff_frame_and_colours() {
    insta::assert_snapshot!(screen(diff(DIFF), 40));
    let lines = diff(DIFF);
    assert_eq!(lines[4].style.fg, Some(Color::Red));
    assert_eq!(lines[5].style.fg, Some(Color::Green));
    assert_eq!(lines[2].style.fg, Some(Color::Cyan));
}

#[test]
fn tool_lines_frame() {
    let lines = vec![
        tool_line("Glob **/*.rs", Some((true, "a.rs\nb.rs\nc.rs")), 0),
        tool_line("Read src/lib.rs", Some((true, "one line")), 0),
        tool_line(
            "Run cargo test",
            Some((false, "error: could not compile\nmore")),
            0,
        ),
        tool_line("Search sign", None, 1),
    ];
    insta::assert_snapshot!(screen(lines, 60));
}

#[test]
fn status_line_frame() {
    let busy = Status {
        busy: Some((12, 3)),
        model: "grok-4.6".to_owned(),
        approval: "ask".to_owned(),
        sandbox: Some("landlock".to_owned()),
        tokens: 12_345,
        queued: 1,
        cost: Some(0.0423),
        preparing: None,
    };
    let idle = Status {
        busy: None,
        ..busy.clone()
    };
    insta::assert_snapshot!(screen(
        vec![status_line(&busy, 100), status_line(&idle, 100)],
        100
    ));
}

#[test]
fn narrow_terminal_frame() {
    let mut lines = markdown(
        "A long paragraph that cannot fit in a narrow terminal at all.\n\n| a | b |\n|---|---|\n| 1 | 2 |",
    );
    lines.push(tool_line(
        "Read a/very/long/path/to/a/file.rs",
        Some((true, "x")),
        0,
    ));
    let status = Status {
        busy: Some((3, 0)),
        model: "grok-4.6".to_owned(),
        approval: "ask".to_owned(),
        sandbox: None,
        tokens: 10,
        queued: 0,
        cost: None,
        preparing: None,
    };
    lines.push(status_line(&status, 24));
    let text = screen(lines, 24);
    assert!(text.lines().all(|line| line.chars().count() <= 24));
    insta::assert_snapshot!(text);
}

#[test]
fn counts_read_as_words() {
    assert_eq!(plural(1, "step"), "1 step");
    assert_eq!(plural(2, "step"), "2 steps");
    assert_eq!(tokens(999), "999");
    assert_eq!(tokens(12_345), "12.3k");
}

#[test]
fn blocks_are_separated_by_one_blank_line() {
    let text = screen(
        markdown("## A topic\n\nFine. **Nothing** ran:\n\n- one\n- two\n\nAfter."),
        40,
    );
    assert_eq!(
        text,
        "A topic\n\nFine. Nothing ran:\n\n• one\n• two\n\nAfter.\n"
    );
}

#[test]
fn a_table_wider_than_the_terminal_keeps_its_rows() {
    let table = "| file | change | risk |\n|------|--------|------|\n| src/lib.rs | flip the sign of the addition in the helper | low |\n| tests/add.rs | new case | none |\n";
    let lines = markdown_within(table, 40);
    assert!(lines.iter().all(|line| line.width() <= 40), "{lines:?}");
    insta::assert_snapshot!(screen(lines, 40));
}

#[test]
fn text_in_angle_brackets_is_shown_as_written_wherever_it_stands() {
    let answer = "Return a Vec<String> from `parse::<T>()`, not a <b>bold</b> guess.\n\n\
                  - an Option<Box<dyn Error>> in a list\n\n\
                  | type | use |\n|---|---|\n| HashMap<K, V> | lookups |\n\n\
                  <details>\n<summary>Result<(), E></summary>\n</details>\n\n\
                  ```rust\nfn f() -> Vec<u8> { vec![] }\n```\n\n\
                  a <https://example.com> link and 1 < 2 > 0\n";
    let shown = plain(&markdown(answer));
    for expected in [
        "Return a Vec<String> from parse::<T>(), not a <b>bold</b> guess.",
        "an Option<Box<dyn Error>> in a list",
        "HashMap<K, V>",
        "<details>",
        "<summary>Result<(), E></summary>",
        "</details>",
        "fn f() -> Vec<u8> { vec![] }",
        "1 < 2 > 0",
    ] {
        assert!(
            shown.contains(expected),
            "missing {expected:?} in:\n{shown}"
        );
    }
}

#[test]
fn a_tool_call_being_written_shows_in_the_status_line_with_its_size() {
    let status = Status {
        busy: Some((95, 0)),
        model: "qwen".to_owned(),
        preparing: Some(("write".to_owned(), 2_150)),
        ..Status::default()
    };
    let shown = plain(&[status_line(&status, 100)]);
    assert!(
        shown.contains("working 95s · writing write call, 2.1 KB"),
        "{shown}"
    );
    assert_eq!(bytes(1), "1 byte");
    assert_eq!(bytes(1_023), "1023 bytes");
    assert_eq!(bytes(3 * 1_048_576 / 2), "1.5 MB");
}

use ratatui::backend::TestBackend;
use ratatui::text::Line;

use super::*;

fn rows(buffer: &Buffer) -> Vec<String> {
    (0..buffer.area.height)
        .map(|y| {
            let mut row = String::new();
            for x in 0..buffer.area.width {
                row.push_str(buffer[(x, y)].symbol());
            }
            row.trim_end().to_owned()
        })
        .collect()
}

fn lines(texts: &[&str]) -> Vec<Line<'static>> {
    texts
        .iter()
        .map(|text| Line::raw(text.to_string()))
        .collect()
}

fn screen(width: u16, height: u16, row: u16) -> Screen<TestBackend> {
    Screen::new(TestBackend::new(width, height), row).unwrap()
}

#[test]
fn the_area_is_as_tall_as_its_lines_and_follows_what_was_printed() {
    let mut screen = screen(12, 6, 0);
    screen.draw(lines(&["› hi", "ready"]), (3, 0)).unwrap();
    assert_eq!(
        rows(screen.backend().buffer()),
        ["› hi", "ready", "", "", "", ""]
    );
    screen.insert(lines(&["› hi", "Hello."])).unwrap();
    screen.draw(lines(&["›", "ready"]), (2, 0)).unwrap();
    assert_eq!(
        rows(screen.backend().buffer()),
        ["› hi", "Hello.", "›", "ready", "", ""]
    );
    assert_eq!(
        screen.backend_mut().get_cursor_position().unwrap(),
        Position::new(2, 2)
    );
}

#[test]
fn a_taller_frame_grows_down_then_scrolls_the_conversation_into_the_scrollback() {
    let mut screen = screen(12, 6, 0);
    screen.insert(lines(&["one", "two", "three"])).unwrap();
    screen.draw(lines(&["› a", "ready"]), (3, 0)).unwrap();
    // Room below: the area grows down, nothing scrolls.
    screen
        .draw(lines(&["› a", "  b", "ready"]), (3, 1))
        .unwrap();
    assert_eq!(
        rows(screen.backend().buffer()),
        ["one", "two", "three", "› a", "  b", "ready"]
    );
    assert!(rows(screen.backend().scrollback()).is_empty());
    // No room: the conversation goes up into the scrollback, the input stays whole.
    screen
        .draw(lines(&["› a", "  b", "  c", "  d", "ready"]), (3, 3))
        .unwrap();
    assert_eq!(
        rows(screen.backend().buffer()),
        ["three", "› a", "  b", "  c", "  d", "ready"]
    );
    assert_eq!(rows(screen.backend().scrollback()), ["one", "two"]);
}

#[test]
fn a_shorter_frame_leaves_no_old_rows_and_the_next_lines_fill_the_gap() {
    let mut screen = screen(12, 6, 0);
    screen.insert(lines(&["one"])).unwrap();
    screen
        .draw(lines(&["? allow", "y · n", "› ", "ready"]), (2, 2))
        .unwrap();
    screen.draw(lines(&["› ", "ready"]), (2, 0)).unwrap();
    assert_eq!(
        rows(screen.backend().buffer()),
        ["one", "›", "ready", "", "", ""]
    );
    screen.insert(lines(&["two", "three"])).unwrap();
    screen.draw(lines(&["› ", "ready"]), (2, 0)).unwrap();
    assert_eq!(
        rows(screen.backend().buffer()),
        ["one", "two", "three", "›", "ready", ""]
    );
}

#[test]
fn many_lines_at_a_full_screen_go_to_the_scrollback_in_order() {
    let mut screen = screen(10, 4, 3);
    screen.draw(lines(&["›", "ready"]), (1, 0)).unwrap();
    let printed: Vec<String> = (0..9).map(|n| format!("line {n}")).collect();
    let refs: Vec<&str> = printed.iter().map(String::as_str).collect();
    screen.insert(lines(&refs)).unwrap();
    screen.draw(lines(&["›", "ready"]), (1, 0)).unwrap();
    assert_eq!(
        rows(screen.backend().buffer()),
        ["line 7", "line 8", "›", "ready"]
    );
    let scrollback = rows(screen.backend().scrollback());
    let kept: Vec<String> = scrollback
        .into_iter()
        .filter(|row| !row.is_empty())
        .collect();
    let expected: Vec<String> = (0..7).map(|n| format!("line {n}")).collect();
    assert_eq!(kept, expected);
}

#[test]
fn a_frame_taller_than_the_screen_keeps_its_last_rows_and_a_short_screen_works() {
    let mut screen = screen(10, 3, 0);
    screen
        .draw(lines(&["a", "b", "c", "d", "ready"]), (0, 2))
        .unwrap();
    assert_eq!(screen.area.height, 3);
    let mut screen = self::screen(10, 1, 0);
    screen.draw(lines(&["› x"]), (3, 0)).unwrap();
    assert_eq!(rows(screen.backend().buffer()), ["› x"]);
}

#[test]
fn unchanged_frames_write_nothing_new_and_finish_empties_the_area() {
    let mut screen = screen(12, 4, 1);
    screen.draw(lines(&["› x", "ready"]), (3, 0)).unwrap();
    screen.draw(lines(&["› x", "ready"]), (3, 0)).unwrap();
    assert_eq!(rows(screen.backend().buffer()), ["", "› x", "ready", ""]);
    screen.finish().unwrap();
    assert_eq!(rows(screen.backend().buffer()), ["", "", "", ""]);
    assert_eq!(
        screen.backend_mut().get_cursor_position().unwrap(),
        Position::new(0, 1)
    );
}

#[test]
fn after_a_resize_the_area_is_found_from_the_cursor() {
    let mut screen = screen(20, 6, 0);
    screen.insert(lines(&["one", "two"])).unwrap();
    screen
        .draw(lines(&["› abc", "  def", "ready"]), (5, 1))
        .unwrap();
    // The terminal rewrapped and the cursor moved up a row with its text.
    screen.backend_mut().resize(12, 6);
    screen
        .resize(Size::new(12, 6), Some(Position::new(5, 2)))
        .unwrap();
    screen
        .draw(lines(&["› abc", "  def", "ready"]), (5, 1))
        .unwrap();
    assert_eq!(
        rows(screen.backend().buffer()),
        ["one", "› abc", "  def", "ready", "", ""]
    );
}

#[test]
fn after_a_resize_of_a_full_screen_without_a_cursor_report_the_area_goes_to_the_bottom() {
    let mut screen = screen(20, 6, 0);
    screen
        .insert(lines(&["one", "two", "three", "four", "five"]))
        .unwrap();
    screen.draw(lines(&["› x", "ready"]), (3, 0)).unwrap();
    // Taller, and the terminal did not say where the cursor went.
    screen.backend_mut().resize(20, 8);
    screen.resize(Size::new(20, 8), None).unwrap();
    screen.draw(lines(&["› x", "ready"]), (3, 0)).unwrap();
    let shown = rows(screen.backend().buffer());
    assert_eq!(&shown[6..], ["› x", "ready"]);
}

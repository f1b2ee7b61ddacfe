//! Keys and the input: exiting, queueing, interrupting, pasting, history, the cursor.

use super::*;

#[test]
fn ctrl_c_at_idle_hints_then_exits() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, recorder) = app(folder.path(), None);
    app.key(ctrl('c'));
    assert!(!app.quit);
    assert!(app.hint.as_deref().unwrap().contains("Ctrl-C again"));
    app.key(ctrl('c'));
    assert!(app.quit);
    assert_eq!(ops(&recorder), vec![Op::Shutdown]);
}

#[test]
fn ctrl_d_exits_only_on_an_empty_line() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, _) = app(folder.path(), None);
    typed(&mut app, "ab");
    app.key(key(KeyCode::Left));
    app.key(ctrl('d'));
    assert!(!app.quit);
    assert_eq!(app.editor.text(), "a");
    app.key(ctrl('u'));
    app.key(ctrl('d'));
    assert!(app.quit);
}

#[test]
fn quit_command_exits() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, recorder) = app(folder.path(), None);
    typed(&mut app, "/quit");
    app.key(key(KeyCode::Enter));
    assert!(app.quit);
    assert_eq!(ops(&recorder), vec![Op::Shutdown]);
}

#[test]
fn a_message_during_a_turn_is_queued_and_sent_after_it() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, recorder) = app(folder.path(), None);
    app.event(ready());
    typed(&mut app, "first");
    app.key(key(KeyCode::Enter));
    typed(&mut app, "second");
    app.key(key(KeyCode::Enter));
    assert_eq!(ops(&recorder), vec![Op::Send(SendParams::text("first"))]);
    let (view, _) = app.view(80, 10);
    assert!(crate::render::plain(&view).contains("queued: second"));
    app.event(finished());
    assert_eq!(
        ops(&recorder),
        vec![
            Op::Send(SendParams::text("first")),
            Op::Send(SendParams::text("second"))
        ]
    );
    assert!(!app.has_queue());
}

#[test]
fn escape_interrupts_a_turn() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, recorder) = app(folder.path(), None);
    typed(&mut app, "go");
    app.key(key(KeyCode::Enter));
    app.key(key(KeyCode::Esc));
    assert_eq!(ops(&recorder).last(), Some(&Op::Cancel));
    assert!(!app.quit);
}

#[test]
fn a_paste_is_one_message_and_shift_enter_adds_a_line() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, recorder) = app(folder.path(), None);
    app.paste("line one\r\nline two");
    app.key(KeyEvent::new(KeyCode::Enter, KeyModifiers::SHIFT));
    typed(&mut app, "three");
    app.key(key(KeyCode::Enter));
    assert_eq!(
        ops(&recorder),
        vec![Op::Send(SendParams::text("line one\nline two\nthree"))]
    );
}

#[test]
fn history_survives_a_restart_and_ctrl_r_finds_it() {
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("history.jsonl");
    {
        let (mut app, _) = app(folder.path(), Some(file.clone()));
        app.submit_line("fix the sign\nin lib.rs");
        app.event(finished());
        app.submit_line("run the tests");
    }
    let (mut app, _) = app(folder.path(), Some(file));
    app.key(key(KeyCode::Up));
    assert_eq!(app.editor.text(), "run the tests");
    app.key(key(KeyCode::Up));
    assert_eq!(app.editor.text(), "fix the sign\nin lib.rs");
    app.key(key(KeyCode::Down));
    app.key(key(KeyCode::Down));
    assert_eq!(app.editor.text(), "");
    app.key(ctrl('r'));
    typed(&mut app, "sign");
    app.key(key(KeyCode::Enter));
    assert_eq!(app.editor.text(), "fix the sign\nin lib.rs");
}

#[test]
fn the_input_area_fits_a_narrow_terminal() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, _) = app(folder.path(), None);
    app.event(ready());
    typed(&mut app, "a message longer than the terminal is wide");
    let (lines, (column, row)) = app.view(20, 6);
    assert!(lines.len() <= 6);
    assert!(lines.iter().all(|line| line.width() <= 20));
    assert!(column < 20 && usize::from(row) < lines.len());
}

#[test]
fn a_wrapped_input_puts_the_cursor_after_the_last_character() {
    let folder = tempfile::tempdir().unwrap();
    let (mut app, _) = app(folder.path(), None);
    app.event(ready());
    typed(&mut app, "abcdefghij");
    // 8 columns: two for the prompt, six for the text.
    let (lines, (column, row)) = app.view(8, 10);
    assert_eq!(crate::render::plain(&lines[..2]), "› abcdef\n  ghij\n");
    assert_eq!((column, row), (6, 1));
    typed(&mut app, "kl");
    // The row is full: the cursor stands on a new one.
    let (lines, (column, row)) = app.view(8, 10);
    assert_eq!(
        crate::render::plain(&lines[..3]),
        "› abcdef\n  ghijkl\n  \n"
    );
    assert_eq!((column, row), (2, 2));
}

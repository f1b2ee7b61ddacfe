//! Images in the terminal: a pasted path to an image file becomes a chip, not text; the chip
//! goes with the next message (queued with it during a turn); Backspace in an empty input
//! takes it off; `@shot.png` is left to the engine.

use super::*;
use corvid_protocol::ImageInput;

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
const PNG_BASE64: &str = "iVBORw0KGgoAAAANSUhEUg==";

fn png_image() -> ImageInput {
    ImageInput::Base64 {
        media_type: "image/png".into(),
        data: PNG_BASE64.into(),
    }
}

#[test]
fn a_pasted_image_path_becomes_a_chip_that_goes_with_the_message() {
    let folder = tempfile::tempdir().unwrap();
    std::fs::create_dir(folder.path().join("shots")).unwrap();
    std::fs::write(folder.path().join("shots/My Shot.png"), PNG).unwrap();
    let (mut app, recorder) = app(folder.path(), None);
    // As a file manager pastes it: shell-escaped, absolute.
    app.paste(&format!("{}/shots/My\\ Shot.png", folder.path().display()));
    assert!(app.editor.is_empty(), "the path is not typed");
    insta::assert_snapshot!("image_chip", area(&app, 40, 6));
    typed(&mut app, "what is this?");
    app.key(key(KeyCode::Enter));
    let mut expected = SendParams::text("what is this?");
    expected.images = vec![png_image()];
    assert_eq!(ops(&recorder), vec![Op::Send(expected)]);
    assert!(
        !area(&app, 40, 6).contains("[image:"),
        "the chips went with it"
    );
}

#[test]
fn text_and_missing_or_non_image_paths_paste_as_text_and_backspace_takes_a_chip_off() {
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("a.png"), PNG).unwrap();
    std::fs::write(folder.path().join("fake.png"), b"text").unwrap();
    let (mut app, recorder) = app(folder.path(), None);
    app.paste("gone.png");
    assert_eq!(app.editor.text(), "gone.png");
    app.editor.set("");
    app.paste("'a.png'");
    app.paste("fake.png");
    assert_eq!(
        app.hint.as_deref(),
        Some("fake.png is not a PNG, JPEG, GIF or WebP image")
    );
    assert!(area(&app, 60, 6).contains("[image: a.png]"));
    app.key(key(KeyCode::Backspace));
    assert!(!area(&app, 60, 6).contains("[image: a.png]"));
    app.key(key(KeyCode::Enter));
    assert!(ops(&recorder).is_empty(), "nothing left to send");
}

#[test]
fn an_image_attached_during_a_turn_is_queued_with_its_message() {
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("a.png"), PNG).unwrap();
    let (mut app, recorder) = app(folder.path(), None);
    app.submit_line("first");
    app.paste("a.png");
    app.submit_line("second");
    assert!(area(&app, 60, 8).contains("queued: second [image: a.png]"));
    app.event(event(EventMsg::TurnFinished(TurnFinishedNotification {
        outcome: TurnOutcome::Completed,
        steps: 1,
        usage: TokenUsage::default(),
    })));
    let mut expected = SendParams::text("second");
    expected.images = vec![png_image()];
    assert_eq!(ops(&recorder).last(), Some(&Op::Send(expected)));
}

#[test]
fn a_mentioned_project_image_is_left_to_the_engine() {
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("a.png"), PNG).unwrap();
    let (mut app, recorder) = app(folder.path(), None);
    app.submit_line("look at @a.png");
    assert_eq!(
        ops(&recorder),
        vec![Op::Send(SendParams::text("look at @a.png"))],
        "the text goes as typed; the engine attaches the image"
    );
}

#[test]
fn a_refused_message_gives_its_images_back() {
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("a.png"), PNG).unwrap();
    let (mut app, _recorder) = app(folder.path(), None);
    app.paste("a.png");
    app.submit_line("what is this?");
    assert!(!area(&app, 60, 6).contains("[image: a.png]"));
    app.reply(corvid_protocol::Reply::error(
        "r1",
        corvid_protocol::ErrorNotification::invalid(
            "grok-3 does not take images; pick one that does, e.g. grok-4.6",
        ),
    ));
    let screen = area(&app, 60, 6);
    assert!(screen.contains("[image: a.png]"), "{screen}");
    assert!(!app.busy());
}

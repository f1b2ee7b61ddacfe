//! The terminal itself: raw mode, bracketed paste and the keyboard protocol that tells
//! Shift-Enter from Enter, the loop that feeds keys and agent events to the app and draws each
//! frame through `screen` (the input area, finished lines pushed above it into the
//! scrollback), and the guarantee that the terminal is put back — on every exit and after a
//! panic.

use std::io::{Stdout, Write};
use std::sync::atomic::{AtomicU16, Ordering};
use std::time::Duration;

use crossterm::event::{
    DisableBracketedPaste, EnableBracketedPaste, Event as TermEvent, KeyboardEnhancementFlags,
    PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate};
use crossterm::{execute, queue};
use ratatui::backend::{Backend, CrosstermBackend};
use ratatui::layout::Size;
use ratatui::style::Style;
use ratatui::text::Line;
use tokio::sync::mpsc;

use crate::App;
use crate::render;
use crate::screen::Screen;

/// The input area's first row, for the panic hook (`u16::MAX` before the first frame).
static AREA_TOP: AtomicU16 = AtomicU16::new(u16::MAX);

/// Puts the terminal back: cooked mode, no paste brackets, the keyboard protocol popped, no
/// half-sent frame held back, the cursor shown.
fn restore() {
    let mut stdout = std::io::stdout();
    let _ = crossterm::terminal::disable_raw_mode();
    let _ = execute!(
        stdout,
        EndSynchronizedUpdate,
        PopKeyboardEnhancementFlags,
        DisableBracketedPaste,
        crossterm::event::DisableFocusChange,
        crossterm::cursor::Show
    );
    let _ = stdout.flush();
}

/// After a panic: the input area is emptied so the panic's message is printed where it was,
/// under the conversation, and the terminal is put back.
fn restore_after_panic() {
    let top = AREA_TOP.load(Ordering::Relaxed);
    if top != u16::MAX {
        let _ = execute!(
            std::io::stdout(),
            EndSynchronizedUpdate,
            crossterm::cursor::MoveTo(0, top),
            crossterm::terminal::Clear(crossterm::terminal::ClearType::FromCursorDown)
        );
    }
    restore();
}

/// Restores the terminal when dropped, so an early return or `?` cannot leave it raw.
struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        restore();
    }
}

/// A key that makes a debug build panic, so a test can prove the terminal is restored after a
/// panic (`CORVID_TUI_PANIC_KEY`, one character). Release builds have no such key.
#[cfg(debug_assertions)]
fn panic_key() -> Option<char> {
    let wanted = std::env::var("CORVID_TUI_PANIC_KEY").ok()?;
    let mut chars = wanted.chars();
    match (chars.next(), chars.next()) {
        (Some(key), None) => Some(key),
        _ => None,
    }
}

pub(crate) async fn run(
    app: &mut App,
    events: &mut corvid_agent::LinkFrames,
) -> std::io::Result<()> {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore_after_panic();
        previous(info);
    }));
    #[cfg(debug_assertions)]
    let panic_key = panic_key();
    crossterm::terminal::enable_raw_mode()?;
    let _guard = Guard;
    let mut stdout = std::io::stdout();
    // Focus reports: a turn that ends while the user looks elsewhere rings (see `alert`).
    execute!(
        stdout,
        EnableBracketedPaste,
        crossterm::event::EnableFocusChange
    )?;
    if crossterm::terminal::supports_keyboard_enhancement().unwrap_or(false) {
        execute!(
            stdout,
            PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
        )?;
    }
    // The area starts on the row the shell left the cursor on (asked before the key reader
    // runs); without an answer, at the bottom.
    let (_, rows) = crossterm::terminal::size()?;
    let row = crossterm::cursor::position()
        .map(|(_, row)| row)
        .unwrap_or(rows.saturating_sub(1));
    let mut screen = Screen::new(CrosstermBackend::new(stdout), row)?;
    let (keys_tx, mut keys) = mpsc::unbounded_channel::<TermEvent>();
    // crossterm's read blocks; a thread of its own keeps it off the runtime, and it ends with
    // the process.
    std::thread::spawn(move || {
        loop {
            match crossterm::event::poll(Duration::from_millis(200)) {
                Ok(true) => match crossterm::event::read() {
                    Ok(event) => {
                        if keys_tx.send(event).is_err() {
                            break;
                        }
                    }
                    Err(_) => break,
                },
                Ok(false) => {
                    if keys_tx.is_closed() {
                        break;
                    }
                }
                Err(_) => break,
            }
        }
    });
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    let colour = !crate::no_color();
    loop {
        app.set_width(screen.width());
        tokio::select! {
            frame = events.recv() => match frame {
                Some(frame) => app.frame(frame),
                None => break,
            },
            input = keys.recv() => match input {
                Some(TermEvent::Key(key)) => {
                    #[cfg(debug_assertions)]
                    if let Some(wanted) = panic_key
                        && key.code == crossterm::event::KeyCode::Char(wanted)
                    {
                        panic!("the chat was asked to panic (CORVID_TUI_PANIC_KEY)");
                    }
                    app.key(key)
                }
                Some(TermEvent::Paste(text)) => app.paste(&text),
                Some(TermEvent::FocusGained) => app.set_focused(true),
                Some(TermEvent::FocusLost) => app.set_focused(false),
                // The next frame sees the new size itself.
                Some(TermEvent::Resize(width, _)) => app.set_width(width),
                Some(_) => {}
                None => break,
            },
            _ = tick.tick() => app.tick(),
        }
        frame(&mut screen, app, colour)?;
        if app.quit {
            break;
        }
    }
    if !app.quit {
        screen.finish()?;
    }
    Ok(())
}

/// Wants the user: a desktop notification where the terminal shows OSC 9 ones (iTerm2,
/// Windows Terminal, WezTerm, kitty; others ignore it), then the bell.
fn alert(out: &mut impl Write, text: &str) -> std::io::Result<()> {
    // Control characters would end the sequence early.
    let text: String = text.chars().filter(|c| !c.is_control()).collect();
    write!(out, "\x1b]9;{text}\x07\x07")
}

/// One frame, sent as one synchronized update so the terminal never shows it half drawn:
/// a new size, the finished lines into the scrollback, then the input area (or, at the end,
/// nothing, with the cursor where the shell's prompt goes).
fn frame(
    screen: &mut Screen<CrosstermBackend<Stdout>>,
    app: &mut App,
    colour: bool,
) -> std::io::Result<()> {
    if let Some(text) = app.attention.take() {
        alert(screen.backend_mut(), &text)?;
    }
    queue!(screen.backend_mut(), BeginSynchronizedUpdate)?;
    // The size is asked every frame, not only at a resize event: a frame drawn between the
    // terminal's resize and its event would land on the old rows and move the cursor there.
    let size = crossterm::terminal::size()
        .map(|(width, height)| Size::new(width, height))
        .unwrap_or(screen.size());
    if size != screen.size() {
        // The cursor is still where the last frame left it, moved by the terminal with the
        // text: the area is found from it.
        let cursor = screen.backend_mut().get_cursor_position().ok();
        screen.resize(size, cursor)?;
        app.set_width(size.width);
    }
    let width = screen.width();
    if !app.output.is_empty() {
        let lines = decolour(
            render::wrap(&std::mem::take(&mut app.output), width),
            colour,
        );
        screen.insert(lines)?;
    }
    if app.quit {
        screen.finish()?;
    } else {
        let (lines, cursor) = app.view(width, screen.height());
        screen.draw(decolour(lines, colour), cursor)?;
    }
    AREA_TOP.store(screen.top(), Ordering::Relaxed);
    queue!(screen.backend_mut(), EndSynchronizedUpdate)?;
    Write::flush(screen.backend_mut())
}

fn decolour(lines: Vec<Line<'static>>, colour: bool) -> Vec<Line<'static>> {
    if colour {
        return lines;
    }
    lines
        .into_iter()
        .map(|mut line| {
            for span in &mut line.spans {
                span.style = Style {
                    fg: None,
                    bg: None,
                    ..span.style
                };
            }
            line.style = Style {
                fg: None,
                bg: None,
                ..line.style
            };
            line
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_alert_is_an_osc_9_notification_then_the_bell() {
        let mut out = Vec::new();
        super::alert(&mut out, "corvid: turn done\x07\n").unwrap();
        assert_eq!(out, b"\x1b]9;corvid: turn done\x07\x07");
    }
}

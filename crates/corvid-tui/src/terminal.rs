//! The terminal itself: raw mode, bracketed paste and the keyboard protocol that tells
//! Shift-Enter from Enter, an inline viewport for the input area, finished lines pushed above
//! it into the scrollback, and the guarantee that the terminal is put back — on every exit
//! and after a panic.

use std::io::{Stdout, Write};
use std::time::Duration;

use crossterm::event::{
    DisableBracketedPaste, EnableBracketedPaste, Event as TermEvent, KeyboardEnhancementFlags,
    PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::execute;
use ratatui::backend::CrosstermBackend;
use ratatui::style::{Color, Style};
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget};
use ratatui::{Terminal, TerminalOptions, Viewport};
use tokio::sync::mpsc;

use crate::App;
use crate::render;

/// The rows the input area takes at the bottom of the terminal.
const VIEWPORT_ROWS: u16 = 10;

/// Puts the terminal back: cooked mode, no paste brackets, the keyboard protocol popped.
fn restore() {
    let mut stdout = std::io::stdout();
    let _ = crossterm::terminal::disable_raw_mode();
    let _ = execute!(
        stdout,
        PopKeyboardEnhancementFlags,
        DisableBracketedPaste,
        crossterm::cursor::Show
    );
    let _ = stdout.flush();
}

/// Restores the terminal when dropped, so an early return or `?` cannot leave it raw.
struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        restore();
    }
}

pub(crate) async fn run(
    app: &mut App,
    events: &mut corvid_agent::Subscription,
) -> std::io::Result<()> {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        previous(info);
    }));
    crossterm::terminal::enable_raw_mode()?;
    let _guard = Guard;
    let mut stdout = std::io::stdout();
    execute!(stdout, EnableBracketedPaste)?;
    if crossterm::terminal::supports_keyboard_enhancement().unwrap_or(false) {
        execute!(
            stdout,
            PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
        )?;
    }
    let (_, rows) = crossterm::terminal::size()?;
    let height = VIEWPORT_ROWS.min(rows.saturating_sub(1)).max(3);
    let mut terminal = Terminal::with_options(
        CrosstermBackend::new(stdout),
        TerminalOptions {
            viewport: Viewport::Inline(height),
        },
    )?;
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
        tokio::select! {
            event = events.recv() => match event {
                Some(event) => app.event(event),
                None => break,
            },
            input = keys.recv() => match input {
                Some(TermEvent::Key(key)) => app.key(key),
                Some(TermEvent::Paste(text)) => app.paste(&text),
                Some(_) => {}
                None => break,
            },
            _ = tick.tick() => app.tick(),
        }
        flush_output(&mut terminal, app, colour)?;
        if app.quit {
            break;
        }
        draw(&mut terminal, app, colour)?;
    }
    // Leave the cursor at the start of the emptied input area, where the shell's prompt goes.
    let area = terminal.get_frame().area();
    terminal.clear()?;
    terminal.set_cursor_position((0, area.y))?;
    drop(terminal);
    Ok(())
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

fn flush_output(
    terminal: &mut Terminal<CrosstermBackend<Stdout>>,
    app: &mut App,
    colour: bool,
) -> std::io::Result<()> {
    if app.output.is_empty() {
        return Ok(());
    }
    let width = terminal.size()?.width;
    let lines = decolour(
        render::wrap(&std::mem::take(&mut app.output), width),
        colour,
    );
    let (_, rows) = crossterm::terminal::size()?;
    let chunk = usize::from(rows.saturating_sub(1).max(1));
    for piece in lines.chunks(chunk) {
        let piece = piece.to_vec();
        let height = u16::try_from(piece.len()).unwrap_or(u16::MAX);
        terminal.insert_before(height, |buffer| {
            Paragraph::new(piece).render(buffer.area, buffer);
        })?;
    }
    Ok(())
}

fn draw(
    terminal: &mut Terminal<CrosstermBackend<Stdout>>,
    app: &App,
    colour: bool,
) -> std::io::Result<()> {
    terminal.draw(|frame| {
        let area = frame.area();
        let (lines, (column, row)) = app.view(area.width, area.height);
        let lines = decolour(lines, colour);
        // Top-aligned: the input follows the conversation directly, as a shell prompt does.
        frame.render_widget(
            Paragraph::new(lines).style(Style::new().fg(Color::Reset)),
            area,
        );
        frame.set_cursor_position((area.x + column, area.y + row));
    })?;
    Ok(())
}

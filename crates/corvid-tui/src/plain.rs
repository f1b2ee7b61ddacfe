//! The chat without a terminal (stdout or stdin redirected): messages are read from stdin one
//! per line (a line while an approval waits answers it: `y`, `a`, `n` or feedback), and
//! everything is printed as plain text. At the end of stdin the chat finishes
//! the running turn and exits.

use std::io::Write;

use tokio::sync::mpsc;

use crate::App;
use crate::render;

pub(crate) async fn run(
    app: &mut App,
    events: &mut corvid_agent::LinkFrames,
) -> std::io::Result<()> {
    app.plain = true;
    let (lines_tx, mut lines) = mpsc::unbounded_channel::<String>();
    // A thread, not tokio's stdin: a blocking read on tokio's pool would keep the runtime from
    // shutting down when the chat ends.
    std::thread::spawn(move || {
        for line in std::io::stdin().lines() {
            let Ok(line) = line else { break };
            if lines_tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut input_open = true;
    let mut stdout = std::io::stdout();
    loop {
        tokio::select! {
            frame = events.recv() => {
                let Some(frame) = frame else { break };
                app.frame(frame);
            }
            line = lines.recv(), if input_open => match line {
                Some(line) => app.line(&line),
                None => {
                    input_open = false;
                    app.input_ended();
                }
            },
            _ = tokio::signal::ctrl_c() => {
                app.output.clear();
                break;
            }
        }
        let text = render::plain(&std::mem::take(&mut app.output));
        stdout.write_all(text.as_bytes())?;
        stdout.flush()?;
        if app.quit || (!input_open && !app.busy() && !app.has_queue()) {
            break;
        }
    }
    Ok(())
}

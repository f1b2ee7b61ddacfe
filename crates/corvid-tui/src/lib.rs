//! corvid chat's terminal UI: a front end over the agent's protocol. It sends operations and
//! draws events; it knows nothing of the agent's internals. The screen is an inline viewport
//! at the bottom of the terminal (input, status), and everything finished — messages, tool
//! lines, diffs — goes into the terminal's own scrollback, so it can be scrolled, searched and
//! copied like any other output.

mod app;
pub mod clipboard;
mod editor;
pub mod history;
mod mention;
mod plain;
pub mod render;
mod screen;
mod terminal;

use std::io::IsTerminal;
use std::sync::Arc;

use corvid_agent::LinkFrames;
use corvid_protocol::{Op, Reply, Response, ServerFrame};

pub use app::{App, OWN_COMMANDS, Settings, class_words, sandbox_banner};

/// Where operations go: the session service through the chat's `corvid_agent::Link`. Every
/// operation is replied once, as a `reply` frame carrying the id `submit` returns; an answer
/// to the agent's request (an approval) is replied at once.
pub trait AgentLink: Send + Sync {
    fn submit(&self, op: Op) -> String;
    fn respond(&self, response: Response) -> Reply;

    /// The session's skills and custom commands as they are now (read again when their
    /// folders changed); `None` when the link cannot say, and the chat's start-up list serves.
    fn commands(&self) -> Option<Vec<corvid_protocol::commands::ProjectCommand>> {
        None
    }
}

impl AgentLink for corvid_agent::Link {
    fn submit(&self, op: Op) -> String {
        self.request(op)
    }

    fn respond(&self, response: Response) -> Reply {
        corvid_agent::Link::respond(self, response)
    }

    fn commands(&self) -> Option<Vec<corvid_protocol::commands::ProjectCommand>> {
        Some(self.session().commands())
    }
}

/// Runs the chat until the user exits: the terminal UI when stdin and stdout are terminals,
/// else plain lines (messages read from stdin, one per line).
pub async fn run(
    link: Arc<dyn AgentLink>,
    mut events: LinkFrames,
    settings: Settings,
) -> std::io::Result<()> {
    let mut app = App::new(link.clone(), settings);
    let result = if std::io::stdout().is_terminal() && std::io::stdin().is_terminal() {
        terminal::run(&mut app, &mut events).await
    } else {
        plain::run(&mut app, &mut events).await
    };
    // The engine saves its state on shutdown; a second is plenty, and an exit never hangs on it.
    link.submit(Op::Shutdown);
    let _ = tokio::time::timeout(std::time::Duration::from_secs(1), async {
        while let Some(frame) = events.recv().await {
            if let ServerFrame::Event(event) = frame
                && matches!(event.msg, corvid_protocol::EventMsg::ShutdownComplete)
            {
                break;
            }
        }
    })
    .await;
    result
}

/// Whether colour is off (`NO_COLOR` set to anything but empty).
pub fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|value| !value.is_empty())
}

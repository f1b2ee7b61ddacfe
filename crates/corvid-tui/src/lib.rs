//! corvid chat's terminal UI: a front end over the agent's protocol. It sends operations and
//! draws events; it knows nothing of the agent's internals. The screen is an inline viewport
//! at the bottom of the terminal (input, status), and everything finished — messages, tool
//! lines, diffs — goes into the terminal's own scrollback, so it can be scrolled, searched and
//! copied like any other output.

mod app;
mod editor;
pub mod history;
mod mention;
mod plain;
pub mod render;
mod screen;
mod terminal;

use std::io::IsTerminal;
use std::sync::Arc;

use corvid_agent::Subscription;
use corvid_protocol::Op;

pub use app::{App, COMMANDS, Rate, Settings, class_words, sandbox_banner};

/// Where operations go: a session of the `Agents` service, or an `AgentHandle` of its own.
pub trait AgentLink: Send + Sync {
    fn submit(&self, op: Op);
}

impl AgentLink for corvid_agent::Session {
    fn submit(&self, op: Op) {
        corvid_agent::Session::submit(self, op);
    }
}

impl AgentLink for corvid_agent::AgentHandle {
    fn submit(&self, op: Op) {
        corvid_agent::AgentHandle::submit(self, op);
    }
}

/// Runs the chat until the user exits: the terminal UI when stdin and stdout are terminals,
/// else plain lines (messages read from stdin, one per line).
pub async fn run(
    link: Arc<dyn AgentLink>,
    mut events: Subscription,
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
        while let Some(event) = events.recv().await {
            if matches!(event.msg, corvid_protocol::EventMsg::ShutdownComplete) {
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

//! What the user sends: a slash command, or a message for the model (queued during a turn).

use std::time::Instant;

use corvid_protocol::{Op, SendParams, ToolServer, ToolServerState, commands};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use super::App;
use crate::{mention, render};

/// The chat's own commands (the agent's are `corvid_protocol::commands::COMMANDS`, parsed by
/// its one parser): for `/help` and completion.
pub const OWN_COMMANDS: &[(&str, &str)] = &[
    ("/help", "this list"),
    ("/resume", "pick a conversation to go back to"),
    ("/model", "show the model (/model <name> changes it)"),
    (
        "/approval",
        "show the approval policy (/approval <policy> changes it)",
    ),
    ("/status", "model, approvals, conversation, project, tokens"),
    ("/cost", "tokens spent in this session"),
    ("/quit", "exit"),
];

/// The column `/help` writes descriptions at.
const HELP_INDENT: u16 = 11;

impl App {
    /// One finished message: a slash command, or text for the model (queued during a turn).
    pub fn submit_line(&mut self, text: &str) {
        let trimmed = text.trim();
        if trimmed.is_empty() && self.attachments.is_empty() {
            return;
        }
        if !trimmed.is_empty() {
            self.recall.push(trimmed);
        }
        if let Some(file) = &self.settings.history_file
            && !trimmed.is_empty()
            && let Err(error) = crate::history::append(file, trimmed)
        {
            self.hint = Some(format!("cannot save the input history: {error}"));
        }
        if trimmed.starts_with('/') && !trimmed.starts_with("//") {
            // What the command prints follows the line that asked for it, as a message's
            // answer follows the message.
            self.you(trimmed);
            self.command(trimmed);
            return;
        }
        let images = std::mem::take(&mut self.attachments);
        if self.busy() {
            self.queue.push_back((trimmed.to_owned(), images));
            self.status.queued = self.queue.len();
            return;
        }
        self.send(trimmed.to_owned(), images);
    }

    /// What the user sent, into the scrollback: a blank line first, so each exchange stands
    /// apart from the one before.
    pub(super) fn you(&mut self, text: &str) {
        self.say(Line::raw(""));
        for (index, line) in text.lines().enumerate() {
            let prefix = if index == 0 { "› " } else { "  " };
            self.say(Line::styled(
                format!("{prefix}{line}"),
                Style::new().add_modifier(Modifier::BOLD),
            ));
        }
    }

    pub(super) fn send(&mut self, text: String, images: Vec<super::attach::Attachment>) {
        self.you(&text);
        if !images.is_empty() {
            self.note(format!("  {}", super::attach::chips(&images)));
        }
        let (message, attached) = mention::expand(&self.settings.project, &text);
        for note in attached {
            self.note(format!("  {note}"));
        }
        self.turn.since = Some(Instant::now());
        let mut params = SendParams::text(message);
        params.images = images.iter().map(|image| image.image.clone()).collect();
        self.sent_images = images;
        self.link.submit(Op::Send(params));
    }

    /// The next queued message, once the chat is idle again.
    pub(super) fn send_queued(&mut self) {
        if let Some((next, images)) = self.queue.pop_front() {
            self.status.queued = self.queue.len();
            self.send(next, images);
        }
    }

    fn command(&mut self, line: &str) {
        let rest = &line[1..];
        let (name, argument) = rest
            .split_once(char::is_whitespace)
            .map_or((rest, ""), |(name, argument)| (name, argument.trim()));
        // The chat's own commands first; the rest is the protocol's table (and the skills).
        match (name, argument) {
            ("quit" | "exit", _) => return self.exit(),
            ("help", _) => return self.help(),
            ("status", _) => return self.status_report(),
            ("cost", _) => return self.cost_report(),
            ("resume", _) => {
                self.overlay.picker_request = Some(self.link.submit(Op::ListConversations));
                return;
            }
            ("model", "") => {
                self.say(Line::raw(format!("model: {}", self.status.model)));
                if !self.settings.catalog.is_empty() {
                    self.note(format!("available: {}", self.settings.catalog.join(", ")));
                }
                if !self.settings.without_key.is_empty() {
                    self.note(format!(
                        "no key yet (add one: corvid login, or the env file): {}",
                        self.settings.without_key.join(", ")
                    ));
                }
                self.note("/model <name> changes it");
                return;
            }
            ("approval", "") => {
                self.say(Line::raw(format!("approvals: {}", self.status.approval)));
                self.note("/approval read-only | plan | ask | auto-edit | full-auto changes it (Shift-Tab cycles ask → auto-edit → plan)");
                return;
            }
            _ => {}
        }
        match commands::parse(line, &self.project_commands()) {
            // `/rewind` without a number: its answer opens the picker of earlier messages.
            Some(Ok(Op::UserMessages)) => {
                self.overlay.picker_request = Some(self.link.submit(Op::UserMessages));
            }
            Some(Ok(op)) => {
                if matches!(op, Op::Init | Op::Send(_)) {
                    self.turn.since = Some(Instant::now());
                }
                self.link.submit(op);
            }
            Some(Err(error)) => self.hint = Some(format!("{error}; /help lists the commands")),
            None => {}
        }
    }

    /// The project's skills and custom commands, as the session sees them now.
    fn project_commands(&self) -> Vec<commands::ProjectCommand> {
        self.link
            .commands()
            .unwrap_or_else(|| self.settings.commands.clone())
    }

    /// Every command: the chat's own, the protocol's table, the project's skills and custom
    /// commands.
    pub(super) fn all_commands(&self) -> Vec<(String, String)> {
        let mut all: Vec<(String, String)> = OWN_COMMANDS
            .iter()
            .map(|(name, what)| ((*name).to_owned(), (*what).to_owned()))
            .collect();
        for spec in commands::specs(&self.project_commands()) {
            if all.iter().any(|(name, _)| name[1..] == spec.name) {
                continue;
            }
            let what = if spec.argument.is_empty() {
                spec.description
            } else {
                format!("{} {}", spec.argument, spec.description)
            };
            all.push((format!("/{}", spec.name), what));
        }
        all
    }

    /// `/help`: the commands, descriptions wrapped under themselves, then the keys.
    fn help(&mut self) {
        let room = self.width.saturating_sub(HELP_INDENT).max(20);
        for (command, what) in self.all_commands() {
            let pieces = render::wrap(&[Line::raw(what)], room);
            for (index, piece) in pieces.into_iter().enumerate() {
                let name = if index == 0 { command.as_str() } else { "" };
                let mut spans = vec![Span::styled(
                    format!("{name:<width$}", width = usize::from(HELP_INDENT)),
                    Style::new().fg(Color::Cyan),
                )];
                spans.extend(piece.spans);
                self.say(Line::from(spans));
            }
        }
        self.note(
            "Enter sends · Shift-Enter or Alt-Enter or Ctrl-J: new line · Tab completes /commands and @files · ↑/↓ history · Ctrl-R search · Esc interrupts · Ctrl-O last tool output · Ctrl-T reasoning · Ctrl-C twice or Ctrl-D exits",
        );
    }

    /// The answer to `/mcp`: a line per server, its tools under it.
    pub(super) fn tool_servers(&mut self, servers: Vec<ToolServer>) {
        if servers.is_empty() {
            self.note(
                "no MCP servers in this session: `corvid mcp add NAME -- COMMAND…` adds one to .corvid/mcp.json (`--global` to config.toml); then restart corvid chat",
            );
            return;
        }
        let name_width = servers
            .iter()
            .map(|server| server.name.width())
            .max()
            .unwrap_or(0);
        for server in servers {
            let (state, colour) = server_state(&server);
            self.say(Line::from(vec![
                Span::raw(format!("{:<name_width$}  ", server.name)),
                Span::styled(state, Style::new().fg(colour)),
            ]));
            self.note(format!(
                "  in {} · {}",
                server.configured_in, server.transport
            ));
            if !server.tools.is_empty() {
                let tools = server.short_tool_names().join(", ");
                self.say(Line::raw(format!("  tools: {tools}")));
            }
            if !server.withheld.is_empty() {
                self.note(format!(
                    "  not offered (enabled_tools/disabled_tools): {}",
                    server.withheld.join(", ")
                ));
            }
        }
    }
}

/// A tool server's state in words, and its colour.
fn server_state(server: &ToolServer) -> (String, Color) {
    let words = server.describe();
    let colour = match server.state {
        ToolServerState::Ready => Color::Green,
        ToolServerState::Failed => Color::Red,
        ToolServerState::Idle | ToolServerState::Disabled => Color::DarkGray,
        ToolServerState::Starting | ToolServerState::Untrusted | ToolServerState::NeedsSignIn => {
            Color::Yellow
        }
    };
    (words, colour)
}

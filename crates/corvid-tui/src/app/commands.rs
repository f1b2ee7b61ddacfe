//! What the user sends: a slash command, or a message for the model (queued during a turn).

use std::time::Instant;

use corvid_protocol::{ApprovalPolicy, Op, SendParams, ToolServer, ToolServerState};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use super::App;
use crate::{mention, render};

/// The slash commands, for `/help` and completion.
pub const COMMANDS: &[(&str, &str)] = &[
    ("/help", "this list"),
    ("/new", "start a new conversation"),
    ("/list", "list this project's conversations"),
    ("/switch", "<id> switch to a conversation"),
    ("/resume", "pick a conversation to go back to"),
    ("/clear", "empty this conversation"),
    ("/model", "[name] show or change the model"),
    (
        "/approval",
        "[ask|auto-edit|full-auto] show or change the approval policy",
    ),
    ("/status", "model, approvals, conversation, project, tokens"),
    ("/cost", "tokens spent in this session"),
    ("/init", "write or improve AGENTS.md"),
    ("/diff", "[turn] what the agent changed"),
    (
        "/undo",
        "[turn] put back what the last (or that) turn changed",
    ),
    ("/compact", "summarise older turns"),
    (
        "/mcp",
        "[trust <server>] MCP servers, their state and tools; trust starts a project's server",
    ),
    ("/quit", "exit"),
];

/// The column `/help` writes descriptions at.
const HELP_INDENT: u16 = 11;

impl App {
    /// One finished message: a slash command, or text for the model (queued during a turn).
    pub fn submit_line(&mut self, text: &str) {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return;
        }
        self.recall.push(trimmed);
        if let Some(file) = &self.settings.history_file
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
        if self.busy() {
            self.queue.push_back(trimmed.to_owned());
            self.status.queued = self.queue.len();
            return;
        }
        self.send(trimmed.to_owned());
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

    pub(super) fn send(&mut self, text: String) {
        self.you(&text);
        let (message, attached) = mention::expand(&self.settings.project, &text);
        for note in attached {
            self.note(format!("  {note}"));
        }
        self.turn.since = Some(Instant::now());
        self.link.submit(Op::Send(SendParams::text(message)));
    }

    /// The next queued message, once the chat is idle again.
    pub(super) fn send_queued(&mut self) {
        if let Some(next) = self.queue.pop_front() {
            self.status.queued = self.queue.len();
            self.send(next);
        }
    }

    fn command(&mut self, line: &str) {
        let rest = &line[1..];
        let (name, argument) = rest
            .split_once(char::is_whitespace)
            .map_or((rest, ""), |(name, argument)| (name, argument.trim()));
        match name {
            "quit" | "exit" => self.exit(),
            "help" => self.help(),
            "new" => self.link.submit(Op::NewConversation),
            "list" => self.link.submit(Op::ListConversations),
            "resume" => {
                self.overlay.want_picker = true;
                self.link.submit(Op::ListConversations);
            }
            "switch" if argument.is_empty() => {
                self.hint = Some(
                    "/switch needs a conversation id (/list shows them; /resume picks one)"
                        .to_owned(),
                )
            }
            "switch" => self.link.submit(Op::SwitchConversation {
                conversation_id: argument.to_owned(),
            }),
            "clear" => self.link.submit(Op::ClearConversation),
            "model" if argument.is_empty() => {
                self.say(Line::raw(format!("model: {}", self.status.model)));
                if !self.settings.catalog.is_empty() {
                    self.note(format!("available: {}", self.settings.catalog.join(", ")));
                }
                self.note("/model <name> changes it");
            }
            "model" => self.link.submit(Op::SetModel {
                model: argument.to_owned(),
            }),
            "approval" if argument.is_empty() => {
                self.say(Line::raw(format!("approvals: {}", self.status.approval)));
                self.note("/approval ask | auto-edit | full-auto changes it");
            }
            "approval" => match argument.parse::<ApprovalPolicy>() {
                Ok(policy) => self.link.submit(Op::SetApprovalPolicy { policy }),
                Err(_) => {
                    self.hint = Some(format!(
                        "unknown policy `{argument}`: ask, auto-edit or full-auto"
                    ))
                }
            },
            "status" => self.status_report(),
            "cost" => self.cost_report(),
            "init" => {
                self.turn.since = Some(Instant::now());
                self.link.submit(Op::Init);
            }
            "diff" | "undo" => {
                let turn = if argument.is_empty() {
                    None
                } else {
                    match argument.parse::<u32>() {
                        Ok(turn) => Some(turn),
                        Err(_) => {
                            self.hint = Some(format!("/{name} takes a turn number"));
                            return;
                        }
                    }
                };
                self.link.submit(if name == "diff" {
                    Op::Diff { turn }
                } else {
                    Op::Undo { turn }
                });
            }
            "compact" => self.link.submit(Op::Compact),
            "mcp" => match argument
                .split_once(char::is_whitespace)
                .unwrap_or((argument, ""))
            {
                ("", _) => self.link.submit(Op::ListToolServers),
                ("trust", "") => {
                    self.hint = Some("/mcp trust <server> (/mcp lists them)".to_owned())
                }
                ("trust", name) => self.link.submit(Op::TrustToolServer {
                    name: name.trim().to_owned(),
                }),
                _ => {
                    self.hint = Some(
                        "/mcp lists the servers; /mcp trust <server> starts a project's server"
                            .to_owned(),
                    )
                }
            },
            other => self.hint = Some(format!("unknown command /{other}; /help lists them")),
        }
    }

    /// `/help`: the commands, descriptions wrapped under themselves, then the keys.
    fn help(&mut self) {
        let room = self.width.saturating_sub(HELP_INDENT).max(20);
        for (command, what) in COMMANDS {
            let pieces = render::wrap(&[Line::raw(*what)], room);
            for (index, piece) in pieces.into_iter().enumerate() {
                let name = if index == 0 { *command } else { "" };
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
    let mut words = server.state_words();
    if server.state == ToolServerState::Untrusted {
        words.push_str(&format!(": `/mcp trust {}` starts it", server.name));
    }
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

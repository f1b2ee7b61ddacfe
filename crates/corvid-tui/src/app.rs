//! The chat's state machine: agent events and keys in; lines for the scrollback, the input
//! area's content and operations for the agent out. No terminal here, so every behaviour —
//! exits, queueing, approvals, slash commands — is testable with plain values.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use corvid_protocol::{
    ApprovalDecision, ApprovalPolicy, ApprovalRule, ApproveParams, ConversationSummary, ErrorClass,
    Event, EventMsg, HistoryEntry, Op, ProposalKind, ReadyNotification, SandboxMode, SandboxState,
    SendParams, TodoStatus, TokenUsage, ToolServer, ToolServerState, TurnOutcome,
};
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use crate::AgentLink;
use crate::editor::{Editor, Recall};
use crate::mention;
use crate::render::{self, Status};

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

/// How long a first Ctrl-C waits for the second.
const INTERRUPT_WINDOW: Duration = Duration::from_secs(2);

/// What the chat knows at start-up besides the agent.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// The project folder (for `@path` mentions).
    pub project: PathBuf,
    /// Where the message history is kept; `None` keeps it in memory.
    pub history_file: Option<PathBuf>,
    /// Model names `/model` offers.
    pub catalog: Vec<String>,
    /// Prices by model name, for the cost in the status line and `/cost`.
    pub prices: HashMap<String, Rate>,
}

/// A model's price in US dollars per million tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Rate {
    pub input: f64,
    pub cached_input: f64,
    pub cache_write: f64,
    pub output: f64,
}

impl Rate {
    /// What `usage` costs at this rate.
    pub fn cost(&self, usage: &TokenUsage) -> f64 {
        (usage.input as f64 * self.input
            + usage.cache_read as f64 * self.cached_input
            + usage.cache_write as f64 * self.cache_write
            + usage.output as f64 * self.output)
            / 1_000_000.0
    }
}

struct Picker {
    items: Vec<ConversationSummary>,
    selected: usize,
}

struct Search {
    query: String,
    found: Option<usize>,
}

/// The chat's whole state.
pub struct App {
    link: Arc<dyn AgentLink>,
    settings: Settings,
    pub(crate) editor: Editor,
    recall: Recall,
    /// Lines waiting to go into the scrollback.
    pub output: Vec<Line<'static>>,
    busy_since: Option<Instant>,
    streaming: String,
    reasoning: String,
    last_reasoning: String,
    show_reasoning: bool,
    queue: VecDeque<String>,
    proposal: Option<(String, Option<ApprovalRule>)>,
    interrupt_armed: Option<Instant>,
    hint: Option<String>,
    tools: HashMap<String, (String, u32)>,
    running_tool: Option<String>,
    /// The running command's output so far (its tail), shown dimmed under its line.
    tool_output: String,
    /// The highest `seq` applied: a resync's replay repeats what is at or below it, and that
    /// is already on the screen.
    last_seq: u64,
    last_result: Option<(String, String)>,
    picker: Option<Picker>,
    want_picker: bool,
    search: Option<Search>,
    status: Status,
    conversation: String,
    turn_usage: TokenUsage,
    session_usage: TokenUsage,
    /// The model answering the running turn (as the engine names it).
    turn_model: String,
    /// The session's cost so far, when the models used have prices.
    cost: Option<f64>,
    frame: usize,
    /// Set when the chat should end; the loop then restores the terminal and exits.
    pub quit: bool,
    /// Lines from stdin rather than keys: the key hints would be wrong.
    pub(crate) plain: bool,
    /// Whether the engine announced the turn `busy_since` waits for.
    turn_started: bool,
    /// The terminal's width, for what needs it before wrapping (tables).
    width: u16,
}

impl App {
    pub fn new(link: Arc<dyn AgentLink>, settings: Settings) -> Self {
        let entries = settings
            .history_file
            .as_deref()
            .map(crate::history::load)
            .unwrap_or_default();
        Self {
            link,
            settings,
            editor: Editor::default(),
            recall: Recall::new(entries),
            output: Vec::new(),
            busy_since: None,
            streaming: String::new(),
            reasoning: String::new(),
            last_reasoning: String::new(),
            show_reasoning: false,
            queue: VecDeque::new(),
            proposal: None,
            interrupt_armed: None,
            hint: None,
            tools: HashMap::new(),
            running_tool: None,
            tool_output: String::new(),
            last_seq: 0,
            last_result: None,
            picker: None,
            want_picker: false,
            search: None,
            status: Status::default(),
            conversation: String::new(),
            turn_usage: TokenUsage::default(),
            session_usage: TokenUsage::default(),
            turn_model: String::new(),
            cost: None,
            frame: 0,
            quit: false,
            plain: false,
            turn_started: false,
            width: u16::MAX,
        }
    }

    /// The terminal is `width` columns wide (tables are fitted to it).
    pub fn set_width(&mut self, width: u16) {
        self.width = width.max(1);
    }

    /// The input ended (plain mode's stdin closed): nobody is left to answer a waiting
    /// proposal, so the turn stops instead of waiting for ever.
    pub fn input_ended(&mut self) {
        if self.proposal.is_some() {
            self.cancel_turn();
        }
    }

    pub fn has_queue(&self) -> bool {
        !self.queue.is_empty()
    }

    pub fn busy(&self) -> bool {
        self.busy_since.is_some()
    }

    fn say(&mut self, line: Line<'static>) {
        self.output.push(line);
    }

    fn note(&mut self, text: impl Into<String>) {
        let line = Line::styled(text.into(), Style::new().fg(Color::DarkGray));
        self.say(line);
    }

    fn exit(&mut self) {
        self.quit = true;
        self.link.submit(Op::Shutdown);
    }

    /// A timer tick: the spinner moves, an unanswered Ctrl-C hint expires.
    pub fn tick(&mut self) {
        self.frame = self.frame.wrapping_add(1);
        if self
            .interrupt_armed
            .is_some_and(|at| at.elapsed() > INTERRUPT_WINDOW)
        {
            self.interrupt_armed = None;
            self.hint = None;
        }
    }

    /// A bracketed paste: one piece of text, newlines kept, never sent by itself.
    pub fn paste(&mut self, text: &str) {
        self.editor
            .insert(&text.replace("\r\n", "\n").replace('\r', "\n"));
    }

    pub fn key(&mut self, key: KeyEvent) {
        if key.kind == KeyEventKind::Release {
            return;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        if !matches!(key.code, KeyCode::Char('c') if ctrl) {
            self.interrupt_armed = None;
            if self
                .hint
                .as_deref()
                .is_some_and(|hint| hint.starts_with("Ctrl-C"))
            {
                self.hint = None;
            }
        }
        if self.search.is_some() {
            self.search_key(key, ctrl);
            return;
        }
        if self.picker.is_some() {
            self.picker_key(key);
            return;
        }
        match key.code {
            KeyCode::Char('c') if ctrl => self.interrupt(),
            KeyCode::Char('d') if ctrl => {
                if self.editor.is_empty() {
                    self.exit();
                } else {
                    self.editor.delete();
                }
            }
            KeyCode::Char('r') if ctrl => {
                self.search = Some(Search {
                    query: String::new(),
                    found: None,
                });
            }
            KeyCode::Char('t') if ctrl => {
                self.show_reasoning = !self.show_reasoning;
                let reasoning = self.last_reasoning.clone();
                if self.show_reasoning && !reasoning.is_empty() {
                    self.output.extend(reasoning_lines(&reasoning, 0));
                }
                self.hint = Some(format!(
                    "reasoning {}",
                    if self.show_reasoning {
                        "shown"
                    } else {
                        "folded"
                    }
                ));
            }
            KeyCode::Char('o') if ctrl => match self.last_result.clone() {
                Some((summary, output)) => {
                    self.say(Line::styled(
                        format!("── {summary} ──"),
                        Style::new().add_modifier(Modifier::BOLD),
                    ));
                    for line in output.lines() {
                        self.say(Line::raw(line.to_owned()));
                    }
                }
                None => self.hint = Some("no tool result to show yet".to_owned()),
            },
            KeyCode::Char('u') if ctrl => self.editor.set(""),
            KeyCode::Char('w') if ctrl => self.editor.delete_word(),
            KeyCode::Char('a') if ctrl => self.editor.home(),
            KeyCode::Char('e') if ctrl => self.editor.end(),
            KeyCode::Char('j') if ctrl => self.editor.insert("\n"),
            // Digits answer at once (as in Claude Code); letters are typed, so an answer in
            // words ("y", "always", "no, use ls") needs Enter and feedback that happens to
            // start with `y` or `a` never approves by accident.
            KeyCode::Char(c @ '1'..='3')
                if self.proposal.is_some() && self.editor.is_empty() && !ctrl =>
            {
                let decision = match c {
                    '1' => ApprovalDecision::Approve,
                    '2' => self.always(),
                    _ => ApprovalDecision::Reject { feedback: None },
                };
                self.answer(decision);
            }
            KeyCode::Char(c) if !ctrl => self.editor.insert(&c.to_string()),
            KeyCode::Enter if shift || alt => self.editor.insert("\n"),
            KeyCode::Enter => self.enter(),
            KeyCode::Esc => {
                if self.proposal.is_some() || self.busy() {
                    self.cancel_turn();
                } else {
                    self.hint = None;
                }
            }
            KeyCode::Backspace => self.editor.backspace(),
            KeyCode::Delete => self.editor.delete(),
            KeyCode::Left => self.editor.left(),
            KeyCode::Right => self.editor.right(),
            KeyCode::Home => self.editor.home(),
            KeyCode::End => self.editor.end(),
            KeyCode::Up => {
                if self.editor.on_first_line() {
                    let current = self.editor.text();
                    if let Some(entry) = self.recall.up(&current).map(str::to_owned) {
                        self.editor.set(&entry);
                    }
                } else {
                    move_line(&mut self.editor, -1);
                }
            }
            KeyCode::Down => {
                if self.editor.on_last_line() {
                    if let Some(entry) = self.recall.down() {
                        self.editor.set(&entry);
                    }
                } else {
                    move_line(&mut self.editor, 1);
                }
            }
            KeyCode::Tab => self.complete(),
            _ => {}
        }
    }

    fn interrupt(&mut self) {
        if self.proposal.is_some() || self.busy() {
            self.cancel_turn();
            return;
        }
        if !self.editor.is_empty() {
            self.editor.set("");
            return;
        }
        if self.interrupt_armed.is_some() {
            self.exit();
        } else {
            self.interrupt_armed = Some(Instant::now());
            self.hint = Some("Ctrl-C again to exit (or Ctrl-D, /quit)".to_owned());
        }
    }

    fn cancel_turn(&mut self) {
        if self.proposal.take().is_some() {
            self.note("approval cancelled; the turn stops");
        }
        self.link.submit(Op::Cancel);
        self.hint = Some("interrupting…".to_owned());
    }

    /// "Always" for the waiting proposal: its kept rule, or once when it offers none.
    fn always(&self) -> ApprovalDecision {
        match self.proposal.as_ref().and_then(|(_, rule)| rule.clone()) {
            Some(scope) => ApprovalDecision::ApproveAlways { scope },
            None => ApprovalDecision::Approve,
        }
    }

    fn answer(&mut self, decision: ApprovalDecision) {
        let Some((proposal_id, _)) = self.proposal.take() else {
            return;
        };
        let word = match &decision {
            ApprovalDecision::Approve => "approved".to_owned(),
            ApprovalDecision::ApproveAlways { .. } => "approved, and from now on".to_owned(),
            ApprovalDecision::Reject { feedback: None } => "rejected".to_owned(),
            ApprovalDecision::Reject {
                feedback: Some(feedback),
            } => format!("rejected: {feedback}"),
        };
        self.note(format!("  {word}"));
        self.link.submit(Op::Approve(ApproveParams {
            proposal_id,
            decision,
        }));
    }

    fn search_key(&mut self, key: KeyEvent, ctrl: bool) {
        let Some(search) = &mut self.search else {
            return;
        };
        match key.code {
            KeyCode::Char('r') if ctrl => {
                search.found = self
                    .recall
                    .search(&search.query, search.found)
                    .map(|(index, _)| index)
                    .or(search.found);
            }
            KeyCode::Char('c') if ctrl => self.search = None,
            KeyCode::Esc => self.search = None,
            KeyCode::Char(c) if !ctrl => {
                search.query.push(c);
                search.found = self
                    .recall
                    .search(&search.query, None)
                    .map(|(index, _)| index);
            }
            KeyCode::Backspace => {
                search.query.pop();
                search.found = self
                    .recall
                    .search(&search.query, None)
                    .map(|(index, _)| index);
            }
            KeyCode::Enter | KeyCode::Right | KeyCode::Tab => {
                if let Some(entry) = search
                    .found
                    .and_then(|index| self.recall.entries.get(index))
                {
                    let entry = entry.clone();
                    self.editor.set(&entry);
                }
                self.search = None;
            }
            _ => {}
        }
    }

    fn picker_key(&mut self, key: KeyEvent) {
        let Some(picker) = &mut self.picker else {
            return;
        };
        match key.code {
            KeyCode::Up => picker.selected = picker.selected.saturating_sub(1),
            KeyCode::Down => {
                picker.selected = (picker.selected + 1).min(picker.items.len().saturating_sub(1))
            }
            KeyCode::Enter => {
                if let Some(item) = picker.items.get(picker.selected) {
                    self.link.submit(Op::SwitchConversation {
                        conversation_id: item.id.clone(),
                    });
                }
                self.picker = None;
            }
            KeyCode::Esc => self.picker = None,
            KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.picker = None
            }
            _ => {}
        }
    }

    fn complete(&mut self) {
        let word = self.editor.current_word();
        let candidates: Vec<String> =
            if word.starts_with('/') && self.editor.text().starts_with(&word) {
                COMMANDS
                    .iter()
                    .map(|(name, _)| (*name).to_owned())
                    .filter(|name| name.starts_with(&word))
                    .collect()
            } else if let Some(partial) = word.strip_prefix('@') {
                mention::complete(&self.settings.project, partial)
                    .into_iter()
                    .map(|path| format!("@{path}"))
                    .collect()
            } else {
                Vec::new()
            };
        match candidates.as_slice() {
            [] => self.hint = Some("no completion".to_owned()),
            [only] => {
                let suffix = if only.ends_with('/') { "" } else { " " };
                self.editor.replace_word(&format!("{only}{suffix}"));
                self.hint = None;
            }
            many => {
                let common = common_prefix(many);
                if common.len() > word.len() {
                    self.editor.replace_word(&common);
                }
                self.hint = Some(many.join("  "));
            }
        }
    }

    fn enter(&mut self) {
        let text = self.editor.take();
        self.line(&text);
    }

    /// A line from the user: the answer to a waiting proposal (`y`, `a`, `n`, or feedback that
    /// rejects it), else a message or command.
    pub fn line(&mut self, text: &str) {
        if self.proposal.is_some() && !text.trim().is_empty() {
            let decision = match text.trim() {
                "y" | "yes" => ApprovalDecision::Approve,
                "a" | "always" => self.always(),
                "n" | "no" => ApprovalDecision::Reject { feedback: None },
                feedback => ApprovalDecision::Reject {
                    feedback: Some(feedback.to_owned()),
                },
            };
            self.answer(decision);
            return;
        }
        self.submit_line(text);
    }

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
    fn you(&mut self, text: &str) {
        self.say(Line::raw(""));
        for (index, line) in text.lines().enumerate() {
            let prefix = if index == 0 { "› " } else { "  " };
            self.say(Line::styled(
                format!("{prefix}{line}"),
                Style::new().add_modifier(Modifier::BOLD),
            ));
        }
    }

    fn send(&mut self, text: String) {
        self.you(&text);
        let (message, attached) = mention::expand(&self.settings.project, &text);
        for note in attached {
            self.note(format!("  {note}"));
        }
        self.busy_since = Some(Instant::now());
        self.link.submit(Op::Send(SendParams::text(message)));
    }

    fn command(&mut self, line: &str) {
        let rest = &line[1..];
        let (name, argument) = rest
            .split_once(char::is_whitespace)
            .map_or((rest, ""), |(name, argument)| (name, argument.trim()));
        match name {
            "quit" | "exit" => self.exit(),
            "help" => {
                // Descriptions wrap under themselves, not under the commands.
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
            "new" => self.link.submit(Op::NewConversation),
            "list" => self.link.submit(Op::ListConversations),
            "resume" => {
                self.want_picker = true;
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
            "status" => {
                let lines = vec![
                    format!("model      {}", self.status.model),
                    format!("approvals  {}", self.status.approval),
                    format!("project    {}", self.settings.project.display()),
                    format!("conversation {}", self.conversation),
                    format!(
                        "tokens     {}",
                        self.session_usage.total() + self.turn_usage.total()
                    ),
                ];
                for line in lines {
                    self.say(Line::raw(line));
                }
                if let Some(sandbox) = self.status.sandbox.clone() {
                    self.say(Line::raw(format!("sandbox    {sandbox}")));
                }
            }
            "cost" => {
                let usage = self.session_usage + self.turn_usage;
                self.say(Line::raw(format!(
                    "this session: {} input tokens ({} from cache), {} output ({} reasoning)",
                    usage.total_input(),
                    usage.cache_read,
                    usage.output,
                    usage.reasoning
                )));
                match self.cost {
                    Some(cost) => self.say(Line::raw(format!("cost so far: ${cost:.4}"))),
                    None => self.note(
                        "no price for this model: add [prices.\"<model>\"] to config.toml to see the cost",
                    ),
                }
                self.note("`corvid usage` shows tokens and cost per day and model");
            }
            "init" => {
                self.busy_since = Some(Instant::now());
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

    fn flush_reasoning(&mut self, depth: u32) {
        if self.reasoning.is_empty() {
            return;
        }
        let reasoning = std::mem::take(&mut self.reasoning);
        if self.show_reasoning {
            self.output.extend(reasoning_lines(&reasoning, depth));
        } else {
            let count = reasoning.lines().count();
            self.say(Line::styled(
                format!(
                    "{}thought for {} (Ctrl-T shows reasoning)",
                    "  ".repeat(depth as usize),
                    render::plural(count as u64, "line")
                ),
                Style::new()
                    .fg(Color::DarkGray)
                    .add_modifier(Modifier::ITALIC),
            ));
        }
        self.last_reasoning = reasoning;
    }

    /// A `ready` that starts a resynchronisation (this listener fell behind and lost events):
    /// what streams is rebuilt from the replay that follows, and what the scrollback already
    /// shows is not printed again (`last_seq`).
    fn resync(&mut self, ready: &ReadyNotification) {
        self.status.model = ready.model.clone();
        self.status.approval = ready.approval_policy.to_string();
        self.status.sandbox = ready.sandbox.as_ref().map(sandbox_word);
        self.conversation = ready.conversation_id.clone();
        // The replay's deltas carry the whole text so far; the partial copies here go.
        self.streaming.clear();
        self.reasoning.clear();
        self.tool_output.clear();
        if let Some(missed) = ready.missed {
            self.note(format!(
                "(the screen fell {} behind and caught up; some output may be missing above)",
                render::plural(missed, "event")
            ));
        }
    }

    /// A replayed event the screen has already shown: only what lives in the input area
    /// (streaming text, the running tool, a waiting approval) is rebuilt from it.
    fn replayed(&mut self, event: Event) {
        match event.msg {
            EventMsg::TurnStarted { model, .. } => {
                self.turn_model = model;
                self.turn_started = true;
                if self.busy_since.is_none() {
                    self.busy_since = Some(Instant::now());
                }
            }
            EventMsg::TextDelta { delta } if event.depth == 0 => self.streaming.push_str(&delta),
            EventMsg::ReasoningDelta { delta } => self.reasoning.push_str(&delta),
            EventMsg::MessageCompleted { .. } => {
                self.streaming.clear();
                self.reasoning.clear();
            }
            EventMsg::ToolCall(call) => {
                let indent = "  ".repeat(event.depth as usize);
                self.running_tool = Some(format!("{indent}{}", call.summary));
                self.tool_output.clear();
                self.tools.insert(call.call_id, (call.summary, event.depth));
            }
            EventMsg::ToolOutputDelta { text, .. } => self.tool_output_delta(&text),
            EventMsg::ToolResult(result) => {
                self.tools.remove(&result.call_id);
                self.running_tool = None;
                self.tool_output.clear();
            }
            EventMsg::Proposal(proposal) => {
                self.proposal = Some((proposal.proposal_id, proposal.always_scope));
            }
            EventMsg::ProposalClosed { .. } => self.proposal = None,
            _ => {}
        }
    }

    /// Appends a running command's output, keeping only its tail (the input area shows a few
    /// lines; the whole output comes with the tool's result).
    fn tool_output_delta(&mut self, text: &str) {
        self.tool_output.push_str(text);
        if self.tool_output.len() > TOOL_OUTPUT_KEPT {
            let mut cut = self.tool_output.len() - TOOL_OUTPUT_KEPT;
            while !self.tool_output.is_char_boundary(cut) {
                cut += 1;
            }
            self.tool_output.drain(..cut);
        }
    }

    /// One event from the agent.
    pub fn event(&mut self, event: Event) {
        let seen = event.replay && event.seq <= self.last_seq;
        self.last_seq = self.last_seq.max(event.seq);
        if let EventMsg::Ready(ready) = &event.msg
            && (ready.missed.is_some() || (event.replay && !self.conversation.is_empty()))
        {
            self.resync(ready);
            return;
        }
        if seen {
            self.replayed(event);
            return;
        }
        let depth = event.depth;
        let indent = "  ".repeat(depth as usize);
        match event.msg {
            EventMsg::Ready(ready) => {
                self.status.model = ready.model.clone();
                self.status.approval = ready.approval_policy.to_string();
                self.status.sandbox = ready.sandbox.as_ref().map(sandbox_word);
                self.conversation = ready.conversation_id;
                self.say(Line::from(vec![
                    Span::styled("corvid chat", Style::new().add_modifier(Modifier::BOLD)),
                    Span::styled(
                        format!(
                            " · {} · {} · approvals {}",
                            ready.model, ready.cwd, ready.approval_policy
                        ),
                        Style::new().fg(Color::DarkGray),
                    ),
                ]));
                if let Some(sandbox) = &ready.sandbox {
                    let style = match sandbox.mode {
                        SandboxMode::Unavailable => Style::new().fg(Color::Yellow),
                        SandboxMode::Enforced | SandboxMode::Off => {
                            Style::new().fg(Color::DarkGray)
                        }
                    };
                    self.say(Line::styled(sandbox_banner(sandbox), style));
                }
                if !self.plain {
                    self.note("/help for commands · Esc interrupts · Ctrl-C twice or Ctrl-D exits");
                }
            }
            EventMsg::SettingsChanged {
                model,
                approval_policy,
            } => {
                self.status.model = model.clone();
                self.status.approval = approval_policy.to_string();
                self.note(format!("model {model} · approvals {approval_policy}"));
            }
            EventMsg::TurnStarted { model, .. } => {
                self.turn_model = model;
                self.turn_started = true;
                if self.busy_since.is_none() {
                    self.busy_since = Some(Instant::now());
                }
                self.turn_usage = TokenUsage::default();
            }
            EventMsg::ReasoningDelta { delta } => self.reasoning.push_str(&delta),
            EventMsg::TextDelta { delta } if depth == 0 => {
                self.flush_reasoning(depth);
                self.streaming.push_str(&delta);
            }
            EventMsg::TextDelta { .. } => {}
            EventMsg::MessageCompleted { text, .. } => {
                self.flush_reasoning(depth);
                self.streaming.clear();
                if depth == 0 && !text.trim().is_empty() {
                    self.output
                        .extend(render::markdown_within(&text, self.width));
                }
            }
            EventMsg::ToolCall(call) => {
                self.flush_reasoning(depth);
                self.running_tool = Some(format!("{indent}{}", call.summary));
                self.tool_output.clear();
                self.tools.insert(call.call_id, (call.summary, depth));
            }
            EventMsg::ToolOutputDelta { text, .. } => self.tool_output_delta(&text),
            EventMsg::ToolResult(result) => {
                let (summary, depth) = self
                    .tools
                    .remove(&result.call_id)
                    .unwrap_or_else(|| (result.call_id.clone(), depth));
                self.running_tool = None;
                self.tool_output.clear();
                self.say(render::tool_line(
                    &summary,
                    Some((result.ok, &result.output)),
                    depth,
                ));
                self.last_result = Some((summary, result.output));
            }
            EventMsg::Proposal(proposal) => {
                self.flush_reasoning(depth);
                let title = match &proposal.kind {
                    ProposalKind::Edit { path, .. } => format!("edit {path}"),
                    ProposalKind::Write { path, .. } => format!("write {path}"),
                    ProposalKind::Command { command, cwd } => {
                        format!("run `{command}` in {cwd}")
                    }
                    ProposalKind::Other { tool, summary } => format!("{tool}: {summary}"),
                };
                self.say(Line::styled(
                    format!("{indent}? allow: {title}"),
                    Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
                ));
                if let ProposalKind::Edit { diff, .. } | ProposalKind::Write { diff, .. } =
                    &proposal.kind
                {
                    self.output.extend(render::diff(diff));
                }
                // Why a command asks even where the policy would run it: widened or unsandboxed.
                if let Some(notice) = &proposal.sandbox {
                    self.say(Line::styled(
                        format!("{indent}  ! {}", notice.describe()),
                        Style::new().fg(Color::Yellow),
                    ));
                }
                self.proposal = Some((proposal.proposal_id, proposal.always_scope));
            }
            EventMsg::ProposalClosed { .. } => self.proposal = None,
            EventMsg::Todos { todos: items } => {
                self.say(Line::styled(
                    format!("{indent}todo"),
                    Style::new().add_modifier(Modifier::BOLD),
                ));
                for item in items {
                    let mark = match item.status {
                        TodoStatus::Pending => "[ ]",
                        TodoStatus::InProgress => "[~]",
                        TodoStatus::Completed => "[x]",
                    };
                    self.say(Line::raw(format!("{indent}  {mark} {}", item.content)));
                }
            }
            EventMsg::SubagentStarted {
                agent, description, ..
            } => {
                let kind = serde_json::to_value(agent)
                    .ok()
                    .and_then(|value| value.as_str().map(str::to_owned))
                    .unwrap_or_default();
                self.say(Line::styled(
                    format!("{indent}  ⇢ subagent ({kind}): {description}"),
                    Style::new().fg(Color::Magenta),
                ));
            }
            EventMsg::SubagentFinished { ok, summary, .. } => {
                let first: String = summary
                    .lines()
                    .next()
                    .unwrap_or("")
                    .chars()
                    .take(100)
                    .collect();
                let word = if ok { "done" } else { "stopped" };
                self.say(Line::styled(
                    format!("{indent}  ⇠ subagent {word}: {first}"),
                    Style::new().fg(Color::Magenta),
                ));
            }
            EventMsg::Usage(usage) if depth == 0 => self.turn_usage = usage.turn,
            EventMsg::Usage(_) => {}
            // The turn's closing line already says it was interrupted.
            EventMsg::Error(error) if error.class == ErrorClass::Cancelled => {}
            // A send or /init the engine refused never starts a turn: stop waiting for one.
            EventMsg::Error(error)
                if error.class == ErrorClass::InvalidRequest
                    && depth == 0
                    && self.busy_since.is_some()
                    && !self.turn_started =>
            {
                self.busy_since = None;
                self.say(Line::styled(
                    format!("error ({}): {}", class_words(error.class), error.message),
                    Style::new().fg(Color::Red),
                ));
                if let Some(next) = self.queue.pop_front() {
                    self.status.queued = self.queue.len();
                    self.send(next);
                }
            }
            EventMsg::Error(error) => {
                let next = match error.next_action.as_str() {
                    "" => String::new(),
                    next if error.message.ends_with(['.', '!', '?']) => format!(" {next}"),
                    next => format!(". {next}"),
                };
                self.say(Line::styled(
                    format!(
                        "{indent}error ({}): {}{next}",
                        class_words(error.class),
                        error.message
                    ),
                    Style::new().fg(Color::Red),
                ));
            }
            EventMsg::TurnFinished(finished) if depth == 0 => {
                self.flush_reasoning(0);
                if !self.streaming.trim().is_empty() {
                    let text = std::mem::take(&mut self.streaming);
                    self.output
                        .extend(render::markdown_within(&text, self.width));
                }
                self.streaming.clear();
                let seconds = self.busy_since.map_or(0, |at| at.elapsed().as_secs());
                self.busy_since = None;
                self.turn_started = false;
                self.proposal = None;
                self.running_tool = None;
                self.tool_output.clear();
                self.turn_usage = TokenUsage::default();
                self.session_usage += finished.usage;
                self.status.tokens = self.session_usage.total();
                let rate = self
                    .settings
                    .prices
                    .get(&self.turn_model)
                    .or_else(|| self.settings.prices.get(&self.status.model));
                if let Some(rate) = rate {
                    let cost = self.cost.unwrap_or(0.0) + rate.cost(&finished.usage);
                    self.cost = Some(cost);
                    self.status.cost = Some(cost);
                }
                let outcome = match finished.outcome {
                    TurnOutcome::Completed => "done",
                    TurnOutcome::Cancelled => "interrupted",
                    TurnOutcome::Failed => "failed",
                    TurnOutcome::StepLimit => "stopped at the step limit",
                };
                self.hint = None;
                self.note(format!(
                    "─ {outcome} · {} · {} tokens · {seconds}s",
                    render::plural(u64::from(finished.steps), "step"),
                    render::tokens(finished.usage.total())
                ));
                if let Some(next) = self.queue.pop_front() {
                    self.status.queued = self.queue.len();
                    self.send(next);
                }
            }
            EventMsg::TurnFinished(_) => {}
            EventMsg::ConversationList {
                conversations,
                current,
            } => {
                if std::mem::take(&mut self.want_picker) {
                    if conversations.is_empty() {
                        self.hint = Some("no conversations yet".to_owned());
                    } else {
                        self.picker = Some(Picker {
                            items: conversations,
                            selected: 0,
                        });
                    }
                    return;
                }
                for conversation in conversations {
                    let mark = if current.as_ref() == Some(&conversation.id) {
                        "*"
                    } else {
                        " "
                    };
                    self.say(Line::raw(format!(
                        "{mark} {}  {} ({})",
                        conversation.id,
                        title_or_untitled(&conversation.title),
                        render::plural(conversation.message_count, "message")
                    )));
                }
            }
            EventMsg::ConversationSwitched {
                conversation,
                history,
            } => {
                // A replay of the conversation on screen (a resync past a finished turn): its
                // history is already in the scrollback, and printing it again would repeat it.
                if event.replay && conversation.id == self.conversation {
                    return;
                }
                self.conversation = conversation.id.clone();
                self.say(Line::styled(
                    format!(
                        "── {} ({}) ──",
                        title_or_untitled(&conversation.title),
                        conversation.id
                    ),
                    Style::new().fg(Color::Cyan),
                ));
                let mut calls = HashMap::new();
                for entry in history {
                    match entry {
                        HistoryEntry::User { text } => self.you(&text),
                        HistoryEntry::Assistant { text } => self
                            .output
                            .extend(render::markdown_within(&text, self.width)),
                        HistoryEntry::ToolCall(call) => {
                            calls.insert(call.call_id, call.summary);
                        }
                        HistoryEntry::ToolResult(result) => {
                            let summary = calls.remove(&result.call_id).unwrap_or_default();
                            self.say(render::tool_line(
                                &summary,
                                Some((result.ok, &result.output)),
                                0,
                            ));
                        }
                    }
                }
            }
            EventMsg::ConversationDeleted { conversation_id } => {
                self.note(format!("deleted {conversation_id}"))
            }
            EventMsg::ConversationCleared { .. } => self.note("conversation cleared"),
            EventMsg::Warning { message } => self.say(Line::styled(
                format!("warning: {message}"),
                Style::new().fg(Color::Yellow),
            )),
            EventMsg::Undone { turn, files } => {
                self.say(Line::raw(format!("undid turn {turn}:")));
                for file in files {
                    self.say(Line::raw(
                        format!("  {:?} {}", file.change, file.path).to_lowercase(),
                    ));
                }
            }
            EventMsg::Diff { turns } if turns.is_empty() => {
                self.note("no changes by the agent in this conversation")
            }
            EventMsg::Diff { turns } => {
                for turn in turns {
                    self.say(Line::styled(
                        format!("── turn {} ──", turn.turn),
                        Style::new().fg(Color::Cyan),
                    ));
                    self.output.extend(render::diff(&turn.diff));
                }
            }
            EventMsg::Compacted {
                tokens_before,
                tokens_after,
                context_window,
                messages_summarized,
            } => self.note(format!(
                "compacted: {} summarised · about {} → {} tokens of {}",
                render::plural(u64::from(messages_summarized), "older message"),
                render::tokens(tokens_before),
                render::tokens(tokens_after),
                render::tokens(context_window)
            )),
            EventMsg::ToolServers { servers } => self.tool_servers(servers),
            EventMsg::ShutdownComplete => self.quit = true,
        }
    }

    /// The answer to `/mcp`: a line per server, its tools under it.
    fn tool_servers(&mut self, servers: Vec<ToolServer>) {
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

    /// The input area: what streams, the proposal prompt, queued messages, the editor, hints
    /// and the status line, for a terminal `width` wide, in at most `height` rows, and the
    /// cursor's column and row in it. As many rows as it needs: the screen sizes the area to
    /// them. When they do not fit, the status line stays, then the input around the cursor,
    /// then the newest of what is above it.
    pub fn view(&self, width: u16, height: u16) -> (Vec<Line<'static>>, (u16, u16)) {
        let dim = Style::new().fg(Color::DarkGray);
        let above = render::wrap(&self.view_above(width), width);
        let (input, (cursor_row, cursor_column)) = self.view_input(width);
        let hint = self.hint.clone().unwrap_or_default();
        let mut below = render::wrap(&[Line::styled(hint, dim)], width);
        // A long hint (many completions) stays a hint, not a page.
        below.truncate(HINT_ROWS);
        let mut status = self.status.clone();
        status.tokens = self.session_usage.total() + self.turn_usage.total();
        status.busy = self
            .busy_since
            .map(|at| (at.elapsed().as_secs(), self.frame));
        below.push(render::status_line(&status, width));
        let height = usize::from(height.max(1));
        // The hint's rows go first, then the status line, so the input always has a row.
        while below.len() + 1 > height && !below.is_empty() {
            below.remove(0);
        }
        let room = height - below.len();
        let input_start = (cursor_row + 1).saturating_sub(room);
        let shown_input = input.len().saturating_sub(input_start).min(room);
        let above_room = room - shown_input;
        let above_start = above.len().saturating_sub(above_room);
        let above_shown = above.len() - above_start;
        let mut lines: Vec<Line<'static>> = above.into_iter().skip(above_start).collect();
        lines.extend(input.into_iter().skip(input_start).take(shown_input));
        lines.extend(below);
        let row = above_shown + cursor_row - input_start;
        let cursor = (
            u16::try_from(cursor_column).unwrap_or(0),
            u16::try_from(row).unwrap_or(0),
        );
        (lines, cursor)
    }

    /// What stands above the input: the streaming answer, the running tool and its
    /// output, the approval prompt, the `/resume` picker, the queued messages.
    fn view_above(&self, width: u16) -> Vec<Line<'static>> {
        let dim = Style::new().fg(Color::DarkGray);
        let mut lines: Vec<Line<'static>> = Vec::new();
        if !self.streaming.is_empty() {
            // The answer so far, rendered as it will be kept; `view` shows its newest rows
            // that fit, and the whole of it goes into the scrollback when it is complete.
            lines.extend(render::wrap(
                &render::markdown_within(&self.streaming, width),
                width,
            ));
        } else if !self.reasoning.is_empty() {
            lines.push(Line::styled(
                "thinking…",
                dim.add_modifier(Modifier::ITALIC),
            ));
        }
        // While it waits for approval, the call is the question above: no second line for it.
        if let Some(tool) = self
            .running_tool
            .as_ref()
            .filter(|_| self.proposal.is_none())
        {
            lines.push(Line::styled(format!("• {tool}"), dim));
            let tail: Vec<&str> = self.tool_output.lines().collect();
            let keep = tail.len().saturating_sub(TOOL_OUTPUT_LINES);
            for line in &tail[keep..] {
                let line: String = line.chars().take(usize::from(width).max(8) - 4).collect();
                lines.push(Line::styled(
                    format!("    {line}"),
                    dim.add_modifier(Modifier::DIM),
                ));
            }
        }
        if self.proposal.is_some() {
            lines.push(Line::styled(
                "1 yes · 2 always · 3 no · or type why, Enter · Esc cancels",
                Style::new().fg(Color::Yellow),
            ));
        }
        if let Some(picker) = &self.picker {
            lines.push(Line::styled(
                "resume which conversation? (↑/↓, Enter, Esc)",
                dim,
            ));
            let first = picker.selected.saturating_sub(4);
            for (index, item) in picker.items.iter().enumerate().skip(first).take(5) {
                let style = if index == picker.selected {
                    Style::new().add_modifier(Modifier::REVERSED)
                } else {
                    Style::new()
                };
                lines.push(Line::styled(
                    format!(
                        "{} {} · {}",
                        item.id,
                        title_or_untitled(&item.title),
                        render::plural(item.message_count, "message")
                    ),
                    style,
                ));
            }
        }
        for queued in &self.queue {
            let first = queued.lines().next().unwrap_or("");
            lines.push(Line::styled(format!("queued: {first}"), dim));
        }
        lines
    }

    /// The input's rows — each line after its prompt, broken at the width so that every
    /// character is shown — and the cursor's row and column among them.
    fn view_input(&self, width: u16) -> (Vec<Line<'static>>, (usize, usize)) {
        let prompt = Style::new().fg(Color::Cyan);
        if let Some(search) = &self.search {
            let found = search
                .found
                .and_then(|index| self.recall.entries.get(index))
                .map_or("", String::as_str);
            let label = format!("search `{}`: ", search.query);
            let column = label.width().min(usize::from(width.saturating_sub(1)));
            let line = Line::from(vec![
                Span::styled(label, prompt),
                Span::raw(found.lines().next().unwrap_or("").to_owned()),
            ]);
            return (render::wrap(&[line], width), (0, column));
        }
        // Two columns of prompt; a terminal narrower than that still gets one for the text.
        let room = usize::from(width).saturating_sub(2).max(1);
        let (cursor_line, cursor_char) = self.editor.cursor_position();
        let mut rows = Vec::new();
        let mut cursor = (0, 2);
        for (index, line) in self.editor.text().split('\n').enumerate() {
            let chars: Vec<char> = line.chars().collect();
            let (pieces, at) =
                break_line(&chars, room, (index == cursor_line).then_some(cursor_char));
            if let Some((row, column)) = at {
                cursor = (rows.len() + row, column + 2);
            }
            for (number, piece) in pieces.into_iter().enumerate() {
                let prefix = if index == 0 && number == 0 {
                    "› "
                } else {
                    "  "
                };
                rows.push(Line::from(vec![
                    Span::styled(prefix, prompt),
                    Span::raw(piece),
                ]));
            }
        }
        let column = cursor.1.min(usize::from(width.saturating_sub(1)));
        (rows, (cursor.0, column))
    }
}

/// One input line broken into pieces at most `room` columns wide, and where the character
/// `cursor` (an index, may be the line's end) is among them. A line whose end is the cursor
/// and exactly fills its last piece gets an empty piece for the cursor to stand on.
fn break_line(
    chars: &[char],
    room: usize,
    cursor: Option<usize>,
) -> (Vec<String>, Option<(usize, usize)>) {
    let mut pieces = vec![String::new()];
    let mut used = 0;
    let mut at = None;
    for (index, c) in chars.iter().enumerate() {
        let w = unicode_width::UnicodeWidthChar::width(*c).unwrap_or(0);
        if used + w > room {
            pieces.push(String::new());
            used = 0;
        }
        if cursor == Some(index) {
            at = Some((pieces.len() - 1, used));
        }
        if let Some(piece) = pieces.last_mut() {
            piece.push(*c);
        }
        used += w;
    }
    if cursor.is_some() && at.is_none() {
        if used >= room {
            pieces.push(String::new());
            used = 0;
        }
        at = Some((pieces.len() - 1, used));
    }
    (pieces, at)
}

fn move_line(editor: &mut Editor, direction: i32) {
    let (_, column) = editor.cursor_position();
    if direction < 0 {
        editor.home();
        editor.left();
        editor.home();
    } else {
        editor.end();
        editor.right();
    }
    for _ in 0..column {
        let before = editor.cursor_position().0;
        editor.right();
        if editor.cursor_position().0 != before {
            editor.left();
            break;
        }
    }
}

fn common_prefix(items: &[String]) -> String {
    let Some(first) = items.first() else {
        return String::new();
    };
    let mut prefix = first.clone();
    for item in items {
        while !item.starts_with(&prefix) {
            prefix.pop();
        }
    }
    prefix
}

fn title_or_untitled(title: &str) -> &str {
    if title.is_empty() {
        "(untitled)"
    } else {
        title
    }
}

fn reasoning_lines(reasoning: &str, depth: u32) -> Vec<Line<'static>> {
    let indent = "  ".repeat(depth as usize);
    reasoning
        .lines()
        .map(|line| {
            Line::styled(
                format!("{indent}┆ {line}"),
                Style::new()
                    .fg(Color::DarkGray)
                    .add_modifier(Modifier::ITALIC),
            )
        })
        .collect()
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

/// An error class as people say it.
pub fn class_words(class: ErrorClass) -> &'static str {
    match class {
        ErrorClass::NotConfigured => "not configured",
        ErrorClass::AuthenticationRejected => "sign-in rejected",
        ErrorClass::RateLimited => "rate limited",
        ErrorClass::ServerError => "provider failed",
        ErrorClass::Network => "network",
        ErrorClass::UnexpectedResponse => "unexpected answer",
        ErrorClass::Tool => "tool failed",
        ErrorClass::Cancelled => "cancelled",
        ErrorClass::StepLimit => "step limit",
        ErrorClass::InvalidRequest => "not possible now",
        ErrorClass::Internal => "internal",
    }
}

/// The column `/help` writes descriptions at.
const HELP_INDENT: u16 = 11;

/// Rows a hint may take under the input.
const HINT_ROWS: usize = 3;

/// Lines of a running command's output shown under its line.
const TOOL_OUTPUT_LINES: usize = 3;
/// Bytes of a running command's output kept for them.
const TOOL_OUTPUT_KEPT: usize = 4096;

/// The status line's word for the sandbox.
fn sandbox_word(sandbox: &SandboxState) -> String {
    match sandbox.mode {
        SandboxMode::Enforced => "on",
        SandboxMode::Unavailable => "unavailable",
        SandboxMode::Off => "off",
    }
    .to_owned()
}

/// The start-up line about the sandbox: its layers, or plainly why there are none.
pub fn sandbox_banner(sandbox: &SandboxState) -> String {
    match sandbox.mode {
        SandboxMode::Unavailable => format!(
            "sandbox {}. Turn it off explicitly with --sandbox off to stop the asking.",
            sandbox.summary
        ),
        SandboxMode::Enforced | SandboxMode::Off => format!("sandbox: {}", sandbox.summary),
    }
}

#[cfg(test)]
mod tests;

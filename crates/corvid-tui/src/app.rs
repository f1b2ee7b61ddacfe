//! The chat's state machine: agent events and keys in; lines for the scrollback, the input
//! area's content and operations for the agent out. No terminal here, so every behaviour —
//! exits, queueing, approvals, slash commands — is testable with plain values.
//!
//! One `impl App` per concern: `events` (the agent's events), `keys`, `commands` (slash
//! commands and sending), `approval`, `picker` (`/resume`), `rewind` (`/rewind`, `/fork`), `search` (Ctrl-R), `usage` (tokens
//! and cost), `view` (the input area) and `words` (how the chat says things).

mod approval;
mod attach;
mod commands;
mod events;
mod keys;
mod picker;
mod replies;
mod rewind;
mod search;
mod usage;
mod view;
mod words;

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use corvid_protocol::{ConversationSummary, HistoryEntry, Op, TokenUsage};
use ratatui::style::{Color, Style};
use ratatui::text::Line;

use crate::AgentLink;
use crate::editor::{Editor, Recall};
use crate::render::Status;

pub use commands::OWN_COMMANDS;
pub use words::{class_words, sandbox_banner};

use approval::Proposal;
use picker::Picker;
use search::Search;

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
    /// Model names whose provider has no key or sign-in yet: `/model` lists them apart.
    pub without_key: Vec<String>,
    /// The conversation the chat opened on, when it already has messages: said and shown
    /// after the banner, so the model's context is on the screen too.
    pub resumed: Option<(ConversationSummary, Vec<HistoryEntry>)>,
    /// The project's skills and custom commands at start-up (`/<name> …`); the link's live
    /// list replaces them when it has one.
    pub commands: Vec<corvid_protocol::commands::ProjectCommand>,
}

/// The running turn as the input area shows it until its pieces go into the scrollback.
#[derive(Default)]
struct TurnView {
    /// When the chat started waiting for a turn (a send, `/init`); `None` when idle.
    since: Option<Instant>,
    /// Whether the engine announced the turn `since` waits for.
    started: bool,
    /// The model answering the running turn (as the engine names it).
    model: String,
    /// The answer streaming so far.
    streaming: String,
    /// The reasoning streaming so far (folded into one line when the answer starts).
    reasoning: String,
    /// Calls started and not finished: their summary and depth, by call id.
    tools: HashMap<String, (String, u32)>,
    /// The running call's line.
    running_tool: Option<String>,
    /// The running command's output so far (its tail), shown dimmed under its line.
    tool_output: String,
    /// A call the model is still writing: its tool and the bytes of arguments so far.
    preparing: Option<(String, u64)>,
}

/// Tokens spent, and what they cost where the models have prices.
#[derive(Default)]
struct Usage {
    /// The running turn's usage so far.
    turn: TokenUsage,
    /// The finished turns' usage in this session.
    session: TokenUsage,
    /// The finished turns' cost so far, when the models used have prices.
    cost: Option<f64>,
    /// The running turn's cost so far, as its latest usage event priced it.
    turn_cost: Option<f64>,
}

/// What takes over the input area for a while: the `/resume` picker, the Ctrl-R search, a
/// proposal waiting for an answer.
#[derive(Default)]
pub(crate) struct Overlay {
    picker: Option<Picker>,
    /// The `/resume` request whose reply (the conversation list) opens the picker.
    picker_request: Option<String>,
    /// The `/rewind` picker of the user's earlier messages.
    messages: Option<rewind::MessagePicker>,
    search: Option<Search>,
    pub(crate) proposal: Option<Proposal>,
}

/// The chat's whole state.
pub struct App {
    link: Arc<dyn AgentLink>,
    settings: Settings,
    pub(crate) editor: Editor,
    recall: Recall,
    /// Lines waiting to go into the scrollback.
    pub output: Vec<Line<'static>>,
    turn: TurnView,
    usage: Usage,
    pub(crate) overlay: Overlay,
    /// The reasoning of the last turn, for Ctrl-T.
    last_reasoning: String,
    show_reasoning: bool,
    /// The last tool's summary and output, for Ctrl-O.
    last_result: Option<(String, String)>,
    /// Messages typed during a turn, with the images attached to each.
    queue: VecDeque<(String, Vec<attach::Attachment>)>,
    /// Images waiting to go with the next message.
    attachments: Vec<attach::Attachment>,
    /// The images of the message sent last, until its turn starts: a refusal gives them back.
    sent_images: Vec<attach::Attachment>,
    interrupt_armed: Option<Instant>,
    pub(crate) hint: Option<String>,
    /// The highest `seq` applied: a resync's replay repeats what is at or below it, and that
    /// is already on the screen.
    last_seq: u64,
    status: Status,
    conversation: String,
    /// Set when another conversation's session starts its replay (after `/new`, `/open`,
    /// `/resume`): its history is news, printed once.
    opening: bool,
    frame: usize,
    /// Set when the chat should end; the loop then restores the terminal and exits.
    pub quit: bool,
    /// Lines from stdin rather than keys: the key hints would be wrong.
    pub(crate) plain: bool,
    /// The terminal's width, for what needs it before wrapping (tables).
    width: u16,
    /// Whether the terminal has focus, as its focus reports say (true until one says not).
    focused: bool,
    /// Something that wants the user: the terminal rings and notifies (OSC 9) with it at the
    /// next frame. An approval always does; a turn's end only while the terminal is unfocused.
    pub attention: Option<String>,
}

impl App {
    /// The terminal gained or lost focus.
    pub fn set_focused(&mut self, focused: bool) {
        self.focused = focused;
    }

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
            turn: TurnView::default(),
            usage: Usage::default(),
            overlay: Overlay::default(),
            last_reasoning: String::new(),
            show_reasoning: false,
            last_result: None,
            queue: VecDeque::new(),
            attachments: Vec::new(),
            sent_images: Vec::new(),
            interrupt_armed: None,
            hint: None,
            last_seq: 0,
            status: Status::default(),
            conversation: String::new(),
            opening: false,
            frame: 0,
            quit: false,
            plain: false,
            width: u16::MAX,
            focused: true,
            attention: None,
        }
    }

    /// The terminal is `width` columns wide (tables are fitted to it).
    pub fn set_width(&mut self, width: u16) {
        self.width = width.max(1);
    }

    /// The input ended (plain mode's stdin closed): nobody is left to answer a waiting
    /// proposal, so the turn stops instead of waiting for ever.
    pub fn input_ended(&mut self) {
        if self.overlay.proposal.is_some() {
            self.cancel_turn();
        }
    }

    pub fn has_queue(&self) -> bool {
        !self.queue.is_empty()
    }

    pub fn busy(&self) -> bool {
        self.turn.since.is_some()
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

    /// A bracketed paste: one piece of text, newlines kept, never sent by itself. A path to
    /// an image file is attached instead (`[image: name.png]`).
    pub fn paste(&mut self, text: &str) {
        if self.paste_image_path(text) {
            return;
        }
        self.editor
            .insert(&text.replace("\r\n", "\n").replace('\r', "\n"));
    }
}

#[cfg(test)]
mod tests;

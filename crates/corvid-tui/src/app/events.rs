//! The agent's events: what goes into the scrollback, and what the input area shows while a
//! turn runs. A resynchronisation's replay rebuilds the input area without printing again.

use std::time::Instant;

use corvid_protocol::{
    ErrorClass, ErrorNotification, Event, EventMsg, ReadyNotification, SandboxMode, TodoStatus,
    TokenUsage, TurnFinishedNotification, TurnOutcome,
};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use super::App;
use super::words::{class_words, sandbox_banner, sandbox_word};
use crate::render;

/// Bytes of a running command's output kept for the lines under it.
const TOOL_OUTPUT_KEPT: usize = 4096;

impl App {
    /// One event from the agent.
    pub fn event(&mut self, event: Event) {
        if let EventMsg::Ready(ready) = &event.msg
            && event.replay
            && !self.conversation.is_empty()
            && ready.conversation_id != self.conversation
        {
            // Another conversation's session (the chat opened it): its own numbering starts
            // here, and its replay is news.
            self.last_seq = 0;
            self.opening = true;
            self.resync(ready);
            return;
        }
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
            EventMsg::Ready(ready) => self.ready(ready),
            EventMsg::SettingsChanged {
                model,
                approval_policy,
            } => {
                self.status.model = model.clone();
                self.status.approval = approval_policy.to_string();
                self.note(format!("model {model} · approvals {approval_policy}"));
            }
            EventMsg::TurnStarted { model, .. } => {
                self.turn.model = model;
                self.turn.started = true;
                self.sent_images.clear();
                if self.turn.since.is_none() {
                    self.turn.since = Some(Instant::now());
                }
                self.usage.turn = TokenUsage::default();
            }
            EventMsg::ReasoningDelta { delta } => self.turn.reasoning.push_str(&delta),
            EventMsg::TextDelta { delta } if depth == 0 => {
                self.flush_reasoning(depth);
                self.turn.streaming.push_str(&delta);
            }
            EventMsg::TextDelta { .. } => {}
            EventMsg::MessageCompleted { text, .. } => {
                self.flush_reasoning(depth);
                self.turn.streaming.clear();
                if depth == 0 && !text.trim().is_empty() {
                    self.output
                        .extend(render::markdown_within(&text, self.width));
                }
            }
            EventMsg::ToolCall(call) => {
                self.flush_reasoning(depth);
                self.turn.preparing = None;
                self.turn.running_tool = Some(format!("{indent}{}", call.summary));
                self.turn.tool_output.clear();
                self.turn.tools.insert(call.call_id, (call.summary, depth));
            }
            EventMsg::ToolCallProgress { tool, bytes, .. } if depth == 0 => {
                self.turn.preparing = Some((tool, bytes));
            }
            EventMsg::ToolCallProgress { .. } => {}
            EventMsg::ToolOutputDelta { text, .. } => self.tool_output_delta(&text),
            EventMsg::ToolResult(result) => {
                let (summary, depth) = self
                    .turn
                    .tools
                    .remove(&result.call_id)
                    .unwrap_or_else(|| (result.call_id.clone(), depth));
                self.turn.running_tool = None;
                self.turn.tool_output.clear();
                self.say(render::tool_line(
                    &summary,
                    Some((result.ok, &result.output)),
                    depth,
                ));
                self.last_result = Some((summary, result.output));
            }
            EventMsg::ProposalClosed { .. } => self.overlay.proposal = None,
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
                agent,
                description,
                name,
                ..
            } => {
                let kind = name.clone().unwrap_or_else(|| {
                    serde_json::to_value(agent)
                        .ok()
                        .and_then(|value| value.as_str().map(str::to_owned))
                        .unwrap_or_default()
                });
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
            EventMsg::Usage(usage) if depth == 0 => self.step_usage(usage),
            EventMsg::Usage(_) => {}
            EventMsg::Error(error) => self.error(error, depth),
            EventMsg::TurnFinished(finished) if depth == 0 => self.turn_finished(finished),
            EventMsg::TurnFinished(_) => {}
            EventMsg::ConversationOpened {
                conversation,
                history,
            } => {
                // A replay of the conversation on screen (a resync past a finished turn): its
                // history is already in the scrollback, and printing it again would repeat it.
                if event.replay && conversation.id == self.conversation && !self.opening {
                    return;
                }
                self.opening = false;
                self.conversation_switched(conversation, history);
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
            EventMsg::ShutdownComplete => self.quit = true,
        }
    }

    /// The session is ready: the banner, the sandbox, the key hints.
    fn ready(&mut self, ready: ReadyNotification) {
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
                SandboxMode::Enforced | SandboxMode::Off => Style::new().fg(Color::DarkGray),
            };
            self.say(Line::styled(sandbox_banner(sandbox), style));
        }
        if !self.plain {
            self.note("/help for commands · Esc interrupts · Ctrl-C twice or Ctrl-D exits");
        }
        if let Some((conversation, history)) = self.settings.resumed.take() {
            self.note(format!(
                "resumed the project's last conversation ({}): /new starts a new one, /resume picks another",
                render::plural(conversation.message_count, "message")
            ));
            self.conversation_switched(conversation, history);
        }
    }

    pub(super) fn error(&mut self, error: ErrorNotification, depth: u32) {
        // The turn's closing line already says it was interrupted.
        if error.class == ErrorClass::Cancelled {
            return;
        }
        // A send or /init the engine refused never starts a turn: stop waiting for one.
        if error.class == ErrorClass::InvalidRequest
            && depth == 0
            && self.turn.since.is_some()
            && !self.turn.started
        {
            self.turn.since = None;
            self.say(Line::styled(
                format!("error ({}): {}", class_words(error.class), error.message),
                Style::new().fg(Color::Red),
            ));
            self.restore_sent_images();
            self.send_queued();
            return;
        }
        let indent = "  ".repeat(depth as usize);
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

    /// The main turn ended: what streamed goes into the scrollback, the usage is added, the
    /// closing line says how it went, and the next queued message goes.
    fn turn_finished(&mut self, finished: TurnFinishedNotification) {
        self.flush_reasoning(0);
        if !self.turn.streaming.trim().is_empty() {
            let text = std::mem::take(&mut self.turn.streaming);
            self.output
                .extend(render::markdown_within(&text, self.width));
        }
        self.turn.streaming.clear();
        let seconds = self.turn.since.map_or(0, |at| at.elapsed().as_secs());
        self.turn.since = None;
        self.turn.started = false;
        self.overlay.proposal = None;
        self.turn.running_tool = None;
        self.turn.tool_output.clear();
        self.turn.preparing = None;
        self.add_turn_usage(finished.usage);
        let outcome = match finished.outcome {
            TurnOutcome::Completed => "done",
            TurnOutcome::Cancelled => "interrupted",
            TurnOutcome::Failed => "failed",
            TurnOutcome::StepLimit => "stopped at the step limit",
        };
        if !self.focused {
            self.attention = Some(format!("corvid: turn {outcome}"));
        }
        self.hint = None;
        self.note(format!(
            "─ {outcome} · {} · {} tokens · {seconds}s",
            render::plural(u64::from(finished.steps), "step"),
            render::tokens(finished.usage.total())
        ));
        self.send_queued();
    }

    pub(super) fn flush_reasoning(&mut self, depth: u32) {
        if self.turn.reasoning.is_empty() {
            return;
        }
        let reasoning = std::mem::take(&mut self.turn.reasoning);
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
        self.turn.streaming.clear();
        self.turn.reasoning.clear();
        self.turn.tool_output.clear();
        self.turn.preparing = None;
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
                self.turn.model = model;
                self.turn.started = true;
                self.sent_images.clear();
                if self.turn.since.is_none() {
                    self.turn.since = Some(Instant::now());
                }
            }
            EventMsg::TextDelta { delta } if event.depth == 0 => {
                self.turn.streaming.push_str(&delta)
            }
            EventMsg::ReasoningDelta { delta } => self.turn.reasoning.push_str(&delta),
            EventMsg::MessageCompleted { .. } => {
                self.turn.streaming.clear();
                self.turn.reasoning.clear();
            }
            EventMsg::ToolCallProgress { tool, bytes, .. } if event.depth == 0 => {
                self.turn.preparing = Some((tool, bytes));
            }
            EventMsg::ToolCall(call) => {
                self.turn.preparing = None;
                let indent = "  ".repeat(event.depth as usize);
                self.turn.running_tool = Some(format!("{indent}{}", call.summary));
                self.turn.tool_output.clear();
                self.turn
                    .tools
                    .insert(call.call_id, (call.summary, event.depth));
            }
            EventMsg::ToolOutputDelta { text, .. } => self.tool_output_delta(&text),
            EventMsg::ToolResult(result) => {
                self.turn.tools.remove(&result.call_id);
                self.turn.running_tool = None;
                self.turn.tool_output.clear();
            }
            EventMsg::ProposalClosed { .. } => self.overlay.proposal = None,
            _ => {}
        }
    }

    /// Appends a running command's output, keeping only its tail (the input area shows a few
    /// lines; the whole output comes with the tool's result).
    fn tool_output_delta(&mut self, text: &str) {
        let output = &mut self.turn.tool_output;
        output.push_str(text);
        if output.len() > TOOL_OUTPUT_KEPT {
            let mut cut = output.len() - TOOL_OUTPUT_KEPT;
            while !output.is_char_boundary(cut) {
                cut += 1;
            }
            output.drain(..cut);
        }
    }
}

pub(super) fn reasoning_lines(reasoning: &str, depth: u32) -> Vec<Line<'static>> {
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

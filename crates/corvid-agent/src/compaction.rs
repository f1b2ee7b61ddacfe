//! Context compaction: when a conversation's next request nears the model's context window,
//! its older turns are replaced by a summary the model writes (through the same `ModelClient`),
//! and the recent turns stay word for word.
//!
//! - Sizes are estimated as JSON bytes / 4, the usual rule of thumb, for the request as it would
//!   be sent (system prompt, messages and tool definitions).
//! - The window is, in order: `AgentConfig::context_window` (`--context-window`), the
//!   `ModelClient`'s window for the model of this step (the binary answers from config.toml
//!   and the catalog), [`DEFAULT_CONTEXT_WINDOW`].
//! - Compaction starts at [`TRIGGER_PERCENT`] of the window, before any model step of the main
//!   agent (so also in the middle of a long turn), and on `/compact`.
//! - The cut is always at the start of a turn (a user message that is not tool results), so a
//!   tool call is never separated from its result; the running turn is never summarised.
//! - The summary request carries the older turns as a transcript with long tool output cut;
//!   a transcript too large for one request is summarised in pieces, each piece carrying the
//!   summary so far. The user's first request is kept verbatim beside the summary, and the files
//!   changed are listed from the tool calls, so neither depends on the model remembering them.
//! - The compacted history (summary + recent turns) replaces the stored messages, so a resumed
//!   conversation stays compacted.

use std::collections::BTreeSet;

use corvid_protocol::{ErrorClass, ErrorNotification, EventMsg, ReplyOk};
use corvid_wire::model::{ChatRequest, Message, Part, Role, StreamEvent, Tool, ToolResultContent};
use futures_util::StreamExt;
use tokio::sync::watch;

use crate::model::ModelClient;
use crate::scope::Scope;
use crate::session::Shared;

/// The window used when neither the configuration nor the catalog gives one.
pub const DEFAULT_CONTEXT_WINDOW: u64 = 128_000;
/// Compact when a request reaches this share of the window.
const TRIGGER_PERCENT: u64 = 80;
/// Recent turns kept verbatim, up to this share of the window.
const RECENT_PERCENT: u64 = 30;
/// The largest share of the window one summary request's transcript may take.
const PIECE_PERCENT: u64 = 30;
/// Each tool result is cut to this many bytes in the transcript.
const TOOL_OUTPUT_BYTES: usize = 2_000;
/// The user's first request is kept verbatim up to this many bytes.
const FIRST_REQUEST_BYTES: usize = 4_000;

const SUMMARY_HEADER: &str = "[corvid: summary of the earlier part of this conversation, written when it was compacted. The recent messages follow it unchanged.]";
const FIRST_REQUEST_HEADING: &str = "## The user's first request\n";
const SUMMARY_HEADING: &str = "\n## Summary\n";
const ACKNOWLEDGEMENT: &str =
    "Understood. I have the summary of the earlier conversation and will continue from it.";

const SUMMARY_SYSTEM: &str = "You compact a coding agent's conversation so the agent can continue the work with less context. Write a concise summary in markdown with these sections: Task (what the user asked for, in their words where short, including later changes of plan), Decisions (what was decided and why), Files (each file read, created or changed, and what changed), Open todos (what is left, unfinished steps, failing checks), State (where the work stands now, facts the agent needs such as commands, errors, names). Keep exact names, paths, commands and error messages. Do not invent anything. Answer with the summary only.";

/// A request's estimated size in tokens.
pub(crate) fn estimate_tokens(system: &[String], messages: &[Message], tools: &[Tool]) -> u64 {
    let bytes = system.iter().map(|text| text.len() + 8).sum::<usize>()
        + serde_json::to_vec(messages).map_or(0, |json| json.len())
        + serde_json::to_vec(tools).map_or(0, |json| json.len());
    bytes as u64 / 4
}

/// Why a compaction did not happen.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CompactError {
    #[error("there is nothing old enough to summarise: only the latest turn is in the context")]
    NothingToCompact,
    #[error("the summary request failed: {0}")]
    Model(String),
    #[error("cancelled")]
    Cancelled,
}

/// A compacted history.
pub(crate) struct Compacted {
    pub(crate) history: Vec<Message>,
    /// How many messages the summary replaced.
    pub(crate) summarized: usize,
}

/// The size of a compacted history and what it replaced, for the `compacted` event.
pub(crate) struct Sizes {
    pub(crate) before: u64,
    pub(crate) after: u64,
}

/// Whether a request of `tokens` should be compacted first.
pub(crate) fn needs_compaction(tokens: u64, window: u64) -> bool {
    tokens.saturating_mul(100) >= window.saturating_mul(TRIGGER_PERCENT)
}

/// Whether `message` starts a turn: a user message that is not (only) tool results.
fn starts_turn(message: &Message) -> bool {
    message.role == Role::User
        && !message
            .parts
            .iter()
            .any(|part| matches!(part, Part::ToolResult(_)))
}

pub(crate) fn is_summary(message: &Message) -> bool {
    message.role == Role::User
        && message
            .parts
            .iter()
            .any(|part| matches!(part, Part::Text { text } if text.starts_with(SUMMARY_HEADER)))
}

/// Where the verbatim part begins: the oldest turn start such that the turns from it on fit in
/// `keep_tokens`, but never after `protected` (the running turn stays). `None` when no turn
/// before it could be summarised.
fn split_point(history: &[Message], protected: usize, keep_tokens: u64) -> Option<usize> {
    let protected = protected.min(history.len());
    let starts: Vec<usize> = (0..protected)
        .filter(|index| starts_turn(&history[*index]))
        .collect();
    // The latest turn start at or before `protected` whose tail fits; at least `protected`.
    let mut split = if protected < history.len() && starts_turn(&history[protected]) {
        protected
    } else {
        *starts.last()?
    };
    for start in starts.iter().rev() {
        if *start >= split {
            continue;
        }
        if estimate_tokens(&[], &history[*start..], &[]) > keep_tokens {
            break;
        }
        split = *start;
    }
    // Something before the split must be a real turn (not only an earlier summary).
    history[..split]
        .iter()
        .any(|message| starts_turn(message) && !is_summary(message))
        .then_some(split)
}

/// Summarises `history[..split]` and returns the new history; the turn starting at or before
/// `protected` and the recent turns that fit in `keep_tokens` stay verbatim.
pub(crate) async fn compact(
    model: &dyn ModelClient,
    model_name: &str,
    history: &[Message],
    protected: usize,
    keep_tokens: u64,
    window: u64,
    cancel: Option<watch::Receiver<bool>>,
) -> Result<Compacted, CompactError> {
    let split =
        split_point(history, protected, keep_tokens).ok_or(CompactError::NothingToCompact)?;
    let (old, kept) = history.split_at(split);
    let first_request = first_request(old);
    let piece_bytes = (window.saturating_mul(PIECE_PERCENT) / 100).saturating_mul(4) as usize;
    let mut summary = String::new();
    for piece in pieces(&transcript(old), piece_bytes.max(1_024)) {
        let request = summary_request(model_name, &first_request, &summary, &piece);
        summary = ask(model, request, cancel.clone()).await?;
    }
    let files = changed_files(old);
    let mut text = format!(
        "{SUMMARY_HEADER}\n\n{FIRST_REQUEST_HEADING}{first_request}\n{SUMMARY_HEADING}{}\n",
        summary.trim()
    );
    if !files.is_empty() {
        text.push_str("\n## Files changed before this point\n");
        for file in &files {
            text.push_str(&format!("- {file}\n"));
        }
    }
    let mut compacted = vec![
        Message::text(Role::User, text),
        Message::text(Role::Assistant, ACKNOWLEDGEMENT),
    ];
    compacted.extend_from_slice(kept);
    Ok(Compacted {
        history: compacted,
        summarized: old.len(),
    })
}

/// The user's first request in `old`: carried over from an earlier summary, or the first
/// user message's text.
fn first_request(old: &[Message]) -> String {
    let Some(first) = old.first().map(crate::history::text_of) else {
        return String::new();
    };
    if first.starts_with(SUMMARY_HEADER)
        && let Some(start) = first.find(FIRST_REQUEST_HEADING)
    {
        let rest = &first[start + FIRST_REQUEST_HEADING.len()..];
        let end = rest.find(SUMMARY_HEADING).unwrap_or(rest.len());
        return rest[..end].trim().to_owned();
    }
    cut(&first, FIRST_REQUEST_BYTES)
}

/// The older messages as a plain transcript, one entry per part, tool output cut.
fn transcript(messages: &[Message]) -> Vec<String> {
    let mut entries = Vec::new();
    for message in messages {
        for part in &message.parts {
            let entry = match (message.role, part) {
                (Role::User, Part::Text { text }) => format!("USER: {text}"),
                (Role::Assistant, Part::Text { text }) => format!("ASSISTANT: {text}"),
                (_, Part::ToolCall(call)) => format!(
                    "ASSISTANT CALLED `{}` WITH {}",
                    call.name,
                    cut(&call.arguments, TOOL_OUTPUT_BYTES)
                ),
                (_, Part::ToolResult(result)) => {
                    let text: String = result
                        .content
                        .iter()
                        .map(|content| match content {
                            ToolResultContent::Text { text } => text.as_str(),
                            ToolResultContent::Image(_) => "[image]",
                        })
                        .collect::<Vec<_>>()
                        .join("\n");
                    let label = if result.is_error { "FAILED" } else { "RESULT" };
                    format!(
                        "TOOL {label} ({}): {}",
                        result.name.as_deref().unwrap_or("tool"),
                        cut(&text, TOOL_OUTPUT_BYTES)
                    )
                }
                (_, Part::Image(_)) => "USER: [an image]".to_owned(),
                (_, Part::System { text }) => format!("SYSTEM: {text}"),
                (_, Part::Reasoning(_)) => continue,
            };
            entries.push(entry);
        }
    }
    entries
}

/// Groups transcript entries into pieces of at most `limit` bytes (an entry larger than that is
/// cut to fit).
fn pieces(entries: &[String], limit: usize) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut piece = String::new();
    for entry in entries {
        let entry = cut(entry, limit);
        if !piece.is_empty() && piece.len() + entry.len() + 2 > limit {
            pieces.push(std::mem::take(&mut piece));
        }
        piece.push_str(&entry);
        piece.push_str("\n\n");
    }
    if !piece.is_empty() {
        pieces.push(piece);
    }
    pieces
}

fn summary_request(model: &str, first_request: &str, summary: &str, piece: &str) -> ChatRequest {
    let mut prompt = format!("The user's first request was:\n{first_request}\n\n");
    if !summary.is_empty() {
        prompt.push_str(&format!(
            "Your summary of the conversation before this part:\n{summary}\n\nUpdate that summary with this next part of the conversation:\n"
        ));
    } else {
        prompt.push_str("Summarise this conversation:\n");
    }
    prompt.push_str(piece);
    ChatRequest {
        model: model.to_owned(),
        system: vec![SUMMARY_SYSTEM.to_owned()],
        messages: vec![Message::text(Role::User, prompt)],
        stream: true,
        ..ChatRequest::default()
    }
}

/// One summary request; its text.
async fn ask(
    model: &dyn ModelClient,
    request: ChatRequest,
    cancel: Option<watch::Receiver<bool>>,
) -> Result<String, CompactError> {
    let work = async {
        let mut stream = model
            .stream(request)
            .await
            .map_err(|error| CompactError::Model(error.message))?;
        let mut text = String::new();
        while let Some(event) = stream.next().await {
            match event {
                StreamEvent::TextDelta { text: delta } => text.push_str(&delta),
                StreamEvent::Error(error) => return Err(CompactError::Model(error.message)),
                _ => {}
            }
        }
        if text.trim().is_empty() {
            return Err(CompactError::Model(
                "the model answered with no text".to_owned(),
            ));
        }
        Ok(text)
    };
    match cancel {
        Some(mut cancel) => tokio::select! {
            result = work => result,
            _ = cancel.wait_for(|cancelled| *cancelled) => Err(CompactError::Cancelled),
        },
        None => work.await,
    }
}

/// The files the older messages wrote or edited (from the tool calls' `path` arguments).
fn changed_files(messages: &[Message]) -> BTreeSet<String> {
    let mut files = BTreeSet::new();
    for message in messages {
        for part in &message.parts {
            if let Part::ToolCall(call) = part
                && matches!(call.name.as_str(), "write" | "edit")
                && let Ok(arguments) = serde_json::from_str::<serde_json::Value>(&call.arguments)
                && let Some(path) = arguments.get("path").and_then(serde_json::Value::as_str)
            {
                files.insert(path.to_owned());
            }
        }
    }
    // Files listed by an earlier summary stay listed.
    if let Some(first) = messages.first().map(crate::history::text_of)
        && first.starts_with(SUMMARY_HEADER)
        && let Some(start) = first.find("## Files changed before this point\n")
    {
        for line in first[start..].lines().skip(1) {
            match line.strip_prefix("- ") {
                Some(file) => {
                    files.insert(file.to_owned());
                }
                None => break,
            }
        }
    }
    files
}

/// `tokens` × `numerator` / `denominator`, without overflow.
fn scale(tokens: u64, numerator: u64, denominator: u64) -> u64 {
    let scaled = u128::from(tokens) * u128::from(numerator) / u128::from(denominator.max(1));
    u64::try_from(scaled).unwrap_or(u64::MAX)
}

fn cut(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_owned();
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… [{} more bytes cut]", &text[..end], text.len() - end)
}

impl Shared {
    /// The window `model` is compacted against: the one given for every model
    /// (`AgentConfig::context_window`), else the model client's for this model, else
    /// [`DEFAULT_CONTEXT_WINDOW`].
    pub(crate) fn context_window(&self, model: &str) -> u64 {
        self.settings
            .context_window
            .or_else(|| self.model.context_window(model))
            .unwrap_or(DEFAULT_CONTEXT_WINDOW)
            .max(1)
    }

    /// Before a model step of the main agent: compacts `messages` when the request would near
    /// the window. `messages[first_new..]` are the running turn's own messages (after the user's
    /// message, which stays too); `first_new` moves with the compaction. `reported` is the
    /// provider's count for the previous step of this turn (0 for the first), used when it is
    /// higher than the estimate; a compaction resets it, as it counted the old history. The
    /// compacted history before the turn is kept for the engine to save.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn fit_context(
        &self,
        scope: &Scope,
        model: &str,
        system: &[String],
        tools: &[Tool],
        messages: &mut Vec<Message>,
        first_new: &mut usize,
        reported: &mut u64,
        cancel: watch::Receiver<bool>,
    ) {
        let window = self.context_window(model);
        let estimate = estimate_tokens(system, messages, tools).max(1);
        let before = estimate.max(*reported);
        if !needs_compaction(before, window) {
            return;
        }
        crate::hooks::session::pre_compact(self, scope, "auto").await;
        let protected = first_new.saturating_sub(1);
        // The recent turns kept verbatim share what the fixed part (system prompt, tools) and
        // the running turn leave below the trigger, so the result lands well under it. Budgets
        // are in the provider's tokens (`before`), then scaled to the estimate the cut uses.
        let to_real = |tokens: u64| scale(tokens, before, estimate);
        let fixed = to_real(
            estimate_tokens(system, &[], tools)
                + estimate_tokens(&[], &messages[protected.min(messages.len())..], &[]),
        );
        let room = (window.saturating_mul(TRIGGER_PERCENT) / 100).saturating_sub(fixed);
        let keep = scale(
            (room / 2).min(window.saturating_mul(RECENT_PERCENT) / 100),
            estimate,
            before,
        );
        let compacted = compact(
            self.model.as_ref(),
            model,
            messages,
            protected,
            keep,
            window,
            Some(cancel),
        )
        .await;
        match compacted {
            Ok(compacted) => {
                *reported = 0;
                let tail = messages.len() - *first_new;
                *messages = compacted.history;
                *first_new = messages.len() - tail;
                let after = estimate_tokens(system, messages, tools);
                self.keep_compacted(messages[..*first_new].to_vec());
                self.announce_compaction(
                    scope,
                    Sizes { before, after },
                    window,
                    compacted.summarized,
                );
            }
            Err(CompactError::Cancelled) => {}
            Err(error) => self.emit(
                scope,
                EventMsg::Warning {
                    message: format!(
                        "The conversation is near the model's context window ({before} of {window} tokens) and could not be compacted: {error}."
                    ),
                },
            ),
        }
    }

    /// `/compact`: summarises all but the latest turn of `history`; the new history and the
    /// reply, or why not (`nothing` when there is nothing old enough).
    pub(crate) async fn compact_now(
        &self,
        scope: &Scope,
        model: &str,
        system: &str,
        history: &[Message],
    ) -> Result<(Option<Vec<Message>>, ReplyOk), ErrorNotification> {
        let window = self.context_window(model);
        let system = [system.to_owned()];
        let before = estimate_tokens(&system, history, &[]);
        let latest = history.iter().rposition(starts_turn).unwrap_or(0);
        match compact(self.model.as_ref(), model, history, latest, 0, window, None).await {
            Ok(compacted) => {
                let after = estimate_tokens(&system, &compacted.history, &[]);
                self.announce_compaction(
                    scope,
                    Sizes { before, after },
                    window,
                    compacted.summarized,
                );
                Ok((
                    Some(compacted.history),
                    ReplyOk::Compacted {
                        tokens_before: before,
                        tokens_after: after,
                    },
                ))
            }
            Err(CompactError::NothingToCompact) => Ok((
                None,
                ReplyOk::Nothing {
                    message: format!("Nothing to compact: {}.", CompactError::NothingToCompact),
                },
            )),
            Err(error) => Err(ErrorNotification::new(
                ErrorClass::UnexpectedResponse,
                error.to_string(),
            )
            .with_next_action("Compact again, or start a new conversation.")),
        }
    }

    fn announce_compaction(&self, scope: &Scope, sizes: Sizes, window: u64, summarized: usize) {
        self.emit(
            scope,
            EventMsg::Compacted {
                tokens_before: sizes.before,
                tokens_after: sizes.after,
                context_window: window,
                messages_summarized: u32::try_from(summarized).unwrap_or(u32::MAX),
            },
        );
    }
}

#[cfg(test)]
mod tests;

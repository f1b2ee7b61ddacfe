//! How a turn ended, and conversations as listed and replayed.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{TokenUsage, ToolCallNotification, ToolResultNotification};

/// The payload of `turn_finished`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TurnFinishedNotification {
    /// How the turn ended.
    pub outcome: TurnOutcome,
    /// How many model steps it took.
    pub steps: u32,
    /// The turn's tokens, all steps together (subagents' included).
    pub usage: TokenUsage,
}

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TurnOutcome {
    /// The model answered without calling a tool.
    Completed,
    /// The user cancelled it.
    Cancelled,
    /// A failure ended it (an `error` event said which).
    Failed,
    /// It reached the step cap; the model was told and gave its last answer.
    StepLimit,
}

/// One conversation, as listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ConversationSummary {
    /// The conversation's id.
    pub id: String,
    /// Its title (empty until the first message gives it one).
    pub title: String,
    /// When it last changed, in Unix seconds.
    pub updated_at: i64,
    /// How many messages it holds.
    pub message_count: u64,
}

/// One item of a conversation's history, replayed by `conversation_opened`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum HistoryEntry {
    /// A user message.
    User {
        /// What the user wrote.
        text: String,
    },
    /// The assistant's visible text for one step.
    Assistant {
        /// The text.
        text: String,
    },
    /// A tool call, as it was announced.
    ToolCall(ToolCallNotification),
    /// A tool result, as it was announced.
    ToolResult(ToolResultNotification),
}

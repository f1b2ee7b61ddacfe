//! A scripted model for agent tests: a queue of replies (streamed events, failures, hangs, or
//! a stream the test feeds), recording every request it was sent. Given a context window, it
//! refuses a request larger than the window as a real provider does, so a test of compaction
//! can fail.

use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};

use corvid_wire::model::{ChatRequest, FinishReason, StreamEvent, Usage};
use tokio::sync::mpsc;

/// One scripted reply.
#[derive(Debug)]
pub enum ScriptedReply {
    /// These events, then the end of the stream.
    Events(Vec<StreamEvent>),
    /// The call fails before the reply starts, as an HTTP status would.
    Fail { status: u16, message: String },
    /// The reply never starts.
    Hang,
    /// Events the test sends one by one; the stream ends when the sender is dropped.
    Fed(mpsc::UnboundedReceiver<StreamEvent>),
}

impl ScriptedReply {
    /// A plain text answer.
    pub fn text(text: &str) -> Self {
        Self::Events(vec![
            start(),
            StreamEvent::TextDelta {
                text: text.to_owned(),
            },
            StreamEvent::Usage(usage()),
            StreamEvent::Finish(FinishReason::EndTurn),
        ])
    }

    /// One tool call (`arguments` is JSON text), with optional text before it.
    pub fn tool_call(id: &str, name: &str, arguments: &str) -> Self {
        Self::tool_calls(&[(id, name, arguments)])
    }

    /// Several tool calls in one step.
    pub fn tool_calls(calls: &[(&str, &str, &str)]) -> Self {
        let mut events = vec![start()];
        for (index, (id, name, arguments)) in calls.iter().enumerate() {
            let index = index as u32;
            events.push(StreamEvent::ToolCallStart {
                index,
                id: (*id).to_owned(),
                name: (*name).to_owned(),
                signature: None,
            });
            events.push(StreamEvent::ToolCallArgs {
                index,
                delta: (*arguments).to_owned(),
            });
            events.push(StreamEvent::ToolCallEnd { index });
        }
        events.push(StreamEvent::Usage(usage()));
        events.push(StreamEvent::Finish(FinishReason::ToolCalls));
        Self::Events(events)
    }

    /// A stream the test feeds.
    pub fn fed() -> (mpsc::UnboundedSender<StreamEvent>, Self) {
        let (sender, receiver) = mpsc::unbounded_channel();
        (sender, Self::Fed(receiver))
    }
}

fn start() -> StreamEvent {
    StreamEvent::Start {
        id: "scripted".to_owned(),
        model: "scripted-model".to_owned(),
    }
}

fn usage() -> Usage {
    Usage {
        input: 100,
        output: 10,
        ..Usage::default()
    }
}

/// The model: replies in order; with none left, it answers "(no more scripted replies)".
#[derive(Debug, Default)]
pub struct ScriptedModel {
    replies: Mutex<VecDeque<ScriptedReply>>,
    requests: Mutex<Vec<ChatRequest>>,
    /// The context window in tokens; 0 when the model has none.
    window: AtomicU64,
}

/// A request's size in tokens as this model counts it: its JSON bytes / 4 (a common rule of
/// thumb, and independent of how the agent estimates).
pub fn request_tokens(request: &ChatRequest) -> u64 {
    serde_json::to_vec(request).map_or(0, |json| json.len() as u64 / 4)
}

impl ScriptedModel {
    pub fn new(replies: impl IntoIterator<Item = ScriptedReply>) -> Self {
        Self {
            replies: Mutex::new(replies.into_iter().collect()),
            requests: Mutex::new(Vec::new()),
            window: AtomicU64::new(0),
        }
    }

    /// A model that fails (HTTP 400, "context length exceeded") every request larger than
    /// `tokens` (see [`request_tokens`]) without taking a reply from the queue.
    pub fn with_window(replies: impl IntoIterator<Item = ScriptedReply>, tokens: u64) -> Self {
        let model = Self::new(replies);
        model.set_window(tokens);
        model
    }

    /// Sets the context window (0: none) for the requests from now on.
    pub fn set_window(&self, tokens: u64) {
        self.window.store(tokens, Ordering::SeqCst);
    }

    /// Adds a reply at the end of the queue.
    pub fn push(&self, reply: ScriptedReply) {
        self.replies.lock().push_back(reply);
    }

    /// Records `request` and gives the next reply.
    pub fn next(&self, request: ChatRequest) -> ScriptedReply {
        let size = request_tokens(&request);
        self.requests.lock().push(request);
        let window = self.window.load(Ordering::SeqCst);
        if window > 0 && size > window {
            return ScriptedReply::Fail {
                status: 400,
                message: format!(
                    "context length exceeded: the request has about {size} tokens, the window is {window}"
                ),
            };
        }
        self.replies
            .lock()
            .pop_front()
            .unwrap_or_else(|| ScriptedReply::text("(no more scripted replies)"))
    }

    /// Every request received, in order.
    pub fn requests(&self) -> Vec<ChatRequest> {
        self.requests.lock().clone()
    }
}

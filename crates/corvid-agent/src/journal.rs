//! One session's events: numbered, fanned out to every listener through one bounded ring, and
//! summarised so a listener that subscribes late — or falls behind — can be brought up to date.
//!
//! Why a ring and a summary rather than a log of every event: the ring (`tokio::sync::broadcast`)
//! never makes the engine wait and never holds more than `EVENT_BUFFER` events, however many
//! listeners stop reading; the summary (`State`) is what a front end needs to rebuild its view —
//! the session's settings, the active conversation's history, the todos and the running turn's
//! events (text, reasoning and command-output deltas merged) and the agent's requests that still
//! wait — and it is freed turn by turn. Numbering, the summary and the ring are updated under one
//! lock, so a replay and the live frames after it never miss or repeat one.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use corvid_protocol::{
    ConversationSummary, Event, EventMsg, HistoryEntry, ProposalNotification, ReadyNotification,
    ServerRequest, SessionFrame, TodoItem,
};
use parking_lot::{Mutex, MutexGuard};
use tokio::sync::{broadcast, watch};

use crate::attention::{Attending, AttentionKind};
use crate::scope::Scope;

/// Live events kept for a listener that is slow to read; past them it is resynchronised.
pub const EVENT_BUFFER: usize = 512;
/// Warnings emitted outside any operation (at start-up) kept for replays.
const NOTICES_KEPT: usize = 16;

pub(crate) struct Journal {
    state: Mutex<State>,
}

struct State {
    seq: u64,
    /// `None` once the session has ended: listeners drain what they have, then end.
    live: Option<broadcast::Sender<SessionFrame>>,
    ready: Option<ReadyNotification>,
    conversation: Option<ConversationSummary>,
    history: Vec<HistoryEntry>,
    todos: Vec<TodoItem>,
    notices: VecDeque<Event>,
    /// The running turn's events and its requests that still wait, from its `turn_started`;
    /// empty between turns.
    turn: Vec<SessionFrame>,
    /// The seq of the last event before the running turn.
    before_turn: u64,
    /// True once the engine has said `ready` or the session has ended: what
    /// `subscribe_ready` waits for.
    settled: watch::Sender<bool>,
    /// Bumped when a listener leaves or a turn ends: the moments a session may become idle.
    quiet: watch::Sender<u64>,
    /// Where approvals waiting and turns ending are announced to the host, if anywhere.
    attending: Option<Attending>,
}

impl Journal {
    pub(crate) fn new() -> Arc<Self> {
        let (live, _) = broadcast::channel(EVENT_BUFFER);
        Arc::new(Self {
            state: Mutex::new(State {
                seq: 0,
                live: Some(live),
                ready: None,
                conversation: None,
                history: Vec::new(),
                todos: Vec::new(),
                notices: VecDeque::new(),
                turn: Vec::new(),
                before_turn: 0,
                settled: watch::Sender::new(false),
                quiet: watch::Sender::new(0),
                attending: None,
            }),
        })
    }

    /// Announces this session's approvals and turn ends on the host's feed.
    pub(crate) fn attend(&self, attending: Attending) {
        self.lock().attending = Some(attending);
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock()
    }

    /// Numbers `msg`, records it and sends it to every listener.
    pub(crate) fn emit(&self, scope: &Scope, msg: EventMsg) {
        self.lock().emit(scope, msg);
    }

    /// Numbers a request for approval, keeps it for replays until its `proposal_closed`, and
    /// sends it to every listener. Its id is the proposal's.
    pub(crate) fn request(&self, scope: &Scope, approval: ProposalNotification) {
        self.lock().request(scope, approval);
    }

    /// Emits `msg` (a turn's `turn_finished`) and replaces the replayed history in one step, so
    /// no replay shows the turn twice or not at all.
    pub(crate) fn emit_with_history(
        &self,
        scope: &Scope,
        msg: EventMsg,
        conversation: ConversationSummary,
        history: Vec<HistoryEntry>,
    ) {
        let mut state = self.lock();
        state.conversation = Some(conversation);
        state.history = history;
        state.emit(scope, msg);
        state.turn.clear();
        state
            .quiet
            .send_modify(|changes| *changes = changes.wrapping_add(1));
    }

    /// The conversation replays show, when it changed without an event saying so (start-up,
    /// a compaction).
    pub(crate) fn set_conversation(
        &self,
        conversation: ConversationSummary,
        history: Vec<HistoryEntry>,
    ) {
        let mut state = self.lock();
        state.conversation = Some(conversation);
        state.history = history;
    }

    /// A new listener: the replay, then live events.
    pub(crate) fn subscribe(self: &Arc<Self>) -> Subscription {
        let (replay, live) = self.lock().snapshot(None);
        Subscription {
            journal: Arc::clone(self),
            replay,
            live,
        }
    }

    /// A new listener once the engine has said `ready` (or the session has ended), so its
    /// replay holds the whole state: `ready`, the start-up notices, the conversation and its
    /// history. A listener subscribed before `ready` hears it live, without the conversation.
    pub(crate) async fn subscribe_ready(self: &Arc<Self>) -> Subscription {
        let mut settled = self.lock().settled.subscribe();
        // The sender lives as long as the journal, which `self` holds.
        let _ = settled.wait_for(|settled| *settled).await;
        self.subscribe()
    }

    /// The session ended: listeners get what is buffered, then the end of their stream.
    pub(crate) fn close(&self) {
        let mut state = self.lock();
        state.live = None;
        state.settled.send_replace(true);
        state
            .quiet
            .send_modify(|changes| *changes = changes.wrapping_add(1));
    }

    pub(crate) fn conversation_id(&self) -> String {
        let state = self.lock();
        state
            .ready
            .as_ref()
            .map(|ready| ready.conversation_id.clone())
            .unwrap_or_default()
    }

    /// The active conversation and its history (completed turns), as replays show them.
    pub(crate) fn conversation(&self) -> Option<(ConversationSummary, Vec<HistoryEntry>)> {
        let state = self.lock();
        let summary = state.conversation.clone()?;
        Some((summary, state.history.clone()))
    }

    pub(crate) fn listeners(&self) -> usize {
        self.lock()
            .live
            .as_ref()
            .map_or(0, broadcast::Sender::receiver_count)
    }

    /// Changes when a listener leaves or a turn ends.
    pub(crate) fn quiet_changes(&self) -> watch::Receiver<u64> {
        self.lock().quiet.subscribe()
    }

    pub(crate) fn turn_running(&self) -> bool {
        !self.lock().turn.is_empty()
    }

    /// How many events a replay holds now (for tests and diagnostics).
    #[cfg(test)]
    pub(crate) fn replay_len(&self) -> usize {
        self.lock().snapshot(None).0.len()
    }
}

impl State {
    fn emit(&mut self, scope: &Scope, msg: EventMsg) {
        self.seq += 1;
        let event = Event {
            id: scope.id.clone(),
            seq: self.seq,
            depth: scope.depth,
            parent_call_id: scope.parent_call_id.clone(),
            at: now(),
            replay: false,
            msg,
        };
        self.record(&event);
        if let EventMsg::TurnFinished(finished) = &event.msg
            && event.depth == 0
        {
            let outcome = serde_json::to_value(finished.outcome)
                .ok()
                .and_then(|value| value.as_str().map(str::to_owned))
                .unwrap_or_default();
            self.announce(AttentionKind::TurnEnded, outcome);
        }
        if let Some(live) = &self.live {
            // No listener is not an error: events are still numbered and summarised.
            let _ = live.send(SessionFrame::Event(event));
        }
    }

    /// Tells the host's feed (when there is one) that this session wants attention.
    fn announce(&self, kind: AttentionKind, detail: String) {
        let Some(attending) = &self.attending else {
            return;
        };
        let conversation_id = self
            .ready
            .as_ref()
            .map(|ready| ready.conversation_id.clone())
            .unwrap_or_default();
        let title = self
            .conversation
            .as_ref()
            .map(|conversation| conversation.title.clone())
            .unwrap_or_default();
        attending
            .feed
            .publish(kind, &attending.session_id, conversation_id, title, detail);
    }

    fn request(&mut self, scope: &Scope, approval: ProposalNotification) {
        self.announce(AttentionKind::ApprovalWaiting, approval.title.clone());
        self.seq += 1;
        let request = SessionFrame::Request(ServerRequest {
            id: approval.proposal_id.clone(),
            turn_id: scope.id.clone(),
            seq: self.seq,
            depth: scope.depth,
            parent_call_id: scope.parent_call_id.clone(),
            replay: false,
            approval,
        });
        // Kept while it waits, so a face that subscribes now can still answer it; a request
        // outside a turn cannot happen (only a turn's tool calls ask).
        if self
            .turn
            .first()
            .and_then(SessionFrame::event)
            .is_some_and(|first| first.id == scope.id)
        {
            self.turn.push(request.clone());
        }
        if let Some(live) = &self.live {
            let _ = live.send(request);
        }
    }

    fn record(&mut self, event: &Event) {
        match &event.msg {
            EventMsg::Ready(ready) => {
                self.ready = Some(ReadyNotification {
                    missed: None,
                    ..ready.clone()
                });
                self.settled.send_replace(true);
                return;
            }
            EventMsg::SettingsChanged {
                model,
                approval_policy,
            } => {
                if let Some(ready) = &mut self.ready {
                    ready.model = model.clone();
                    ready.approval_policy = *approval_policy;
                }
                return;
            }
            EventMsg::ConversationOpened {
                conversation,
                history,
            } => {
                self.conversation = Some(conversation.clone());
                self.history = history.clone();
                return;
            }
            EventMsg::ConversationCleared { .. } => {
                self.history.clear();
                return;
            }
            EventMsg::Todos { todos } if event.depth == 0 => self.todos = todos.clone(),
            EventMsg::TurnStarted { .. } if event.depth == 0 => {
                self.before_turn = event.seq - 1;
                self.turn = vec![SessionFrame::Event(event.clone())];
                return;
            }
            // An answered request is not replayed: a late face must not answer it again.
            EventMsg::ProposalClosed { proposal_id, .. } => self.turn.retain(
                |frame| !matches!(frame, SessionFrame::Request(request) if request.id == *proposal_id),
            ),
            EventMsg::Warning { .. } if event.id.is_empty() => {
                if self.notices.len() == NOTICES_KEPT {
                    self.notices.pop_front();
                }
                self.notices.push_back(event.clone());
                return;
            }
            _ => {}
        }
        let in_turn = self
            .turn
            .first()
            .and_then(SessionFrame::event)
            .is_some_and(|first| first.id == event.id);
        if in_turn && !merge_delta(&mut self.turn, event) {
            self.turn.push(SessionFrame::Event(event.clone()));
        }
    }

    /// The replay of the session's state now, and a receiver of every event after it.
    fn snapshot(
        &self,
        missed: Option<u64>,
    ) -> (VecDeque<SessionFrame>, broadcast::Receiver<SessionFrame>) {
        let live = match &self.live {
            Some(live) => live.subscribe(),
            // An ended session: a receiver whose sender is already gone ends after the replay.
            None => broadcast::channel(1).0.subscribe(),
        };
        let mut replay = VecDeque::new();
        let Some(ready) = &self.ready else {
            return (replay, live);
        };
        let covered = if self.turn.is_empty() {
            self.seq
        } else {
            self.before_turn
        };
        let synthetic = |msg: EventMsg| {
            SessionFrame::Event(Event {
                id: String::new(),
                seq: covered,
                depth: 0,
                parent_call_id: None,
                at: now(),
                replay: true,
                msg,
            })
        };
        replay.push_back(synthetic(EventMsg::Ready(ReadyNotification {
            missed,
            ..ready.clone()
        })));
        for notice in &self.notices {
            replay.push_back(SessionFrame::Event(Event {
                replay: true,
                seq: covered,
                ..notice.clone()
            }));
        }
        let conversation = self
            .conversation
            .clone()
            .unwrap_or_else(|| ConversationSummary {
                id: ready.conversation_id.clone(),
                title: String::new(),
                updated_at: 0,
                message_count: 0,
            });
        replay.push_back(synthetic(EventMsg::ConversationOpened {
            conversation,
            history: self.history.clone(),
        }));
        if !self.todos.is_empty() {
            replay.push_back(synthetic(EventMsg::Todos {
                todos: self.todos.clone(),
            }));
        }
        replay.extend(self.turn.iter().map(|frame| match frame {
            SessionFrame::Event(event) => SessionFrame::Event(Event {
                replay: true,
                ..event.clone()
            }),
            SessionFrame::Request(request) => SessionFrame::Request(ServerRequest {
                replay: true,
                ..request.clone()
            }),
        }));
        (replay, live)
    }
}

/// Appends a delta to the turn's last event when both are the same kind of delta from the same
/// agent (and, for command output, the same call); false when it has to be kept as an event of its own.
fn merge_delta(turn: &mut [SessionFrame], event: &Event) -> bool {
    let Some(SessionFrame::Event(last)) = turn.last_mut() else {
        return false;
    };
    if last.depth != event.depth || last.parent_call_id != event.parent_call_id {
        return false;
    }
    match (&mut last.msg, &event.msg) {
        (EventMsg::TextDelta { delta }, EventMsg::TextDelta { delta: more })
        | (EventMsg::ReasoningDelta { delta }, EventMsg::ReasoningDelta { delta: more }) => {
            delta.push_str(more);
            last.seq = event.seq;
            last.at = event.at;
            true
        }
        // A call being written: only how far it has got matters.
        (
            EventMsg::ToolCallProgress { tool, call_id, .. },
            EventMsg::ToolCallProgress {
                tool: next_tool,
                call_id: next_call,
                ..
            },
        ) if tool == next_tool && call_id == next_call => {
            last.msg = event.msg.clone();
            last.seq = event.seq;
            last.at = event.at;
            true
        }
        // A command's output, as long as nothing came between its pieces (the tools cap it).
        (
            EventMsg::ToolOutputDelta { call_id, text },
            EventMsg::ToolOutputDelta {
                call_id: next_call,
                text: more,
            },
        ) if call_id == next_call => {
            text.push_str(more);
            last.seq = event.seq;
            last.at = event.at;
            true
        }
        _ => false,
    }
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| elapsed.as_secs() as i64)
        .unwrap_or_default()
}

/// One listener of a session: a replay of the session so far, then its live frames (events and
/// the agent's requests). A listener
/// that falls more than `EVENT_BUFFER` events behind gets a fresh replay whose `ready` carries
/// `missed` (see the crate README, "Session service").
pub struct Subscription {
    journal: Arc<Journal>,
    replay: VecDeque<SessionFrame>,
    live: broadcast::Receiver<SessionFrame>,
}

impl Subscription {
    /// The next frame (an event, or a request that waits for an answer); `None` once the
    /// session has ended and everything before was read.
    /// Cancel-safe (usable in `tokio::select!`): a cancelled call loses no frame.
    pub async fn recv(&mut self) -> Option<SessionFrame> {
        loop {
            if let Some(event) = self.replay.pop_front() {
                return Some(event);
            }
            match self.live.recv().await {
                Ok(event) => return Some(event),
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    let (replay, live) = self.journal.lock().snapshot(Some(missed));
                    self.replay = replay;
                    self.live = live;
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }

    /// Events waiting for this listener: replay not yet read plus live events not yet read
    /// (never more than the replay and `EVENT_BUFFER`).
    pub fn buffered(&self) -> usize {
        // The receiver counts every event it has not read, overwritten ones included; the ring
        // holds at most `EVENT_BUFFER` of them (the rest are the `missed` of the next resync).
        self.replay.len() + self.live.len().min(EVENT_BUFFER)
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.journal
            .lock()
            .quiet
            .send_modify(|changes| *changes = changes.wrapping_add(1));
    }
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Subscription")
            .field("buffered", &self.buffered())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests;

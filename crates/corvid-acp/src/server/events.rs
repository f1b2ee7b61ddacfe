//! The engine's events as `session/update`s, its approval requests as permission requests,
//! and the turn ends and command answers that end a prompt.

use std::sync::Arc;

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ConfigOptionUpdate, CurrentModeUpdate, SessionUpdate, StopReason, ToolCallStatus, UsageUpdate,
};
use agent_client_protocol::{Client, Error};
use corvid_agent::Subscription;
use corvid_protocol::{
    ErrorClass, Event, EventMsg, ProposalOutcome, ReadyNotification, SessionFrame, ToolCallKind,
    TurnOutcome,
};

use super::live::Live;
use crate::options::{self, Mode};
use crate::updates;

impl Live {
    /// Turns the engine's events into updates until the engine stops. The subscription is
    /// the service's bounded one: when this session falls behind, it is resynchronised.
    pub(super) async fn pump(self: Arc<Self>, cx: &ConnectionTo<Client>, mut events: Subscription) {
        let mut seen = Seen::default();
        while let Some(frame) = events.recv().await {
            let sent = match (seen.admit(&frame), frame) {
                (Admit::Handle, SessionFrame::Event(event)) => self.handle(cx, event),
                (Admit::Handle, SessionFrame::Request(request)) => self.ask(cx, request.approval),
                (Admit::Skip, _) => Ok(()),
                (Admit::Resync { missed }, _) => self.resynced(cx, missed),
            };
            if let Err(error) = sent {
                tracing::debug!(%error, "could not send an update; the client is gone");
                break;
            }
        }
        // The engine stopped: a prompt still waiting ends now rather than never.
        let turn = self.state.lock().turn.take();
        if let Some(turn) = turn {
            let _ = turn.done.send(StopReason::EndTurn);
        }
    }

    /// This session fell `missed` events behind. The client is told that some output is
    /// missing, and a prompt whose turn ended in the gap (its `turn_finished` was among the
    /// lost events) ends now instead of waiting for ever.
    fn resynced(&self, cx: &ConnectionTo<Client>, missed: u64) -> Result<(), Error> {
        tracing::debug!(missed, "the ACP session fell behind the engine's events");
        self.send(
            cx,
            updates::text(format!(
                "\n\n_(the editor fell {missed} updates behind; some output is missing here)_\n\n"
            )),
        )?;
        if !self.link.is_running() {
            let turn = self.state.lock().turn.take();
            if let Some(turn) = turn {
                let stop = if turn.cancelled {
                    StopReason::Cancelled
                } else {
                    StopReason::EndTurn
                };
                let _ = turn.done.send(stop);
            }
        }
        Ok(())
    }

    fn handle(self: &Arc<Self>, cx: &ConnectionTo<Client>, event: Event) -> Result<(), Error> {
        let main = event.depth == 0;
        match event.msg {
            EventMsg::TextDelta { delta } if main => self.send(cx, updates::text(delta))?,
            EventMsg::ReasoningDelta { delta } if main => self.send(cx, updates::thought(delta))?,
            // A call the model is still writing shows in the thread at once, pending, with
            // how much has arrived; without an id yet there is nothing to attach it to.
            EventMsg::ToolCallProgress {
                call_id: Some(call_id),
                tool,
                bytes,
            } => {
                let first = self.state.lock().preparing.insert(call_id.clone());
                self.send(cx, updates::preparing(&call_id, &tool, bytes, first))?;
            }
            EventMsg::ToolCall(call) => {
                self.state.lock().preparing.remove(&call.call_id);
                let described = updates::describe(&call, &self.project);
                self.send(
                    cx,
                    updates::tool_call(&call, &described, ToolCallStatus::InProgress),
                )?;
                self.state
                    .lock()
                    .calls
                    .insert(call.call_id.clone(), (call, described));
            }
            EventMsg::ToolOutputDelta { call_id, text } => {
                let shown = {
                    let mut state = self.state.lock();
                    let output = state.outputs.entry(call_id.clone()).or_default();
                    output.push_str(&text);
                    updates::running_output(&call_id, output)
                };
                self.send(cx, shown)?;
            }
            EventMsg::ProposalClosed {
                proposal_id: _,
                outcome: ProposalOutcome::Approved,
            } => {}
            EventMsg::ToolResult(result) => {
                let is_edit = {
                    let mut state = self.state.lock();
                    state.outputs.remove(&result.call_id);
                    state
                        .calls
                        .get(&result.call_id)
                        .is_some_and(|(call, _)| call.kind == ToolCallKind::Edit)
                };
                self.send(cx, updates::result(&result, is_edit, &self.project))?;
            }
            EventMsg::Todos { todos } => self.send(cx, updates::plan(&todos))?,
            EventMsg::Usage(usage) if main => {
                let used = usage.usage.total_input().saturating_add(usage.usage.output);
                let window = self.state.lock().window;
                self.send(
                    cx,
                    SessionUpdate::UsageUpdate(UsageUpdate::new(used, window)),
                )?;
            }
            EventMsg::SettingsChanged {
                model,
                approval_policy,
            } => {
                let (mode, options) = {
                    let window = self.sessions.context_window(&model);
                    let mut state = self.state.lock();
                    state.model = model;
                    state.window = window;
                    if state.mode.policy() != approval_policy {
                        state.mode = Mode::Policy(approval_policy);
                    }
                    (
                        state.mode,
                        options::config_options(
                            state.mode,
                            &state.model,
                            &self.models,
                            &self.sandbox,
                        ),
                    )
                };
                self.send(
                    cx,
                    SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(options)),
                )?;
                self.send(
                    cx,
                    SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(mode.id())),
                )?;
            }
            EventMsg::Error(error) if main && error.class != ErrorClass::Cancelled => {
                self.send(
                    cx,
                    updates::text(format!(
                        "\n\n**Error:** {} — {}\n",
                        error.message, error.next_action
                    )),
                )?;
            }
            // A warning of the running prompt's turn (an empty reply, a compaction that could
            // not run): said in the thread, where the user waits for the answer.
            EventMsg::Warning { message } if main && self.is_prompt(&event.id) => {
                self.send(cx, updates::text(format!("\n\n_Warning: {message}_\n")))?;
            }
            // An automatic compaction says so here; `/compact` answers in its reply.
            EventMsg::Compacted {
                tokens_before,
                tokens_after,
                context_window,
                messages_summarized,
            } if !self.is_command(&event.id) => {
                self.send(
                    cx,
                    updates::text(format!(
                        "Compacted: {messages_summarized} older messages summarised, about {tokens_before} → {tokens_after} tokens of {context_window}.\n"
                    )),
                )?;
            }
            EventMsg::TurnFinished(finished) if main => {
                let stop = match finished.outcome {
                    TurnOutcome::Completed | TurnOutcome::Failed => StopReason::EndTurn,
                    TurnOutcome::Cancelled => StopReason::Cancelled,
                    TurnOutcome::StepLimit => StopReason::MaxTurnRequests,
                };
                self.finish(&event.id, stop);
            }
            _ => {}
        }
        Ok(())
    }
}

/// What the pump does with one frame.
#[derive(Debug, PartialEq, Eq)]
enum Admit {
    Handle,
    Skip,
    /// The `ready` that starts a resynchronisation: `missed` events were lost.
    Resync {
        missed: u64,
    },
}

/// What the pump has passed on: the highest `seq` of the events it handled.
#[derive(Debug, Default)]
struct Seen {
    last: u64,
}

impl Seen {
    /// Live events are handled. Of a replay, only what this session has not seen is: the
    /// replay that opens a session already running repeats what `session/load` sends from the
    /// history (nothing live was seen yet), and a resynchronisation repeats what was passed on
    /// (at or below `last`). A replayed delta is skipped too: the replay merges a run of
    /// deltas into one, which would repeat the pieces already streamed. A request that still
    /// waits is always asked, even from the opening replay: the editor may be the face that
    /// answers it.
    fn admit(&mut self, frame: &SessionFrame) -> Admit {
        let event = match frame {
            SessionFrame::Event(event) => event,
            SessionFrame::Request(request) => {
                if request.replay && request.seq <= self.last {
                    return Admit::Skip;
                }
                self.last = self.last.max(request.seq);
                return Admit::Handle;
            }
        };
        if !event.replay {
            self.last = self.last.max(event.seq);
            return Admit::Handle;
        }
        if let EventMsg::Ready(ReadyNotification {
            missed: Some(missed),
            ..
        }) = &event.msg
        {
            return Admit::Resync { missed: *missed };
        }
        let delta = matches!(
            event.msg,
            EventMsg::TextDelta { .. }
                | EventMsg::ReasoningDelta { .. }
                | EventMsg::ToolOutputDelta { .. }
        );
        if self.last == 0 || event.seq <= self.last || delta {
            return Admit::Skip;
        }
        self.last = event.seq;
        Admit::Handle
    }
}

#[cfg(test)]
mod tests {
    use corvid_protocol::{ApprovalPolicy, ProposalKind, ProposalNotification, ServerRequest};

    use super::*;

    fn event(seq: u64, replay: bool, msg: EventMsg) -> SessionFrame {
        SessionFrame::Event(Event {
            id: "s1".to_owned(),
            seq,
            depth: 0,
            parent_call_id: None,
            at: 0,
            replay,
            msg,
        })
    }

    fn ready(missed: Option<u64>) -> EventMsg {
        EventMsg::Ready(ReadyNotification {
            version: corvid_protocol::PROTOCOL_VERSION,
            engine: "corvid test".to_owned(),
            cwd: "/p".to_owned(),
            conversation_id: "c1".to_owned(),
            model: "m".to_owned(),
            approval_policy: ApprovalPolicy::Ask,
            missed,
            sandbox: None,
        })
    }

    fn text(delta: &str) -> EventMsg {
        EventMsg::TextDelta {
            delta: delta.to_owned(),
        }
    }

    fn request(seq: u64, replay: bool) -> SessionFrame {
        SessionFrame::Request(ServerRequest {
            id: "p1".to_owned(),
            turn_id: "s1".to_owned(),
            seq,
            depth: 0,
            parent_call_id: None,
            replay,
            approval: ProposalNotification {
                proposal_id: "p1".to_owned(),
                call_id: "c1".to_owned(),
                title: "Run ls".to_owned(),
                kind: ProposalKind::Command {
                    command: "ls".to_owned(),
                    cwd: "/p".to_owned(),
                },
                decisions: Vec::new(),
                always_scope: None,
                always_description: None,
                sandbox: None,
                notice: None,
            },
        })
    }

    #[test]
    fn the_opening_replay_is_skipped_and_live_events_are_handled() {
        let mut seen = Seen::default();
        assert_eq!(seen.admit(&event(2, true, text("a"))), Admit::Skip);
        // A request that still waits is asked, so the editor can answer it.
        assert_eq!(seen.admit(&request(3, true)), Admit::Handle);
        assert_eq!(seen.admit(&event(4, false, text("a"))), Admit::Handle);
        assert_eq!(seen.admit(&event(5, false, text("b"))), Admit::Handle);
    }

    #[test]
    fn a_resync_passes_on_only_what_was_missed_and_no_merged_delta() {
        let mut seen = Seen::default();
        for seq in 1..=10 {
            assert_eq!(seen.admit(&event(seq, false, text("x"))), Admit::Handle);
        }
        assert_eq!(
            seen.admit(&event(8, true, ready(Some(600)))),
            Admit::Resync { missed: 600 }
        );
        // Already passed on.
        assert_eq!(seen.admit(&event(9, true, text("x"))), Admit::Skip);
        // Missed, but a delta merged with pieces already sent.
        assert_eq!(seen.admit(&event(700, true, text("xyz"))), Admit::Skip);
        // Missed: a request the client must be asked about, once.
        assert_eq!(seen.admit(&request(701, true)), Admit::Handle);
        assert_eq!(seen.admit(&request(701, true)), Admit::Skip);
        assert_eq!(seen.admit(&event(702, false, text("y"))), Admit::Handle);
    }
}

//! The engine's events as `session/update`s, and the turn ends and command answers that end
//! a prompt.

use std::sync::Arc;

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ConfigOptionUpdate, CurrentModeUpdate, SessionUpdate, StopReason, ToolCallStatus, UsageUpdate,
};
use agent_client_protocol::{Client, Error};
use corvid_protocol::{ErrorClass, Event, EventMsg, ProposalOutcome, ToolCallKind, TurnOutcome};
use tokio::sync::mpsc;

use super::live::Live;
use super::lock;
use crate::options::{self, Mode};
use crate::updates;

impl Live {
    /// Turns the engine's events into updates until the engine stops.
    pub(super) async fn pump(
        self: Arc<Self>,
        cx: &ConnectionTo<Client>,
        mut events: mpsc::UnboundedReceiver<Event>,
    ) {
        while let Some(event) = events.recv().await {
            if let Err(error) = self.handle(cx, event) {
                tracing::debug!(%error, "could not send an update; the client is gone");
                break;
            }
        }
        // The engine stopped: a prompt still waiting ends now rather than never.
        let turn = lock(&self.state).turn.take();
        if let Some(turn) = turn {
            let _ = turn.done.send(StopReason::EndTurn);
        }
    }

    fn handle(self: &Arc<Self>, cx: &ConnectionTo<Client>, event: Event) -> Result<(), Error> {
        let main = event.depth == 0;
        match event.msg {
            EventMsg::TextDelta { delta } if main => self.send(cx, updates::text(delta))?,
            EventMsg::ReasoningDelta { delta } if main => self.send(cx, updates::thought(delta))?,
            EventMsg::ToolCall(call) => {
                let described = updates::describe(&call, &self.project);
                self.send(
                    cx,
                    updates::tool_call(&call, &described, ToolCallStatus::InProgress),
                )?;
                lock(&self.state)
                    .calls
                    .insert(call.call_id.clone(), (call, described));
            }
            EventMsg::ToolOutputDelta { call_id, text } => {
                let shown = {
                    let mut state = lock(&self.state);
                    let output = state.outputs.entry(call_id.clone()).or_default();
                    output.push_str(&text);
                    updates::running_output(&call_id, output)
                };
                self.send(cx, shown)?;
            }
            EventMsg::Proposal(proposal) => self.ask(cx, proposal)?,
            EventMsg::ProposalClosed {
                proposal_id: _,
                outcome: ProposalOutcome::Approved,
            } => {}
            EventMsg::ToolResult(result) => {
                let is_edit = {
                    let mut state = lock(&self.state);
                    state.outputs.remove(&result.call_id);
                    state
                        .calls
                        .get(&result.call_id)
                        .is_some_and(|(call, _)| call.kind == ToolCallKind::Edit)
                };
                self.send(cx, updates::result(&result, is_edit))?;
            }
            EventMsg::Todos { todos } => self.send(cx, updates::plan(&todos))?,
            EventMsg::Usage(usage) if main => {
                let used = usage.usage.total_input().saturating_add(usage.usage.output);
                self.send(
                    cx,
                    SessionUpdate::UsageUpdate(UsageUpdate::new(used, self.window)),
                )?;
            }
            EventMsg::SettingsChanged {
                model,
                approval_policy,
            } => {
                let (mode, options) = {
                    let mut state = lock(&self.state);
                    state.model = model;
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

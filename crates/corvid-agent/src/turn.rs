//! One turn: context → one streamed model step → tools through the approval gate → results fed
//! back → repeat, until the model answers without tools, the user cancels, or the step cap.
//!
//! The turn knows no tool by name: the turn's [`Offer`] routes each call to the source that
//! offered it, and the gate decides from the kind the tool was offered with, its proposal, and
//! its name and origin. Only `task`, which runs a turn itself, is the agent's own
//! (`crate::subagent`).

use std::path::Path;
use std::sync::Arc;

use corvid_protocol::{
    ActionKind, ApprovalDecision, ErrorClass, ErrorNotification, EventMsg, GateDecision,
    ProposalKind, ProposalNotification, ProposalOutcome, TokenUsage, ToolCallNotification,
    ToolResultNotification, TurnOutcome, UsageNotification, decision_with_sandbox,
};
use corvid_tools::{AlwaysAllow, Cancellation, Offer, Prepared, Run, ToolKind, ToolOutput};
use corvid_wire::model::{
    ChatRequest, Message, Part, ResponseBuilder, Role, StreamEvent, Tool, ToolCall, ToolChoice,
    ToolResult, ToolResultContent, Usage,
};
use tokio::sync::{mpsc, watch};

use crate::history;
use crate::ledger::{CallEnd, CallMeter};
use crate::model::ModelError;
use crate::scope::Scope;
use crate::session::{Shared, Verdict};
use crate::tool_progress::ToolProgress;

/// How many identical calls run before guidance replaces the next one.
const REPEAT_LIMIT: usize = 3;
/// The longest tool output put in a `tool_result` event (the model gets all of it).
const EVENT_OUTPUT_LIMIT: usize = 8 * 1024;

/// What one agent (the main one or a subagent) works with during a turn.
#[derive(Clone)]
pub(crate) struct TurnSetup {
    pub(crate) shared: Arc<Shared>,
    pub(crate) scope: Scope,
    /// The tools on offer this turn, from every source.
    pub(crate) tools: Offer,
    /// Whether this agent may start subagents (`task`) and keep todos.
    pub(crate) is_main: bool,
    pub(crate) model: String,
    pub(crate) system: String,
    pub(crate) cancel: watch::Receiver<bool>,
}

/// How a turn ended, and the messages it added.
pub(crate) struct TurnResult {
    pub(crate) outcome: TurnOutcome,
    pub(crate) steps: u32,
    pub(crate) usage: TokenUsage,
    pub(crate) added: Vec<Message>,
    /// The last assistant text (a subagent's answer).
    pub(crate) final_text: String,
}

/// What the user is told when the model's last reply has no text and calls no tool.
const EMPTY_REPLY: &str = "the model's reply was empty (no text and no tool call), so the turn ended without an answer. Ask again, rephrase, or try another model";

/// Runs one turn on `history` (which already ends with the user's message). With a
/// conversation, each step is saved as it completes (see `crate::persist`).
pub(crate) async fn run_turn(
    setup: &TurnSetup,
    history: &[Message],
    conversation_id: Option<&str>,
    turn_number: u32,
) -> TurnResult {
    let mut messages: Vec<Message> = history.to_vec();
    let mut first_new = messages.len();
    let mut turn_usage = TokenUsage::default();
    // The turn's cost so far; `None` once a step's model has no price.
    let mut turn_cost = Some(0.0);
    let mut seen_calls: Vec<(String, String)> = Vec::new();
    let mut final_text = String::new();
    let mut stop_hook_active = false;
    let max_steps = setup.shared.settings.max_steps;
    let mut steps = 0;
    // The provider's own count for the last step (input + output), a floor for the estimate.
    let mut reported = 0;
    let outcome = loop {
        // Past the cap, one last call that may not use tools (see `crate::step_cap`).
        let last_call = steps >= max_steps;
        steps += 1;
        if *setup.cancel.borrow() {
            break TurnOutcome::Cancelled;
        }
        let mut system = vec![setup.system.clone()];
        // Plan mode is said at every step while it lasts (an approved plan ends it mid-turn).
        if setup.is_main && in_plan_mode(setup) {
            system.push(crate::plan_mode::INSTRUCTION.to_owned());
        }
        let tools = tool_list(setup);
        if setup.is_main && !last_call {
            setup
                .shared
                .fit_context(
                    &setup.scope,
                    &setup.model,
                    &system,
                    &tools,
                    &mut messages,
                    &mut first_new,
                    &mut reported,
                    setup.cancel.clone(),
                )
                .await;
        }
        let request = if last_call {
            ChatRequest {
                model: setup.model.clone(),
                system,
                messages: crate::step_cap::last_messages(&messages, max_steps),
                tools,
                tool_choice: Some(ToolChoice::None),
                stream: true,
                ..ChatRequest::default()
            }
        } else {
            ChatRequest {
                model: setup.model.clone(),
                system,
                messages: history::repair(&messages),
                tools,
                stream: true,
                ..ChatRequest::default()
            }
        };
        let step = match model_step(setup, request).await {
            Ok(step) => step,
            Err(StepEnd::Cancelled) => break TurnOutcome::Cancelled,
            Err(StepEnd::Failed) => break TurnOutcome::Failed,
        };
        let usage = token_usage(step.usage);
        reported = usage.total();
        turn_usage += usage;
        turn_cost = turn_cost
            .zip(
                setup
                    .shared
                    .step_cost(&setup.model, step.served_by.as_ref(), step.usage),
            )
            .map(|(before, step)| before + step);
        setup.shared.emit(
            &setup.scope,
            EventMsg::Usage(UsageNotification {
                step: steps,
                usage,
                turn: turn_usage,
                turn_cost_usd: turn_cost,
                context_window: Some(setup.shared.context_window(&setup.model)),
            }),
        );
        if let Some(id) = conversation_id {
            setup
                .shared
                .record_step_usage(id, turn_number, steps, &setup.model, step.usage)
                .await;
        }
        let text = history::text_of(&step.message);
        setup.shared.emit(
            &setup.scope,
            EventMsg::MessageCompleted {
                step: steps,
                text: text.clone(),
            },
        );
        let empty_reply = text.trim().is_empty();
        if !text.is_empty() {
            final_text = text;
        }
        let step_start = messages.len();
        if last_call {
            let answer = crate::step_cap::without_calls(step.message);
            if !answer.parts.is_empty() {
                messages.push(answer);
            }
            save_step(setup, conversation_id, &messages[step_start..]).await;
            emit_error(
                setup,
                ErrorClass::StepLimit,
                format!("the turn stopped after {max_steps} steps with tools (max_steps)"),
            );
            break TurnOutcome::StepLimit;
        }
        let calls: Vec<ToolCall> = step
            .message
            .parts
            .iter()
            .filter_map(|part| match part {
                Part::ToolCall(call) => Some(call.clone()),
                _ => None,
            })
            .collect();
        messages.push(step.message);
        if calls.is_empty() {
            save_step(setup, conversation_id, &messages[step_start..]).await;
            // A Stop hook may send the model back to work, with its reason as the next input.
            if let Some(reason) = crate::hooks::session::on_stop(
                &setup.shared,
                &setup.scope,
                setup.is_main,
                stop_hook_active,
            )
            .await
            {
                stop_hook_active = true;
                messages.push(Message::text(
                    Role::User,
                    format!("[Stop hook] The turn may not end yet: {reason}"),
                ));
                save_step(setup, conversation_id, &messages[messages.len() - 1..]).await;
                continue;
            }
            // A turn that ends on an empty reply would look like a finished answer that
            // nobody can see: the user is told (small local models do this).
            if setup.is_main && empty_reply {
                setup.shared.emit(
                    &setup.scope,
                    EventMsg::Warning {
                        message: EMPTY_REPLY.to_owned(),
                    },
                );
            }
            break TurnOutcome::Completed;
        }
        let mut results = Vec::with_capacity(calls.len());
        let mut stop = None;
        for call in &calls {
            if stop.is_some() {
                results.push(tool_result(
                    call,
                    "Not run: the turn stopped before this call.",
                    true,
                ));
                continue;
            }
            let (part, end) = handle_call(setup, call, &mut seen_calls).await;
            results.push(part);
            stop = end;
        }
        messages.push(Message {
            role: Role::User,
            parts: results,
        });
        // The assistant's message and its results: one step, saved in one transaction.
        save_step(setup, conversation_id, &messages[step_start..]).await;
        if let Some(outcome) = stop {
            break outcome;
        }
    };
    TurnResult {
        outcome,
        steps,
        usage: turn_usage,
        added: messages.split_off(first_new),
        final_text,
    }
}

mod ask;
mod call;
mod step;

use call::*;
use step::*;

pub(crate) use ask::{Asked, ask_about};
pub(crate) use call::handle_call;

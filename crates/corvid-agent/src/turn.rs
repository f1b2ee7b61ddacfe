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
use futures_util::StreamExt;
use tokio::sync::{mpsc, watch};

use crate::emitter::Scope;
use crate::history;
use crate::ledger::{CallEnd, CallMeter};
use crate::model::{ModelError, is_retryable, next_action};
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
    let mut seen_calls: Vec<(String, String)> = Vec::new();
    let mut final_text = String::new();
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
        let system = vec![setup.system.clone()];
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
        setup.shared.emit(
            &setup.scope,
            EventMsg::Usage(UsageNotification {
                step: steps,
                usage,
                turn: turn_usage,
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

/// Saves a completed step when the turn belongs to a conversation (a subagent's does not).
async fn save_step(setup: &TurnSetup, conversation_id: Option<&str>, step: &[Message]) {
    if let Some(id) = conversation_id {
        crate::persist::save(&setup.shared, id, step).await;
    }
}

struct Step {
    message: Message,
    usage: Usage,
}

enum StepEnd {
    Cancelled,
    Failed,
}

/// One streamed model call, recorded in the usage ledger however it ends.
async fn model_step(setup: &TurnSetup, request: ChatRequest) -> Result<Step, StepEnd> {
    let mut meter = CallMeter::start(&request.model);
    let result = stream_step(setup, request, &mut meter).await;
    let end = match &result {
        Ok(_) => CallEnd::Answered,
        Err(StepEnd::Cancelled) => CallEnd::Cancelled,
        Err(StepEnd::Failed) => CallEnd::Failed,
    };
    meter.finish(&setup.shared, end).await;
    result
}

/// The call itself; deltas go out as they arrive.
async fn stream_step(
    setup: &TurnSetup,
    request: ChatRequest,
    meter: &mut CallMeter,
) -> Result<Step, StepEnd> {
    let mut cancel = setup.cancel.clone();
    let stream = tokio::select! {
        result = setup.shared.model.call(request) => result,
        _ = cancel.wait_for(|cancelled| *cancelled) => return Err(StepEnd::Cancelled),
    };
    let mut stream = match stream {
        Ok(reply) => {
            meter.replied(reply.attempts);
            reply.events
        }
        Err(error) => {
            meter.failed(error.attempts);
            let next = error.next_action();
            setup.shared.emit(
                &setup.scope,
                EventMsg::Error(ErrorNotification {
                    class: error.class,
                    message: error.message.clone(),
                    next_action: next,
                    retryable: is_retryable(error.class),
                }),
            );
            return Err(StepEnd::Failed);
        }
    };
    let mut builder = ResponseBuilder::new();
    let mut usage = Usage::default();
    let mut progress = ToolProgress::default();
    loop {
        let event = tokio::select! {
            event = stream.next() => event,
            _ = cancel.wait_for(|cancelled| *cancelled) => return Err(StepEnd::Cancelled),
        };
        let Some(event) = event else { break };
        meter.saw(&event);
        if let Some(message) = progress.saw(&event, std::time::Instant::now()) {
            setup.shared.emit(&setup.scope, message);
        }
        match &event {
            StreamEvent::TextDelta { text } => {
                setup.shared.emit(
                    &setup.scope,
                    EventMsg::TextDelta {
                        delta: text.clone(),
                    },
                );
            }
            StreamEvent::ReasoningDelta { text } => {
                setup.shared.emit(
                    &setup.scope,
                    EventMsg::ReasoningDelta {
                        delta: text.clone(),
                    },
                );
            }
            StreamEvent::Usage(reported) => usage = *reported,
            StreamEvent::Error(error) => {
                let failure = ModelError::in_reply(error);
                emit_error(setup, failure.class, failure.message);
                return Err(StepEnd::Failed);
            }
            _ => {}
        }
        builder.push(&event);
    }
    match builder.finish() {
        Ok(response) => Ok(Step {
            message: Message {
                role: Role::Assistant,
                parts: response.parts,
            },
            usage,
        }),
        Err(error) => {
            let failure = ModelError::in_reply(&error);
            emit_error(setup, failure.class, failure.message);
            Err(StepEnd::Failed)
        }
    }
}

fn emit_error(setup: &TurnSetup, class: ErrorClass, message: String) {
    setup.shared.emit(
        &setup.scope,
        EventMsg::Error(ErrorNotification {
            class,
            message,
            next_action: next_action(class, None),
            retryable: is_retryable(class),
        }),
    );
}

fn token_usage(usage: Usage) -> TokenUsage {
    TokenUsage {
        input: usage.input,
        cache_read: usage.cache_read,
        cache_write: usage.cache_write,
        output: usage.output,
        reasoning: usage.reasoning,
    }
}

/// The tools this agent offers the model.
fn tool_list(setup: &TurnSetup) -> Vec<Tool> {
    offered_tools(&setup.tools, setup.is_main)
}

/// The tools an agent with `offer` is offered: the offer's (a subagent only those meant for
/// subagents), plus `task` for the main agent. The system prompt describes exactly these.
pub(crate) fn offered_tools(offer: &Offer, is_main: bool) -> Vec<Tool> {
    let mut tools: Vec<Tool> = offer
        .specs()
        .filter(|spec| is_main || spec.subagents)
        .map(|spec| Tool {
            name: spec.name.clone(),
            description: Some(spec.description.clone()),
            parameters: spec.parameters.clone(),
            strict: None,
        })
        .collect();
    if is_main {
        tools.push(crate::subagent::task_tool());
    }
    tools
}

fn tool_result(call: &ToolCall, text: &str, is_error: bool) -> Part {
    Part::ToolResult(ToolResult {
        call_id: call.id.clone(),
        name: Some(call.name.clone()),
        content: vec![ToolResultContent::Text {
            text: text.to_owned(),
        }],
        is_error,
    })
}

fn wire_image(image: &corvid_tools::ToolImage) -> corvid_wire::model::Image {
    corvid_wire::model::Image {
        source: corvid_wire::model::ImageSource::Base64 {
            media_type: image.media_type.clone(),
            data: image.data.clone(),
        },
        detail: None,
    }
}

/// Runs one call through the gate; returns its result, and an outcome when the turn must stop.
async fn handle_call(
    setup: &TurnSetup,
    call: &ToolCall,
    seen: &mut Vec<(String, String)>,
) -> (Part, Option<TurnOutcome>) {
    // Text that is not JSON (a reply cut off mid-call) is answered as such: no tool runs.
    let parsed = corvid_tools::parse_call_arguments(&call.arguments);
    let arguments = shown_arguments(&call.arguments);
    let project = &setup.shared.settings.project;
    setup.shared.emit(
        &setup.scope,
        EventMsg::ToolCall(ToolCallNotification {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            arguments: arguments.clone(),
            summary: live_summary(setup, project, &call.name, &arguments),
        }),
    );
    let signature = (call.name.clone(), normalized(&arguments));
    let repeats = seen.iter().filter(|earlier| **earlier == signature).count();
    seen.push(signature);
    let (output, stop) = if let Err(message) = parsed {
        (
            ToolOutput {
                text: format!(
                    "Not run: {message}. Send the `{}` call again with its arguments as one complete JSON object.",
                    call.name
                ),
                is_error: true,
                detail: None,
            },
            None,
        )
    } else if repeats >= REPEAT_LIMIT {
        (
            ToolOutput {
                text: format!(
                    "Not run: this exact `{}` call was already made {REPEAT_LIMIT} times in this turn with the same arguments. Its result will not change. Use what you have, try a different approach, or ask the user.",
                    call.name
                ),
                is_error: true,
                detail: None,
            },
            None,
        )
    } else {
        run_tool(setup, call, arguments).await
    };
    let (shown, total_bytes) = cut(&output.text);
    setup.shared.emit(
        &setup.scope,
        EventMsg::ToolResult(ToolResultNotification {
            call_id: call.id.clone(),
            ok: !output.is_error,
            output: shown,
            truncation: total_bytes.map(|total| corvid_protocol::Truncation {
                total_bytes: total as u64,
                total_lines: output.text.lines().count() as u64,
                full_output_path: None,
            }),
        }),
    );
    let mut part = tool_result(call, &output.text, output.is_error);
    if let (Part::ToolResult(result), Some(corvid_tools::ToolDetail::Images(images))) =
        (&mut part, &output.detail)
    {
        result.content.extend(
            images
                .iter()
                .map(|image| ToolResultContent::Image(wire_image(image))),
        );
    }
    (part, stop)
}

fn cut(text: &str) -> (String, Option<usize>) {
    if text.len() <= EVENT_OUTPUT_LIMIT {
        return (text.to_owned(), None);
    }
    let mut end = EVENT_OUTPUT_LIMIT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (format!("{}…", &text[..end]), Some(text.len()))
}

/// Arguments compared for repeats: key order and whitespace do not matter.
fn normalized(arguments: &serde_json::Value) -> String {
    serde_json::to_string(arguments).unwrap_or_default()
}

/// A call's arguments as events show them: the JSON, or the raw text when it is not JSON.
pub(crate) fn shown_arguments(text: &str) -> serde_json::Value {
    corvid_tools::parse_call_arguments(text)
        .unwrap_or_else(|_| serde_json::Value::String(text.to_owned()))
}

/// A one-line description of a call in the history, for front ends replaying it: the agent's
/// and the built-ins' lines (a path in it relative to the project); other tools by name (their
/// source may be gone since).
pub(crate) fn summarize(project: &Path, tool: &str, arguments: &serde_json::Value) -> String {
    if crate::subagent::is_task(tool) {
        return crate::subagent::summary(arguments);
    }
    corvid_tools::builtin_summary(project, tool, arguments)
        .or_else(|| {
            (tool == crate::skills::SKILL_TOOL)
                .then(|| crate::skills::skill_summary(arguments))
                .flatten()
        })
        .unwrap_or_else(|| tool.to_owned())
}

/// The line for a call being made: its source's.
fn live_summary(
    setup: &TurnSetup,
    project: &Path,
    tool: &str,
    arguments: &serde_json::Value,
) -> String {
    if setup.is_main && crate::subagent::is_task(tool) {
        return crate::subagent::summary(arguments);
    }
    if setup.tools.spec(tool).is_some() {
        return setup.tools.summary(tool, arguments);
    }
    summarize(project, tool, arguments)
}

/// What the gate sees of a prepared call: its kind as offered, and the name and origin that
/// kept rules match.
fn gate_action(prepared: &Prepared, origin: Option<&str>) -> ActionKind {
    let other = |mutating| ActionKind::Other {
        tool: prepared.tool.clone(),
        origin: origin.map(str::to_owned),
        mutating,
    };
    match prepared.kind {
        ToolKind::Read => ActionKind::Read,
        ToolKind::Edit => ActionKind::Edit {
            tool: prepared.tool.clone(),
            path: prepared
                .proposal
                .path
                .as_ref()
                .map(|path| path.display().to_string())
                .unwrap_or_default(),
        },
        ToolKind::Command => ActionKind::Command {
            command: prepared.proposal.command.clone().unwrap_or_default(),
        },
        ToolKind::Other => other(false),
        ToolKind::Mutating => other(true),
    }
}

/// The rule an "always" answer keeps: a command's prefix; for other tools, the tool or (when
/// the tool asks for it) every tool of its origin.
fn always_rule(
    action: &ActionKind,
    always: AlwaysAllow,
    origin: Option<&str>,
) -> Option<corvid_protocol::ApprovalRule> {
    match (action, always, origin) {
        (ActionKind::Other { .. } | ActionKind::Edit { .. }, AlwaysAllow::Origin, Some(origin)) => {
            Some(corvid_protocol::ApprovalRule::origin(origin))
        }
        _ => corvid_protocol::ApprovalRule::suggest_for(action),
    }
}

async fn run_tool(
    setup: &TurnSetup,
    call: &ToolCall,
    arguments: serde_json::Value,
) -> (ToolOutput, Option<TurnOutcome>) {
    let error = |text: String| {
        (
            ToolOutput {
                text,
                is_error: true,
                detail: None,
            },
            None,
        )
    };
    if setup.is_main && crate::subagent::is_task(&call.name) {
        return crate::subagent::run(setup, call, arguments).await;
    }
    let prepared = match setup.tools.prepare(&call.name, arguments).await {
        Ok(prepared) => prepared,
        Err(tool_error) => return error(tool_error.to_string()),
    };
    let (origin, always) = setup
        .tools
        .spec(&prepared.tool)
        .map(|spec| (spec.origin.clone(), spec.always_allow))
        .unwrap_or_default();
    let action = gate_action(&prepared, origin.as_deref());
    let gate = setup.shared.gate();
    // A command widened beyond the sandbox, or run without one, always asks.
    let confinement = prepared.plan.confinement().cloned();
    let gate_confinement = confinement.as_ref().map_or(
        corvid_protocol::Confinement::SandboxOff,
        crate::sandbox_state::confinement,
    );
    if decision_with_sandbox(gate.policy, &gate.rules, &action, gate_confinement)
        == GateDecision::Ask
    {
        let notice = confinement.as_ref().and_then(crate::sandbox_state::notice);
        let always_scope = match &notice {
            // A widened or unsandboxed command is asked about every time; "always" would hide
            // that.
            Some(_) => None,
            None => always_rule(&action, always, origin.as_deref()),
        };
        match ask(
            setup,
            call,
            &prepared.proposal,
            &prepared.tool,
            notice,
            always_scope,
        )
        .await
        {
            Verdict::Decided(ApprovalDecision::Approve) => {}
            Verdict::Decided(ApprovalDecision::ApproveAlways { scope }) => {
                setup.shared.add_rule(scope)
            }
            Verdict::Decided(ApprovalDecision::Reject { feedback }) => {
                let text = match feedback.filter(|feedback| !feedback.trim().is_empty()) {
                    Some(feedback) => format!(
                        "The user rejected this `{}` call. Their feedback: {feedback}",
                        call.name
                    ),
                    None => format!(
                        "The user rejected this `{}` call. Ask what they want instead, or take another approach.",
                        call.name
                    ),
                };
                return error(text);
            }
            unanswered @ (Verdict::Interrupted | Verdict::Cancelled | Verdict::SessionClosed) => {
                let why = match unanswered {
                    Verdict::Interrupted => "the user sent a new message",
                    Verdict::Cancelled => "the turn was cancelled",
                    _ => "the session was closed",
                };
                return (
                    ToolOutput {
                        text: format!("Not run: {why} while this call waited for approval."),
                        is_error: true,
                        detail: None,
                    },
                    Some(TurnOutcome::Cancelled),
                );
            }
        }
    }
    // Anything that may change the project gets a checkpoint first.
    if matches!(
        prepared.kind,
        ToolKind::Edit | ToolKind::Command | ToolKind::Mutating
    ) {
        setup.shared.before_change(&setup.scope).await;
    }
    let cancellation = Cancellation::new(setup.cancel.clone());
    let output = match apply_streaming(setup, call, prepared, cancellation).await {
        Ok(output) => output,
        Err(tool_error) => ToolOutput {
            text: tool_error.to_string(),
            is_error: true,
            detail: None,
        },
    };
    if let Some(corvid_tools::ToolDetail::Todos(todos)) = &output.detail {
        setup.shared.set_todos(&setup.scope, todos);
    }
    let stop = setup.cancel.borrow().then_some(TurnOutcome::Cancelled);
    (output, stop)
}

/// Runs a prepared call; a command's output goes out as `tool_output_delta` events while it
/// runs (the tools batch and cap it).
async fn apply_streaming(
    setup: &TurnSetup,
    call: &ToolCall,
    prepared: Prepared,
    cancellation: Cancellation,
) -> Result<ToolOutput, corvid_tools::ToolError> {
    let (sender, mut receiver) = mpsc::channel(16);
    let sink = corvid_tools::OutputSink::new(sender);
    let emit = |text: String| {
        setup.shared.emit(
            &setup.scope,
            EventMsg::ToolOutputDelta {
                call_id: call.id.clone(),
                text,
            },
        );
    };
    let run = Run {
        cancel: cancellation,
        sink: Some(sink),
    };
    let apply = setup.tools.apply(&prepared.tool, prepared.plan, run);
    tokio::pin!(apply);
    let result = loop {
        tokio::select! {
            result = &mut apply => break result,
            Some(text) = receiver.recv() => emit(text),
        }
    };
    // What the output thread sent before the command ended; something the command left holding
    // the pipe cannot keep the turn waiting.
    while let Ok(text) = receiver.try_recv() {
        emit(text);
    }
    result
}

/// Shows the proposal and waits for the user (or a cancel).
async fn ask(
    setup: &TurnSetup,
    call: &ToolCall,
    proposal: &corvid_tools::Proposal,
    tool: &str,
    sandbox: Option<corvid_protocol::SandboxNotice>,
    always_scope: Option<corvid_protocol::ApprovalRule>,
) -> Verdict {
    let proposal_id = format!("p_{}", call.id);
    let path = proposal
        .path
        .as_ref()
        .map(|path| path.display().to_string())
        .unwrap_or_default();
    let kind = match (&proposal.diff, &proposal.command) {
        (Some(diff), _) if proposal.whole_file => ProposalKind::Write {
            path,
            diff: diff.clone(),
        },
        (Some(diff), _) => ProposalKind::Edit {
            path,
            diff: diff.clone(),
        },
        (None, Some(command)) => ProposalKind::Command {
            command: command.clone(),
            // Commands run in the project root; event paths are relative to it.
            cwd: ".".to_owned(),
        },
        _ => ProposalKind::Other {
            tool: tool.to_owned(),
            summary: proposal.summary.clone(),
        },
    };
    // Registered before anyone hears of it, so an answer sent the moment the event arrives
    // always finds it waiting; whoever answers first wins (`crate::session::Approvals`).
    let mut answer = match setup.shared.approvals.register(&proposal_id) {
        Ok(answer) => answer,
        Err(closed) => return closed,
    };
    setup.shared.emit(
        &setup.scope,
        EventMsg::Proposal(ProposalNotification {
            proposal_id: proposal_id.clone(),
            call_id: call.id.clone(),
            kind,
            always_scope,
            sandbox,
        }),
    );
    let mut cancel = setup.cancel.clone();
    let verdict = tokio::select! {
        // A dropped reply means the map itself is gone: the session ended.
        verdict = &mut answer => verdict.unwrap_or(Verdict::SessionClosed),
        _ = cancel.wait_for(|cancelled| *cancelled) => {
            // An answer given before the cancel was seen wins (closing the session answers
            // "session closed" first, then cancels): when the proposal is no longer waiting,
            // its answer was sent under the map's lock and is already here.
            if setup.shared.approvals.withdraw(&proposal_id, &Verdict::Cancelled) {
                Verdict::Cancelled
            } else {
                answer.try_recv().unwrap_or(Verdict::Cancelled)
            }
        }
    };
    let outcome = match &verdict {
        Verdict::Decided(ApprovalDecision::Reject { .. }) => ProposalOutcome::Rejected,
        Verdict::Decided(_) => ProposalOutcome::Approved,
        Verdict::Interrupted | Verdict::Cancelled | Verdict::SessionClosed => {
            ProposalOutcome::Interrupted
        }
    };
    setup.shared.emit(
        &setup.scope,
        EventMsg::ProposalClosed {
            proposal_id,
            outcome,
        },
    );
    verdict
}

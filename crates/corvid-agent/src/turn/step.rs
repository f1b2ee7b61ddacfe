//! One model step of a turn: the request, the streamed reply, its usage and errors.

use futures_util::StreamExt;

use super::{
    CallEnd, CallMeter, ChatRequest, ErrorClass, ErrorNotification, EventMsg, Message, ModelError,
    ResponseBuilder, Role, StreamEvent, TokenUsage, Tool, ToolProgress, TurnSetup, Usage,
};

/// Saves a completed step when the turn belongs to a conversation (a subagent's does not).
pub(super) async fn save_step(setup: &TurnSetup, conversation_id: Option<&str>, step: &[Message]) {
    if let Some(id) = conversation_id {
        crate::persist::save(&setup.shared, id, step).await;
    }
}

pub(super) struct Step {
    pub(super) message: Message,
    pub(super) usage: Usage,
    /// The target that answered, when the model client says (see `ModelReply::served_by`).
    pub(super) served_by: Option<crate::ModelRoute>,
}

pub(super) enum StepEnd {
    Cancelled,
    Failed,
}

/// One streamed model call, recorded in the usage ledger however it ends.
pub(super) async fn model_step(setup: &TurnSetup, request: ChatRequest) -> Result<Step, StepEnd> {
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
pub(super) async fn stream_step(
    setup: &TurnSetup,
    request: ChatRequest,
    meter: &mut CallMeter,
) -> Result<Step, StepEnd> {
    let mut cancel = setup.cancel.clone();
    let served_by;
    let stream = tokio::select! {
        result = setup.shared.model.call(request) => result,
        _ = cancel.wait_for(|cancelled| *cancelled) => return Err(StepEnd::Cancelled),
    };
    let mut stream = match stream {
        Ok(reply) => {
            meter.replied(reply.attempts);
            meter.served_by(reply.served_by.clone());
            served_by = reply.served_by;
            reply.events
        }
        Err(error) => {
            meter.failed(error.attempts);
            let next = error.next_action();
            setup.shared.emit(
                &setup.scope,
                EventMsg::Error(
                    ErrorNotification::new(error.class, error.message.clone())
                        .with_next_action(next),
                ),
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
            served_by,
        }),
        Err(error) => {
            let failure = ModelError::in_reply(&error);
            emit_error(setup, failure.class, failure.message);
            Err(StepEnd::Failed)
        }
    }
}

pub(super) fn emit_error(setup: &TurnSetup, class: ErrorClass, message: String) {
    setup.shared.emit(
        &setup.scope,
        EventMsg::Error(ErrorNotification::new(class, message)),
    );
}

pub(super) fn token_usage(usage: Usage) -> TokenUsage {
    TokenUsage {
        input: usage.input,
        cache_read: usage.cache_read,
        cache_write: usage.cache_write,
        output: usage.output,
        reasoning: usage.reasoning,
    }
}

/// The tools this agent offers the model.
/// In plan mode the main agent also has `present_plan`.
pub(super) fn tool_list(setup: &TurnSetup) -> Vec<Tool> {
    let mut tools = crate::tool_view::offered_tools(
        &setup.tools,
        setup.is_main,
        &setup.shared.agents.current(),
    );
    if setup.is_main && in_plan_mode(setup) {
        tools.push(crate::plan_mode::present_plan_tool());
    }
    tools
}

/// Whether the session is in plan mode now (it can leave it during a turn).
pub(super) fn in_plan_mode(setup: &TurnSetup) -> bool {
    setup.shared.gate().policy == corvid_protocol::ApprovalPolicy::Plan
}

//! One tool call of a turn: announced, checked (hooks, rules, the gate), asked about, run.

use super::ask::ask;
use super::{
    ActionKind, AlwaysAllow, ApprovalDecision, Cancellation, EVENT_OUTPUT_LIMIT, EventMsg,
    GateDecision, Part, Path, Prepared, REPEAT_LIMIT, Run, ToolCall, ToolCallNotification,
    ToolKind, ToolOutput, ToolResult, ToolResultContent, ToolResultNotification, TurnOutcome,
    TurnSetup, Verdict, decision_with_sandbox, mpsc,
};

pub(super) fn tool_result(call: &ToolCall, text: &str, is_error: bool) -> Part {
    Part::ToolResult(ToolResult {
        call_id: call.id.clone(),
        name: Some(call.name.clone()),
        content: vec![ToolResultContent::Text {
            text: text.to_owned(),
        }],
        is_error,
    })
}

pub(super) fn wire_image(image: &corvid_tools::ToolImage) -> corvid_wire::model::Image {
    corvid_wire::model::Image {
        source: corvid_wire::model::ImageSource::Base64 {
            media_type: image.media_type.clone(),
            data: image.data.clone(),
        },
        detail: None,
    }
}

/// Runs one call through the gate; returns its result, and an outcome when the turn must stop.
pub(crate) async fn handle_call(
    setup: &TurnSetup,
    call: &ToolCall,
    seen: &mut Vec<(String, String)>,
) -> (Part, Option<TurnOutcome>) {
    // Text that is not JSON (a reply cut off mid-call) is answered as such: no tool runs.
    let parsed = corvid_tools::parse_call_arguments(&call.arguments);
    let arguments = crate::tool_view::shown_arguments(&call.arguments);
    let signature = (call.name.clone(), normalized(&arguments));
    let repeats = seen.iter().filter(|earlier| **earlier == signature).count();
    seen.push(signature);
    let (output, stop) = if let Err(message) = parsed {
        announce(setup, call, &arguments, Vec::new());
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
        announce(setup, call, &arguments, Vec::new());
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
    let change = match &output.detail {
        Some(corvid_tools::ToolDetail::Diff { path, diff }) if !output.is_error => {
            let change = corvid_protocol::AppliedChange {
                path: path.to_string_lossy().replace('\\', "/"),
                diff: diff.clone(),
            };
            setup.shared.call_facts.changed(&call.id, change.clone());
            Some(change)
        }
        _ => None,
    };
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
            change,
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

/// Says a call was made, with its kind as offered and the files it touches (known once the
/// call is prepared).
pub(super) fn announce(
    setup: &TurnSetup,
    call: &ToolCall,
    arguments: &serde_json::Value,
    locations: Vec<String>,
) {
    let project = &setup.shared.settings.project;
    let kind = crate::tool_facts::call_kind(&setup.tools, &call.name);
    setup
        .shared
        .call_facts
        .record(&call.id, kind.clone(), locations.clone());
    setup.shared.emit(
        &setup.scope,
        EventMsg::ToolCall(ToolCallNotification {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            kind,
            arguments: arguments.clone(),
            summary: live_summary(setup, project, &call.name, arguments),
            locations,
        }),
    );
}

pub(super) fn cut(text: &str) -> (String, Option<usize>) {
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
pub(super) fn normalized(arguments: &serde_json::Value) -> String {
    serde_json::to_string(arguments).unwrap_or_default()
}

/// The line for a call being made: its source's.
pub(super) fn live_summary(
    setup: &TurnSetup,
    project: &Path,
    tool: &str,
    arguments: &serde_json::Value,
) -> String {
    if setup.is_main && crate::subagent::is_task(tool) {
        return crate::subagent::summary(arguments);
    }
    if setup.is_main && crate::plan_mode::is_present_plan(tool) {
        return crate::plan_mode::summary(arguments);
    }
    if setup.tools.spec(tool).is_some() {
        return setup.tools.summary(tool, arguments);
    }
    crate::tool_view::summarize(project, tool, arguments)
}

/// Why a read-only session (`read-only` or `plan`) refuses a call.
fn read_only_refusal(
    policy: corvid_protocol::ApprovalPolicy,
    tool: &str,
    confinement: Option<&corvid_tools::Confinement>,
) -> String {
    let mode = if policy == corvid_protocol::ApprovalPolicy::Plan {
        "in plan mode"
    } else {
        "read-only"
    };
    let why = match confinement {
        Some(corvid_tools::Confinement::Widened(_)) => {
            "a command asking for more than the sandbox allows (`sandbox`) cannot run read-only; run it without `sandbox`".to_owned()
        }
        Some(corvid_tools::Confinement::Unavailable(reason)) => format!(
            "commands run read-only only inside the kernel sandbox, and there is none here ({reason})"
        ),
        Some(corvid_tools::Confinement::Off) => {
            "commands run read-only only inside the kernel sandbox, and the user turned it off".to_owned()
        }
        Some(corvid_tools::Confinement::Sandboxed) | None => {
            format!("`{tool}` may change something")
        }
    };
    format!(
        "Not run: the session is {mode}, and {why}. Read, search and plan instead; the user can change the approval policy."
    )
}

/// What the gate sees of a prepared call: its kind as offered, and the name and origin that
/// kept rules match.
pub(super) fn gate_action(prepared: &Prepared, origin: Option<&str>) -> ActionKind {
    let other = |mutating| ActionKind::Other {
        tool: prepared.tool.clone(),
        origin: origin.map(str::to_owned),
        mutating,
    };
    match prepared.kind {
        ToolKind::Read | ToolKind::Search => ActionKind::Read,
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
        ToolKind::Mutating | ToolKind::Fetch => other(true),
    }
}

/// The rule an "always" answer keeps: a command's prefix; for other tools, the tool or (when
/// the tool asks for it) every tool of its origin.
pub(super) fn always_rule(
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

pub(super) async fn run_tool(
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
    let hooked =
        crate::hooks::session::pre_tool(&setup.shared, &setup.scope, &call.name, &arguments).await;
    if let crate::hooks::session::PreTool::Refuse(reason) = &hooked {
        // Announced first, as every call is, so faces show the command a hook refused.
        announce(setup, call, &arguments, Vec::new());
        return error(format!(
            "Not run: a PreToolUse hook blocked this `{}` call: {reason}",
            call.name
        ));
    }
    // Saved rules: a deny wins over everything, even a hook's allow.
    let ruled =
        setup
            .shared
            .permissions
            .decide(&setup.shared.settings.project, &call.name, &arguments);
    if let Some(crate::permissions::RuleDecision::Deny { rule, source }) = &ruled {
        announce(setup, call, &arguments, Vec::new());
        return error(format!(
            "Not run: the permission rule `{rule}` in {source} denies this `{}` call. Do not retry it; take another approach or ask the user.",
            call.name
        ));
    }
    if setup.is_main && crate::subagent::is_task(&call.name) {
        announce(setup, call, &arguments, Vec::new());
        return crate::subagent::run(setup, call, arguments).await;
    }
    if setup.is_main && crate::plan_mode::is_present_plan(&call.name) {
        announce(setup, call, &arguments, Vec::new());
        return crate::plan_mode::run(setup, call, &arguments).await;
    }
    let hook_arguments = arguments.clone();
    let mut prepared = match setup.tools.prepare(&call.name, arguments.clone()).await {
        Ok(prepared) => prepared,
        Err(tool_error) => {
            announce(setup, call, &arguments, Vec::new());
            return error(tool_error.to_string());
        }
    };
    let locations = prepared
        .proposal
        .path
        .iter()
        .map(|path| path.display().to_string())
        .collect();
    announce(setup, call, &arguments, locations);
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
    let decision = decision_with_sandbox(gate.policy, &gate.rules, &action, gate_confinement);
    // Read-only is the engine's: no hook or saved rule can allow a call it refuses, and a
    // command it lets through runs with nothing writable.
    let read_only_command = gate.policy.is_read_only() && decision == GateDecision::Run && {
        matches!(action, ActionKind::Command { .. })
    };
    if decision == GateDecision::Refuse || (read_only_command && !prepared.plan.confine_read_only())
    {
        return error(read_only_refusal(
            gate.policy,
            &call.name,
            confinement.as_ref(),
        ));
    }
    let gate_asks = decision == GateDecision::Ask;
    // A hook may allow a call the policy would ask about, never a widened or unsandboxed one.
    let widened = confinement
        .as_ref()
        .and_then(crate::sandbox_state::notice)
        .is_some();
    let must_ask = match (hooked, ruled) {
        (crate::hooks::session::PreTool::Ask, _)
        | (_, Some(crate::permissions::RuleDecision::Ask)) => true,
        (crate::hooks::session::PreTool::Allow, _)
        | (_, Some(crate::permissions::RuleDecision::Allow)) => gate_asks && widened,
        _ => gate_asks,
    };
    if must_ask {
        let notice = confinement.as_ref().and_then(crate::sandbox_state::notice);
        let always_scope = match &notice {
            // A widened or unsandboxed command is asked about every time; "always" would hide
            // that.
            Some(_) => None,
            None => always_rule(&action, always, origin.as_deref()),
        };
        let verdict = ask(
            setup,
            call,
            &prepared.proposal,
            &prepared.tool,
            notice,
            always_scope,
        )
        .await;
        match verdict {
            Verdict::Decided(ApprovalDecision::Approve) => {}
            Verdict::Decided(ApprovalDecision::ApproveAlways { scope }) => {
                setup.shared.add_rule(scope)
            }
            // Kept for the session at once, and saved for later sessions.
            Verdict::Decided(ApprovalDecision::SaveAlways { scope, file }) => {
                if let Err(error) = setup.shared.permissions.save_allow(&scope, file) {
                    setup.shared.emit(
                        &setup.scope,
                        EventMsg::Warning {
                            message: format!(
                                "the rule is kept for this session but was not saved: {error}"
                            ),
                        },
                    );
                }
                setup.shared.add_rule(scope);
            }
            Verdict::Decided(ApprovalDecision::SaveNever { scope, file }) => {
                return error(crate::permissions::refuse_and_save(
                    &setup.shared,
                    &setup.scope,
                    &call.name,
                    &scope,
                    file,
                ));
            }
            // Only a plan can be approved in another version; for a tool call, the user's text
            // is feedback and nothing runs.
            Verdict::Decided(ApprovalDecision::ApproveEdited { text }) => {
                return error(format!(
                    "The user did not approve this `{}` call as it is. Their answer: {text}",
                    call.name
                ));
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
    // Anything that may change the project gets a checkpoint first (a read-only command
    // cannot).
    if !read_only_command
        && matches!(
            prepared.kind,
            ToolKind::Edit | ToolKind::Command | ToolKind::Mutating
        )
    {
        let shared = &setup.shared;
        shared
            .checkpoints
            .before_change(&shared.journal, &setup.scope)
            .await;
    }
    let cancellation = Cancellation::new(setup.cancel.clone());
    let mut output = match apply_streaming(setup, call, prepared, cancellation).await {
        Ok(output) => output,
        Err(tool_error) => ToolOutput {
            text: tool_error.to_string(),
            is_error: true,
            detail: None,
        },
    };
    crate::hooks::session::post_tool(
        &setup.shared,
        &setup.scope,
        &call.name,
        &hook_arguments,
        &mut output,
    )
    .await;
    if let Some(corvid_tools::ToolDetail::Todos(todos)) = &output.detail {
        setup.shared.set_todos(&setup.scope, todos);
    }
    let stop = setup.cancel.borrow().then_some(TurnOutcome::Cancelled);
    (output, stop)
}

/// Runs a prepared call; a command's output goes out as `tool_output_delta` events while it
/// runs (the tools batch and cap it).
pub(super) async fn apply_streaming(
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

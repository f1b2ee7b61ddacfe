//! `corvid exec`: one agent turn for scripts. A fresh conversation unless told to continue one;
//! the prompt from the argument or stdin; the answer, every event as JSON, or only the final
//! message on stdout; and an exit status a script can branch on.

use std::io::{IsTerminal, Read, Write};

use corvid_agent::OpenConversation;
use corvid_config::Loaded;
use corvid_protocol::{
    ApprovalDecision, ApprovalPolicy, Event, EventMsg, Op, PROTOCOL_VERSION, ProposalKind,
    ProtocolHello, Response, SendParams, ServerFrame, ServerRequest, SessionFrame, TurnOutcome,
};

use crate::agent_front::{AgentArgs, start};

/// Exit statuses, as `--help` documents them.
pub(crate) const COMPLETED: u8 = 0;
pub(crate) const FAILED: u8 = 1;
pub(crate) const USAGE: u8 = 2;
pub(crate) const REFUSED: u8 = 3;

/// What goes to stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Output {
    /// The answer as it streams, tool lines and a closing summary.
    All,
    /// Only the final message of the turn.
    Last,
}

#[derive(Debug, clap::Args)]
pub(crate) struct ExecArgs {
    /// What to do; `-` (or no prompt with a piped stdin) reads it from stdin.
    prompt: Option<String>,
    /// Print every event as a JSON line on stdout.
    #[arg(long, conflicts_with = "output")]
    json: bool,
    /// all: the answer as it streams, tool lines and a summary; last: only the final message.
    #[arg(long, value_enum, default_value = "all")]
    output: Output,
    /// Continue the project's most recent conversation instead of starting a new one.
    #[arg(long = "continue", conflicts_with = "resume")]
    continue_last: bool,
    /// Continue this conversation (ids: `/list` in corvid chat).
    #[arg(long, value_name = "ID")]
    resume: Option<String>,
    /// Plan mode: explore read-only, print the plan the agent presents, and exit without
    /// changing anything (the same as `--approval plan`).
    #[arg(long)]
    plan: bool,
    #[command(flatten)]
    agent: AgentArgs,
}

/// Runs `corvid exec`; the exit status is the answer.
pub(crate) async fn run(loaded: &Loaded, args: &ExecArgs) -> anyhow::Result<u8> {
    let prompt = match read_prompt(args.prompt.as_deref()) {
        Ok(prompt) => prompt,
        Err(message) => {
            eprintln!("corvid exec: {message}");
            return Ok(USAGE);
        }
    };
    // The session opens on the conversation asked for, so the prompt can never land in another.
    let which = match (&args.resume, args.continue_last) {
        (Some(id), _) => OpenConversation::Existing(id.clone()),
        (None, true) => OpenConversation::Current,
        (None, false) => OpenConversation::New,
    };
    let (handle, mut events) = match start(loaded, &args.agent, "exec", which).await {
        Ok(started) => started,
        Err(error) => match error.downcast_ref::<corvid_agent::AgentError>() {
            Some(unknown @ corvid_agent::AgentError::UnknownConversation { .. }) => {
                eprintln!("corvid exec: {unknown}");
                return Ok(USAGE);
            }
            _ => return Err(error),
        },
    };
    let mut stdout = std::io::stdout();
    // JSON lines, one shape: each line a `ServerFrame` as the page's socket carries it — the
    // `protocol` hello first, then `event` and `request` frames in the session's order.
    let emit = |frame: &ServerFrame, stdout: &mut std::io::Stdout| -> std::io::Result<()> {
        serde_json::to_writer(&mut *stdout, frame)?;
        stdout.write_all(b"\n")?;
        stdout.flush()
    };
    if args.json {
        let hello = ServerFrame::Protocol(ProtocolHello {
            version: PROTOCOL_VERSION,
            schema: None,
            commands: corvid_protocol::commands::specs(&handle.commands()),
        });
        emit(&hello, &mut stdout)?;
    }
    if args.plan {
        handle.submit(Op::SetApprovalPolicy {
            policy: ApprovalPolicy::Plan,
        });
    }
    // `/name arguments` runs a custom command or a skill; any other text (a `/path` too) is
    // the message as it is.
    let message = match corvid_protocol::commands::parse(&prompt, &handle.commands()) {
        Some(Ok(op @ Op::Send(_))) => op,
        _ => Op::Send(SendParams::text(prompt)),
    };
    let sent = handle.submit(message);
    let mut outcome = None;
    let mut started = false;
    let mut refused = 0u32;
    let mut last_message = String::new();
    let mut tools = std::collections::HashMap::new();
    while let Some(frame) = events.recv().await {
        if args.json {
            emit(&ServerFrame::from(frame.clone()), &mut stdout)?;
        }
        let event = match frame {
            SessionFrame::Event(event) => event,
            // Plan mode's answer is the plan: printed, and the turn stops there (nothing ran
            // that could change the project).
            SessionFrame::Request(ServerRequest { approval, .. })
                if matches!(approval.kind, ProposalKind::Plan { .. }) =>
            {
                if let ProposalKind::Plan { plan } = &approval.kind
                    && !args.json
                {
                    writeln!(stdout, "{}", plan.trim_end())?;
                    stdout.flush()?;
                }
                handle.submit(Op::Cancel);
                outcome = Some(TurnOutcome::Completed);
                last_message.clear();
                break;
            }
            SessionFrame::Request(ServerRequest { id, approval, .. }) => {
                refused += 1;
                // A widened or unsandboxed command asks under every policy; say why.
                let why = match &approval.notice {
                    Some(notice) => format!(" ({notice})"),
                    None => String::new(),
                };
                if !args.json {
                    eprintln!(
                        "corvid exec: refused {}{why} (needs approval under the {} policy; --approval auto-edit or full-auto allows more)",
                        approval.title,
                        args.agent.approval(loaded)
                    );
                }
                // Nobody else answers exec's own new session: this answer is taken.
                let _ = handle.respond(Response::new(
                    id,
                    ApprovalDecision::Reject {
                        feedback: Some(format!(
                            "corvid exec runs without a person to ask, under the {} approval policy; this action needs approval{why}, so it was not run. Say what you would do instead.",
                            args.agent.approval(loaded)
                        )),
                    },
                ));
                continue;
            }
        };
        if !args.json
            && args.output == Output::All
            && let EventMsg::Ready(ready) = &event.msg
            && let Some(sandbox) = &ready.sandbox
        {
            writeln!(stdout, "{}", corvid_tui::sandbox_banner(sandbox))?;
        }
        if !args.json && args.output == Output::All {
            print_event(&event, &mut tools, &mut stdout)?;
        }
        match &event.msg {
            EventMsg::MessageCompleted { text, .. } if event.depth == 0 => {
                last_message = text.clone();
            }
            EventMsg::TurnFinished(finished) if event.depth == 0 => {
                outcome = Some(finished.outcome);
                break;
            }
            // The message itself was refused (an image for a model without image input, an
            // unknown command): no turn follows.
            EventMsg::TurnStarted { .. } if event.depth == 0 => started = true,
            EventMsg::Error(_) if event.id == sent && !started => break,
            _ => {}
        }
    }
    // Waits for the engine to stop, so nothing it still writes is cut off by the exit.
    handle.close().await;
    if args.output == Output::Last && !args.json && !last_message.is_empty() {
        writeln!(stdout, "{}", last_message.trim_end())?;
    }
    Ok(match outcome {
        Some(TurnOutcome::Completed) if refused > 0 => REFUSED,
        Some(TurnOutcome::Completed) => COMPLETED,
        _ => FAILED,
    })
}

/// Why there is no prompt to send (printed after "corvid exec: ", exit status 2).
#[derive(Debug, thiserror::Error)]
enum PromptError {
    #[error("no prompt: give it as an argument, or `-` to read it from stdin")]
    Missing,
    #[error("cannot read the prompt from stdin: {0}")]
    Stdin(std::io::Error),
    #[error("the prompt is empty")]
    Empty,
}

/// The prompt: the argument, or stdin for `-` or when stdin is piped and no argument is given.
fn read_prompt(argument: Option<&str>) -> Result<String, PromptError> {
    let from_stdin = match argument {
        Some("-") => true,
        Some(text) => return non_empty(text.to_owned()),
        None if std::io::stdin().is_terminal() => return Err(PromptError::Missing),
        None => true,
    };
    debug_assert!(from_stdin);
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(PromptError::Stdin)?;
    non_empty(text)
}

fn non_empty(text: String) -> Result<String, PromptError> {
    if text.trim().is_empty() {
        Err(PromptError::Empty)
    } else {
        Ok(text)
    }
}

fn print_event(
    event: &Event,
    tools: &mut std::collections::HashMap<String, String>,
    out: &mut impl Write,
) -> std::io::Result<()> {
    let indent = "  ".repeat(event.depth as usize);
    match &event.msg {
        EventMsg::TextDelta { delta } if event.depth == 0 => write!(out, "{delta}")?,
        EventMsg::ToolCall(call) => {
            tools.insert(call.call_id.clone(), call.summary.clone());
        }
        EventMsg::ToolOutputDelta { text, .. } => {
            // A running command's output as it comes, dimmed on a terminal so the answer
            // stands out; the result line follows it.
            if std::io::stdout().is_terminal() && !corvid_tui::no_color() {
                write!(out, "\x1b[2m{text}\x1b[0m")?
            } else {
                write!(out, "{text}")?
            }
        }
        EventMsg::ToolResult(result) => {
            let summary = tools.remove(&result.call_id).unwrap_or_default();
            let line = corvid_tui::render::tool_line(
                &summary,
                Some((result.ok, &result.output)),
                event.depth,
            );
            write!(out, "\n{}", corvid_tui::render::plain(&[line]))?;
        }
        EventMsg::SubagentStarted { description, .. } => {
            writeln!(out, "\n{indent}⇢ subagent: {description}")?
        }
        EventMsg::Error(error) => writeln!(
            out,
            "\n{indent}error ({}): {} {}",
            corvid_tui::class_words(error.class),
            error.message,
            error.next_action
        )?,
        EventMsg::Warning { message } => writeln!(out, "warning: {message}")?,
        EventMsg::Compacted {
            tokens_before,
            tokens_after,
            context_window,
            messages_summarized,
        } => writeln!(
            out,
            "\n{indent}[compacted: {messages_summarized} older messages summarised · about {tokens_before} → {tokens_after} tokens of {context_window}]"
        )?,
        EventMsg::TurnFinished(finished) if event.depth == 0 => {
            let outcome = match finished.outcome {
                TurnOutcome::Completed => "completed",
                TurnOutcome::Cancelled => "cancelled",
                TurnOutcome::Failed => "failed",
                TurnOutcome::StepLimit => "stopped at the step limit",
            };
            let usage = finished.usage;
            writeln!(
                out,
                "\n[{outcome} · {} · tokens in {} (cached {}) out {}]",
                corvid_tui::render::plural(u64::from(finished.steps), "step"),
                usage.total_input(),
                usage.cache_read,
                usage.output
            )?;
        }
        _ => {}
    }
    out.flush()
}

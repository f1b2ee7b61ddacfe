//! The agent's terminal front ends: `corvid exec` (one turn, headless, optionally JSON lines)
//! and `corvid chat` (interactive). Both are clients of the engine's protocol only.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use corvid_agent::{OpenConversation, Session, Subscription};
use corvid_config::Loaded;
use corvid_protocol::{
    ApprovalDecision, ApprovalPolicy, ApprovalRule, ApproveParams, ChangeKind, Event, EventMsg, Op,
    ProposalKind, SendParams, TurnOutcome,
};
use tokio::io::AsyncBufReadExt;

use crate::compose::Composition;

/// Options shared by `exec` and `chat`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct AgentArgs {
    /// The model (alias, provider/model, or a bare name); default: default_model.
    #[arg(long)]
    model: Option<String>,
    /// ask (reads run; writes and commands ask), auto-edit (edits run; commands ask), full-auto.
    #[arg(long, value_name = "POLICY", default_value = "ask")]
    approval: ApprovalPolicy,
    /// The project folder (default: the nearest folder at or above the current one, below the
    /// home folder, holding `.git`; else the current directory).
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// Model steps that may call tools in one turn (then one last step answers without tools).
    #[arg(long, default_value_t = 50)]
    max_steps: u32,
    /// The model's context window in tokens; older turns are summarised near it
    /// (default: 128000).
    #[arg(long, value_name = "TOKENS")]
    context_window: Option<u64>,
    /// on (default: commands run in the kernel sandbox) or off (they run with your full rights);
    /// overrides `sandbox` in config.toml.
    #[arg(long, value_name = "on|off", value_parser = crate::sandbox_setup::parse_setting)]
    sandbox: Option<corvid_config::SandboxSetting>,
}

/// Opens the session on the project's current conversation, with a listener that hears it from
/// its first event (start-up warnings, `ready`), as the terminal always has.
async fn start(
    loaded: &Loaded,
    args: &AgentArgs,
    front_end: &str,
) -> anyhow::Result<(Session, Subscription)> {
    let here = std::env::current_dir().context("cannot read the current directory")?;
    let folders = corvid_agent::project_folders(&here, args.project.as_deref());
    let composition = Composition::build(loaded)?;
    let model = args
        .model
        .clone()
        .unwrap_or_else(|| loaded.config.default_model.clone());
    let mut config = crate::compose::agent_config(loaded, folders, model, front_end);
    config.approval = args.approval;
    config.max_steps = args.max_steps;
    config.context_window = args.context_window;
    config.sandbox = crate::sandbox_setup::sandbox(loaded, args.sandbox);
    Ok(composition
        .agents
        .open_listening(config, OpenConversation::Current)
        .await?)
}

/// `corvid exec "<prompt>"`: one turn; JSON lines of events with `--json`; exit status 0 when
/// the turn completed. Proposals cannot be answered here: they are rejected with a note saying
/// which `--approval` would allow them.
pub(crate) async fn exec(
    loaded: &Loaded,
    args: &AgentArgs,
    prompt: &str,
    json: bool,
) -> anyhow::Result<bool> {
    let (handle, mut events) = start(loaded, args, "exec").await?;
    handle.submit(Op::Send(SendParams::text(prompt)));
    let mut stdout = std::io::stdout();
    let mut outcome = None;
    while let Some(event) = events.recv().await {
        if json {
            serde_json::to_writer(&mut stdout, &event)?;
            stdout.write_all(b"\n")?;
            stdout.flush()?;
        } else {
            if let EventMsg::Ready(ready) = &event.msg
                && let Some(sandbox) = &ready.sandbox
            {
                writeln!(stdout, "{}", sandbox_banner(sandbox))?;
            }
            print_human(&event, &mut stdout)?;
        }
        match &event.msg {
            EventMsg::Proposal(proposal) => {
                // A widened or unsandboxed command asks under every policy; say why.
                let why = match &proposal.sandbox {
                    Some(notice) => format!(" ({})", notice.describe()),
                    None => String::new(),
                };
                handle.submit(Op::Approve(ApproveParams {
                    proposal_id: proposal.proposal_id.clone(),
                    decision: ApprovalDecision::Reject {
                        feedback: Some(format!(
                            "corvid exec runs without a person to ask, under --approval {}; this action needs approval{why}, so it was not run. Say what you would do instead.",
                            args.approval
                        )),
                    },
                }));
            }
            EventMsg::TurnFinished(finished) if event.depth == 0 => {
                outcome = Some(finished.outcome);
                break;
            }
            _ => {}
        }
    }
    // Waits for the engine to stop, so nothing it still writes is cut off by the exit.
    handle.close().await;
    Ok(outcome == Some(TurnOutcome::Completed))
}

fn print_human(event: &Event, out: &mut impl Write) -> std::io::Result<()> {
    let indent = "  ".repeat(event.depth as usize);
    match &event.msg {
        EventMsg::TextDelta { delta } if event.depth == 0 => write!(out, "{delta}")?,
        EventMsg::ToolCall(call) => writeln!(out, "\n{indent}→ {}", call.summary)?,
        EventMsg::ToolOutputDelta { text, .. } => {
            // Progress, dimmed on a terminal so the answer stands out.
            if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
                write!(out, "\x1b[2m{text}\x1b[0m")?
            } else {
                write!(out, "{text}")?
            }
        }
        EventMsg::ToolResult(result) => {
            let first = result.output.lines().next().unwrap_or_default();
            let mark = if result.ok { "✓" } else { "✗" };
            writeln!(
                out,
                "{indent}  {mark} {}",
                first.chars().take(120).collect::<String>()
            )?;
        }
        EventMsg::SubagentStarted { description, .. } => {
            writeln!(out, "\n{indent}⇢ subagent: {description}")?
        }
        EventMsg::Error(error) => writeln!(
            out,
            "\n{indent}error ({:?}): {}\n{indent}{}",
            error.class, error.message, error.next_action
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
        EventMsg::Undone { turn, files } => {
            writeln!(out, "undid turn {turn}:")?;
            for file in files {
                writeln!(out, "  {} {}", change_mark(file.change), file.path)?;
            }
        }
        EventMsg::Diff { turns } if turns.is_empty() => {
            writeln!(out, "no changes by the agent in this conversation")?
        }
        EventMsg::Diff { turns } => {
            for turn in turns {
                writeln!(out, "── turn {} ──", turn.turn)?;
                write!(out, "{}", turn.diff)?;
            }
        }
        EventMsg::TurnFinished(finished) if event.depth == 0 => {
            let usage = finished.usage;
            writeln!(
                out,
                "\n[{:?} · {} steps · tokens in {} (cached {}) out {}]",
                finished.outcome,
                finished.steps,
                usage.total_input(),
                usage.cache_read,
                usage.output
            )?;
        }
        _ => {}
    }
    out.flush()
}

/// `corvid chat`: an interactive session in the terminal.
pub(crate) async fn chat(loaded: &Loaded, args: &AgentArgs) -> anyhow::Result<()> {
    let (handle, mut events) = start(loaded, args, "chat").await?;
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    let mut stdout = std::io::stdout();
    let mut busy = false;
    let mut pending_proposal: Option<(String, Option<ApprovalRule>)> = None;
    let mut last_interrupt: Option<std::time::Instant> = None;
    writeln!(
        stdout,
        "corvid chat — /help for commands; Ctrl-C cancels a turn, twice exits."
    )?;
    prompt(&mut stdout, busy)?;
    loop {
        tokio::select! {
            event = events.recv() => {
                let Some(event) = event else { break };
                match &event.msg {
                    EventMsg::Ready(ready) => {
                        writeln!(stdout, "model {} · project {} · approvals {}", ready.model, ready.cwd, ready.approval_policy)?;
                        if let Some(sandbox) = &ready.sandbox {
                            writeln!(stdout, "{}", sandbox_banner(sandbox))?;
                        }
                        prompt(&mut stdout, busy)?;
                    }
                    EventMsg::TurnStarted { .. } => busy = true,
                    EventMsg::Proposal(proposal) => {
                        show_proposal(&proposal.kind, &mut stdout)?;
                        if let Some(notice) = &proposal.sandbox {
                            writeln!(stdout, "  ! {}", notice.describe())?;
                        }
                        write!(stdout, "allow? [y]es / [a]lways / [n]o, or type feedback to reject: ")?;
                        stdout.flush()?;
                        pending_proposal = Some((proposal.proposal_id.clone(), proposal.always_scope.clone()));
                    }
                    EventMsg::ConversationList { conversations, current } => {
                        for conversation in conversations {
                            let mark = if current.as_ref() == Some(&conversation.id) { "*" } else { " " };
                            writeln!(stdout, "{mark} {}  {} ({} messages)", conversation.id, conversation.title, conversation.message_count)?;
                        }
                        prompt(&mut stdout, busy)?;
                    }
                    EventMsg::ConversationSwitched { conversation, history } => {
                        writeln!(stdout, "now in {} {} ({} entries)", conversation.id, conversation.title, history.len())?;
                        prompt(&mut stdout, busy)?;
                    }
                    EventMsg::ConversationCleared { .. } => { writeln!(stdout, "cleared")?; prompt(&mut stdout, busy)?; }
                    EventMsg::SettingsChanged { model, approval_policy } => {
                        writeln!(stdout, "model {model} · approvals {approval_policy}")?;
                        prompt(&mut stdout, busy)?;
                    }
                    EventMsg::Undone { .. } | EventMsg::Diff { .. } => {
                        print_human(&event, &mut stdout)?;
                        prompt(&mut stdout, busy)?;
                        continue;
                    }
                    EventMsg::Compacted { .. } | EventMsg::Warning { .. } | EventMsg::Error(_) if !busy => {
                        print_human(&event, &mut stdout)?;
                        prompt(&mut stdout, busy)?;
                        continue;
                    }
                    EventMsg::ShutdownComplete => break,
                    _ => {}
                }
                print_human(&event, &mut stdout)?;
                if let EventMsg::TurnFinished(_) = &event.msg && event.depth == 0 {
                    busy = false;
                    prompt(&mut stdout, busy)?;
                }
            }
            line = lines.next_line() => {
                let Some(line) = line? else {
                    handle.submit(Op::Shutdown);
                    continue;
                };
                let line = line.trim().to_owned();
                if let Some((proposal_id, scope)) = pending_proposal.take() {
                    let decision = match line.as_str() {
                        "y" | "yes" | "" => ApprovalDecision::Approve,
                        "a" | "always" => match scope {
                            Some(scope) => ApprovalDecision::ApproveAlways { scope },
                            None => ApprovalDecision::Approve,
                        },
                        "n" | "no" => ApprovalDecision::Reject { feedback: None },
                        feedback => ApprovalDecision::Reject { feedback: Some(feedback.to_owned()) },
                    };
                    handle.submit(Op::Approve(ApproveParams { proposal_id, decision }));
                    continue;
                }
                if line.is_empty() {
                    prompt(&mut stdout, busy)?;
                    continue;
                }
                match command(&line) {
                    Some(Command::Quit) => { handle.submit(Op::Shutdown); }
                    Some(Command::Help) => { writeln!(stdout, "{HELP}")?; prompt(&mut stdout, busy)?; }
                    Some(Command::Op(op)) => { handle.submit(op); }
                    Some(Command::Unknown(name)) => { writeln!(stdout, "unknown command /{name}; /help lists them")?; prompt(&mut stdout, busy)?; }
                    None => { handle.submit(Op::Send(SendParams::text(line))); }
                }
            }
            _ = tokio::signal::ctrl_c() => {
                let now = std::time::Instant::now();
                let twice = last_interrupt.is_some_and(|earlier| now.duration_since(earlier).as_secs() < 2);
                last_interrupt = Some(now);
                if twice || !busy {
                    writeln!(stdout, "\nbye")?;
                    handle.submit(Op::Shutdown);
                } else {
                    writeln!(stdout, "\ncancelling the turn (Ctrl-C again to exit)")?;
                    handle.submit(Op::Cancel);
                }
            }
        }
    }
    Ok(())
}

const HELP: &str = "/new  start a conversation      /list  list conversations\n\
/switch <id>  switch conversation  /clear  empty this conversation\n\
/init  write or improve AGENTS.md  /model <name>  change the model\n\
/undo [turn]  put back what the last (or that) turn changed\n\
/diff [turn]  show what the agent changed  /compact  summarise older turns\n\
/approval <ask|auto-edit|full-auto>  /quit  exit";

enum Command {
    Quit,
    Help,
    Op(Op),
    Unknown(String),
}

fn command(line: &str) -> Option<Command> {
    let rest = line.strip_prefix('/')?;
    let (name, argument) = rest
        .split_once(' ')
        .map_or((rest, ""), |(name, argument)| (name, argument.trim()));
    Some(match name {
        "quit" | "exit" => Command::Quit,
        "help" => Command::Help,
        "new" => Command::Op(Op::NewConversation),
        "list" => Command::Op(Op::ListConversations),
        "switch" => Command::Op(Op::SwitchConversation {
            conversation_id: argument.to_owned(),
        }),
        "clear" => Command::Op(Op::ClearConversation),
        "init" => Command::Op(Op::Init),
        "model" => Command::Op(Op::SetModel {
            model: argument.to_owned(),
        }),
        "undo" | "diff" => {
            let turn = match argument {
                "" => None,
                number => match number.parse() {
                    Ok(turn) => Some(turn),
                    Err(_) => return Some(Command::Unknown(format!("{name} {argument}"))),
                },
            };
            Command::Op(if name == "undo" {
                Op::Undo { turn }
            } else {
                Op::Diff { turn }
            })
        }
        "compact" => Command::Op(Op::Compact),
        "approval" => match argument.parse() {
            Ok(policy) => Command::Op(Op::SetApprovalPolicy { policy }),
            Err(_) => Command::Unknown(format!("approval {argument}")),
        },
        other => Command::Unknown(other.to_owned()),
    })
}

fn show_proposal(kind: &ProposalKind, out: &mut impl Write) -> std::io::Result<()> {
    match kind {
        ProposalKind::Edit { path, diff } | ProposalKind::Write { path, diff } => {
            writeln!(out, "\n— change to {path}:\n{diff}")
        }
        ProposalKind::Command { command, cwd } => writeln!(out, "\n— run in {cwd}:\n  $ {command}"),
        ProposalKind::Other { tool, summary } => writeln!(out, "\n— {tool}: {summary}"),
    }
}

fn change_mark(change: ChangeKind) -> &'static str {
    match change {
        ChangeKind::Added => "removed (the turn had created it)",
        ChangeKind::Modified => "restored",
        ChangeKind::Deleted => "brought back (the turn had deleted it)",
    }
}

/// The startup banner's sandbox line: the active layers, or plainly why there are none.
fn sandbox_banner(sandbox: &corvid_protocol::SandboxState) -> String {
    match sandbox.mode {
        corvid_protocol::SandboxMode::Enforced => format!("sandbox: {}", sandbox.summary),
        corvid_protocol::SandboxMode::Unavailable => format!(
            "sandbox {}. Turn it off explicitly with --sandbox off to stop the asking.",
            sandbox.summary
        ),
        corvid_protocol::SandboxMode::Off => format!("sandbox: {}", sandbox.summary),
    }
}

fn prompt(out: &mut impl Write, busy: bool) -> std::io::Result<()> {
    if !busy {
        write!(out, "\n> ")?;
        out.flush()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_banner_says_plainly_when_there_is_no_sandbox() {
        let state = |mode, summary: &str| corvid_protocol::SandboxState {
            mode,
            landlock_abi: None,
            seccomp: false,
            network: true,
            summary: summary.to_owned(),
        };
        let banner = sandbox_banner(&state(
            corvid_protocol::SandboxMode::Unavailable,
            "unavailable: this kernel has no Landlock; every command asks before it runs",
        ));
        assert_eq!(
            banner,
            "sandbox unavailable: this kernel has no Landlock; every command asks before it runs. \
             Turn it off explicitly with --sandbox off to stop the asking."
        );
        let banner = sandbox_banner(&state(
            corvid_protocol::SandboxMode::Enforced,
            "landlock ABI 7 + seccomp",
        ));
        assert_eq!(banner, "sandbox: landlock ABI 7 + seccomp");
    }

    #[test]
    fn slash_commands() {
        assert!(
            matches!(command("/switch c_1"), Some(Command::Op(Op::SwitchConversation { conversation_id })) if conversation_id == "c_1")
        );
        assert!(matches!(
            command("/approval full-auto"),
            Some(Command::Op(Op::SetApprovalPolicy {
                policy: ApprovalPolicy::FullAuto
            }))
        ));
        assert!(matches!(command("/bogus"), Some(Command::Unknown(_))));
        assert!(matches!(
            command("/undo"),
            Some(Command::Op(Op::Undo { turn: None }))
        ));
        assert!(matches!(
            command("/undo 3"),
            Some(Command::Op(Op::Undo { turn: Some(3) }))
        ));
        assert!(matches!(
            command("/diff 2"),
            Some(Command::Op(Op::Diff { turn: Some(2) }))
        ));
        assert!(matches!(command("/undo two"), Some(Command::Unknown(_))));
        assert!(matches!(
            command("/compact"),
            Some(Command::Op(Op::Compact))
        ));
        assert!(command("not a command").is_none());
    }
}

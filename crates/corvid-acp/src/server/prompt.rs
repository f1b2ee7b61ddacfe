//! Prompts: `session/prompt` (a message, or a slash command of the protocol's one table,
//! answered by its reply), `session/cancel`, and the slash commands a session offers.

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, CancelNotification,
    ContentBlock, EmbeddedResourceResource, PromptRequest, PromptResponse, SessionUpdate,
    StopReason, UnstructuredCommandInput,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error};
use std::sync::atomic::Ordering;

use corvid_protocol::{ImageInput, Op, Reply, ReplyOk, SendParams, Submission, commands};
use tokio::sync::oneshot;

use super::live::{Live, Turn};
use super::{Server, invalid};
use crate::updates;

/// Why a prompt was not started.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PromptError {
    #[error("binary embedded resources are not supported")]
    BinaryResource,
    #[error("this kind of content is not supported (text, images and embedded text only)")]
    UnsupportedContent,
    #[error("threads, models and modes are the editor's here: use its controls")]
    EditorsControl,
    #[error(transparent)]
    Command(#[from] commands::CommandError),
    #[error("a prompt is still running in this session; cancel it or wait")]
    Busy,
}

/// How a prompt started.
enum Started {
    /// Its operation, to submit; the receiver gets its stop reason.
    Submit(Submission, oneshot::Receiver<StopReason>),
    /// It was the edit of a waiting plan, already sent; it ends with the plan's turn.
    PlanEdited(oneshot::Receiver<StopReason>),
}

impl Server {
    pub(super) fn prompt(
        &self,
        request: PromptRequest,
        responder: Responder<PromptResponse>,
        cx: ConnectionTo<Client>,
    ) -> Result<(), Error> {
        let id = request.session_id.0.to_string();
        self.with_live(&id, responder, |live, responder| {
            // A command or skill written since the last prompt is offered, and understood.
            if let Err(error) = live.refresh_commands(&cx) {
                return responder.respond_with_error(error);
            }
            match live.start_prompt(&request.prompt) {
                // The edited plan went to the waiting turn; this prompt ends with it.
                Ok(Started::PlanEdited(done)) => cx.clone().spawn(async move {
                    let stop = done.await.unwrap_or(StopReason::EndTurn);
                    responder.respond(PromptResponse::new(stop))
                }),
                Ok(Started::Submit(submission, done)) => cx.clone().spawn(async move {
                    // Every operation is replied once: a command's reply is its answer, a
                    // message's says the turn started (its end comes as an event).
                    let reply = live.link.request(submission).await;
                    live.replied(&cx, reply)?;
                    // The pump always answers: a turn's end, or the engine going away.
                    let stop = done.await.unwrap_or(StopReason::EndTurn);
                    responder.respond(PromptResponse::new(stop))
                }),
                Err(error) => responder.respond_with_error(invalid(error.to_string())),
            }
        })
    }

    pub(super) fn cancel(&self, notification: CancelNotification) {
        if let Some(live) = self.live(notification.session_id.0.as_ref()) {
            live.cancel();
        }
    }
}

impl Live {
    /// The commands of the protocol's one table and the project's skills, as ACP's available
    /// commands (the ones that make no sense in an editor's thread are left out: the editor
    /// owns threads, models and modes).
    pub(super) fn announce_commands(&self, cx: &ConnectionTo<Client>) -> Result<(), Error> {
        let project = self.commands.lock().clone();
        let commands = commands::specs(&project)
            .into_iter()
            .filter(|spec| !EDITOR_OWNS.contains(&spec.name.as_str()))
            .map(|spec| {
                let command = AvailableCommand::new(spec.name.as_str(), spec.description);
                if spec.argument.is_empty() {
                    command
                } else {
                    command.input(Some(AvailableCommandInput::Unstructured(
                        UnstructuredCommandInput::new(spec.argument),
                    )))
                }
            })
            .collect();
        self.send(
            cx,
            SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(commands)),
        )
    }

    /// What a prompt asks: a slash command (the protocol's parser), or a message with its
    /// images and context.
    /// Reads the session's commands again; when they changed, announces them again.
    pub(super) fn refresh_commands(&self, cx: &ConnectionTo<Client>) -> Result<(), Error> {
        let now = self.link.commands();
        let changed = {
            let mut known = self.commands.lock();
            let changed = *known != now;
            *known = now;
            changed
        };
        if changed {
            self.announce_commands(cx)?;
        }
        Ok(())
    }

    fn parse_prompt(&self, blocks: &[ContentBlock]) -> Result<Op, PromptError> {
        let mut text = String::new();
        let mut images = Vec::new();
        for block in blocks {
            match block {
                ContentBlock::Text(part) => {
                    if !text.is_empty() {
                        text.push('\n');
                    }
                    text.push_str(&part.text);
                }
                ContentBlock::Image(image) => images.push(ImageInput::Base64 {
                    media_type: image.mime_type.clone(),
                    data: image.data.clone(),
                }),
                ContentBlock::ResourceLink(link) => {
                    text.push_str(&format!("\n[{}]({})", link.name, link.uri));
                }
                ContentBlock::Resource(resource) => match &resource.resource {
                    EmbeddedResourceResource::TextResourceContents(contents) => {
                        text.push_str(&format!(
                            "\n<context uri=\"{}\">\n{}\n</context>",
                            contents.uri, contents.text
                        ));
                    }
                    _ => return Err(PromptError::BinaryResource),
                },
                _ => return Err(PromptError::UnsupportedContent),
            }
        }
        let project = self.commands.lock().clone();
        match commands::parse(&text, &project) {
            Some(Ok(Op::Send(mut params))) => {
                params.images = images;
                Ok(Op::Send(params))
            }
            Some(Ok(op)) if is_editors(&op) => Err(PromptError::EditorsControl),
            Some(Ok(op)) => Ok(op),
            Some(Err(error)) => Err(PromptError::Command(error)),
            None => Ok(Op::Send(SendParams {
                images,
                ..SendParams::text(text)
            })),
        }
    }

    /// Registers a prompt; returns its submission and the receiver of its stop reason (or, for
    /// the edit of a waiting plan, only the receiver).
    fn start_prompt(&self, blocks: &[ContentBlock]) -> Result<Started, PromptError> {
        let op = self.parse_prompt(blocks)?;
        if let Op::Send(params) = &op
            && let Some(done) = self.take_plan_edit(&params.text)
        {
            return Ok(Started::PlanEdited(done));
        }
        let mut state = self.state.lock();
        if state.turn.is_some() {
            return Err(PromptError::Busy);
        }
        let command = !matches!(op, Op::Send(_) | Op::Init);
        let (done, receiver) = oneshot::channel();
        let submission = format!("acp{}", self.next.fetch_add(1, Ordering::SeqCst) + 1);
        state.turn = Some(Turn {
            submission: submission.clone(),
            command,
            cancelled: false,
            done,
        });
        Ok(Started::Submit(Submission::new(submission, op), receiver))
    }

    /// The reply to a prompt's operation: a command's answer (then the prompt ends), or a
    /// refusal (the prompt ends with it); a message's turn goes on in events.
    fn replied(&self, cx: &ConnectionTo<Client>, reply: Reply) -> Result<(), Error> {
        let command = self.is_command(&reply.id);
        let id = reply.id.clone();
        let (text, refused) = match reply.into_result() {
            Err(error) => (
                Some(format!(
                    "\n\n**Error:** {} — {}\n",
                    error.message, error.next_action
                )),
                true,
            ),
            Ok(ok) => (answer_text(ok), false),
        };
        if let Some(text) = text {
            self.send(cx, updates::text(text))?;
        }
        // A refused message started no turn: no turn end will come.
        if command || refused {
            self.finish(&id, StopReason::EndTurn);
        }
        Ok(())
    }

    pub(super) fn cancel(&self) {
        if self.cancel_plan_edit() {
            self.cancel.send_modify(|generation| *generation += 1);
            return;
        }
        let running = {
            let mut state = self.state.lock();
            match state.turn.as_mut() {
                Some(turn) => {
                    turn.cancelled = true;
                    true
                }
                None => false,
            }
        };
        self.cancel.send_modify(|generation| *generation += 1);
        if running {
            self.link.submit(Op::Cancel);
        }
    }

    /// Ends the prompt (if `submission` is its own) with `stop`, or `cancelled` after a cancel.
    pub(super) fn finish(&self, submission: &str, stop: StopReason) {
        let mut state = self.state.lock();
        let ours = state
            .turn
            .as_ref()
            .is_some_and(|turn| turn.submission == submission);
        if ours && let Some(turn) = state.turn.take() {
            let stop = if turn.cancelled {
                StopReason::Cancelled
            } else {
                stop
            };
            let _ = turn.done.send(stop);
        }
    }

    /// Whether `submission` is the running prompt's.
    pub(super) fn is_prompt(&self, submission: &str) -> bool {
        self.state
            .lock()
            .turn
            .as_ref()
            .is_some_and(|turn| turn.submission == submission)
    }

    pub(super) fn is_command(&self, submission: &str) -> bool {
        self.state
            .lock()
            .turn
            .as_ref()
            .is_some_and(|turn| turn.command && turn.submission == submission)
    }
}

/// Commands whose work the editor does itself (its threads, model and mode selectors).
const EDITOR_OWNS: &[&str] = &["new", "open", "list", "rename", "model", "approval"];

fn is_editors(op: &Op) -> bool {
    matches!(
        op,
        Op::OpenConversation { .. }
            | Op::ListConversations
            | Op::RenameConversation { .. }
            | Op::SetModel { .. }
            | Op::SetApprovalPolicy { .. }
    )
}

/// A command's answer, as text in the thread.
fn answer_text(ok: ReplyOk) -> Option<String> {
    match ok {
        ReplyOk::Diff { turns } if turns.is_empty() => {
            Some("No changes by the agent in this conversation.\n".to_owned())
        }
        ReplyOk::Diff { turns } => Some(
            turns
                .iter()
                .map(|turn| format!("Turn {}:\n```diff\n{}```\n", turn.turn, turn.diff))
                .collect(),
        ),
        ReplyOk::Undone { turn, files } => {
            let mut text = format!("Undid turn {turn}:\n");
            for file in files {
                text.push_str(&format!("- {} ({:?})\n", file.path, file.change));
            }
            Some(text)
        }
        ReplyOk::Compacted {
            tokens_before,
            tokens_after,
        } => Some(format!(
            "Compacted: about {tokens_before} → {tokens_after} tokens.\n"
        )),
        ReplyOk::ToolServers { servers } => Some(updates::tool_servers_text(&servers)),
        ReplyOk::Permissions { rules, message } => {
            let mut text = message
                .map(|message| format!("{message}\n"))
                .unwrap_or_default();
            for line in corvid_protocol::describe_rules(&rules) {
                text.push_str(&format!("- {line}\n"));
            }
            Some(text)
        }
        ReplyOk::Nothing { message } => Some(format!("{message}\n")),
        ReplyOk::UserMessages { messages } if messages.is_empty() => {
            Some("No message of yours to go back to yet.\n".to_owned())
        }
        ReplyOk::UserMessages { messages } => {
            let mut text = "Your messages (`/rewind N` goes back to one, `/rewind N files` puts the files back too, `/fork N` copies the conversation up to it):\n".to_owned();
            for message in messages {
                let line = message.text.lines().next().unwrap_or("");
                text.push_str(&format!("{}. {line}\n", message.index + 1));
            }
            Some(text)
        }
        ReplyOk::Rewound {
            text,
            removed,
            files,
        } => {
            let mut answer = format!(
                "Rewound: {removed} of your messages and what followed left the conversation (the agent no longer sees them; reopen the thread to see it as it is). Your message was:\n\n{}\n\nEdit it and send it again.\n",
                text.lines()
                    .map(|line| format!("> {line}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            );
            for file in files {
                answer.push_str(&format!("- put back {} ({:?})\n", file.path, file.change));
            }
            Some(answer)
        }
        ReplyOk::Forked {
            conversation_id, ..
        } => Some(format!(
            "Forked into a new conversation ({conversation_id}): open it from the thread history.\n"
        )),
        ReplyOk::Done
        | ReplyOk::Accepted
        | ReplyOk::Ready(_)
        | ReplyOk::Settings { .. }
        | ReplyOk::Opened { .. }
        | ReplyOk::Conversations { .. } => None,
    }
}

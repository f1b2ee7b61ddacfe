//! Prompts: `session/prompt` (a message, or a slash command answered by one event),
//! `session/cancel`, and the slash commands a session offers.

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, CancelNotification,
    ContentBlock, EmbeddedResourceResource, PromptRequest, PromptResponse, SessionUpdate,
    StopReason, UnstructuredCommandInput,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error};
use corvid_protocol::{ImageInput, Op, SendParams};
use tokio::sync::oneshot;

use super::live::{Live, Turn};
use super::{Server, invalid, lock};

/// A prompt, as the engine takes it.
enum Prompt {
    Send(SendParams),
    Op(Op),
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
            match live.start_prompt(&request.prompt) {
                Ok(done) => cx.spawn(async move {
                    // The pump always answers: a turn's end, or the engine going away.
                    let stop = done.await.unwrap_or(StopReason::EndTurn);
                    responder.respond(PromptResponse::new(stop))
                }),
                Err(message) => responder.respond_with_error(invalid(message)),
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
    pub(super) fn announce_commands(&self, cx: &ConnectionTo<Client>) -> Result<(), Error> {
        let argument = |hint: &str| {
            Some(AvailableCommandInput::Unstructured(
                UnstructuredCommandInput::new(hint),
            ))
        };
        let mut commands = vec![
            AvailableCommand::new(
                "init",
                "Write or improve AGENTS.md from what the project contains",
            ),
            AvailableCommand::new(
                "compact",
                "Summarise the older part of the conversation now",
            ),
            AvailableCommand::new(
                "undo",
                "Put back the files the last (or the given) turn changed",
            )
            .input(argument("turn number (optional)")),
            AvailableCommand::new("diff", "Show what the agent changed, turn by turn")
                .input(argument("turn number (optional)")),
            AvailableCommand::new(
                "mcp",
                "The session's MCP servers, their state and tools; `trust <server>` starts a project's server",
            )
            .input(argument("trust <server> (optional)")),
        ];
        for (name, description) in &self.skills {
            commands.push(
                AvailableCommand::new(name.as_str(), format!("Skill: {description}"))
                    .input(argument("what to use it for")),
            );
        }
        self.send(
            cx,
            SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(commands)),
        )
    }

    /// What a prompt asks: a slash command, or a message with its images and context.
    fn parse_prompt(&self, blocks: &[ContentBlock]) -> Result<Prompt, String> {
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
                    _ => return Err("binary embedded resources are not supported".to_owned()),
                },
                _ => return Err(
                    "this kind of content is not supported (text, images and embedded text only)"
                        .to_owned(),
                ),
            }
        }
        let trimmed = text.trim();
        if let Some(rest) = trimmed.strip_prefix('/') {
            let (name, argument) = rest
                .split_once(char::is_whitespace)
                .map_or((rest, ""), |(name, argument)| (name, argument.trim()));
            let turn = || -> Result<Option<u32>, String> {
                match argument {
                    "" => Ok(None),
                    number => number
                        .parse()
                        .map(Some)
                        .map_err(|_| format!("/{name} takes a turn number, not `{number}`")),
                }
            };
            match name {
                "init" => return Ok(Prompt::Op(Op::Init)),
                "compact" => return Ok(Prompt::Op(Op::Compact)),
                "undo" => return Ok(Prompt::Op(Op::Undo { turn: turn()? })),
                "diff" => return Ok(Prompt::Op(Op::Diff { turn: turn()? })),
                "mcp" => {
                    return match argument.split_once(char::is_whitespace) {
                        _ if argument.is_empty() => Ok(Prompt::Op(Op::ListToolServers)),
                        Some(("trust", server)) => Ok(Prompt::Op(Op::TrustToolServer {
                            name: server.trim().to_owned(),
                        })),
                        _ => Err("/mcp lists the MCP servers; /mcp trust <server> starts a project's server".to_owned()),
                    };
                }
                skill if self.skills.iter().any(|(known, _)| known == skill) => {
                    let text = format!(
                        "Use the skill `{skill}` (load it with the skill tool) for: {}",
                        if argument.is_empty() {
                            "this project"
                        } else {
                            argument
                        }
                    );
                    return Ok(Prompt::Send(SendParams {
                        text,
                        images,
                        model: None,
                    }));
                }
                _ => {}
            }
        }
        Ok(Prompt::Send(SendParams {
            text,
            images,
            model: None,
        }))
    }

    /// Submits a prompt; the receiver gets its stop reason.
    fn start_prompt(
        &self,
        blocks: &[ContentBlock],
    ) -> Result<oneshot::Receiver<StopReason>, String> {
        let prompt = self.parse_prompt(blocks)?;
        let mut state = lock(&self.state);
        if state.turn.is_some() {
            return Err("a prompt is still running in this session; cancel it or wait".to_owned());
        }
        let (command, op) = match prompt {
            Prompt::Send(params) => (false, Op::Send(params)),
            Prompt::Op(op) => (!matches!(op, Op::Init), op),
        };
        let (done, receiver) = oneshot::channel();
        let submission = self.link.submit(op);
        state.turn = Some(Turn {
            submission,
            command,
            cancelled: false,
            done,
        });
        Ok(receiver)
    }

    pub(super) fn cancel(&self) {
        let running = {
            let mut state = lock(&self.state);
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
        let mut state = lock(&self.state);
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
        lock(&self.state)
            .turn
            .as_ref()
            .is_some_and(|turn| turn.submission == submission)
    }

    pub(super) fn is_command(&self, submission: &str) -> bool {
        lock(&self.state)
            .turn
            .as_ref()
            .is_some_and(|turn| turn.command && turn.submission == submission)
    }
}

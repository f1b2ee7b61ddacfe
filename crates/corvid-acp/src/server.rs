//! The ACP agent: the handlers of every method, each answering from a spawned task so the
//! message loop never waits, and one live entry per open session that turns the engine's events
//! into `session/update`s, permission requests into approvals, and turn ends into the prompt's
//! answer.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, AuthMethod, AuthMethodTerminal, AuthenticateRequest, AuthenticateResponse,
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, CancelNotification,
    CloseSessionRequest, CloseSessionResponse, ConfigOptionUpdate, ContentBlock, CurrentModeUpdate,
    EmbeddedResourceResource, Implementation, InitializeRequest, InitializeResponse,
    ListSessionsRequest, ListSessionsResponse, LoadSessionRequest, LoadSessionResponse,
    McpCapabilities, McpServer, NewSessionRequest, NewSessionResponse, PermissionOption,
    PermissionOptionKind, PromptCapabilities, PromptRequest, PromptResponse,
    RequestPermissionOutcome, RequestPermissionRequest, ResumeSessionRequest,
    ResumeSessionResponse, SessionCapabilities, SessionCloseCapabilities, SessionConfigOption,
    SessionInfo, SessionListCapabilities, SessionModeState, SessionNotification,
    SessionResumeCapabilities, SessionUpdate, SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse, SetSessionModeRequest, SetSessionModeResponse, StopReason,
    ToolCallStatus, ToolCallUpdate, UnstructuredCommandInput, UsageUpdate,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{
    Agent, Client, Error, JsonRpcResponse, Stdio, on_receive_notification, on_receive_request,
};
use corvid_config::time::UtcTime;
use corvid_protocol::{
    ApprovalDecision, ApproveParams, ErrorClass, Event, EventMsg, ImageInput, Op,
    ProposalNotification, ProposalOutcome, SendParams, ToolCallNotification, TurnOutcome,
};
use tokio::sync::{mpsc, oneshot, watch};

use crate::files::EditorFiles;
use crate::options::{self, MODE, MODEL, Mode};
use crate::sessions::{OpenRequest, Opened, SessionLink, Sessions};
use crate::updates::{self, Described};

/// The permission options' ids.
const ALLOW_ONCE: &str = "allow_once";
const ALLOW_ALWAYS: &str = "allow_always";
const REJECT_ONCE: &str = "reject_once";

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Serves ACP on stdin/stdout until the client closes it.
pub async fn serve(sessions: Arc<dyn Sessions>) -> Result<(), Error> {
    let server = Arc::new(Server {
        sessions,
        fs: Mutex::new((false, false)),
        open: Mutex::new(HashMap::new()),
    });
    let (a, b, c, d, e, f, g, h, i, j, k) = (
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
        server,
    );
    Agent
        .v1()
        .name("corvid")
        .on_receive_request(
            async move |request: InitializeRequest, responder, _cx| {
                responder.respond(a.initialize(request))
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |_request: AuthenticateRequest, responder, _cx| {
                // The only method is a terminal one: the client runs `corvid login` itself.
                let _ = &b;
                responder.respond(AuthenticateResponse::new())
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: NewSessionRequest, responder, cx: ConnectionTo<Client>| {
                let open = SessionOpen {
                    cwd: request.cwd,
                    conversation: None,
                    mcp_servers: request.mcp_servers,
                    replay_history: false,
                };
                cx.clone().spawn(
                    c.clone()
                        .answer_open(cx, open, responder, |id, modes, config| {
                            NewSessionResponse::new(id)
                                .modes(modes)
                                .config_options(config)
                        }),
                )
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: LoadSessionRequest, responder, cx: ConnectionTo<Client>| {
                let open = SessionOpen {
                    cwd: request.cwd,
                    conversation: Some(request.session_id.0.to_string()),
                    mcp_servers: request.mcp_servers,
                    replay_history: true,
                };
                cx.clone().spawn(
                    d.clone()
                        .answer_open(cx, open, responder, |_, modes, config| {
                            LoadSessionResponse::new()
                                .modes(modes)
                                .config_options(config)
                        }),
                )
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ResumeSessionRequest, responder, cx: ConnectionTo<Client>| {
                let open = SessionOpen {
                    cwd: request.cwd,
                    conversation: Some(request.session_id.0.to_string()),
                    mcp_servers: request.mcp_servers,
                    replay_history: false,
                };
                cx.clone().spawn(
                    e.clone()
                        .answer_open(cx, open, responder, |_, modes, config| {
                            ResumeSessionResponse::new()
                                .modes(modes)
                                .config_options(config)
                        }),
                )
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ListSessionsRequest, responder, cx: ConnectionTo<Client>| {
                let server = f.clone();
                cx.spawn(async move {
                    let cwd = match request.cwd {
                        Some(cwd) => cwd,
                        None => std::env::current_dir().map_err(Error::into_internal_error)?,
                    };
                    match server.sessions.list(&cwd).await {
                        Ok(found) => responder.respond(ListSessionsResponse::new(
                            found
                                .into_iter()
                                .map(|listed| {
                                    SessionInfo::new(listed.conversation_id, listed.project)
                                        .title(Some(listed.title).filter(|title| !title.is_empty()))
                                        .updated_at(UtcTime::from_unix(listed.updated_at).rfc3339())
                                })
                                .collect(),
                        )),
                        Err(message) => responder.respond_with_error(invalid(message)),
                    }
                })
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: CloseSessionRequest, responder, _cx| {
                let id = request.session_id.0.to_string();
                match g.close(&id) {
                    Some(live) => {
                        // Stopping the engine is awaited off the message loop.
                        tokio::spawn(async move { live.link.close().await });
                        responder.respond(CloseSessionResponse::new())
                    }
                    None => {
                        responder.respond_with_error(invalid(format!("no open session `{id}`")))
                    }
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: PromptRequest, responder, cx: ConnectionTo<Client>| {
                let id = request.session_id.0.to_string();
                let Some(live) = h.live(&id) else {
                    return responder
                        .respond_with_error(invalid(format!("no open session `{id}`")));
                };
                match live.start_prompt(&request.prompt) {
                    Ok(done) => cx.spawn(async move {
                        // The pump always answers: a turn's end, or the engine going away.
                        let stop = done.await.unwrap_or(StopReason::EndTurn);
                        responder.respond(PromptResponse::new(stop))
                    }),
                    Err(message) => responder.respond_with_error(invalid(message)),
                }
            },
            on_receive_request!(),
        )
        .on_receive_notification(
            async move |notification: CancelNotification, _cx| {
                if let Some(live) = i.live(notification.session_id.0.as_ref()) {
                    live.cancel();
                }
                Ok(())
            },
            on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: SetSessionConfigOptionRequest, responder, _cx| {
                let id = request.session_id.0.to_string();
                let Some(live) = j.live(&id) else {
                    return responder
                        .respond_with_error(invalid(format!("no open session `{id}`")));
                };
                let value = serde_json::to_value(&request.value)
                    .ok()
                    .and_then(|value| {
                        value
                            .get("value")
                            .and_then(|v| v.as_str().map(str::to_owned))
                    })
                    .unwrap_or_default();
                match live.set_option(request.config_id.0.as_ref(), &value) {
                    Ok(options) => responder.respond(SetSessionConfigOptionResponse::new(options)),
                    Err(message) => {
                        responder.respond_with_error(Error::invalid_params().data(message))
                    }
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: SetSessionModeRequest, responder, _cx| {
                let id = request.session_id.0.to_string();
                let Some(live) = k.live(&id) else {
                    return responder
                        .respond_with_error(invalid(format!("no open session `{id}`")));
                };
                match live.set_option(MODE, request.mode_id.0.as_ref()) {
                    Ok(_) => responder.respond(SetSessionModeResponse::new()),
                    Err(message) => {
                        responder.respond_with_error(Error::invalid_params().data(message))
                    }
                }
            },
            on_receive_request!(),
        )
        .connect_to(Stdio::new())
        .await
        .or_else(|error| {
            if client_went_away(&error) {
                tracing::info!("the ACP client closed the connection");
                Ok(())
            } else {
                Err(error)
            }
        })
}

/// Whether `error` is a write that found the client's end of stdout closed. That is how an ACP
/// session ends (the editor closes the panel, or quits, while corvid still has an update to
/// send), not a failure to report with exit status 1. The SDK turns I/O errors into internal
/// errors carrying the error's text, so the text is what there is to check.
fn client_went_away(error: &Error) -> bool {
    error
        .data
        .as_ref()
        .and_then(serde_json::Value::as_str)
        .is_some_and(|text| text.contains("Broken pipe") || text.contains("os error 32"))
}

fn invalid(message: impl Into<String>) -> Error {
    let message = message.into();
    Error::invalid_request().data(serde_json::Value::String(message))
}

struct Server {
    sessions: Arc<dyn Sessions>,
    /// The client's `fs.readTextFile` and `fs.writeTextFile`.
    fs: Mutex<(bool, bool)>,
    open: Mutex<HashMap<String, Arc<Live>>>,
}

impl Server {
    fn initialize(&self, request: InitializeRequest) -> InitializeResponse {
        let fs = &request.client_capabilities.fs;
        *lock(&self.fs) = (fs.read_text_file, fs.write_text_file);
        let login = AuthMethodTerminal::new("corvid-login", "Sign in to a provider")
            .description(
                "Runs `corvid login xai` (or `corvid login zed`). API keys instead go in corvid's env file \
                 or environment (XAI_API_KEY, ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY); `corvid status` shows what is set.",
            )
            .args(vec!["login".to_owned(), "xai".to_owned()]);
        InitializeResponse::new(ProtocolVersion::V1)
            .agent_capabilities(
                AgentCapabilities::new()
                    .load_session(true)
                    .mcp_capabilities(McpCapabilities::new().http(true))
                    .prompt_capabilities(
                        PromptCapabilities::new().image(true).embedded_context(true),
                    )
                    .session_capabilities(
                        SessionCapabilities::new()
                            .list(SessionListCapabilities::new())
                            .resume(SessionResumeCapabilities::new())
                            .close(SessionCloseCapabilities::new()),
                    ),
            )
            .auth_methods(vec![AuthMethod::Terminal(login)])
            .agent_info(Implementation::new("corvid", env!("CARGO_PKG_VERSION")).title("corvid"))
    }

    fn live(&self, id: &str) -> Option<Arc<Live>> {
        lock(&self.open).get(id).cloned()
    }

    /// Takes a session out of the open ones and cancels its prompt; the caller awaits its
    /// link's `close` (the engine stopping) where it may wait.
    fn close(&self, id: &str) -> Option<Arc<Live>> {
        let live = lock(&self.open).remove(id)?;
        live.cancel();
        Some(live)
    }

    /// Answers `session/new`, `session/load` or `session/resume`: opens the session, replays its
    /// history where asked, answers with what `answer` makes of its id, modes and config
    /// options, then offers its slash commands.
    async fn answer_open<R: JsonRpcResponse>(
        self: Arc<Self>,
        cx: ConnectionTo<Client>,
        open: SessionOpen,
        responder: Responder<R>,
        answer: impl FnOnce(String, SessionModeState, Vec<SessionConfigOption>) -> R,
    ) -> Result<(), Error> {
        let live = match self
            .open(&cx, open.cwd, open.conversation, &open.mcp_servers)
            .await
        {
            Ok(live) => live,
            Err(message) => return responder.respond_with_error(invalid(message)),
        };
        if open.replay_history {
            for update in updates::history(&live.history, &live.project) {
                live.send(&cx, update)?;
            }
        }
        let (modes, config) = live.options();
        responder.respond(answer(live.id.clone(), modes, config))?;
        live.announce_commands(&cx)
    }

    /// Opens a session (a new conversation, or a stored one) and starts its event pump. A
    /// session already open under that id is closed first, so one conversation has one engine.
    async fn open(
        self: &Arc<Self>,
        cx: &ConnectionTo<Client>,
        cwd: PathBuf,
        conversation: Option<String>,
        mcp_servers: &[McpServer],
    ) -> Result<Arc<Live>, String> {
        if !cwd.is_absolute() {
            return Err(format!(
                "cwd must be an absolute path, not {}",
                cwd.display()
            ));
        }
        // The engine must have stopped before the service is asked for the conversation again,
        // or it would hand back the session being closed.
        if let Some(live) = conversation.as_deref().and_then(|id| self.close(id)) {
            live.link.close().await;
        }
        let (read, write) = *lock(&self.fs);
        let session = Arc::new(OnceLock::new());
        let files = (read || write).then(|| {
            Arc::new(EditorFiles {
                connection: cx.clone(),
                session: Arc::clone(&session),
                runtime: tokio::runtime::Handle::current(),
                read,
                write,
            }) as Arc<dyn corvid_tools::Files>
        });
        let opened = self
            .sessions
            .open(OpenRequest {
                cwd,
                conversation,
                files,
                mcp_servers: crate::client_mcp::servers(mcp_servers),
            })
            .await?;
        let Opened {
            conversation_id,
            project,
            model,
            approval,
            history,
            sandbox,
            link,
            events,
        } = opened;
        let _ = session.set(conversation_id.clone());
        let skills = corvid_agent::skills::load_skills(&project)
            .skills
            .into_iter()
            .map(|skill| (skill.name, skill.description))
            .collect();
        let (cancel, _) = watch::channel(0u64);
        let live = Arc::new(Live {
            id: conversation_id.clone(),
            project,
            link,
            models: self.sessions.models(),
            window: self.sessions.context_window(),
            skills,
            history,
            sandbox: options::sandbox_line(sandbox.as_ref()),
            cancel,
            state: Mutex::new(State {
                mode: Mode::Policy(approval),
                model,
                turn: None,
                calls: HashMap::new(),
                outputs: HashMap::new(),
            }),
        });
        lock(&self.open).insert(conversation_id, Arc::clone(&live));
        let pump = Arc::clone(&live);
        let connection = cx.clone();
        cx.spawn(async move {
            pump.pump(&connection, events).await;
            Ok(())
        })
        .map_err(|error| error.to_string())?;
        Ok(live)
    }
}

/// What `session/new`, `session/load` and `session/resume` ask to open.
struct SessionOpen {
    cwd: PathBuf,
    /// The stored conversation to open; `None` starts a new one.
    conversation: Option<String>,
    mcp_servers: Vec<McpServer>,
    /// Whether the client is sent the conversation's history before the answer (`session/load`).
    replay_history: bool,
}

/// One open session.
struct Live {
    id: String,
    project: PathBuf,
    link: Arc<dyn SessionLink>,
    models: Vec<String>,
    window: u64,
    /// Skills by name and description, offered as slash commands.
    skills: Vec<(String, String)>,
    /// The conversation's history when it was opened (replayed by `session/load`).
    history: Vec<corvid_protocol::HistoryEntry>,
    /// The kernel sandbox its commands run in, as a sentence for the approvals option.
    sandbox: String,
    /// Bumped by every cancel: waiting permission requests stop waiting.
    cancel: watch::Sender<u64>,
    state: Mutex<State>,
}

struct State {
    mode: Mode,
    model: String,
    turn: Option<Turn>,
    /// The calls of this session, for permission requests and results.
    calls: HashMap<String, (ToolCallNotification, Described)>,
    /// A running command's output so far, by call (ACP replaces a call's content, so each
    /// update carries it all, cut to its tail).
    outputs: HashMap<String, String>,
}

/// The prompt being answered.
struct Turn {
    /// The submission whose events are this prompt's.
    submission: String,
    /// A slash command answered by one event rather than a turn.
    command: bool,
    cancelled: bool,
    done: oneshot::Sender<StopReason>,
}

/// A prompt, as the engine takes it.
enum Prompt {
    Send(SendParams),
    Op(Op),
}

impl Live {
    fn settings(&self) -> (Mode, String) {
        let state = lock(&self.state);
        (state.mode, state.model.clone())
    }

    /// The session's modes and config options, as new, load and resume answer them.
    fn options(&self) -> (SessionModeState, Vec<SessionConfigOption>) {
        let (mode, model) = self.settings();
        (
            options::mode_state(mode),
            options::config_options(mode, &model, &self.models, &self.sandbox),
        )
    }

    fn send(&self, cx: &ConnectionTo<Client>, update: SessionUpdate) -> Result<(), Error> {
        cx.send_notification(SessionNotification::new(self.id.clone(), update))
    }

    fn announce_commands(&self, cx: &ConnectionTo<Client>) -> Result<(), Error> {
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

    fn cancel(&self) {
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

    fn set_option(&self, id: &str, value: &str) -> Result<Vec<SessionConfigOption>, String> {
        let mut state = lock(&self.state);
        match id {
            MODE => {
                let mode = Mode::parse(value).ok_or_else(|| {
                    format!(
                        "unknown mode `{value}`: expected read-only, ask, auto-edit or full-auto"
                    )
                })?;
                state.mode = mode;
                self.link.submit(Op::SetApprovalPolicy {
                    policy: mode.policy(),
                });
            }
            MODEL => {
                if value.trim().is_empty() {
                    return Err("the model name is empty".to_owned());
                }
                state.model = value.to_owned();
                self.link.submit(Op::SetModel {
                    model: value.to_owned(),
                });
            }
            other => {
                return Err(format!(
                    "unknown config option `{other}`: expected mode or model"
                ));
            }
        }
        Ok(options::config_options(
            state.mode,
            &state.model,
            &self.models,
            &self.sandbox,
        ))
    }

    /// Ends the prompt (if `submission` is its own) with `stop`, or `cancelled` after a cancel.
    fn finish(&self, submission: &str, stop: StopReason) {
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

    fn is_command(&self, submission: &str) -> bool {
        lock(&self.state)
            .turn
            .as_ref()
            .is_some_and(|turn| turn.command && turn.submission == submission)
    }

    /// Turns the engine's events into updates until the engine stops.
    async fn pump(
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
                        .is_some_and(|(call, _)| call.tool == "edit" || call.tool == "write")
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
                if self.is_command(&event.id) {
                    self.finish(&event.id, StopReason::EndTurn);
                }
            }
            EventMsg::Warning { message } if self.is_command(&event.id) => {
                self.send(cx, updates::text(message))?;
                self.finish(&event.id, StopReason::EndTurn);
            }
            EventMsg::Compacted {
                tokens_before,
                tokens_after,
                context_window,
                messages_summarized,
            } => {
                self.send(
                    cx,
                    updates::text(format!(
                        "Compacted: {messages_summarized} older messages summarised, about {tokens_before} → {tokens_after} tokens of {context_window}.\n"
                    )),
                )?;
                self.finish(&event.id, StopReason::EndTurn);
            }
            EventMsg::Undone { turn, files } => {
                let mut text = format!("Undid turn {turn}:\n");
                for file in files {
                    text.push_str(&format!("- {} ({:?})\n", file.path, file.change));
                }
                self.send(cx, updates::text(text))?;
                self.finish(&event.id, StopReason::EndTurn);
            }
            EventMsg::Diff { turns } => {
                let text = if turns.is_empty() {
                    "No changes by the agent in this conversation.\n".to_owned()
                } else {
                    turns
                        .iter()
                        .map(|turn| format!("Turn {}:\n```diff\n{}```\n", turn.turn, turn.diff))
                        .collect()
                };
                self.send(cx, updates::text(text))?;
                self.finish(&event.id, StopReason::EndTurn);
            }
            EventMsg::ToolServers { servers } => {
                self.send(cx, updates::text(updates::tool_servers_text(&servers)))?;
                self.finish(&event.id, StopReason::EndTurn);
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

    /// A proposal becomes a permission request (or, in read-only mode, a refusal). The answer
    /// is awaited on its own task; a cancel stops the wait (the engine closes the proposal).
    fn ask(
        self: &Arc<Self>,
        cx: &ConnectionTo<Client>,
        proposal: ProposalNotification,
    ) -> Result<(), Error> {
        let (mode, known) = {
            let state = lock(&self.state);
            (state.mode, state.calls.get(&proposal.call_id).cloned())
        };
        if mode == Mode::ReadOnly {
            self.link.submit(Op::Approve(ApproveParams {
                proposal_id: proposal.proposal_id,
                decision: ApprovalDecision::Reject {
                    feedback: Some("The session is in read-only mode: edits and commands are not run. Answer from what you can read.".to_owned()),
                },
            }));
            return Ok(());
        }
        let fields = match &known {
            Some((call, described)) => updates::pending_fields(call, described),
            None => agent_client_protocol::v1::schema::ToolCallUpdateFields::new()
                .status(ToolCallStatus::Pending)
                .title(proposal_title(&proposal)),
        };
        self.send(
            cx,
            updates::status(&proposal.call_id, ToolCallStatus::Pending),
        )?;
        let mut options = vec![PermissionOption::new(
            ALLOW_ONCE,
            "Allow",
            PermissionOptionKind::AllowOnce,
        )];
        if let Some(scope) = &proposal.always_scope {
            let label = match scope {
                corvid_protocol::ApprovalRule::Tool { tool } => format!("Always allow {tool}"),
                corvid_protocol::ApprovalRule::CommandPrefix { prefix } => {
                    format!("Always allow `{prefix} …`")
                }
                corvid_protocol::ApprovalRule::Origin { origin } => {
                    format!("Always allow every tool of {origin}")
                }
            };
            options.push(PermissionOption::new(
                ALLOW_ALWAYS,
                label,
                PermissionOptionKind::AllowAlways,
            ));
        }
        options.push(PermissionOption::new(
            REJECT_ONCE,
            "Reject",
            PermissionOptionKind::RejectOnce,
        ));
        let request = RequestPermissionRequest::new(
            self.id.clone(),
            ToolCallUpdate::new(proposal.call_id.clone(), fields),
            options,
        );
        let sent = cx.send_request(request);
        let mut cancelled = self.cancel.subscribe();
        let live = Arc::clone(self);
        let connection = cx.clone();
        cx.spawn(async move {
            let answer = tokio::select! {
                answer = sent.block_task() => answer,
                _ = cancelled.changed() => return Ok(()),
            };
            let decision = match answer {
                Ok(response) => match response.outcome {
                    RequestPermissionOutcome::Selected(selected) => {
                        match selected.option_id.0.as_ref() {
                            ALLOW_ONCE => ApprovalDecision::Approve,
                            ALLOW_ALWAYS => match proposal.always_scope.clone() {
                                Some(scope) => ApprovalDecision::ApproveAlways { scope },
                                None => ApprovalDecision::Approve,
                            },
                            _ => ApprovalDecision::Reject {
                                feedback: feedback_of(&response.meta, &selected.meta),
                            },
                        }
                    }
                    // The client withdrew the question: treat it as a no.
                    _ => ApprovalDecision::Reject { feedback: None },
                },
                Err(error) => {
                    tracing::debug!(%error, "the permission request failed; rejecting");
                    ApprovalDecision::Reject { feedback: None }
                }
            };
            if matches!(
                decision,
                ApprovalDecision::Approve | ApprovalDecision::ApproveAlways { .. }
            ) {
                live.send(
                    &connection,
                    updates::status(&proposal.call_id, ToolCallStatus::InProgress),
                )?;
            }
            live.link.submit(Op::Approve(ApproveParams {
                proposal_id: proposal.proposal_id,
                decision,
            }));
            Ok(())
        })
    }
}

/// "Reject with feedback": a client may put the user's words in the answer's
/// `_meta.feedback`; they reach the model as the reason.
fn feedback_of(
    response: &Option<serde_json::Map<String, serde_json::Value>>,
    selected: &Option<serde_json::Map<String, serde_json::Value>>,
) -> Option<String> {
    [selected, response]
        .into_iter()
        .flatten()
        .find_map(|meta| meta.get("feedback").and_then(|value| value.as_str()))
        .filter(|text| !text.trim().is_empty())
        .map(str::to_owned)
}

fn proposal_title(proposal: &ProposalNotification) -> String {
    match &proposal.kind {
        corvid_protocol::ProposalKind::Edit { path, .. } => format!("Edit {path}"),
        corvid_protocol::ProposalKind::Write { path, .. } => format!("Write {path}"),
        corvid_protocol::ProposalKind::Command { command, .. } => command.clone(),
        corvid_protocol::ProposalKind::Other { summary, .. } => summary.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_closed_pipe_counts_as_the_client_going_away() {
        let closed = Error::internal_error().data("Broken pipe (os error 32)");
        assert!(client_went_away(&closed));
        assert!(!client_went_away(&Error::internal_error()));
        assert!(!client_went_away(
            &Error::internal_error().data("invalid JSON at line 1")
        ));
    }
}

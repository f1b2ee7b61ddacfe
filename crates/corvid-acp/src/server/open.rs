//! Starting and ending sessions: `initialize`, `session/new`, `session/load`,
//! `session/resume`, `session/list` and `session/close`.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, AuthMethod, AuthMethodTerminal, CloseSessionRequest, CloseSessionResponse,
    Implementation, InitializeRequest, InitializeResponse, ListSessionsRequest,
    ListSessionsResponse, LoadSessionRequest, LoadSessionResponse, McpCapabilities, McpServer,
    NewSessionRequest, NewSessionResponse, PromptCapabilities, ResumeSessionRequest,
    ResumeSessionResponse, SessionCapabilities, SessionCloseCapabilities, SessionConfigOption,
    SessionInfo, SessionListCapabilities, SessionModeState, SessionResumeCapabilities,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error, JsonRpcResponse};
use corvid_config::time::UtcTime;
use tokio::sync::watch;

use super::live::{Live, State};
use super::{ClientFiles, Server, invalid, no_session};
use crate::files::EditorFiles;
use crate::options::{self, Mode};
use crate::sessions::{OpenRequest, Opened, SessionsError};

/// Why a session could not be opened (sent to the editor as an invalid request).
#[derive(Debug, thiserror::Error)]
pub(super) enum OpenError {
    #[error("cwd must be an absolute path, not {}", .0.display())]
    RelativeCwd(PathBuf),
    #[error(transparent)]
    Sessions(#[from] SessionsError),
    /// The session's event pump could not be started on the connection.
    #[error("{0}")]
    Pump(Error),
}
use crate::updates;

/// What `session/new`, `session/load` and `session/resume` ask to open.
struct SessionOpen {
    cwd: PathBuf,
    /// The stored conversation to open; `None` starts a new one.
    conversation: Option<String>,
    mcp_servers: Vec<McpServer>,
    /// Whether the client is sent the conversation's history before the answer (`session/load`).
    replay_history: bool,
}

impl Server {
    pub(super) fn initialize(&self, request: InitializeRequest) -> InitializeResponse {
        let fs = &request.client_capabilities.fs;
        *self.fs.lock() = ClientFiles {
            read: fs.read_text_file,
            write: fs.write_text_file,
        };
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

    pub(super) fn new_session(
        self: &Arc<Self>,
        request: NewSessionRequest,
        responder: Responder<NewSessionResponse>,
        cx: ConnectionTo<Client>,
    ) -> Result<(), Error> {
        let open = SessionOpen {
            cwd: request.cwd,
            conversation: None,
            mcp_servers: request.mcp_servers,
            replay_history: false,
        };
        cx.clone().spawn(
            Arc::clone(self).answer_open(cx, open, responder, |id, modes, config| {
                NewSessionResponse::new(id)
                    .modes(modes)
                    .config_options(config)
            }),
        )
    }

    pub(super) fn load_session(
        self: &Arc<Self>,
        request: LoadSessionRequest,
        responder: Responder<LoadSessionResponse>,
        cx: ConnectionTo<Client>,
    ) -> Result<(), Error> {
        let open = SessionOpen {
            cwd: request.cwd,
            conversation: Some(request.session_id.0.to_string()),
            mcp_servers: request.mcp_servers,
            replay_history: true,
        };
        cx.clone().spawn(
            Arc::clone(self).answer_open(cx, open, responder, |_, modes, config| {
                LoadSessionResponse::new()
                    .modes(modes)
                    .config_options(config)
            }),
        )
    }

    pub(super) fn resume_session(
        self: &Arc<Self>,
        request: ResumeSessionRequest,
        responder: Responder<ResumeSessionResponse>,
        cx: ConnectionTo<Client>,
    ) -> Result<(), Error> {
        let open = SessionOpen {
            cwd: request.cwd,
            conversation: Some(request.session_id.0.to_string()),
            mcp_servers: request.mcp_servers,
            replay_history: false,
        };
        cx.clone().spawn(
            Arc::clone(self).answer_open(cx, open, responder, |_, modes, config| {
                ResumeSessionResponse::new()
                    .modes(modes)
                    .config_options(config)
            }),
        )
    }

    pub(super) fn list_sessions(
        self: &Arc<Self>,
        request: ListSessionsRequest,
        responder: Responder<ListSessionsResponse>,
        cx: ConnectionTo<Client>,
    ) -> Result<(), Error> {
        let server = Arc::clone(self);
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
                Err(error) => responder.respond_with_error(invalid(error.to_string())),
            }
        })
    }

    pub(super) fn close_session(
        &self,
        request: CloseSessionRequest,
        responder: Responder<CloseSessionResponse>,
    ) -> Result<(), Error> {
        let id = request.session_id.0.to_string();
        match self.close(&id) {
            Some(live) => {
                // Stopping the engine is awaited off the message loop.
                tokio::spawn(async move { live.link.close().await });
                responder.respond(CloseSessionResponse::new())
            }
            None => responder.respond_with_error(no_session(&id)),
        }
    }

    /// Takes a session out of the open ones and cancels its prompt; the caller awaits its
    /// link's `close` (the engine stopping) where it may wait.
    fn close(&self, id: &str) -> Option<Arc<Live>> {
        let live = self.open.lock().remove(id)?;
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
            Err(error) => return responder.respond_with_error(invalid(error.to_string())),
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
    ) -> Result<Arc<Live>, OpenError> {
        if !cwd.is_absolute() {
            return Err(OpenError::RelativeCwd(cwd));
        }
        // The engine must have stopped before the service is asked for the conversation again,
        // or it would hand back the session being closed.
        if let Some(live) = conversation.as_deref().and_then(|id| self.close(id)) {
            live.link.close().await;
        }
        let ClientFiles { read, write } = *self.fs.lock();
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
        let commands = Mutex::new(link.commands());
        let (cancel, _) = watch::channel(0u64);
        let live = Arc::new(Live {
            id: conversation_id.clone(),
            project,
            link,
            models: self.sessions.models(),
            sessions: Arc::clone(&self.sessions),
            commands,
            next: std::sync::atomic::AtomicU64::new(0),
            history,
            sandbox: options::sandbox_line(sandbox.as_ref()),
            cancel,
            state: Mutex::new(State {
                mode: Mode::Policy(approval),
                window: self.sessions.context_window(&model),
                model,
                turn: None,
                calls: HashMap::new(),
                outputs: HashMap::new(),
                preparing: HashSet::new(),
                plan_edit: None,
            }),
        });
        self.open.lock().insert(conversation_id, Arc::clone(&live));
        let pump = Arc::clone(&live);
        let connection = cx.clone();
        cx.spawn(async move {
            pump.pump(&connection, events).await;
            Ok(())
        })
        .map_err(OpenError::Pump)?;
        Ok(live)
    }
}

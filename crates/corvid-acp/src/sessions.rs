//! The seam between the ACP transport and the agent: open a session on a conversation in a
//! folder, list a folder's conversations, submit operations, receive events. It is backed by the
//! process's session service ([`ServiceSessions`] over `corvid_agent::Agents`): each ACP session
//! is one session of the service, so ACP shares the store (and, in one process, the sessions)
//! with every other front end.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;

use corvid_agent::{AgentConfig, AgentError, Agents, OpenConversation, Session, Subscription};
use corvid_protocol::{
    ApprovalPolicy, HistoryEntry, Op, PROTOCOL_VERSION, Reply, ReplyOk, Response, SandboxState,
    Submission,
};

/// A boxed future, for the object-safe trait below.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What to open.
#[derive(Debug, Clone)]
pub struct OpenRequest {
    /// The folder the editor works in; the project is found from it.
    pub cwd: PathBuf,
    /// `None`: a new conversation; `Some(id)`: that stored conversation.
    pub conversation: Option<String>,
    /// Where file tools read and write (the editor's buffers); `None`: the disk.
    pub files: Option<Arc<dyn corvid_tools::Files>>,
    /// The MCP servers the editor passed for this session (they join the configured ones).
    pub mcp_servers: Vec<corvid_config::McpServer>,
}

/// An opened session.
pub struct Opened {
    /// The conversation it holds (the ACP session id).
    pub conversation_id: String,
    /// The project folder, absolute.
    pub project: PathBuf,
    /// The session's model and approval policy now.
    pub model: String,
    pub approval: ApprovalPolicy,
    /// The conversation's history, oldest first (empty for a new one).
    pub history: Vec<HistoryEntry>,
    /// The kernel sandbox the session's commands run in, as its `ready` reported it.
    pub sandbox: Option<SandboxState>,
    /// Sends operations.
    pub link: Arc<dyn SessionLink>,
    /// The session's events from now on, as the service's bounded subscription delivers them:
    /// a listener that falls behind gets a resynchronisation (a `ready` saying how many it
    /// missed, then a replay), never an unbounded queue.
    pub events: Subscription,
}

/// One stored conversation, as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub conversation_id: String,
    pub project: PathBuf,
    pub title: String,
    /// Unix seconds.
    pub updated_at: i64,
}

/// Sends operations to one open session.
pub trait SessionLink: Send + Sync {
    /// Queues an operation; returns the submission id its events carry.
    fn submit(&self, op: Op) -> String;
    /// Carries out a submission and resolves with its one reply (its events carry its id).
    fn request(&self, submission: Submission) -> BoxFuture<'_, Reply>;
    /// Answers one of the agent's requests (an approval); the reply says whether it was taken
    /// or why not (another face answered first, the turn moved on).
    fn respond(&self, response: Response) -> Reply;
    /// Whether a turn is running now (after a resynchronisation: whether the prompt's turn
    /// is still going).
    fn is_running(&self) -> bool;
    /// Ends the session; resolves once its engine has stopped (so the conversation can be
    /// opened again at once).
    fn close(&self) -> BoxFuture<'_, ()>;
    /// The session's skills and custom commands as they are now (read again when their
    /// folders changed).
    fn commands(&self) -> Vec<corvid_protocol::commands::ProjectCommand> {
        Vec::new()
    }
}

/// Why a session could not be opened or listed; its text is a sentence for the user.
#[derive(Debug, thiserror::Error)]
pub enum SessionsError {
    /// The session service refused (the conversation, the project, the store).
    #[error(transparent)]
    Agent(#[from] AgentError),
    /// The session did not answer `hello` with its state.
    #[error("{}", .0.message)]
    Hello(corvid_protocol::ErrorNotification),
    /// The session answered `hello` with something other than its state.
    #[error("the agent answered hello with {0}")]
    UnexpectedHello(String),
    /// The project folder holding `cwd` cannot be read.
    #[error("{}: {source}", .folder.display())]
    Project {
        folder: PathBuf,
        source: std::io::Error,
    },
}

/// Opens and lists sessions.
pub trait Sessions: Send + Sync + 'static {
    /// Opens a session.
    fn open(&self, request: OpenRequest) -> BoxFuture<'_, Result<Opened, SessionsError>>;
    /// The conversations of the project holding `cwd`, most recently updated first; only those
    /// with messages.
    fn list(&self, cwd: &Path) -> BoxFuture<'_, Result<Vec<Listed>, SessionsError>>;
    /// The models a session may use, for the model selector (the default first).
    fn models(&self) -> Vec<String>;
    /// `model`'s context window in tokens, for usage updates: what the engine compacts
    /// against.
    fn context_window(&self, model: &str) -> u64;
}

/// [`Sessions`] over the session service: one service session per ACP session, each on the
/// project holding the session's folder.
pub struct ServiceSessions {
    pub agents: Agents,
    /// The settings every session starts from (`project` and `cwd` are replaced, `files` set
    /// from the client's capabilities).
    pub base: AgentConfig,
    /// The catalog's models, the default first.
    pub models: Vec<String>,
    /// Makes the tool source of the MCP servers an editor passes in `session/new` (the binary
    /// injects it, so this crate needs no MCP client); `None` ignores them.
    pub client_mcp: Option<crate::ClientMcp>,
}

impl SessionLink for Session {
    fn submit(&self, op: Op) -> String {
        Session::submit(self, op)
    }

    fn request(&self, submission: Submission) -> BoxFuture<'_, Reply> {
        Box::pin(Session::request_with_id(self, submission))
    }

    fn respond(&self, response: Response) -> Reply {
        Session::respond(self, response)
    }

    fn is_running(&self) -> bool {
        Session::is_running(self)
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(Session::close(self))
    }

    fn commands(&self) -> Vec<corvid_protocol::commands::ProjectCommand> {
        Session::commands(self)
    }
}

impl Sessions for ServiceSessions {
    fn open(&self, request: OpenRequest) -> BoxFuture<'_, Result<Opened, SessionsError>> {
        Box::pin(async move {
            let folders = corvid_agent::project_folders(&request.cwd, None);
            let mut config = self.base.clone();
            config.project = folders.root;
            config.cwd = folders.cwd;
            config.files = request.files.clone();
            if let Some(client_mcp) = &self.client_mcp
                && !request.mcp_servers.is_empty()
            {
                config
                    .tool_plugins
                    .push(client_mcp(request.mcp_servers.clone()));
            }
            let which = match &request.conversation {
                Some(id) => OpenConversation::Existing(id.clone()),
                None => OpenConversation::New,
            };
            let (session, subscription) = self.agents.open_listening(config, which).await?;
            // `hello` is replied with the session's state, whoever opened it first.
            let hello = Op::Hello {
                version: PROTOCOL_VERSION,
                client: Some("corvid-acp".to_owned()),
            };
            let ready = match session.request(hello).await {
                Ok(ReplyOk::Ready(ready)) => ready,
                Ok(other) => return Err(SessionsError::UnexpectedHello(format!("{other:?}"))),
                Err(error) => return Err(SessionsError::Hello(error)),
            };
            let conversation_id = session.conversation_id();
            let project = session.project().to_owned();
            let history = self
                .agents
                .conversation(&project, &conversation_id)
                .await?
                .map(|detail| detail.history)
                .unwrap_or_default();
            Ok(Opened {
                conversation_id,
                project,
                model: ready.model,
                approval: ready.approval_policy,
                history,
                sandbox: ready.sandbox,
                link: Arc::new(session),
                events: subscription,
            })
        })
    }

    fn list(&self, cwd: &Path) -> BoxFuture<'_, Result<Vec<Listed>, SessionsError>> {
        let folders = corvid_agent::project_folders(cwd, None);
        Box::pin(async move {
            let project = folders
                .root
                .canonicalize()
                .map_err(|source| SessionsError::Project {
                    folder: folders.root.clone(),
                    source,
                })?;
            let found = self.agents.conversations(&project).await?;
            Ok(found
                .into_iter()
                .filter(|conversation| conversation.message_count > 0)
                .map(|conversation| Listed {
                    conversation_id: conversation.id,
                    project: project.clone(),
                    title: conversation.title,
                    updated_at: conversation.updated_at,
                })
                .collect())
        })
    }

    fn models(&self) -> Vec<String> {
        self.models.clone()
    }

    fn context_window(&self, model: &str) -> u64 {
        self.agents.context_window(model, self.base.context_window)
    }
}

//! The seam between the ACP transport and the agent: open a session on a conversation in a
//! folder, list a folder's conversations, submit operations, receive events. Today it is backed
//! by one `AgentHandle` per ACP session ([`HandleSessions`]); the session service can implement
//! the same trait without the transport changing.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use corvid_agent::{AgentConfig, AgentHandle, ModelClient};
use corvid_protocol::{ApprovalPolicy, Event, EventMsg, HistoryEntry, Op};
use tokio::sync::mpsc;

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
    /// Sends operations.
    pub link: Arc<dyn SessionLink>,
    /// The session's events from now on.
    pub events: mpsc::UnboundedReceiver<Event>,
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
}

/// Opens and lists sessions.
pub trait Sessions: Send + Sync + 'static {
    /// Opens a session; the error is a sentence for the user.
    fn open(&self, request: OpenRequest) -> BoxFuture<'_, Result<Opened, String>>;
    /// The conversations of the project holding `cwd`, most recently updated first; only those
    /// with messages.
    fn list(&self, cwd: &Path) -> BoxFuture<'_, Result<Vec<Listed>, String>>;
    /// The models a session may use, for the model selector (the default first).
    fn models(&self) -> Vec<String>;
    /// The model's context window in tokens, for usage updates.
    fn context_window(&self) -> u64;
}

/// [`Sessions`] over one `AgentHandle` per session, each on its own project.
pub struct HandleSessions {
    /// The settings every session starts from (`project` and `cwd` are replaced).
    pub base: AgentConfig,
    pub model: Arc<dyn ModelClient>,
    /// The catalog's models, the default first.
    pub models: Vec<String>,
}

impl SessionLink for AgentHandle {
    fn submit(&self, op: Op) -> String {
        AgentHandle::submit(self, op)
    }
}

/// How long the engine may take to answer `ready` or a conversation switch.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

impl Sessions for HandleSessions {
    fn open(&self, request: OpenRequest) -> BoxFuture<'_, Result<Opened, String>> {
        Box::pin(async move {
            let folders = corvid_agent::project_folders(&request.cwd, None);
            let mut config = self.base.clone();
            config.project = folders.root;
            config.cwd = folders.cwd;
            config.files = request.files.clone();
            let (handle, mut events) = AgentHandle::spawn(config, Arc::clone(&self.model))
                .map_err(|error| error.to_string())?;
            let ready = wait_for(&mut events, |msg| match msg {
                EventMsg::Ready(ready) => Some(Ok(ready.clone())),
                _ => None,
            })
            .await?;
            let op = match &request.conversation {
                Some(id) => Op::SwitchConversation {
                    conversation_id: id.clone(),
                },
                None => Op::NewConversation,
            };
            handle.submit(op);
            let (conversation_id, history) = wait_for(&mut events, |msg| match msg {
                EventMsg::ConversationSwitched {
                    conversation,
                    history,
                } => Some(Ok((conversation.id.clone(), history.clone()))),
                EventMsg::Error(error) => Some(Err(error.message.clone())),
                _ => None,
            })
            .await?;
            Ok(Opened {
                conversation_id,
                project: PathBuf::from(&ready.cwd),
                model: ready.model,
                approval: ready.approval_policy,
                history,
                link: Arc::new(handle),
                events,
            })
        })
    }

    fn list(&self, cwd: &Path) -> BoxFuture<'_, Result<Vec<Listed>, String>> {
        let folders = corvid_agent::project_folders(cwd, None);
        let database = self.base.database.clone();
        Box::pin(async move {
            let Some(database) = database else {
                return Ok(Vec::new());
            };
            let project = folders
                .root
                .canonicalize()
                .map_err(|error| format!("{}: {error}", folders.root.display()))?;
            let key = project.display().to_string();
            let found = tokio::task::spawn_blocking(move || {
                corvid_store::Store::open(&database)
                    .and_then(|store| store.list_conversations(&key))
            })
            .await
            .map_err(|error| error.to_string())?
            .map_err(|error| error.to_string())?;
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

    fn context_window(&self) -> u64 {
        self.base
            .context_window
            .unwrap_or(corvid_agent::DEFAULT_CONTEXT_WINDOW)
    }
}

/// Reads events until `pick` answers, within [`ANSWER_TIMEOUT`].
async fn wait_for<T>(
    events: &mut mpsc::UnboundedReceiver<Event>,
    mut pick: impl FnMut(&EventMsg) -> Option<Result<T, String>>,
) -> Result<T, String> {
    let search = async {
        while let Some(event) = events.recv().await {
            if let Some(answer) = pick(&event.msg) {
                return answer;
            }
        }
        Err("the agent stopped before it answered".to_owned())
    };
    tokio::time::timeout(ANSWER_TIMEOUT, search)
        .await
        .unwrap_or_else(|_| Err("the agent did not answer in time".to_owned()))
}

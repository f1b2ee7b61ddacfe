//! The session service: one `Agents` per process owns the model client, the store and every
//! open session (one per conversation, each on its own project folder), so the terminal, the
//! web page and ACP share one store, one provider registry and one token refresher. Front ends
//! reach a session only through `corvid_protocol` frames (`Session::submit`, `subscribe`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;
use std::time::Duration;

use corvid_protocol::{ConversationSummary, HistoryEntry};
use corvid_wire::model::Message;

use crate::attention::AttentionFeed;
use crate::config::{AgentConfig, AgentError};
use crate::conversation::OpenConversation;
use crate::engine::project_folder;
use crate::handle::{Session, Started, start};
use crate::journal::Subscription;
use crate::model::ModelClient;
use crate::session::{Claims, SharedStore};

/// The session service. Cheap to clone; every clone is the same service.
#[derive(Clone)]
pub struct Agents {
    inner: Arc<Inner>,
}

struct Inner {
    model: Arc<dyn ModelClient>,
    store: SharedStore,
    claims: Arc<Claims>,
    sessions: Mutex<HashMap<String, Session>>,
    /// Opens run one at a time, so two opens of one conversation find one session.
    opening: tokio::sync::Mutex<()>,
    next: AtomicU64,
    idle: IdleRules,
    /// Where sessions announce approvals waiting and turns ending (see `crate::attention`).
    attention: Arc<AttentionFeed>,
}

/// When the service closes a session nobody listens to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdleRules {
    /// How long a session with no listener and no running turn stays open (a face that
    /// reconnects at once finds it).
    pub grace: Duration,
    /// How long a proposal may wait with no listener before the session is closed (its turn
    /// then ends as cancelled): nothing waits forever for a face that went away, and a face
    /// that comes back within it can still answer.
    pub unattended_approval: Duration,
}

impl Default for IdleRules {
    fn default() -> Self {
        Self {
            grace: Duration::from_secs(2),
            unattended_approval: Duration::from_secs(120),
        }
    }
}

/// One stored conversation with its history, for a front end that shows it before (or without)
/// subscribing.
#[derive(Debug, Clone, PartialEq)]
pub struct ConversationDetail {
    pub summary: ConversationSummary,
    /// Oldest first; for an open session, its completed turns (a running turn's events come
    /// only to its listeners).
    pub history: Vec<HistoryEntry>,
    /// The open session holding it, if any.
    pub session: Option<String>,
}

/// One open session, as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    /// The session's id (`a1`, `a2`, …), not a conversation id.
    pub id: String,
    /// Its project folder, canonical.
    pub project: PathBuf,
    /// The conversation it holds now.
    pub conversation_id: String,
    /// Live subscriptions.
    pub listeners: usize,
    /// Whether a turn is running.
    pub running: bool,
}

impl Agents {
    pub fn new(model: Arc<dyn ModelClient>, store: SharedStore) -> Self {
        Self::with_idle_rules(model, store, IdleRules::default())
    }

    /// A service over a store of its own, in memory (tests, and tools that want one agent and
    /// nothing else).
    pub fn in_memory(model: Arc<dyn ModelClient>) -> Result<Self, AgentError> {
        let store = corvid_store::Store::open_in_memory()?;
        Ok(Self::new(model, Arc::new(parking_lot::Mutex::new(store))))
    }

    /// A service that closes idle sessions by `idle` (tests shorten it).
    pub fn with_idle_rules(
        model: Arc<dyn ModelClient>,
        store: SharedStore,
        idle: IdleRules,
    ) -> Self {
        Self::build(model, store, idle, AttentionFeed::new())
    }

    /// A service whose sessions announce on `attention`, a feed the host keeps across services
    /// (a live settings reload builds a new service; the host subscribed once).
    pub fn with_attention(
        model: Arc<dyn ModelClient>,
        store: SharedStore,
        attention: Arc<AttentionFeed>,
    ) -> Self {
        Self::build(model, store, IdleRules::default(), attention)
    }

    fn build(
        model: Arc<dyn ModelClient>,
        store: SharedStore,
        idle: IdleRules,
        attention: Arc<AttentionFeed>,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                model,
                store,
                claims: Arc::new(Claims::default()),
                sessions: Mutex::new(HashMap::new()),
                opening: tokio::sync::Mutex::new(()),
                next: AtomicU64::new(0),
                idle,
                attention,
            }),
        }
    }

    /// Where this service's sessions announce approvals waiting and turns ending, and where its
    /// faces report whether the user looks at them.
    pub fn attention(&self) -> &Arc<AttentionFeed> {
        &self.inner.attention
    }

    /// Opens a session on `config.project`, on the service's store. When the conversation asked for is already open, that session is returned.
    pub async fn open(
        &self,
        config: AgentConfig,
        conversation: OpenConversation,
    ) -> Result<Session, AgentError> {
        Ok(self.open_inner(config, conversation).await?.0)
    }

    /// Like `open`, with a listener that hears a newly started session from its first event
    /// (start-up warnings and `ready`, no replay) — what `corvid chat` and `exec` use. For a
    /// session that was open already, the listener starts with the usual replay.
    pub async fn open_listening(
        &self,
        config: AgentConfig,
        conversation: OpenConversation,
    ) -> Result<(Session, Subscription), AgentError> {
        self.open_inner(config, conversation).await
    }

    async fn open_inner(
        &self,
        config: AgentConfig,
        which: OpenConversation,
    ) -> Result<(Session, Subscription), AgentError> {
        let _opening = self.inner.opening.lock().await;
        let project =
            blocking(move || project_folder(&config).map(|path| (path, config))).await??;
        let (project, config) = project;
        let store = Arc::clone(&self.inner.store);
        let (model_name, folder) = (config.model.clone(), project.clone());
        let conversation = blocking(move || {
            crate::conversation::resolve(&mut *store.lock(), &folder, &model_name, &which)
        })
        .await??;
        let session_id = {
            let mut sessions = self.inner.sessions.lock();
            sessions.retain(|_, session| !session.is_closed());
            if let Some(session) = self
                .inner
                .claims
                .holder(&conversation)
                .and_then(|holder| sessions.get(&holder))
            {
                return Ok((session.clone(), session.subscribe()));
            }
            let session_id = format!("a{}", self.inner.next.fetch_add(1, Ordering::SeqCst) + 1);
            // Free a moment ago under the same lock: nobody else can hold it.
            let _ = self.inner.claims.claim(&conversation, &session_id);
            session_id
        };
        let (model, store, claims) = (
            Arc::clone(&self.inner.model),
            Arc::clone(&self.inner.store),
            Arc::clone(&self.inner.claims),
        );
        let runtime = tokio::runtime::Handle::current();
        let (id, held) = (session_id.clone(), conversation.clone());
        let attention = Arc::clone(&self.inner.attention);
        let started =
            blocking(move || start(config, model, store, claims, id, held, attention, &runtime))
                .await?;
        match started {
            Ok(Started { session, first }) => {
                self.inner
                    .sessions
                    .lock()
                    .insert(session_id, session.clone());
                self.close_when_idle(session.clone());
                Ok((session, first))
            }
            Err(error) => {
                self.inner.claims.release(&conversation, &session_id);
                Err(error)
            }
        }
    }

    /// The open sessions.
    pub fn sessions(&self) -> Vec<SessionInfo> {
        let mut sessions = self.inner.sessions.lock();
        sessions.retain(|_, session| !session.is_closed());
        let mut list: Vec<SessionInfo> = sessions
            .values()
            .map(|session| SessionInfo {
                id: session.id().to_owned(),
                project: session.project().to_owned(),
                conversation_id: session.conversation_id(),
                listeners: session.listeners(),
                running: session.is_running(),
            })
            .collect();
        list.sort_by(|a, b| a.id.cmp(&b.id));
        list
    }

    /// An open session by its id.
    pub fn session(&self, id: &str) -> Option<Session> {
        self.inner
            .sessions
            .lock()
            .get(id)
            .filter(|session| !session.is_closed())
            .cloned()
    }

    /// The open session holding `conversation_id`, if any.
    pub fn session_for(&self, conversation_id: &str) -> Option<Session> {
        let holder = self.inner.claims.holder(conversation_id)?;
        self.session(&holder)
    }

    /// The context window in tokens a session of this service measures `model` against:
    /// `configured` (the session's `AgentConfig::context_window`) when set, else the model
    /// client's for that model, else the default. Compaction uses the same rule; faces use it
    /// to show how full the window is.
    pub fn context_window(&self, model: &str, configured: Option<u64>) -> u64 {
        configured
            .or_else(|| self.inner.model.context_window(model))
            .unwrap_or(crate::DEFAULT_CONTEXT_WINDOW)
            .max(1)
    }

    /// The project's stored conversations, most recently updated first.
    pub async fn conversations(
        &self,
        project: &Path,
    ) -> Result<Vec<ConversationSummary>, AgentError> {
        let key = canonical(project).await?.display().to_string();
        let store = Arc::clone(&self.inner.store);
        let list = blocking(move || store.lock().list_conversations(&key)).await??;
        Ok(list.into_iter().map(crate::conversation::summary).collect())
    }

    /// One stored conversation of the project with its history; `None` when there is none.
    /// Read only: a conversation left broken by a crash is repaired when a session opens it.
    pub async fn conversation(
        &self,
        project: &Path,
        conversation_id: &str,
    ) -> Result<Option<ConversationDetail>, AgentError> {
        let folder = canonical(project).await?;
        if let Some(session) = self.session_for(conversation_id)
            && session.project() == folder
            && let Some((summary, history)) = session.conversation()
            && summary.id == conversation_id
        {
            return Ok(Some(ConversationDetail {
                summary,
                history,
                session: Some(session.id().to_owned()),
            }));
        }
        let (store, id) = (Arc::clone(&self.inner.store), conversation_id.to_owned());
        let key = folder.display().to_string();
        let found = blocking(move || {
            let store = store.lock();
            let Some(summary) = store.conversation(&key, &id)? else {
                return Ok(None);
            };
            let messages: Vec<Message> = store
                .messages(&id)?
                .iter()
                .filter_map(|stored| serde_json::from_str(&stored.content).ok())
                .collect();
            Ok::<_, corvid_store::StoreError>(Some((summary, messages)))
        })
        .await??;
        Ok(found.map(|(summary, messages)| ConversationDetail {
            summary: crate::conversation::summary(summary),
            // No session: each call's kind as the tools offered then is not known here.
            history: crate::history::entries(
                &messages,
                &folder,
                &crate::tool_facts::CallFacts::default(),
            ),
            session: None,
        }))
    }

    /// Creates an empty conversation in the project and makes it the project's current one,
    /// without opening a session on it (`open` with `Existing` does that when it is shown).
    /// Returns its id.
    pub async fn create_conversation(
        &self,
        project: &Path,
        model: &str,
    ) -> Result<String, AgentError> {
        let key = canonical(project).await?.display().to_string();
        let (store, model) = (Arc::clone(&self.inner.store), model.to_owned());
        Ok(blocking(move || store.lock().create_conversation(&key, Some(&model))).await??)
    }

    /// The project's current conversation (the one a session opened with `Current` holds),
    /// if it has one.
    pub async fn current_conversation(&self, project: &Path) -> Result<Option<String>, AgentError> {
        let key = canonical(project).await?.display().to_string();
        let store = Arc::clone(&self.inner.store);
        Ok(blocking(move || store.lock().current_conversation(&key)).await??)
    }

    /// The service's store (the usage ledger and conversations live there), for front ends that
    /// report on it.
    pub fn store(&self) -> SharedStore {
        Arc::clone(&self.inner.store)
    }

    /// Deletes a stored conversation (closing its session first when one is open); false when
    /// the project has no such conversation.
    pub async fn delete_conversation(
        &self,
        project: &Path,
        conversation_id: &str,
    ) -> Result<bool, AgentError> {
        // No open in between: a front end whose session this closes may reopen the conversation
        // at once, and must find it gone, not start a session on it before it is deleted.
        let _opening = self.inner.opening.lock().await;
        if let Some(session) = self.session_for(conversation_id) {
            self.close(session.id()).await;
        }
        let key = canonical(project).await?.display().to_string();
        let (store, id) = (Arc::clone(&self.inner.store), conversation_id.to_owned());
        Ok(blocking(move || store.lock().delete_conversation(&key, &id)).await??)
    }

    /// Closes a session (see `Session::close`); false when no such session is open. Returns
    /// when its engine has stopped.
    pub async fn close(&self, session_id: &str) -> bool {
        let found = self.inner.sessions.lock().get(session_id).cloned();
        let closed = match found {
            Some(session) if !session.is_closed() => {
                session.close().await;
                true
            }
            _ => false,
        };
        // Removed only once it has stopped (and freed its conversation): an `open` of that
        // conversation meanwhile finds this session and hears it end, instead of starting a
        // second session on a conversation that is still claimed.
        self.inner.sessions.lock().remove(session_id);
        closed
    }

    /// Gives a stored conversation of the project another title; false when there is no such
    /// conversation.
    pub async fn rename_conversation(
        &self,
        project: &Path,
        conversation_id: &str,
        title: &str,
    ) -> Result<bool, AgentError> {
        let key = canonical(project).await?.display().to_string();
        let (store, id) = (Arc::clone(&self.inner.store), conversation_id.to_owned());
        let title: String = title.lines().next().unwrap_or_default().trim().to_owned();
        Ok(blocking(move || {
            let mut store = store.lock();
            if store.conversation(&key, &id)?.is_none() {
                return Ok(false);
            }
            store.set_title(&id, &title)?;
            Ok::<_, corvid_store::StoreError>(true)
        })
        .await??)
    }

    /// Watches `session` and closes it once nobody listens and no turn runs (after
    /// `IdleRules::grace`), or once a proposal has waited `IdleRules::unattended_approval` with
    /// nobody listening. Every face's sessions are closed this way.
    fn close_when_idle(&self, session: Session) {
        let (agents, rules) = (self.clone(), self.inner.idle);
        let mut changes = session.quiet_changes();
        tokio::spawn(async move {
            let mut unattended_since: Option<tokio::time::Instant> = None;
            loop {
                tokio::time::sleep(rules.grace).await;
                if session.is_closed() {
                    return;
                }
                if session.listeners() == 0 {
                    if !session.is_running() {
                        agents.close(session.id()).await;
                        return;
                    }
                    if session.is_waiting_for_approval() {
                        let since = *unattended_since.get_or_insert_with(tokio::time::Instant::now);
                        if since.elapsed() >= rules.unattended_approval {
                            tracing::info!(
                                session = session.id(),
                                "closing a session whose proposal nobody can answer"
                            );
                            agents.close(session.id()).await;
                            return;
                        }
                    } else {
                        unattended_since = None;
                    }
                } else {
                    unattended_since = None;
                }
                // Woken by a listener leaving or a turn ending; a proposal nobody listens to is
                // looked at again by itself.
                let wait = if unattended_since.is_some() {
                    rules.unattended_approval
                } else {
                    Duration::MAX
                };
                if let Ok(Err(_)) = tokio::time::timeout(wait, changes.changed()).await {
                    return;
                }
            }
        });
    }

    /// Closes every session (at the process's end).
    pub async fn close_all(&self) {
        let sessions: Vec<Session> = self
            .inner
            .sessions
            .lock()
            .drain()
            .map(|(_, session)| session)
            .collect();
        for session in sessions {
            session.close().await;
        }
    }
}

async fn canonical(project: &Path) -> Result<PathBuf, AgentError> {
    let project = project.to_owned();
    blocking(move || {
        project.canonicalize().map_err(|error| AgentError::Project {
            path: project.clone(),
            message: error.to_string(),
        })
    })
    .await?
}

/// Runs blocking work (the store, the file system) off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, AgentError> {
    tokio::task::spawn_blocking(work).await.map_err(|join| {
        AgentError::Store(corvid_store::StoreError::Spawn(std::io::Error::other(
            join.to_string(),
        )))
    })
}

impl std::fmt::Debug for Agents {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Agents")
            .field("sessions", &self.inner.sessions.lock().len())
            .finish_non_exhaustive()
    }
}

//! The page's agent: the session service (`corvid_agent::Agents`) and the settings every session
//! the page opens starts with (project, model, front end `web`, sandbox). Each tab (one
//! WebSocket, `ws.rs`) shows one conversation and listens to the session holding it: two tabs on
//! one conversation share its session (both see its events, either may answer its approvals),
//! two tabs on different conversations have sessions of their own and run independently.
//!
//! A session the page opened is closed once nobody listens to it and no turn runs
//! ([`PageAgent::release`]): its conversation is in the store, and a tab that shows it again
//! opens it again. A turn that runs when its last tab goes keeps running to its end (its
//! approvals wait for a tab to come back), then the session closes.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use corvid_agent::{AgentConfig, AgentError, Agents, OpenConversation, Session, SharedStore};
use corvid_protocol::{ApprovalPolicy, EventMsg, Op, ReadyNotification, Submission};

/// How often a released session that still runs a turn is looked at again.
const IDLE_CHECK: Duration = Duration::from_millis(500);

/// The session service as the page uses it. Cheap to clone.
#[derive(Clone)]
pub struct PageAgent(Arc<Inner>);

struct Inner {
    agents: Agents,
    /// What a session the page opens starts with; its model and approval policy follow the
    /// defaults the settings page saves.
    config: Mutex<AgentConfig>,
    project: PathBuf,
}

impl PageAgent {
    /// `config` is what each session the page opens starts with (its `project` is the page's
    /// project folder).
    pub fn new(agents: Agents, config: AgentConfig) -> Self {
        Self(Arc::new(Inner {
            project: config.project.clone(),
            agents,
            config: Mutex::new(config),
        }))
    }

    /// The service behind the page.
    pub fn agents(&self) -> &Agents {
        &self.0.agents
    }

    /// The project folder the page's sessions work in.
    pub fn project(&self) -> &std::path::Path {
        &self.0.project
    }

    /// The process's one store (conversations and the usage ledger).
    pub fn store(&self) -> SharedStore {
        self.0.agents.store()
    }

    /// Opens the session of `which` (or joins it, when a tab has it open already).
    pub async fn open(&self, which: OpenConversation) -> Result<Session, AgentError> {
        let config = self
            .0
            .config
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        self.0.agents.open(config, which).await
    }

    /// The model sessions opened from now on start with.
    pub fn set_model(&self, model: &str) {
        self.0
            .config
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .model = model.to_owned();
    }

    /// The model sessions opened from now on start with.
    pub fn model(&self) -> String {
        self.0
            .config
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .model
            .clone()
    }

    /// The approval policy sessions opened from now on start with (the default the settings
    /// page saves as `approval` in config.toml).
    pub fn set_approval(&self, policy: ApprovalPolicy) {
        self.0
            .config
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .approval = policy;
    }

    /// The approval policy sessions opened from now on start with.
    pub fn approval(&self) -> ApprovalPolicy {
        self.0
            .config
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .approval
    }

    /// A tab stopped listening to `session`: close it once nobody listens and no turn runs.
    pub fn release(&self, session: Session) {
        release(session);
    }
}

/// Closes `session` once nobody listens to it and no turn runs. A listener that joined it
/// meanwhile keeps it open, and releases it in its turn (a tab when it leaves, a REST call when
/// it has its answer).
pub(crate) fn release(session: Session) {
    tokio::spawn(async move {
        loop {
            if session.is_closed() || session.listeners() > 0 {
                return;
            }
            if !session.is_running() {
                session.close().await;
                return;
            }
            tokio::time::sleep(IDLE_CHECK).await;
        }
    });
}

/// Why a request to a session got no answer.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AskError {
    #[error("{0}")]
    Refused(String),
    #[error("the agent did not answer within {0:?}")]
    Timeout(Duration),
    #[error("the session has ended")]
    Ended,
}

static NEXT_ASK: AtomicU64 = AtomicU64::new(1);

/// Submits `op` to `session` and waits for the event that answers it (`accept`), or the
/// engine's error for it. Subscribes before submitting, so the answer cannot be missed.
pub(crate) async fn ask(
    session: &Session,
    op: Op,
    accept: impl Fn(&EventMsg) -> bool,
    timeout: Duration,
) -> Result<EventMsg, AskError> {
    let id = format!("rest-{}", NEXT_ASK.fetch_add(1, Ordering::Relaxed));
    let mut events = session.subscribe();
    session.submit_with_id(Submission::new(id.clone(), op));
    let wait = async {
        loop {
            match events.recv().await {
                Some(event) if event.id == id => match event.msg {
                    EventMsg::Error(error) => return Err(AskError::Refused(error.message)),
                    msg if accept(&msg) => return Ok(msg),
                    _ => {}
                },
                Some(_) => {}
                None => return Err(AskError::Ended),
            }
        }
    };
    let answer = tokio::time::timeout(timeout, wait)
        .await
        .unwrap_or(Err(AskError::Timeout(timeout)));
    drop(events);
    release(session.clone());
    answer
}

/// The session's model and approval policy now, from the `ready` its replay starts with.
pub(crate) async fn settings_of(session: &Session, timeout: Duration) -> Option<ReadyNotification> {
    let read = async {
        let mut events = session.subscribe_ready().await;
        match events.recv().await?.msg {
            EventMsg::Ready(ready) => Some(ready),
            _ => None,
        }
    };
    let ready = tokio::time::timeout(timeout, read).await.ok().flatten();
    release(session.clone());
    ready
}

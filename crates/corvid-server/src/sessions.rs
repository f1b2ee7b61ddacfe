//! The page's agent: the session service (`corvid_agent::Agents`) and the settings every session
//! the page opens starts with (project, model, front end `web`, sandbox). Each tab (one
//! WebSocket, `ws.rs`) shows one conversation and listens to the session holding it: two tabs on
//! one conversation share its session (both see its events, either may answer its approvals),
//! two tabs on different conversations have sessions of their own and run independently.
//!
//! The service closes a session once nobody listens to it and no turn runs (for every face, see
//! `corvid_agent::IdleRules`): its conversation is in the store, and a tab that shows it again
//! opens it again. A turn that runs when its last tab goes keeps running to its end (its
//! approvals wait a while for a tab to come back), then the session closes.

use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::Mutex;
use std::time::Duration;

use corvid_agent::{
    AgentConfig, AgentError, Agents, Link, LinkFrames, OpenConversation, Session, SharedStore,
};
use corvid_protocol::{ApprovalPolicy, ErrorNotification, Op, ReplyOk};

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
        let config = self.0.config.lock().clone();
        self.0.agents.open(config, which).await
    }

    /// The model sessions opened from now on start with.
    pub fn set_model(&self, model: &str) {
        self.0.config.lock().model = model.to_owned();
    }

    /// The model sessions opened from now on start with.
    pub fn model(&self) -> String {
        self.0.config.lock().model.clone()
    }

    /// The approval policy sessions opened from now on start with (the default the settings
    /// page saves as `approval` in config.toml).
    pub fn set_approval(&self, policy: ApprovalPolicy) {
        self.0.config.lock().approval = policy;
    }

    /// The approval policy sessions opened from now on start with.
    pub fn approval(&self) -> ApprovalPolicy {
        self.0.config.lock().approval
    }

    /// A link for one tab: the session of `which` (joined when another face has it open),
    /// listened to from its replay.
    pub async fn link(&self, which: OpenConversation) -> Result<(Link, LinkFrames), AgentError> {
        let inner = Arc::clone(&self.0);
        let config = Arc::new(move || inner.config.lock().clone());
        Link::open_with(self.0.agents.clone(), config, which).await
    }
}

/// Carries out `op` in `session` within `timeout`, as a REST call needs it.
pub(crate) async fn request(
    session: &Session,
    op: Op,
    timeout: Duration,
) -> Result<ReplyOk, ErrorNotification> {
    tokio::time::timeout(timeout, session.request(op))
        .await
        .unwrap_or_else(|_| {
            Err(ErrorNotification::new(
                corvid_protocol::ErrorClass::Internal,
                format!("the agent did not answer within {timeout:?}"),
            ))
        })
}

//! What the page needs from the agent: submit an operation, subscribe to the events. The
//! WebSocket and the REST routes use only [`AgentSessions`], so the session service (many
//! sessions, replay on subscribe, approvals by id) plugs in behind it without touching them.
//!
//! [`EngineSessions`] implements it over today's single engine: one `AgentHandle` whose events
//! fan out to every listener through a bounded broadcast channel, so a tab that stops reading
//! neither stalls the engine nor grows memory; it only misses events, and is told so.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use corvid_agent::{
    AgentConfig, AgentError, AgentHandle, Agents, ModelClient, OpenConversation, Session,
    Subscription,
};
use corvid_protocol::{Event, EventMsg, Op, Submission};
use futures_util::future::BoxFuture;
use tokio::sync::broadcast;

/// Events buffered per listener before a slow one starts missing them.
pub const LISTENER_BUFFER: usize = 1024;

/// The agent as the page sees it.
pub trait AgentSessions: Send + Sync + 'static {
    /// Hands a submission to the engine; its events carry its id.
    fn submit(&self, submission: Submission);
    /// Every event from now on. A listener that falls behind may get [`Received::Lagged`] and
    /// should then fetch the conversation again (`switch_conversation` to the active one
    /// replays it).
    fn subscribe(&self) -> Box<dyn Listener>;
}

/// What a listener gets next.
#[derive(Debug)]
pub enum Received {
    /// Boxed: an event is large beside the other answers.
    Event(Box<Event>),
    /// This many events were dropped for this listener (it read too slowly).
    Lagged(u64),
    /// The engine has stopped.
    Closed,
}

/// One listener's events. `recv` must be cancel-safe (the WebSocket races it against the
/// socket): dropping its future loses no event.
pub trait Listener: Send {
    fn recv(&mut self) -> BoxFuture<'_, Received>;
}

impl Listener for broadcast::Receiver<Event> {
    fn recv(&mut self) -> BoxFuture<'_, Received> {
        Box::pin(async move {
            match broadcast::Receiver::recv(self).await {
                Ok(event) => Received::Event(Box::new(event)),
                Err(broadcast::error::RecvError::Lagged(missed)) => Received::Lagged(missed),
                Err(broadcast::error::RecvError::Closed) => Received::Closed,
            }
        })
    }
}

/// A session listener of the service: a replay of the session so far, then live events. It
/// never reports a lag: one that falls behind is resynced with a fresh replay whose `ready`
/// carries `missed`. `Subscription::recv` is cancel-safe (its replay is a queue it pops only
/// when it returns an event; its live side is a broadcast receiver), so this is too.
impl Listener for Subscription {
    fn recv(&mut self) -> BoxFuture<'_, Received> {
        Box::pin(async move {
            match Subscription::recv(self).await {
                Some(event) => Received::Event(Box::new(event)),
                None => Received::Closed,
            }
        })
    }
}

/// The page's agent as a session of the session service: the project's current conversation,
/// shared by every tab (each subscription starts with the replay of it).
pub struct ServiceSessions {
    session: Session,
}

impl ServiceSessions {
    /// Opens (or joins, when it is open already) the session on the project's current
    /// conversation.
    pub async fn open(agents: Agents, config: AgentConfig) -> Result<Self, AgentError> {
        let session = agents.open(config, OpenConversation::Current).await?;
        Ok(Self { session })
    }
}

impl AgentSessions for ServiceSessions {
    fn submit(&self, submission: Submission) {
        self.session.submit_with_id(submission);
    }

    fn subscribe(&self) -> Box<dyn Listener> {
        Box::new(self.session.subscribe())
    }
}

/// One engine outside any service, shared by every tab.
pub struct EngineSessions {
    handle: AgentHandle,
    events: broadcast::Sender<Event>,
}

impl EngineSessions {
    /// Starts the engine on the current runtime and the task that fans its events out.
    pub fn spawn(config: AgentConfig, model: Arc<dyn ModelClient>) -> Result<Self, AgentError> {
        let (handle, mut receiver) = AgentHandle::spawn(config, model)?;
        let (events, _) = broadcast::channel(LISTENER_BUFFER);
        let sender = events.clone();
        tokio::spawn(async move {
            while let Some(event) = receiver.recv().await {
                // No listener right now is fine: the conversation is in the store.
                let _ = sender.send(event);
            }
        });
        Ok(Self { handle, events })
    }
}

impl AgentSessions for EngineSessions {
    fn submit(&self, submission: Submission) {
        self.handle.submit_with_id(submission);
    }

    fn subscribe(&self) -> Box<dyn Listener> {
        Box::new(self.events.subscribe())
    }
}

/// Why a request to the engine got no answer.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AskError {
    #[error("{0}")]
    Refused(String),
    #[error("the agent did not answer within {0:?}")]
    Timeout(Duration),
    #[error("the agent has stopped")]
    Stopped,
}

static NEXT_ASK: AtomicU64 = AtomicU64::new(1);

/// Submits `op` and waits for the event that answers it (`accept`), or the engine's error for
/// it. Subscribes before submitting, so the answer cannot be missed.
pub(crate) async fn ask(
    sessions: &dyn AgentSessions,
    op: Op,
    accept: impl Fn(&EventMsg) -> bool,
    timeout: Duration,
) -> Result<EventMsg, AskError> {
    let id = format!("rest-{}", NEXT_ASK.fetch_add(1, Ordering::Relaxed));
    let mut events = sessions.subscribe();
    sessions.submit(Submission::new(id.clone(), op));
    let wait = async {
        loop {
            match events.recv().await {
                Received::Event(event) if event.id == id => match event.msg {
                    EventMsg::Error(error) => return Err(AskError::Refused(error.message)),
                    msg if accept(&msg) => return Ok(msg),
                    _ => {}
                },
                Received::Event(_) | Received::Lagged(_) => {}
                Received::Closed => return Err(AskError::Stopped),
            }
        }
    };
    tokio::time::timeout(timeout, wait)
        .await
        .unwrap_or(Err(AskError::Timeout(timeout)))
}

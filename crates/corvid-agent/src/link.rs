//! One face's connection to the session service: the session of the conversation it shows,
//! the replies to its requests, and the session's events, as one stream of `ServerFrame`s.
//!
//! A face sends every operation through [`Link::request`] (or awaits it with [`Link::call`]),
//! and answers the agent's requests (approvals) with [`Link::respond`];
//! the link carries the service's own requests itself — `open_conversation` (the only way to
//! show another conversation: the face then listens to that conversation's session, starting
//! with its replay), `rename_conversation`, `delete_conversation` — and hands the rest to the
//! session. Every request gets exactly one reply frame. The session the face leaves is closed by
//! the service once nobody listens and no turn runs.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;

use corvid_protocol::{
    ClientFrame, ErrorNotification, Op, Reply, ReplyOk, Response, ServerFrame, Submission,
};
use tokio::sync::mpsc;

use crate::agents::Agents;
use crate::config::{AgentConfig, AgentError};
use crate::conversation::OpenConversation;
use crate::handle::Session;
use crate::journal::Subscription;

/// The sending side: cheap to clone, every clone is the same link.
#[derive(Clone)]
pub struct Link {
    inner: Arc<Inner>,
}

/// What a session this face opens starts with, asked at each open (a face whose defaults
/// change, like the page's settings, answers with the current ones).
pub type ConfigSource = Arc<dyn Fn() -> AgentConfig + Send + Sync>;

struct Inner {
    agents: Agents,
    config: ConfigSource,
    session: Mutex<Session>,
    to_frames: mpsc::UnboundedSender<Internal>,
    next: AtomicU64,
}

enum Internal {
    Reply(Reply),
    /// Listen to this session from now on (after an open).
    Switch(Subscription),
}

/// The receiving side: replies and the current session's events, in order.
pub struct LinkFrames {
    events: Subscription,
    from_link: mpsc::UnboundedReceiver<Internal>,
    /// Keeps the channel open for as long as the frames are read.
    _link: Link,
}

impl Link {
    /// Opens `which` in the service with `config` (what every session this face opens starts
    /// with) and listens to it from its first event (a session that was open already starts
    /// with its replay).
    pub async fn open(
        agents: Agents,
        config: AgentConfig,
        which: OpenConversation,
    ) -> Result<(Link, LinkFrames), AgentError> {
        Self::open_with(agents, Arc::new(move || config.clone()), which).await
    }

    /// [`Link::open`] with the configuration asked from `config` at every open. The listener
    /// starts with the session's replay (`ready`, its notices, the conversation and its history).
    pub async fn open_with(
        agents: Agents,
        config: ConfigSource,
        which: OpenConversation,
    ) -> Result<(Link, LinkFrames), AgentError> {
        let session = agents.open(config(), which).await?;
        let events = session.subscribe_ready().await;
        Ok(Self::over(agents, config, session, events))
    }

    /// A link over a session the face opened itself, with its listener.
    pub fn over(
        agents: Agents,
        config: ConfigSource,
        session: Session,
        events: Subscription,
    ) -> (Link, LinkFrames) {
        let (to_frames, from_link) = mpsc::unbounded_channel();
        let link = Link {
            inner: Arc::new(Inner {
                agents,
                config,
                session: Mutex::new(session),
                to_frames,
                next: AtomicU64::new(0),
            }),
        };
        let frames = LinkFrames {
            events,
            from_link,
            _link: link.clone(),
        };
        (link, frames)
    }

    /// The session the face shows now.
    pub fn session(&self) -> Session {
        self.inner.session.lock().clone()
    }

    /// Sends `op`; its reply comes as a `reply` frame carrying the returned id.
    pub fn request(&self, op: Op) -> String {
        let id = format!("f{}", self.inner.next.fetch_add(1, Ordering::SeqCst) + 1);
        self.request_with_id(Submission::new(id.clone(), op));
        id
    }

    /// A frame from the face's transport: a submission (replied as a `reply` frame) or a
    /// response to one of the agent's requests (replied too, under the request's id).
    pub fn send(&self, frame: ClientFrame) {
        match frame {
            ClientFrame::Submission(submission) => self.request_with_id(submission),
            ClientFrame::Response(response) => {
                let reply = self.respond(response);
                let _ = self.inner.to_frames.send(Internal::Reply(reply));
            }
        }
    }

    /// Answers one of the agent's requests in the session shown now; the reply says whether it
    /// was taken (the first answer from any face is) or why not.
    pub fn respond(&self, response: Response) -> Reply {
        self.session().respond(response)
    }

    /// [`Link::request`] under the face's own id (a transport relaying its client's ids).
    pub fn request_with_id(&self, submission: Submission) {
        let link = self.clone();
        tokio::spawn(async move {
            let reply = link.carry_out(submission).await;
            let _ = link.inner.to_frames.send(Internal::Reply(reply));
        });
    }

    /// Carries out `op` and returns its reply here (no `reply` frame is sent for it).
    pub async fn call(&self, op: Op) -> Result<ReplyOk, ErrorNotification> {
        let id = format!("f{}", self.inner.next.fetch_add(1, Ordering::SeqCst) + 1);
        self.carry_out(Submission::new(id, op)).await.into_result()
    }

    /// Opens the conversation shown now again (its session ended under the face: deleted from
    /// another face, or closed as idle as the face joined it), or a new one when it is gone.
    pub async fn reopen(&self) -> Result<(), AgentError> {
        let current = self.session().conversation_id();
        match self.switch(OpenConversation::Existing(current)).await {
            Err(AgentError::UnknownConversation { .. }) => {
                self.switch(OpenConversation::New).await.map(|_| ())
            }
            other => other.map(|_| ()),
        }
    }

    async fn carry_out(&self, submission: Submission) -> Reply {
        let id = submission.id.clone();
        let outcome = match submission.op {
            Op::OpenConversation { conversation_id } => {
                let which = match conversation_id {
                    Some(id) => OpenConversation::Existing(id),
                    None => OpenConversation::New,
                };
                match self.switch(which).await {
                    Ok(session) => Ok(ReplyOk::Opened {
                        conversation: session_summary(&session),
                    }),
                    Err(error) => Err(refused(&error)),
                }
            }
            Op::RenameConversation {
                conversation_id,
                title,
            } => {
                let session = self.session();
                let target = conversation_id.unwrap_or_else(|| session.conversation_id());
                match self
                    .inner
                    .agents
                    .rename_conversation(session.project(), &target, &title)
                    .await
                {
                    Ok(true) => Ok(ReplyOk::Done),
                    Ok(false) => Err(unknown(&target)),
                    Err(error) => Err(refused(&error)),
                }
            }
            Op::DeleteConversation { conversation_id } => {
                let session = self.session();
                // The face moves to a new conversation first, so it never listens to a session
                // that is going away.
                let moved = if session.conversation_id() == conversation_id {
                    self.switch(OpenConversation::New).await.map(|_| ())
                } else {
                    Ok(())
                };
                match moved {
                    Err(error) => Err(refused(&error)),
                    Ok(()) => match self
                        .inner
                        .agents
                        .delete_conversation(session.project(), &conversation_id)
                        .await
                    {
                        Ok(true) => Ok(ReplyOk::Done),
                        Ok(false) => Err(unknown(&conversation_id)),
                        Err(error) => Err(refused(&error)),
                    },
                }
            }
            op => {
                let session = self.session();
                return session.request_with_id(Submission::new(id, op)).await;
            }
        };
        match outcome {
            Ok(ok) => Reply::ok(id, ok),
            Err(error) => Reply::error(id, error),
        }
    }

    /// Listens to the session of `which` from now on, starting with its replay.
    async fn switch(&self, which: OpenConversation) -> Result<Session, AgentError> {
        let session = self.inner.agents.open((self.inner.config)(), which).await?;
        let events = session.subscribe_ready().await;
        *self.inner.session.lock() = session.clone();
        let _ = self.inner.to_frames.send(Internal::Switch(events));
        Ok(session)
    }
}

impl LinkFrames {
    /// The next frame: a reply, or an event or request of the session shown now. `None` once that session
    /// has ended (after a `shutdown`, or under the face: `Link::reopen` goes on).
    /// Cancel-safe (usable in `tokio::select!`).
    pub async fn recv(&mut self) -> Option<ServerFrame> {
        loop {
            tokio::select! {
                biased;
                internal = self.from_link.recv() => match internal {
                    Some(Internal::Reply(reply)) => return Some(ServerFrame::Reply(reply)),
                    Some(Internal::Switch(events)) => self.events = events,
                    // `_link` keeps a sender: this never happens.
                    None => return None,
                },
                frame = self.events.recv() => return frame.map(ServerFrame::from),
            }
        }
    }
}

fn session_summary(session: &Session) -> corvid_protocol::ConversationSummary {
    session
        .conversation()
        .map(|(summary, _)| summary)
        .unwrap_or_else(|| crate::engine::untitled(&session.conversation_id()))
}

fn unknown(conversation_id: &str) -> ErrorNotification {
    ErrorNotification::invalid(format!(
        "no conversation `{conversation_id}` in this project"
    ))
    .with_next_action("List the conversations to see their ids.")
}

fn refused(error: &AgentError) -> ErrorNotification {
    match error {
        AgentError::UnknownConversation {
            conversation_id, ..
        } => unknown(conversation_id),
        other => ErrorNotification::new(corvid_protocol::ErrorClass::Internal, other.to_string()),
    }
}

impl std::fmt::Debug for Link {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Link")
            .field("session", &self.session())
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for LinkFrames {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("LinkFrames").finish_non_exhaustive()
    }
}

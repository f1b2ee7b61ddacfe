//! The front ends' handle: `Session`, one session of an `Agents` service (the only way to start
//! one), cheap to clone.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use corvid_protocol::{
    ErrorClass, ErrorNotification, EventMsg, Op, Reply, ReplyOk, Response, Submission,
};
use tokio::sync::{mpsc, oneshot, watch};

use crate::config::{AgentConfig, AgentError};
use crate::engine::{Engine, Wiring, project_folder};
use crate::journal::{Journal, Subscription};
use crate::model::ModelClient;
use crate::scope::Scope;
use crate::session::{Approvals, Claims, SharedStore, Verdict};

/// Operations waiting for a session's engine; past them a submission is refused at once.
pub const OP_BUFFER: usize = 64;

/// One session: submit operations, subscribe to its events. Every clone is the same session.
#[derive(Clone)]
pub struct Session {
    inner: Arc<Inner>,
}

struct Inner {
    id: String,
    project: PathBuf,
    ops: mpsc::Sender<Incoming>,
    journal: Arc<Journal>,
    approvals: Arc<Approvals>,
    next: AtomicU64,
    stopped: watch::Receiver<bool>,
    commands: Arc<crate::commands::LiveCommands>,
}

/// A submission on its way to the engine, with where its reply goes (nowhere for `submit`).
pub(crate) struct Incoming {
    pub(crate) submission: Submission,
    pub(crate) reply: Option<oneshot::Sender<Reply>>,
}

/// A session's engine, built but not yet running, with its first listener.
pub(crate) struct Started {
    pub(crate) session: Session,
    pub(crate) first: Subscription,
}

/// Builds the session's engine and starts it on the current tokio runtime. Blocking (the store,
/// the project folder): call it from a blocking thread when on the async ones.
// Each argument is one part of the session's wiring, passed once by `Agents`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn start(
    config: AgentConfig,
    model: Arc<dyn ModelClient>,
    store: SharedStore,
    claims: Arc<Claims>,
    session_id: String,
    conversation: String,
    attention: Arc<crate::attention::AttentionFeed>,
    runtime: &tokio::runtime::Handle,
) -> Result<Started, AgentError> {
    let project = project_folder(&config)?;
    let journal = Journal::new();
    journal.attend(crate::attention::Attending {
        feed: attention,
        session_id: session_id.clone(),
    });
    // Subscribed before the engine says anything: this listener hears every event, no replay.
    let first = journal.subscribe();
    let approvals = Arc::new(Approvals::default());
    let engine = Engine::open(
        config,
        Wiring {
            model,
            store,
            journal: Arc::clone(&journal),
            approvals: Arc::clone(&approvals),
            claims,
            session_id: session_id.clone(),
        },
        conversation,
    )?;
    let commands = Arc::clone(&engine.commands);
    let (ops, ops_rx) = mpsc::channel(OP_BUFFER);
    let (stopped_tx, stopped) = watch::channel(false);
    runtime.spawn(engine.run(ops_rx, stopped_tx));
    Ok(Started {
        session: Session {
            inner: Arc::new(Inner {
                id: session_id,
                project,
                ops,
                journal,
                approvals,
                next: AtomicU64::new(0),
                stopped,
                commands,
            }),
        },
        first,
    })
}

impl Session {
    /// The session's id (`a1`, `a2`, …), not a conversation id.
    pub fn id(&self) -> &str {
        &self.inner.id
    }

    /// The project folder, canonical.
    pub fn project(&self) -> &Path {
        &self.inner.project
    }

    /// What the session offers beside the command table, as on disk now: the project's and
    /// the user's custom commands, then the skills (read again when their folders changed).
    pub fn commands(&self) -> Vec<corvid_protocol::commands::ProjectCommand> {
        self.inner.commands.project_commands()
    }

    /// The conversation the session holds now.
    pub fn conversation_id(&self) -> String {
        self.inner.journal.conversation_id()
    }

    /// A new listener: a replay of the session so far, then live events.
    pub fn subscribe(&self) -> Subscription {
        self.inner.journal.subscribe()
    }

    /// A new listener once the engine has said `ready` (at once for a session that has, or
    /// has ended): its replay then starts with `ready` and the conversation's history. What a
    /// front end that shows a conversation it just opened wants; `subscribe` right after
    /// opening a new session may come before `ready` and hear it live, without the history.
    pub async fn subscribe_ready(&self) -> Subscription {
        self.inner.journal.subscribe_ready().await
    }

    /// Carries out `op` and returns its one reply (what it produced, or why not); the events it
    /// causes go to the session's listeners. For a `send`, the reply comes once the turn has
    /// started; its progress comes as events carrying the returned id.
    pub async fn request(&self, op: Op) -> Result<ReplyOk, ErrorNotification> {
        self.request_with_id(Submission::new(self.next_id(), op))
            .await
            .into_result()
    }

    /// [`Session::request`] under the caller's own id (a face's transport), as a reply frame.
    pub async fn request_with_id(&self, submission: Submission) -> Reply {
        let id = submission.id.clone();
        let (reply, answer) = oneshot::channel();
        if let Err(refused) = self.queue(Incoming {
            submission,
            reply: Some(reply),
        }) {
            return Reply::error(id, refused);
        }
        answer.await.unwrap_or_else(|_| Reply::error(id, ended()))
    }

    /// Queues an operation without waiting for its reply; returns the submission id its events
    /// carry. A refusal comes as an `error` event under that id.
    pub fn submit(&self, op: Op) -> String {
        let id = self.next_id();
        self.submit_with_id(Submission::new(id.clone(), op));
        id
    }

    /// [`Session::submit`] under the caller's own id.
    pub fn submit_with_id(&self, submission: Submission) {
        let scope = Scope {
            id: submission.id.clone(),
            ..Scope::default()
        };
        if let Err(refused) = self.queue(Incoming {
            submission,
            reply: None,
        }) && !self.is_closed()
        {
            self.inner.journal.emit(&scope, EventMsg::Error(refused));
        }
    }

    fn next_id(&self) -> String {
        format!("s{}", self.inner.next.fetch_add(1, Ordering::SeqCst) + 1)
    }

    /// Hands a submission to the engine. Never blocks: when `OP_BUFFER` operations already
    /// wait, it is refused at once.
    fn queue(&self, incoming: Incoming) -> Result<(), ErrorNotification> {
        match self.inner.ops.try_send(incoming) {
            Ok(()) => Ok(()),
            Err(mpsc::error::TrySendError::Full(_)) => Err(ErrorNotification::new(
                ErrorClass::InvalidRequest,
                format!("too many operations waiting ({OP_BUFFER}); this one was dropped"),
            )
            .with_next_action("Wait for the session to answer, then send it again.")),
            Err(mpsc::error::TrySendError::Closed(_)) => Err(ended()),
        }
    }

    /// Answers one of the agent's requests (an approval): `done` when it was taken, an
    /// `invalid_request` error when the request no longer waits (another face answered first,
    /// the turn moved on, or no such request). Never waits for the engine: the turn that asked
    /// takes the answer itself.
    pub fn respond(&self, response: Response) -> Reply {
        let outcome = self
            .inner
            .approvals
            .answer(&response.id, Verdict::Decided(response.decision));
        match outcome {
            Ok(()) => Reply::ok(response.id, ReplyOk::Done),
            Err(refusal) => Reply::error(
                response.id,
                ErrorNotification::invalid(refusal.to_string()).with_next_action(
                    "Answer only requests that still wait; the first answer counts.",
                ),
            ),
        }
    }

    /// Whether a proposal waits for an answer.
    pub fn is_waiting_for_approval(&self) -> bool {
        self.inner.approvals.is_waiting()
    }

    /// Wakes when a listener leaves or a turn ends (for the service's idle check).
    pub(crate) fn quiet_changes(&self) -> watch::Receiver<u64> {
        self.inner.journal.quiet_changes()
    }

    /// Whether the engine has stopped (closed, shut down).
    pub fn is_closed(&self) -> bool {
        *self.inner.stopped.borrow()
    }

    /// The active conversation and its completed turns' history.
    pub(crate) fn conversation(
        &self,
    ) -> Option<(
        corvid_protocol::ConversationSummary,
        Vec<corvid_protocol::HistoryEntry>,
    )> {
        self.inner.journal.conversation()
    }

    /// Live listeners now.
    pub fn listeners(&self) -> usize {
        self.inner.journal.listeners()
    }

    /// Whether a turn is running.
    pub fn is_running(&self) -> bool {
        self.inner.journal.turn_running()
    }

    /// Ends the session: every waiting approval is answered "session closed" at once, then the
    /// engine cancels its turn, saves, says `shutdown_complete` and stops. Returns when it has.
    pub async fn close(&self) {
        self.inner.approvals.close();
        // A full queue is waited out here: closing must not be dropped like a flood.
        let _ = self
            .inner
            .ops
            .send(Incoming {
                submission: Submission::new("close", Op::Shutdown),
                reply: None,
            })
            .await;
        let mut stopped = self.inner.stopped.clone();
        let _ = stopped.wait_for(|stopped| *stopped).await;
    }
}

fn ended() -> ErrorNotification {
    ErrorNotification::invalid("the session has ended")
        .with_next_action("Open the conversation again to go on.")
}

impl std::fmt::Debug for Session {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Session")
            .field("id", &self.inner.id)
            .field("project", &self.inner.project)
            .finish_non_exhaustive()
    }
}

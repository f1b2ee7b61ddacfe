//! The scripted model as the agent's `ModelClient`, and an agent spawned on it: what the agent
//! tests of corvid-agent, corvid-mcp and corvid-web share (behind the `agent` feature, so the
//! other users of this crate do not build the agent).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use corvid_agent::{
    AgentConfig, Agents, EventStream, ModelClient, ModelError, OpenConversation, Session,
    SharedStore, StreamFuture, Subscription,
};
use corvid_protocol::{
    ApprovalDecision, ApprovalPolicy, ErrorClass, Event, EventMsg, Op, ProposalNotification, Reply,
    Response, SendParams, ServerRequest, SessionFrame, TurnOutcome,
};
use corvid_wire::model::{ChatRequest, Part, ToolResultContent};

use crate::scripted::{ScriptedModel, ScriptedReply};

/// The model name every scripted agent is configured with (the scripted events say it too).
pub const MODEL: &str = "scripted-model";

/// How long an agent test waits for its next event unless it says otherwise.
pub const PATIENCE: Duration = Duration::from_secs(20);

/// A [`ScriptedModel`] as the agent sees it.
pub struct ScriptedClient(pub Arc<ScriptedModel>);

impl ModelClient for ScriptedClient {
    fn stream(&self, request: ChatRequest) -> StreamFuture<'_> {
        play(self.0.next(request))
    }
}

/// What a client answers with `reply`: its events, a failure classified by its status as a
/// provider's would be, a reply that never starts, or the stream the test feeds.
pub fn play(reply: ScriptedReply) -> StreamFuture<'static> {
    Box::pin(async move {
        match reply {
            ScriptedReply::Events(events) => {
                Ok(Box::pin(futures_util::stream::iter(events)) as EventStream)
            }
            ScriptedReply::Fail { status, message } => {
                Err(ModelError::new(class_of(status), message))
            }
            ScriptedReply::Hang => std::future::pending().await,
            ScriptedReply::Fed(mut receiver) => {
                Ok(Box::pin(futures_util::stream::poll_fn(move |cx| {
                    receiver.poll_recv(cx)
                })) as EventStream)
            }
        }
    })
}

/// A 400 (a request the provider refused, such as one past the context window) is a response
/// the agent cannot use, not a server error: it must not be retried.
fn class_of(status: u16) -> ErrorClass {
    match status {
        401 | 403 => ErrorClass::AuthenticationRejected,
        429 => ErrorClass::RateLimited,
        500..=599 => ErrorClass::ServerError,
        _ => ErrorClass::UnexpectedResponse,
    }
}

/// The configuration agent tests start from: `project`, the scripted model, `policy`, and the
/// output of tools kept inside the project's temporary folder.
pub fn config(project: &Path, policy: ApprovalPolicy) -> AgentConfig {
    let mut config = AgentConfig::new(project.to_owned(), MODEL);
    config.approval = policy;
    config.output_dir = project.join(".corvid-test-output");
    config
}

/// The next frame of `events` (an event or a request) within `patience`; the test fails
/// without one.
pub async fn next_frame(events: &mut Subscription, patience: Duration) -> SessionFrame {
    match tokio::time::timeout(patience, events.recv()).await {
        Ok(Some(frame)) => frame,
        Ok(None) => panic!("the engine stopped before the next frame"),
        Err(_) => panic!("no frame within {} s", patience.as_secs()),
    }
}

/// The next event of `events` within `patience`, past any requests; the test fails without
/// one.
pub async fn next_event(events: &mut Subscription, patience: Duration) -> Event {
    loop {
        if let SessionFrame::Event(event) = next_frame(events, patience).await {
            return event;
        }
    }
}

/// The next request of `events` within `patience`, past any events.
pub async fn next_request(events: &mut Subscription, patience: Duration) -> ServerRequest {
    loop {
        if let SessionFrame::Request(request) = next_frame(events, patience).await {
            return request;
        }
    }
}

/// The tool results in `request`'s last message: each one's text and whether it is an error.
pub fn tool_results(request: &ChatRequest) -> Vec<(String, bool)> {
    let Some(last) = request.messages.last() else {
        panic!("the request has no messages")
    };
    last.parts
        .iter()
        .filter_map(|part| match part {
            Part::ToolResult(result) => Some((
                result
                    .content
                    .iter()
                    .filter_map(|content| match content {
                        ToolResultContent::Text { text } => Some(text.clone()),
                        ToolResultContent::Image(_) => None,
                    })
                    .collect::<String>(),
                result.is_error,
            )),
            _ => None,
        })
        .collect()
}

/// The names of the tools `request` offered, in order.
pub fn tool_names(request: &ChatRequest) -> Vec<&str> {
    request
        .tools
        .iter()
        .map(|tool| tool.name.as_str())
        .collect()
}

/// One thing the agent said: an approval request (its proposal), or an event's message.
#[derive(Debug)]
pub enum Said {
    Asked(ProposalNotification),
    Event(EventMsg),
}

/// An agent session on a scripted model, and every event it has sent so far.
pub struct ScriptedAgent {
    /// The service the session runs in (its own, over its own store).
    pub agents: Agents,
    pub session: Session,
    pub events: Subscription,
    /// The model: its queue of replies and the requests it was sent.
    pub model: Arc<ScriptedModel>,
    /// Every event received so far, in order.
    pub seen: Vec<Event>,
    /// Requests received while events were awaited, not yet taken by [`Self::proposal`].
    pub requests: std::collections::VecDeque<ServerRequest>,
    patience: Duration,
}

impl ScriptedAgent {
    /// Opens a session for `config` on a model that answers `replies` in order, in a service
    /// of its own over a store in memory.
    pub async fn spawn(config: AgentConfig, replies: Vec<ScriptedReply>) -> Self {
        let model = Arc::new(ScriptedModel::new(replies));
        let client = Arc::new(ScriptedClient(Arc::clone(&model)));
        Self::spawn_on(config, model, client).await
    }

    /// Opens a session for `config` on `client`, which answers from `model` (among others).
    pub async fn spawn_on(
        config: AgentConfig,
        model: Arc<ScriptedModel>,
        client: Arc<dyn ModelClient>,
    ) -> Self {
        let agents = match Agents::in_memory(client) {
            Ok(agents) => agents,
            Err(error) => panic!("the store did not open: {error}"),
        };
        Self::open_in(agents, config, model).await
    }

    /// Like [`Self::spawn`], over `store` (a database file a test reads or reopens).
    pub async fn spawn_on_store(
        config: AgentConfig,
        replies: Vec<ScriptedReply>,
        store: SharedStore,
    ) -> Self {
        let model = Arc::new(ScriptedModel::new(replies));
        let client = Arc::new(ScriptedClient(Arc::clone(&model)));
        Self::open_in(Agents::new(client, store), config, model).await
    }

    /// Opens the project's current conversation in `agents`, listening from its first event.
    async fn open_in(agents: Agents, config: AgentConfig, model: Arc<ScriptedModel>) -> Self {
        let (session, events) = match agents
            .open_listening(config, OpenConversation::Current)
            .await
        {
            Ok(opened) => opened,
            Err(error) => panic!("the session did not start: {error}"),
        };
        Self {
            agents,
            session,
            events,
            model,
            seen: Vec::new(),
            requests: std::collections::VecDeque::new(),
            patience: PATIENCE,
        }
    }

    /// Waits `patience` for each event instead of [`PATIENCE`].
    pub fn with_patience(mut self, patience: Duration) -> Self {
        self.patience = patience;
        self
    }

    /// The next event (kept in `seen`); requests on the way are kept for [`Self::proposal`].
    pub async fn next(&mut self) -> Event {
        loop {
            match next_frame(&mut self.events, self.patience).await {
                SessionFrame::Event(event) => {
                    self.seen.push(event.clone());
                    return event;
                }
                SessionFrame::Request(request) => self.requests.push_back(request),
            }
        }
    }

    /// The next request or event, in the stream's order (an event is kept in `seen`).
    pub async fn next_said(&mut self) -> Said {
        if let Some(request) = self.requests.pop_front() {
            return Said::Asked(request.approval);
        }
        match next_frame(&mut self.events, self.patience).await {
            SessionFrame::Event(event) => {
                self.seen.push(event.clone());
                Said::Event(event.msg)
            }
            SessionFrame::Request(request) => Said::Asked(request.approval),
        }
    }

    /// Events until one matches, returning it.
    pub async fn until(&mut self, matches: impl Fn(&EventMsg) -> bool) -> Event {
        loop {
            let event = self.next().await;
            if matches(&event.msg) {
                return event;
            }
        }
    }

    /// How the next turn to finish ended.
    pub async fn turn_finished(&mut self) -> TurnOutcome {
        match self
            .until(|msg| matches!(msg, EventMsg::TurnFinished(_)))
            .await
            .msg
        {
            EventMsg::TurnFinished(finished) => finished.outcome,
            _ => unreachable!(),
        }
    }

    /// The next approval request's proposal (events before it are kept in `seen`).
    pub async fn proposal(&mut self) -> ProposalNotification {
        loop {
            if let Some(request) = self.requests.pop_front() {
                return request.approval;
            }
            match next_frame(&mut self.events, self.patience).await {
                SessionFrame::Event(event) => self.seen.push(event),
                SessionFrame::Request(request) => return request.approval,
            }
        }
    }

    /// Sends the user's `text`; returns the submission's id.
    pub fn send(&self, text: &str) -> String {
        self.session.submit(Op::Send(SendParams::text(text)))
    }

    /// Answers the approval request `proposal_id`; the reply says whether it was taken.
    pub fn decide(&self, proposal_id: &str, decision: ApprovalDecision) -> Reply {
        self.session.respond(Response::new(proposal_id, decision))
    }

    /// Asks the engine to shut down and waits until it has.
    pub async fn shut_down(&mut self) {
        self.session.submit(Op::Shutdown);
        self.until(|msg| matches!(msg, EventMsg::ShutdownComplete))
            .await;
    }

    /// The warnings seen so far.
    pub fn warnings(&self) -> Vec<String> {
        self.seen
            .iter()
            .filter_map(|event| match &event.msg {
                EventMsg::Warning { message } => Some(message.clone()),
                _ => None,
            })
            .collect()
    }

    /// The tool results the model was sent in request `index` (see [`tool_results`]).
    pub fn results_in(&self, index: usize) -> Vec<(String, bool)> {
        tool_results(&self.model.requests()[index])
    }

    /// The tool results the model was sent in its latest request.
    pub fn last_results(&self) -> Vec<(String, bool)> {
        let requests = self.model.requests();
        let Some(last) = requests.last() else {
            panic!("the model has had no request")
        };
        tool_results(last)
    }
}

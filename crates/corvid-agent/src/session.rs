//! What a session's turns share with its engine (`Shared`): the model, the journal, the settings,
//! the approval gate, the todos, the skills, the store and the checkpoints — and the pending
//! approvals, the one place a proposal waits for its answer.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::Mutex;

use corvid_protocol::{
    ApprovalDecision, ApprovalPolicy, ApprovalRule, EventMsg, TodoItem, TodoStatus,
};
use corvid_store::{ConversationStore, Tokens};
use corvid_wire::model::{Message, Usage};
use tokio::sync::oneshot;

use crate::journal::Journal;
use crate::model::ModelClient;
use crate::scope::Scope;

/// The one store of a process (`corvid_store::SharedConversations`: the SQLite store, or
/// PostgreSQL in team mode), shared by every session of an `Agents` service (and the usage rows
/// they write) and, on SQLite under `corvid serve`, by the gateway's ledger writer (a
/// `corvid_store::SharedStore` coerces to it). Store work runs on blocking threads
/// (`crate::store_work::run`).
pub type SharedStore = corvid_store::SharedConversations;

pub(crate) struct Shared {
    pub(crate) model: Arc<dyn ModelClient>,
    /// The session's events: every clone numbers from the same sequence.
    pub(crate) journal: Arc<Journal>,
    pub(crate) settings: Settings,
    gate: Mutex<Gate>,
    todos: Mutex<Vec<TodoItem>>,
    pub(crate) skills: Arc<crate::skills::LiveSkills>,
    /// The custom subagents the `task` tool offers beside explore and general.
    pub(crate) agents: Arc<crate::subagent::LiveAgents>,
    pub(crate) hooks: crate::hooks::SharedHooks,
    /// Saved permission rules (allow, ask, deny) from the settings files.
    pub(crate) permissions: Arc<crate::permissions::LiveRules>,
    store: SharedStore,
    pub(crate) checkpoints: crate::checkpoint::Checkpoints,
    pub(crate) approvals: Arc<Approvals>,
    /// Each call's kind and locations as announced, for the replayed history.
    pub(crate) call_facts: Arc<crate::tool_facts::CallFacts>,
    /// A history compacted during the running turn, for the engine to adopt and save.
    compacted: Mutex<Option<Vec<Message>>>,
    sandbox: corvid_tools::Sandbox,
}

pub(crate) struct Settings {
    pub(crate) max_steps: u32,
    pub(crate) project: PathBuf,
    /// The working folder (AGENTS.md is read from the project root down to it).
    pub(crate) cwd: PathBuf,
    pub(crate) instructions_cap: usize,
    pub(crate) front_end: String,
    /// The window given for every model, beating the model client's (see `compaction.rs`).
    pub(crate) context_window: Option<u64>,
    /// `[prices]`, for a usage event's cost.
    pub(crate) prices: std::collections::BTreeMap<String, corvid_store::Price>,
}

/// What decides whether a call runs without asking: the policy and the rules kept by "always".
#[derive(Debug, Clone)]
pub(crate) struct Gate {
    pub(crate) policy: ApprovalPolicy,
    pub(crate) rules: Vec<ApprovalRule>,
    /// The policy an approved plan is carried out under: the one the session had when it
    /// entered plan mode (`ask` for a session that started in it).
    pub(crate) before_plan: ApprovalPolicy,
}

/// Everything `Shared::new` needs besides the settings.
pub(crate) struct Parts {
    pub(crate) model: Arc<dyn ModelClient>,
    /// The session's events: every clone numbers from the same sequence.
    pub(crate) journal: Arc<Journal>,
    pub(crate) store: SharedStore,
    pub(crate) approvals: Arc<Approvals>,
    pub(crate) skills: Arc<crate::skills::LiveSkills>,
    pub(crate) agents: Arc<crate::subagent::LiveAgents>,
    pub(crate) hooks: crate::hooks::SharedHooks,
    pub(crate) permissions: Arc<crate::permissions::LiveRules>,
    pub(crate) checkpoints: crate::checkpoint::Checkpoints,
    pub(crate) call_facts: Arc<crate::tool_facts::CallFacts>,
    pub(crate) policy: ApprovalPolicy,
    /// The sandbox commands run in (the tools hold their own copy; this one is for the prompt).
    pub(crate) sandbox: corvid_tools::Sandbox,
}

impl Shared {
    pub(crate) fn new(parts: Parts, settings: Settings) -> Self {
        Self {
            model: parts.model,
            journal: parts.journal,
            settings,
            gate: Mutex::new(Gate {
                policy: parts.policy,
                rules: Vec::new(),
                before_plan: if parts.policy == ApprovalPolicy::Plan {
                    ApprovalPolicy::Ask
                } else {
                    parts.policy
                },
            }),
            todos: Mutex::new(Vec::new()),
            skills: parts.skills,
            agents: parts.agents,
            hooks: parts.hooks,
            permissions: parts.permissions,
            store: parts.store,
            checkpoints: parts.checkpoints,
            approvals: parts.approvals,
            call_facts: parts.call_facts,
            compacted: Mutex::new(None),
            sandbox: parts.sandbox,
        }
    }

    pub(crate) fn emit(&self, scope: &Scope, msg: EventMsg) {
        // Listeners that went away or lag never hold the engine up (see `crate::journal`).
        self.journal.emit(scope, msg);
    }

    pub(crate) fn gate(&self) -> Gate {
        self.gate.lock().clone()
    }

    pub(crate) fn set_policy(&self, policy: ApprovalPolicy) {
        let mut gate = self.gate.lock();
        if policy == ApprovalPolicy::Plan && gate.policy != ApprovalPolicy::Plan {
            gate.before_plan = gate.policy;
        }
        gate.policy = policy;
    }

    /// Leaves plan mode for the policy the session had before it; returns that policy.
    pub(crate) fn leave_plan(&self) -> ApprovalPolicy {
        let mut gate = self.gate.lock();
        gate.policy = gate.before_plan;
        gate.policy
    }

    pub(crate) fn add_rule(&self, rule: ApprovalRule) {
        let mut gate = self.gate.lock();
        if !gate.rules.contains(&rule) {
            gate.rules.push(rule);
        }
    }

    pub(crate) fn set_todos(&self, scope: &Scope, todos: &[corvid_tools::Todo]) {
        let items: Vec<TodoItem> = todos
            .iter()
            .map(|todo| match todo.status {
                corvid_tools::TodoStatus::Pending => TodoItem {
                    content: todo.content.clone(),
                    status: TodoStatus::Pending,
                },
                corvid_tools::TodoStatus::InProgress => TodoItem {
                    content: todo.content.clone(),
                    status: TodoStatus::InProgress,
                },
                corvid_tools::TodoStatus::Completed => TodoItem {
                    content: todo.content.clone(),
                    status: TodoStatus::Completed,
                },
                // The protocol has no cancelled state: it is done, and says so.
                corvid_tools::TodoStatus::Cancelled => TodoItem {
                    content: format!("(cancelled) {}", todo.content),
                    status: TodoStatus::Completed,
                },
            })
            .collect();
        *self.todos.lock() = items.clone();
        self.emit(scope, EventMsg::Todos { todos: items });
    }

    /// The sandbox commands run in (for the system prompt).
    pub(crate) fn sandbox(&self) -> &corvid_tools::Sandbox {
        &self.sandbox
    }

    pub(crate) fn todos(&self) -> Vec<TodoItem> {
        self.todos.lock().clone()
    }

    pub(crate) fn keep_compacted(&self, history: Vec<Message>) {
        *self.compacted.lock() = Some(history);
    }

    pub(crate) fn take_compacted(&self) -> Option<Vec<Message>> {
        self.compacted.lock().take()
    }

    /// Runs store work off the async threads.
    pub(crate) async fn with_store<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut dyn ConversationStore) -> Result<T, corvid_store::StoreError>
        + Send
        + 'static,
    ) -> Result<T, corvid_store::StoreError> {
        crate::store_work::run(&self.store, work).await
    }

    /// The process's store, for the parts a turn hands it to (checkpoints).
    pub(crate) fn store(&self) -> &SharedStore {
        &self.store
    }

    /// What one step of `model` cost, priced as the ledger prices its row (by the model the
    /// row names: the upstream name of the target that served it, else of the route `model`
    /// resolves to, else the name asked for).
    pub(crate) fn step_cost(
        &self,
        model: &str,
        served_by: Option<&crate::ModelRoute>,
        usage: Usage,
    ) -> Option<f64> {
        let priced_as = served_by
            .map(|route| route.model.clone())
            .or_else(|| self.model.route(model).map(|route| route.model))
            .unwrap_or_else(|| model.to_owned());
        corvid_store::priced(&self.settings.prices, &priced_as, &tokens(usage))
    }

    pub(crate) async fn record_step_usage(
        &self,
        conversation: &str,
        turn: u32,
        step: u32,
        model: &str,
        usage: Usage,
    ) {
        let (conversation, model) = (conversation.to_owned(), model.to_owned());
        let tokens = tokens(usage);
        if let Err(error) = self
            .with_store(move |store| {
                store.record_step_usage(&conversation, turn, step, &model, &tokens)
            })
            .await
        {
            tracing::warn!(%error, "could not record step usage");
        }
    }
}

fn tokens(usage: Usage) -> Tokens {
    Tokens {
        input: usage.input,
        cache_read: usage.cache_read,
        cache_write: usage.cache_write,
        output: usage.output,
        reasoning: usage.reasoning,
    }
}

/// The answer a waiting proposal gets; every proposal gets exactly one.
#[derive(Debug, Clone)]
pub(crate) enum Verdict {
    Decided(ApprovalDecision),
    /// A new message arrived while the proposal waited.
    Interrupted,
    /// The turn was cancelled.
    Cancelled,
    /// The session was closed (or its engine stopped).
    SessionClosed,
}

impl Verdict {
    fn word(&self) -> &'static str {
        match self {
            Verdict::Decided(ApprovalDecision::Reject { .. }) => "rejected",
            Verdict::Decided(_) => "approved",
            Verdict::Interrupted => "interrupted by a new message",
            Verdict::Cancelled => "cancelled",
            Verdict::SessionClosed => "closed with the session",
        }
    }
}

/// Why an answer to a proposal was not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Refusal {
    #[error("proposal `{0}` was already answered ({1})")]
    AlreadyAnswered(String, &'static str),
    #[error("no proposal `{0}` is waiting")]
    Unknown(String),
}

/// How many answered proposals are remembered, so a late second answer is told why it lost.
const ANSWERED_KEPT: usize = 64;

/// The proposals waiting for an answer, by id. A turn registers one before its `proposal` event
/// goes out, so an answer sent the moment the event arrives always finds it; whoever answers
/// first (a listener, a new message, a cancel, closing the session) wins, and the rest are told.
#[derive(Debug, Default)]
pub(crate) struct Approvals {
    state: Mutex<ApprovalState>,
}

#[derive(Debug, Default)]
struct ApprovalState {
    waiting: HashMap<String, oneshot::Sender<Verdict>>,
    answered: VecDeque<(String, &'static str)>,
    closed: bool,
}

impl ApprovalState {
    fn remember(&mut self, id: String, word: &'static str) {
        if self.answered.len() == ANSWERED_KEPT {
            self.answered.pop_front();
        }
        self.answered.push_back((id, word));
    }
}

impl Approvals {
    /// Registers a proposal; once the session is closed, the answer is already "closed".
    pub(crate) fn register(&self, id: &str) -> Result<oneshot::Receiver<Verdict>, Verdict> {
        let mut state = self.state.lock();
        if state.closed {
            return Err(Verdict::SessionClosed);
        }
        let (reply, answer) = oneshot::channel();
        state.waiting.insert(id.to_owned(), reply);
        Ok(answer)
    }

    /// Answers one proposal; refused when it is not waiting (answered already, or unknown).
    pub(crate) fn answer(&self, id: &str, verdict: Verdict) -> Result<(), Refusal> {
        let mut state = self.state.lock();
        match state.waiting.remove(id) {
            Some(reply) => {
                state.remember(id.to_owned(), verdict.word());
                // Sent under the lock: a turn that withdraws after this finds the answer waiting.
                let _ = reply.send(verdict);
                Ok(())
            }
            None => match state.answered.iter().find(|(answered, _)| answered == id) {
                Some((_, word)) => Err(Refusal::AlreadyAnswered(id.to_owned(), word)),
                None => Err(Refusal::Unknown(id.to_owned())),
            },
        }
    }

    /// The turn stopped waiting on its own (it was cancelled): forget the proposal. False when
    /// it was answered first: the answer was sent under this lock, so it is in the reply.
    pub(crate) fn withdraw(&self, id: &str, verdict: &Verdict) -> bool {
        let mut state = self.state.lock();
        let waiting = state.waiting.remove(id).is_some();
        if waiting {
            state.remember(id.to_owned(), verdict.word());
        }
        waiting
    }

    /// Answers every waiting proposal with `verdict`; returns how many there were.
    pub(crate) fn answer_all(&self, verdict: &Verdict) -> usize {
        let mut state = self.state.lock();
        let waiting: Vec<_> = state.waiting.drain().collect();
        let count = waiting.len();
        for (id, reply) in waiting {
            state.remember(id, verdict.word());
            let _ = reply.send(verdict.clone());
        }
        count
    }

    /// Closes the map: every waiting proposal and every later one is answered "session closed".
    pub(crate) fn close(&self) {
        self.state.lock().closed = true;
        self.answer_all(&Verdict::SessionClosed);
    }

    pub(crate) fn is_waiting(&self) -> bool {
        !self.state.lock().waiting.is_empty()
    }
}

/// The session that holds a conversation another session asked for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the conversation is held by session {0}")]
pub(crate) struct HeldBy(pub(crate) String);

/// Which session holds which conversation, so two sessions never run one conversation (their
/// turns would interleave in the store). Shared by every session of an `Agents` service.
#[derive(Debug, Default)]
pub(crate) struct Claims {
    holders: Mutex<HashMap<String, String>>,
}

impl Claims {
    /// Takes `conversation` for `session`; an error naming the holder when another session
    /// holds it.
    pub(crate) fn claim(&self, conversation: &str, session: &str) -> Result<(), HeldBy> {
        let mut holders = self.holders.lock();
        match holders.get(conversation) {
            Some(holder) if holder != session => Err(HeldBy(holder.clone())),
            _ => {
                holders.insert(conversation.to_owned(), session.to_owned());
                Ok(())
            }
        }
    }

    pub(crate) fn release(&self, conversation: &str, session: &str) {
        let mut holders = self.holders.lock();
        if holders
            .get(conversation)
            .is_some_and(|holder| holder == session)
        {
            holders.remove(conversation);
        }
    }

    pub(crate) fn holder(&self, conversation: &str) -> Option<String> {
        self.holders.lock().get(conversation).cloned()
    }
}

#[cfg(test)]
mod tests;

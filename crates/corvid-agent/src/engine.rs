//! The engine: one task that owns the conversation and answers operations, one turn at a time
//! (a turn runs on its own task so cancels and approvals are heard while it works).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use corvid_protocol::{
    ApprovalPolicy, ApprovalRule, ErrorClass, ErrorNotification, Event, EventMsg, ImageInput, Op,
    PROTOCOL_VERSION, ReadyNotification, SendParams, Submission, TodoItem, TodoStatus,
    TurnFinishedNotification, TurnOutcome,
};
use corvid_store::{Store, Tokens};
use corvid_tools::{ToolContext, ToolRegistry, Workspace};
use corvid_wire::model::{Image, ImageSource, Message, Part, Role, Usage};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

use crate::emitter::{Emitter, Scope};
use crate::history;
use crate::model::ModelClient;
use crate::turn::{ProposalRequest, TurnResult, TurnSetup, Verdict, run_turn};

/// How an agent is set up.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    /// The project folder; tools never leave it.
    pub project: PathBuf,
    /// The working folder inside the project (for AGENTS.md discovery).
    pub cwd: PathBuf,
    pub model: String,
    pub approval: ApprovalPolicy,
    /// Model steps that may call tools in one turn; past them, one last call without tools
    /// gives the model's final answer.
    pub max_steps: u32,
    /// The SQLite file for conversations; `None` keeps them in memory.
    pub database: Option<PathBuf>,
    /// Where long command output is spilled.
    pub output_dir: PathBuf,
    /// The most bytes of AGENTS.md text put in the prompt.
    pub instructions_cap: usize,
    /// The front end this agent serves (`chat`, `exec`, `web`, `acp`): the usage ledger tags
    /// each model call with it.
    pub front_end: String,
    /// Where the shadow repositories of checkpoints live (one per project); `None` turns
    /// checkpoints, `/undo` and `/diff` off.
    pub checkpoint_dir: Option<PathBuf>,
    /// The model's context window in tokens; `None` uses the default (128,000).
    pub context_window: Option<u64>,
    /// Where the file tools read and write contents (an editor's buffers over ACP); `None`:
    /// the disk.
    pub files: Option<Arc<dyn corvid_tools::Files>>,
}

impl AgentConfig {
    /// Defaults for a project: `ask` approvals, 50 steps, 64 KiB of instructions.
    pub fn new(project: PathBuf, model: impl Into<String>) -> Self {
        Self {
            cwd: project.clone(),
            output_dir: std::env::temp_dir().join("corvid-output"),
            project,
            model: model.into(),
            approval: ApprovalPolicy::Ask,
            max_steps: 50,
            database: None,
            instructions_cap: 64 * 1024,
            front_end: "agent".to_owned(),
            checkpoint_dir: None,
            context_window: None,
            files: None,
        }
    }
}

/// Why an agent could not start.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error("the project folder {path} cannot be used: {message}")]
    Project { path: PathBuf, message: String },
    #[error(transparent)]
    Store(#[from] corvid_store::StoreError),
}

/// The front ends' handle: send operations; events arrive on the receiver `spawn` returned.
#[derive(Debug, Clone)]
pub struct AgentHandle {
    ops: mpsc::UnboundedSender<Submission>,
    next: Arc<AtomicU64>,
}

impl AgentHandle {
    /// Starts an agent on the current tokio runtime.
    pub fn spawn(
        config: AgentConfig,
        model: Arc<dyn ModelClient>,
    ) -> Result<(Self, mpsc::UnboundedReceiver<Event>), AgentError> {
        let (ops, ops_rx) = mpsc::unbounded_channel();
        let (events, events_rx) = mpsc::unbounded_channel();
        let engine = Engine::new(config, model, Emitter::new(events))?;
        tokio::spawn(engine.run(ops_rx));
        Ok((
            Self {
                ops,
                next: Arc::new(AtomicU64::new(0)),
            },
            events_rx,
        ))
    }

    /// Sends an operation; returns the submission id its events will carry.
    pub fn submit(&self, op: Op) -> String {
        let id = format!("s{}", self.next.fetch_add(1, Ordering::SeqCst) + 1);
        self.submit_with_id(Submission::new(id.clone(), op));
        id
    }

    /// Sends a submission with the caller's own id.
    pub fn submit_with_id(&self, submission: Submission) {
        // The engine lives as long as a handle does, unless it shut down: then there is no one
        // to tell, and the front end sees `shutdown_complete` or the closed event channel.
        let _ = self.ops.send(submission);
    }
}

/// What turns share with the engine.
pub(crate) struct Shared {
    pub(crate) model: Arc<dyn ModelClient>,
    emitter: Emitter,
    pub(crate) settings: Settings,
    gate: Mutex<(ApprovalPolicy, Vec<ApprovalRule>)>,
    todos: Mutex<Vec<TodoItem>>,
    pub(crate) skills: crate::skills::SkillSet,
    store: Arc<Mutex<Store>>,
    pub(crate) checkpoints: crate::checkpoint::Checkpoints,
    /// A history compacted during the running turn, for the engine to adopt and save.
    compacted: Mutex<Option<Vec<Message>>>,
}

pub(crate) struct Settings {
    pub(crate) max_steps: u32,
    pub(crate) project: PathBuf,
    /// The working folder (AGENTS.md is read from the project root down to it).
    pub(crate) cwd: PathBuf,
    pub(crate) instructions_cap: usize,
    pub(crate) front_end: String,
    pub(crate) context_window: u64,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    pub(crate) fn emit(&self, scope: &Scope, msg: EventMsg) {
        self.emitter.emit(scope, msg);
    }

    pub(crate) fn gate_state(&self) -> (ApprovalPolicy, Vec<ApprovalRule>) {
        lock(&self.gate).clone()
    }

    pub(crate) fn add_rule(&self, rule: ApprovalRule) {
        let mut gate = lock(&self.gate);
        if !gate.1.contains(&rule) {
            gate.1.push(rule);
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
        *lock(&self.todos) = items.clone();
        self.emit(scope, EventMsg::Todos { todos: items });
    }

    fn todos(&self) -> Vec<TodoItem> {
        lock(&self.todos).clone()
    }

    pub(crate) fn keep_compacted(&self, history: Vec<Message>) {
        *lock(&self.compacted) = Some(history);
    }

    fn take_compacted(&self) -> Option<Vec<Message>> {
        lock(&self.compacted).take()
    }

    /// Runs store work off the async threads.
    pub(crate) async fn with_store<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut Store) -> Result<T, corvid_store::StoreError> + Send + 'static,
    ) -> Result<T, corvid_store::StoreError> {
        let store = Arc::clone(&self.store);
        tokio::task::spawn_blocking(move || work(&mut lock(&store)))
            .await
            .unwrap_or_else(|join| {
                Err(corvid_store::StoreError::Spawn(std::io::Error::other(
                    join.to_string(),
                )))
            })
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
        let tokens = Tokens {
            input: usage.input,
            cache_read: usage.cache_read,
            cache_write: usage.cache_write,
            output: usage.output,
            reasoning: usage.reasoning,
        };
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

/// A turn in progress.
struct Running {
    handle: JoinHandle<TurnResult>,
    cancel: watch::Sender<bool>,
    submission: String,
    pending: HashMap<String, oneshot::Sender<Verdict>>,
    /// A message that arrived while a proposal waited: it runs when this turn has stopped.
    queued: Option<(String, SendParams)>,
}

struct Engine {
    shared: Arc<Shared>,
    config: AgentConfig,
    project_key: String,
    model: String,
    conversation: String,
    history: Vec<Message>,
    turns: u32,
    running: Option<Running>,
    proposals: mpsc::UnboundedSender<ProposalRequest>,
    proposals_rx: mpsc::UnboundedReceiver<ProposalRequest>,
    tools: ToolRegistry,
}

impl Engine {
    fn new(
        config: AgentConfig,
        model: Arc<dyn ModelClient>,
        emitter: Emitter,
    ) -> Result<Self, AgentError> {
        let project = config
            .project
            .canonicalize()
            .map_err(|error| AgentError::Project {
                path: config.project.clone(),
                message: error.to_string(),
            })?;
        let workspace = Workspace::new(&project).map_err(|error| AgentError::Project {
            path: project.clone(),
            message: error.to_string(),
        })?;
        let mut context = ToolContext::new(workspace, config.output_dir.clone());
        if let Some(files) = &config.files {
            context = context.with_files(Arc::clone(files));
        }
        let tools = ToolRegistry::new(context);
        let mut store = match &config.database {
            Some(path) => Store::open(path)?,
            None => Store::open_in_memory()?,
        };
        let project_key = project.display().to_string();
        let conversation = match store.current_conversation(&project_key)? {
            Some(id) => id,
            None => store.create_conversation(&project_key, Some(&config.model))?,
        };
        let mut warnings = Vec::new();
        let history = crate::persist::load(&mut store, &conversation, &mut warnings)?;
        let turns = store.last_turn(&conversation)?;
        let skill_set = crate::skills::load_skills(&project);
        warnings.extend(skill_set.warnings.iter().cloned());
        let (proposals, proposals_rx) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared {
            model,
            emitter,
            settings: Settings {
                max_steps: config.max_steps.max(1),
                project: project.clone(),
                cwd: config.cwd.clone(),
                instructions_cap: config.instructions_cap,
                front_end: config.front_end.clone(),
                context_window: config
                    .context_window
                    .unwrap_or(crate::compaction::DEFAULT_CONTEXT_WINDOW)
                    .max(1),
            },
            gate: Mutex::new((config.approval, Vec::new())),
            todos: Mutex::new(Vec::new()),
            skills: skill_set,
            store: Arc::new(Mutex::new(store)),
            checkpoints: crate::checkpoint::Checkpoints::new(
                config.checkpoint_dir.as_deref(),
                &project,
            ),
            compacted: Mutex::new(None),
        });
        let engine = Self {
            model: config.model.clone(),
            config: AgentConfig { project, ..config },
            project_key,
            conversation,
            turns,
            history,
            running: None,
            proposals,
            proposals_rx,
            tools,
            shared,
        };
        for message in warnings {
            engine
                .shared
                .emit(&Scope::default(), EventMsg::Warning { message });
        }
        engine.ready(&Scope::default());
        Ok(engine)
    }

    async fn run(mut self, mut ops: mpsc::UnboundedReceiver<Submission>) {
        loop {
            tokio::select! {
                // Proposals first: one is registered before its event goes out, and the
                // client's answer to that event must not overtake it.
                biased;
                Some(request) = self.proposals_rx.recv() => {
                    if let Some(running) = &mut self.running {
                        running.pending.insert(request.proposal_id, request.reply);
                    }
                }
                submission = ops.recv() => {
                    let Some(submission) = submission else { break };
                    if !self.handle(submission).await {
                        break;
                    }
                }
                result = wait_turn(&mut self.running) => self.finish_turn(result).await,
            }
        }
        if let Some(running) = self.running.take() {
            let _ = running.cancel.send(true);
            let _ = running.handle.await;
        }
    }

    fn scope(id: &str) -> Scope {
        Scope {
            id: id.to_owned(),
            depth: 0,
            parent_call_id: None,
        }
    }

    fn ready(&self, scope: &Scope) {
        self.shared.emit(
            scope,
            EventMsg::Ready(ReadyNotification {
                version: PROTOCOL_VERSION,
                engine: concat!("corvid ", env!("CARGO_PKG_VERSION")).to_owned(),
                cwd: self.config.project.display().to_string(),
                conversation_id: self.conversation.clone(),
                model: self.model.clone(),
                approval_policy: self.shared.gate_state().0,
            }),
        );
    }

    fn refuse(&self, scope: &Scope, message: impl Into<String>) {
        self.shared.emit(
            scope,
            EventMsg::Error(ErrorNotification {
                class: ErrorClass::InvalidRequest,
                message: message.into(),
                next_action: "Wait for the turn to finish, or cancel it first.".to_owned(),
                retryable: false,
            }),
        );
    }

    fn internal(&self, scope: &Scope, error: impl std::fmt::Display) {
        self.shared.emit(
            scope,
            EventMsg::Error(ErrorNotification {
                class: ErrorClass::Internal,
                message: format!("the conversation store failed: {error}"),
                next_action: "Try again; if it persists, check the disk and corvid.db.".to_owned(),
                retryable: true,
            }),
        );
    }

    /// Handles one operation; false when the engine should stop.
    async fn handle(&mut self, submission: Submission) -> bool {
        let scope = Self::scope(&submission.id);
        match submission.op {
            Op::Hello { version, .. } => {
                if !corvid_protocol::is_compatible(version) {
                    self.shared.emit(&scope, EventMsg::Error(ErrorNotification {
                        class: ErrorClass::InvalidRequest,
                        message: format!("protocol version {version} is not supported; this engine speaks {PROTOCOL_VERSION}"),
                        next_action: "Update the front end or corvid so both speak the same version.".to_owned(),
                        retryable: false,
                    }));
                }
                self.ready(&scope);
            }
            Op::Send(params) => self.send(submission.id, params).await,
            Op::Init => {
                let existing = crate::init::existing_agents_md(&self.config.project);
                let facts = crate::init::project_facts(&self.config.project);
                let text = crate::init::init_prompt(existing.as_deref(), &facts);
                self.send(submission.id, SendParams::text(text)).await;
            }
            Op::Approve(params) => {
                let pending = self
                    .running
                    .as_mut()
                    .and_then(|running| running.pending.remove(&params.proposal_id));
                match pending {
                    Some(reply) => {
                        let _ = reply.send(Verdict::Decided(params.decision));
                    }
                    None => self.refuse(
                        &scope,
                        format!("no proposal `{}` is waiting", params.proposal_id),
                    ),
                }
            }
            Op::Cancel => match &self.running {
                Some(running) => {
                    let _ = running.cancel.send(true);
                }
                None => self.shared.emit(
                    &scope,
                    EventMsg::Warning {
                        message: "nothing to cancel".to_owned(),
                    },
                ),
            },
            Op::SetModel { model } => {
                self.model = model;
                self.settings_changed(&scope);
            }
            Op::SetApprovalPolicy { policy } => {
                lock(&self.shared.gate).0 = policy;
                self.settings_changed(&scope);
            }
            Op::Shutdown => {
                if let Some(running) = self.running.take() {
                    let _ = running.cancel.send(true);
                    let _ = running.handle.await;
                }
                self.shared.emit(&scope, EventMsg::ShutdownComplete);
                return false;
            }
            Op::Undo { .. } | Op::Diff { .. } | Op::Compact if self.running.is_some() => {
                self.refuse(&scope, "a turn is running");
            }
            Op::Undo { turn } => self.shared.undo(&scope, &self.conversation, turn).await,
            Op::Diff { turn } => self.shared.diff(&scope, &self.conversation, turn).await,
            Op::Compact => {
                let compacted = self
                    .shared
                    .compact_now(&scope, &self.model, &self.system_prompt(), &self.history)
                    .await;
                if let Some(history) = compacted {
                    self.history = history;
                    crate::persist::replace_all(&self.shared, &self.conversation, &self.history)
                        .await;
                }
            }
            op @ (Op::ListConversations
            | Op::NewConversation
            | Op::SwitchConversation { .. }
            | Op::DeleteConversation { .. }
            | Op::ClearConversation) => {
                if self.running.is_some() && !matches!(op, Op::ListConversations) {
                    self.refuse(&scope, "a turn is running");
                } else if let Err(error) = self.conversation_op(&scope, op).await {
                    self.internal(&scope, error);
                }
            }
        }
        true
    }

    fn settings_changed(&self, scope: &Scope) {
        self.shared.emit(
            scope,
            EventMsg::SettingsChanged {
                model: self.model.clone(),
                approval_policy: self.shared.gate_state().0,
            },
        );
    }

    async fn send(&mut self, id: String, params: SendParams) {
        if let Some(running) = &mut self.running {
            if running.pending.is_empty() {
                self.refuse(
                    &Self::scope(&id),
                    "a turn is running; cancel it or wait for it to finish",
                );
                return;
            }
            // A new message closes every waiting proposal as interrupted; it runs next.
            for (_, reply) in running.pending.drain() {
                let _ = reply.send(Verdict::Interrupted);
            }
            running.queued = Some((id, params));
            return;
        }
        self.start_turn(id, params).await;
    }

    async fn start_turn(&mut self, id: String, params: SendParams) {
        if let Some(model) = params.model.clone() {
            self.model = model;
        }
        let scope = Self::scope(&id);
        let mut user = user_message(&params);
        if let Some(note) = self.shared.checkpoints.take_note() {
            user.parts.insert(0, Part::Text { text: note });
        }
        // Saved before the turn starts, so a crash in its first step keeps what was asked.
        crate::persist::save(
            &self.shared,
            &self.conversation,
            std::slice::from_ref(&user),
        )
        .await;
        self.history.push(user);
        self.turns += 1;
        self.shared.checkpoints.begin(self.turns).await;
        self.shared.emit(
            &scope,
            EventMsg::TurnStarted {
                conversation_id: self.conversation.clone(),
                model: self.model.clone(),
            },
        );
        let (cancel, cancel_rx) = watch::channel(false);
        let setup = TurnSetup {
            shared: Arc::clone(&self.shared),
            scope,
            tools: self.tools.clone(),
            is_main: true,
            model: self.model.clone(),
            system: self.system_prompt(),
            cancel: cancel_rx,
            proposals: self.proposals.clone(),
        };
        let history = self.history.clone();
        let conversation = self.conversation.clone();
        let turn = self.turns;
        let handle =
            tokio::spawn(
                async move { run_turn(&setup, &history, Some(&conversation), turn).await },
            );
        self.running = Some(Running {
            handle,
            cancel,
            submission: id,
            pending: HashMap::new(),
            queued: None,
        });
    }

    async fn finish_turn(&mut self, result: Result<TurnResult, tokio::task::JoinError>) {
        let Some(running) = self.running.take() else {
            return;
        };
        let scope = Self::scope(&running.submission);
        let result = match result {
            Ok(result) => result,
            Err(error) => {
                self.shared.emit(
                    &scope,
                    EventMsg::Error(ErrorNotification {
                        class: ErrorClass::Internal,
                        message: format!("the turn crashed: {error}"),
                        next_action: "Send the message again; the conversation is intact."
                            .to_owned(),
                        retryable: true,
                    }),
                );
                // Its completed steps were saved as they finished: take them from the store.
                self.reload_history(&scope).await;
                TurnResult {
                    outcome: TurnOutcome::Failed,
                    steps: 0,
                    usage: Default::default(),
                    added: Vec::new(),
                    final_text: String::new(),
                }
            }
        };
        if result.outcome == TurnOutcome::Cancelled {
            self.shared.emit(
                &scope,
                EventMsg::Error(ErrorNotification {
                    class: ErrorClass::Cancelled,
                    message: "the turn was cancelled".to_owned(),
                    next_action: crate::model::next_action(ErrorClass::Cancelled, None),
                    retryable: false,
                }),
            );
        }
        // Each step was saved as it completed (`crate::persist`); only memory catches up here,
        // unless the turn compacted the history: then the store gets the compacted one whole.
        let compacted = self.shared.take_compacted();
        if let Some(history) = compacted {
            self.history = history;
            self.history.extend(result.added);
            crate::persist::replace_all(&self.shared, &self.conversation, &self.history).await;
        } else {
            self.history.extend(result.added);
        }
        self.shared
            .finish_checkpoint(&scope, &self.conversation)
            .await;
        self.name_conversation().await;
        self.shared.emit(
            &scope,
            EventMsg::TurnFinished(TurnFinishedNotification {
                outcome: result.outcome,
                steps: result.steps,
                usage: result.usage,
            }),
        );
        if let Some((id, params)) = running.queued {
            Box::pin(self.start_turn(id, params)).await;
        }
    }

    async fn reload_history(&mut self, scope: &Scope) {
        let id = self.conversation.clone();
        let loaded = self
            .shared
            .with_store(move |store| {
                let mut warnings = Vec::new();
                crate::persist::load(store, &id, &mut warnings).map(|history| (history, warnings))
            })
            .await;
        match loaded {
            Ok((history, warnings)) => {
                self.history = history;
                for message in warnings {
                    self.shared.emit(scope, EventMsg::Warning { message });
                }
            }
            Err(error) => self.internal(scope, error),
        }
    }

    async fn name_conversation(&self) {
        let Some(first) = self
            .history
            .iter()
            .find(|message| message.role == Role::User)
        else {
            return;
        };
        let text = history::text_of(first);
        let title: String = text
            .lines()
            .next()
            .unwrap_or_default()
            .chars()
            .take(60)
            .collect();
        let (id, project) = (self.conversation.clone(), self.project_key.clone());
        let named = self
            .shared
            .with_store(move |store| {
                let untitled = store
                    .conversation(&project, &id)?
                    .is_some_and(|summary| summary.title.is_empty());
                if untitled {
                    store.set_title(&id, &title)?;
                }
                Ok(())
            })
            .await;
        if let Err(error) = named {
            tracing::warn!(%error, "could not name the conversation");
        }
    }

    async fn conversation_op(
        &mut self,
        scope: &Scope,
        op: Op,
    ) -> Result<(), corvid_store::StoreError> {
        let project = self.project_key.clone();
        match op {
            Op::ListConversations => {
                let list = self
                    .shared
                    .with_store(move |store| store.list_conversations(&project))
                    .await?;
                self.shared.emit(
                    scope,
                    EventMsg::ConversationList {
                        conversations: list.into_iter().map(summary).collect(),
                        current: Some(self.conversation.clone()),
                    },
                );
            }
            Op::NewConversation => {
                let model = self.model.clone();
                let id = self
                    .shared
                    .with_store(move |store| store.create_conversation(&project, Some(&model)))
                    .await?;
                self.switch_to(scope, id, Vec::new()).await?;
            }
            Op::SwitchConversation { conversation_id } => {
                let target = conversation_id.clone();
                let switched = self
                    .shared
                    .with_store(move |store| store.switch_conversation(&project, &target))
                    .await?;
                if !switched {
                    self.refuse(
                        scope,
                        format!("no conversation `{conversation_id}` in this project"),
                    );
                    return Ok(());
                }
                let id = conversation_id.clone();
                let history = self
                    .shared
                    .with_store(move |store| {
                        let mut warnings = Vec::new();
                        crate::persist::load(store, &id, &mut warnings)
                            .map(|history| (history, warnings))
                    })
                    .await?;
                for message in history.1 {
                    self.shared.emit(scope, EventMsg::Warning { message });
                }
                self.switch_to(scope, conversation_id, history.0).await?;
            }
            Op::DeleteConversation { conversation_id } => {
                let target = conversation_id.clone();
                let deleted = self
                    .shared
                    .with_store(move |store| store.delete_conversation(&project, &target))
                    .await?;
                if !deleted {
                    self.refuse(
                        scope,
                        format!("no conversation `{conversation_id}` in this project"),
                    );
                    return Ok(());
                }
                self.shared.emit(
                    scope,
                    EventMsg::ConversationDeleted {
                        conversation_id: conversation_id.clone(),
                    },
                );
                if conversation_id == self.conversation {
                    let (project, model) = (self.project_key.clone(), self.model.clone());
                    let id = self
                        .shared
                        .with_store(move |store| store.create_conversation(&project, Some(&model)))
                        .await?;
                    self.switch_to(scope, id, Vec::new()).await?;
                }
            }
            Op::ClearConversation => {
                let id = self.conversation.clone();
                self.shared
                    .with_store(move |store| store.clear_conversation(&id))
                    .await?;
                self.history.clear();
                self.shared.emit(
                    scope,
                    EventMsg::ConversationCleared {
                        conversation_id: self.conversation.clone(),
                    },
                );
            }
            _ => {}
        }
        Ok(())
    }

    async fn switch_to(
        &mut self,
        scope: &Scope,
        id: String,
        history: Vec<Message>,
    ) -> Result<(), corvid_store::StoreError> {
        self.conversation = id.clone();
        self.history = history;
        let turns_of = id.clone();
        self.turns = self
            .shared
            .with_store(move |store| store.last_turn(&turns_of))
            .await?;
        let project = self.project_key.clone();
        let found = self
            .shared
            .with_store(move |store| store.conversation(&project, &id))
            .await?;
        let conversation =
            found
                .map(summary)
                .unwrap_or_else(|| corvid_protocol::ConversationSummary {
                    id: self.conversation.clone(),
                    title: String::new(),
                    updated_at: 0,
                    message_count: 0,
                });
        self.shared.emit(
            scope,
            EventMsg::ConversationSwitched {
                conversation,
                history: history::entries(&self.history, &self.config.project),
            },
        );
        Ok(())
    }

    fn system_prompt(&self) -> String {
        let tools = crate::turn::offered_tools(&self.shared, &self.tools, true);
        crate::prompt::system_prompt(&self.shared, &tools, &self.shared.todos())
    }
}

async fn wait_turn(running: &mut Option<Running>) -> Result<TurnResult, tokio::task::JoinError> {
    match running {
        Some(running) => (&mut running.handle).await,
        None => std::future::pending().await,
    }
}

fn summary(summary: corvid_store::ConversationSummary) -> corvid_protocol::ConversationSummary {
    corvid_protocol::ConversationSummary {
        id: summary.id,
        title: summary.title,
        updated_at: summary.updated_at,
        message_count: summary.message_count,
    }
}

fn user_message(params: &SendParams) -> Message {
    let mut parts = vec![Part::Text {
        text: params.text.clone(),
    }];
    for image in &params.images {
        let source = match image {
            ImageInput::Base64 { media_type, data } => ImageSource::Base64 {
                media_type: media_type.clone(),
                data: data.clone(),
            },
            ImageInput::Url { url } => ImageSource::Url { url: url.clone() },
        };
        parts.push(Part::Image(Image {
            source,
            detail: None,
        }));
    }
    Message {
        role: Role::User,
        parts,
    }
}

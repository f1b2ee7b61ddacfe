//! The engine: one task per session that owns its conversation and answers operations, one turn
//! at a time (a turn runs on its own task so cancels and approvals are heard while it works).
//! This file is the op loop and the turn lifecycle; conversation ops are in
//! `crate::conversation`, what turns share in `crate::session`.

use std::path::PathBuf;
use std::sync::Arc;

use corvid_protocol::{
    ConversationSummary, ErrorClass, ErrorNotification, EventMsg, Op, PROTOCOL_VERSION,
    ReadyNotification, SendParams, Submission, TurnFinishedNotification, TurnOutcome,
};
use corvid_tools::{Offer, ToolBox, ToolContext, ToolRegistry, ToolSource, Workspace};
use corvid_wire::model::{Message, Part};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use crate::config::{AgentConfig, AgentError};
use crate::emitter::{Emitter, Scope};
use crate::history;
use crate::journal::Journal;
use crate::model::ModelClient;
use crate::session::{Approvals, Claims, Parts, Settings, Shared, SharedStore, Verdict, lock};
use crate::turn::{TurnResult, TurnSetup, run_turn};

/// What a session's engine is wired to: the service's model, store and claims, and the
/// session's own journal and approvals (which its `Session` handles share).
pub(crate) struct Wiring {
    pub(crate) model: Arc<dyn ModelClient>,
    pub(crate) store: SharedStore,
    pub(crate) journal: Arc<Journal>,
    pub(crate) approvals: Arc<Approvals>,
    pub(crate) claims: Arc<Claims>,
    pub(crate) session_id: String,
}

/// A turn in progress.
struct Running {
    handle: JoinHandle<TurnResult>,
    cancel: watch::Sender<bool>,
    submission: String,
    /// A message that arrived while a proposal waited: it runs when this turn has stopped.
    queued: Option<(String, SendParams)>,
}

pub(crate) struct Engine {
    pub(crate) shared: Arc<Shared>,
    pub(crate) config: AgentConfig,
    pub(crate) project_key: String,
    pub(crate) model: String,
    pub(crate) conversation: String,
    pub(crate) history: Vec<Message>,
    pub(crate) turns: u32,
    running: Option<Running>,
    /// The built-ins (their context holds the sandbox `ready` describes).
    builtins: ToolRegistry,
    /// Every source of tools, asked for this turn's offer as each turn starts.
    toolbox: ToolBox,
    pub(crate) claims: Arc<Claims>,
    pub(crate) session_id: String,
}

/// The canonical project folder of `config`, or why it cannot be used.
pub(crate) fn project_folder(config: &AgentConfig) -> Result<PathBuf, AgentError> {
    config
        .project
        .canonicalize()
        .map_err(|error| AgentError::Project {
            path: config.project.clone(),
            message: error.to_string(),
        })
}

impl Engine {
    /// Sets up the session on `conversation` (already resolved and claimed), then says `ready`.
    /// Blocking: it reads the store and the project folder.
    pub(crate) fn open(
        config: AgentConfig,
        wiring: Wiring,
        conversation: String,
    ) -> Result<Self, AgentError> {
        let project = project_folder(&config)?;
        let workspace = Workspace::new(&project).map_err(|error| AgentError::Project {
            path: project.clone(),
            message: error.to_string(),
        })?;
        let mut context = ToolContext::new(workspace, config.output_dir.clone())
            .with_sandbox(config.sandbox.clone());
        if let Some(files) = &config.files {
            context = context.with_files(Arc::clone(files));
        }
        let builtins = ToolRegistry::new(context);
        let project_key = project.display().to_string();
        let mut warnings = Vec::new();
        let (history, turns, found) = {
            let mut store = lock(&wiring.store);
            let history = crate::persist::load(&mut store, &conversation, &mut warnings)?;
            let turns = store.last_turn(&conversation)?;
            let found = store.conversation(&project_key, &conversation)?;
            (history, turns, found)
        };
        let skill_set = crate::skills::load_skills(&project);
        warnings.extend(skill_set.warnings.iter().cloned());
        let toolbox = toolbox(&config, &builtins, &skill_set);
        let emitter = Emitter::new(Arc::clone(&wiring.journal));
        let summary = found
            .map(crate::conversation::summary)
            .unwrap_or_else(|| untitled(&conversation));
        emitter.set_conversation(summary, history::entries(&history, &project));
        let shared = Arc::new(Shared::new(
            Parts {
                model: wiring.model,
                emitter,
                store: wiring.store,
                approvals: wiring.approvals,
                skills: skill_set,
                checkpoints: crate::checkpoint::Checkpoints::new(
                    config.checkpoint_dir.as_deref(),
                    &project,
                ),
                policy: config.approval,
                sandbox: config.sandbox.clone(),
            },
            Settings {
                max_steps: config.max_steps.max(1),
                project: project.clone(),
                cwd: config.cwd.clone(),
                instructions_cap: config.instructions_cap,
                front_end: config.front_end.clone(),
                context_window: config.context_window,
            },
        ));
        let engine = Self {
            model: config.model.clone(),
            config: AgentConfig { project, ..config },
            project_key,
            conversation,
            turns,
            history,
            running: None,
            builtins,
            toolbox,
            shared,
            claims: wiring.claims,
            session_id: wiring.session_id,
        };
        for message in warnings {
            engine
                .shared
                .emit(&Scope::default(), EventMsg::Warning { message });
        }
        engine.ready(&Scope::default());
        Ok(engine)
    }

    /// Answers operations until `shutdown`, or until every handle is gone; then no proposal
    /// waits, no turn runs, the conversation is released and listeners see the end.
    pub(crate) async fn run(
        mut self,
        mut ops: mpsc::Receiver<Submission>,
        stopped: watch::Sender<bool>,
    ) {
        loop {
            tokio::select! {
                submission = ops.recv() => {
                    let Some(submission) = submission else { break };
                    if !self.handle(submission).await {
                        break;
                    }
                }
                result = wait_turn(&mut self.running) => self.finish_turn(result).await,
            }
        }
        self.stop_turn().await;
        self.claims.release(&self.conversation, &self.session_id);
        self.shared.emitter.close();
        let _ = stopped.send(true);
    }

    /// Answers every proposal "session closed", cancels the running turn and finishes it as
    /// any cancelled turn finishes (its steps saved, `turn_finished` said); a message queued
    /// behind it is dropped.
    async fn stop_turn(&mut self) {
        self.shared.approvals.close();
        let Some(running) = &mut self.running else {
            return;
        };
        running.queued = None;
        let _ = running.cancel.send(true);
        let result = wait_turn(&mut self.running).await;
        self.finish_turn(result).await;
    }

    pub(crate) fn scope(id: &str) -> Scope {
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
                approval_policy: self.shared.gate().policy,
                missed: None,
                sandbox: Some(crate::sandbox_state::state(
                    self.builtins.context().sandbox(),
                )),
            }),
        );
    }

    /// An operation that cannot be carried out as sent.
    pub(crate) fn refuse(&self, scope: &Scope, message: impl Into<String>, next_action: &str) {
        self.shared.emit(
            scope,
            EventMsg::Error(ErrorNotification {
                class: ErrorClass::InvalidRequest,
                message: message.into(),
                next_action: next_action.to_owned(),
                retryable: false,
            }),
        );
    }

    /// Every server behind the session's tools, as `tool_servers`.
    fn tool_servers(&self, scope: &Scope) {
        let servers = self
            .toolbox
            .servers()
            .into_iter()
            .map(tool_server)
            .collect();
        self.shared.emit(scope, EventMsg::ToolServers { servers });
    }

    fn refuse_busy(&self, scope: &Scope, message: &str) {
        self.refuse(
            scope,
            message,
            "Wait for the turn to finish, or cancel it first.",
        );
    }

    pub(crate) fn internal(&self, scope: &Scope, error: impl std::fmt::Display) {
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
                let verdict = Verdict::Decided(params.decision);
                if let Err(refusal) = self.shared.approvals.answer(&params.proposal_id, verdict) {
                    self.refuse(
                        &scope,
                        refusal.to_string(),
                        "Answer only proposals that are waiting; the first answer counts.",
                    );
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
                self.shared.set_policy(policy);
                self.settings_changed(&scope);
            }
            Op::Shutdown => {
                self.stop_turn().await;
                self.shared.emit(&scope, EventMsg::ShutdownComplete);
                return false;
            }
            Op::ListToolServers => self.tool_servers(&scope),
            Op::TrustToolServer { name } => match self.toolbox.trust_server(&name) {
                Ok(()) => self.tool_servers(&scope),
                Err(error) => self.refuse(
                    &scope,
                    error.to_string(),
                    "/mcp shows which servers wait for trust.",
                ),
            },
            Op::Undo { .. } | Op::Diff { .. } | Op::Compact if self.running.is_some() => {
                self.refuse_busy(&scope, "a turn is running");
            }
            Op::Undo { turn } => self.shared.undo(&scope, &self.conversation, turn).await,
            Op::Diff { turn } => self.shared.diff(&scope, &self.conversation, turn).await,
            Op::Compact => {
                let offer = offer_tools(&self.shared, &scope, &self.toolbox).await;
                let compacted = self
                    .shared
                    .compact_now(
                        &scope,
                        &self.model,
                        &system_prompt(&self.shared, &offer),
                        &self.history,
                    )
                    .await;
                if let Some(history) = compacted {
                    self.history = history;
                    crate::persist::replace_all(&self.shared, &self.conversation, &self.history)
                        .await;
                    let summary = self.current_summary().await;
                    self.shared.emitter.set_conversation(
                        summary,
                        history::entries(&self.history, &self.config.project),
                    );
                }
            }
            op @ (Op::ListConversations
            | Op::NewConversation
            | Op::SwitchConversation { .. }
            | Op::DeleteConversation { .. }
            | Op::ClearConversation) => {
                if self.running.is_some() && !matches!(op, Op::ListConversations) {
                    self.refuse_busy(&scope, "a turn is running");
                } else {
                    match self.conversation_op(&scope, op).await {
                        Ok(()) => {}
                        Err(crate::conversation::OpError::Refused(message)) => self.refuse(
                            &scope,
                            message,
                            "Check the conversation id (list_conversations shows them).",
                        ),
                        Err(crate::conversation::OpError::Store(error)) => {
                            self.internal(&scope, error)
                        }
                    }
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
                approval_policy: self.shared.gate().policy,
            },
        );
    }

    async fn send(&mut self, id: String, params: SendParams) {
        if let Some(running) = &mut self.running {
            // A new message closes every waiting proposal as interrupted; it runs next.
            if self.shared.approvals.answer_all(&Verdict::Interrupted) == 0 {
                self.refuse_busy(
                    &Self::scope(&id),
                    "a turn is running; cancel it or wait for it to finish",
                );
                return;
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
        let mut user = crate::conversation::user_message(&params);
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
                prompt: Some(params.text.clone()),
            },
        );
        let (cancel, cancel_rx) = watch::channel(false);
        let shared = Arc::clone(&self.shared);
        let toolbox = self.toolbox.clone();
        let model = self.model.clone();
        let history = self.history.clone();
        let conversation = self.conversation.clone();
        let turn = self.turns;
        // The sources are asked on the turn's own task, so a slow one never keeps the engine
        // from hearing a cancel.
        let handle = tokio::spawn(async move {
            let tools = offer_tools(&shared, &scope, &toolbox).await;
            let setup = TurnSetup {
                system: system_prompt(&shared, &tools),
                shared,
                scope,
                tools,
                is_main: true,
                model,
                cancel: cancel_rx,
            };
            run_turn(&setup, &history, Some(&conversation), turn).await
        });
        self.running = Some(Running {
            handle,
            cancel,
            submission: id,
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
        if result.outcome != TurnOutcome::Completed {
            // Seen to end: reopening the conversation is not a crash to report.
            crate::persist::mark_turn_ended(&self.shared, &self.conversation).await;
        }
        self.shared
            .finish_checkpoint(&scope, &self.conversation)
            .await;
        self.name_conversation().await;
        let summary = self.current_summary().await;
        // The turn's end and the history replays show from now on, in one step.
        self.shared.emitter.emit_with_history(
            &scope,
            EventMsg::TurnFinished(TurnFinishedNotification {
                outcome: result.outcome,
                steps: result.steps,
                usage: result.usage,
            }),
            summary,
            history::entries(&self.history, &self.config.project),
        );
        if let Some((id, params)) = running.queued {
            Box::pin(self.start_turn(id, params)).await;
        }
    }
}

/// A session's tool sources, in order of precedence: the built-ins, the skills, then what the
/// composition root plugged in (custom tools, MCP servers), each opened over the built-ins'
/// context so it runs commands through the same runner and sandbox. `task` stays the agent's.
fn toolbox(
    config: &AgentConfig,
    builtins: &ToolRegistry,
    skills: &crate::skills::SkillSet,
) -> ToolBox {
    let mut sources: Vec<Arc<dyn ToolSource>> = vec![
        Arc::new(builtins.clone()),
        Arc::new(crate::skills::SkillSource::new(skills.clone())),
    ];
    sources.extend(
        config
            .tool_plugins
            .iter()
            .map(|plugin| plugin.open(builtins.shared_context())),
    );
    ToolBox::new(sources).with_reserved(&[crate::subagent::TASK_TOOL])
}

/// This turn's tools; what the sources have to say about them goes out as warnings.
async fn offer_tools(shared: &Shared, scope: &Scope, toolbox: &ToolBox) -> Offer {
    let offered = toolbox.offer().await;
    for message in offered.notices {
        shared.emit(scope, EventMsg::Warning { message });
    }
    offered.offer
}

/// A tool source's server as front ends show it.
fn tool_server(report: corvid_tools::ServerReport) -> corvid_protocol::ToolServer {
    use corvid_protocol::ToolServerState as State;
    use corvid_tools::ServerHealth;
    let (state, reason) = match report.health {
        ServerHealth::Disabled => (State::Disabled, None),
        ServerHealth::Idle => (State::Idle, None),
        ServerHealth::Untrusted => (State::Untrusted, None),
        ServerHealth::Starting => (State::Starting, None),
        ServerHealth::Ready => (State::Ready, None),
        ServerHealth::NeedsSignIn => (State::NeedsSignIn, None),
        ServerHealth::Failed(reason) => (State::Failed, Some(reason)),
    };
    corvid_protocol::ToolServer {
        name: report.name,
        configured_in: report.configured_in,
        transport: report.transport,
        state,
        reason,
        tools: report.tools,
        withheld: report.withheld,
    }
}

/// The main agent's system prompt, describing the tools of `offer`.
fn system_prompt(shared: &Shared, offer: &Offer) -> String {
    crate::prompt::system_prompt(shared, offer, true, &shared.todos())
}

/// A conversation the store does not describe (yet): its id, nothing else.
pub(crate) fn untitled(id: &str) -> ConversationSummary {
    ConversationSummary {
        id: id.to_owned(),
        title: String::new(),
        updated_at: 0,
        message_count: 0,
    }
}

async fn wait_turn(running: &mut Option<Running>) -> Result<TurnResult, tokio::task::JoinError> {
    match running {
        Some(running) => (&mut running.handle).await,
        None => std::future::pending().await,
    }
}

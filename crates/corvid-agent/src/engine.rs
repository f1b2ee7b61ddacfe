//! The engine: one task per session that owns its conversation and answers operations, one turn
//! at a time (a turn runs on its own task so cancels and approvals are heard while it works).
//! This file is the op loop and the turn lifecycle; conversation ops are in
//! `crate::conversation`, what turns share in `crate::session`.

use std::path::PathBuf;
use std::sync::Arc;

use corvid_protocol::{
    ConversationSummary, ErrorClass, ErrorNotification, EventMsg, Op, PROTOCOL_VERSION,
    ReadyNotification, Reply, ReplyOk, SendParams, Submission, TurnFinishedNotification,
    TurnOutcome,
};
use corvid_tools::{Offer, ToolBox, ToolContext, ToolRegistry, ToolSource, Workspace};
use corvid_wire::model::{Message, Part};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

use crate::config::{AgentConfig, AgentError};
use crate::conversation;
use crate::handle::Incoming;
use crate::history;
use crate::journal::Journal;
use crate::model::ModelClient;
use crate::scope::Scope;
use crate::session::{Approvals, Claims, Parts, Settings, Shared, SharedStore, Verdict};
use crate::turn::{TurnResult, TurnSetup, run_turn};

mod turns;

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
    /// A custom command's user message, once the turn's task has expanded it.
    expanded: Arc<parking_lot::Mutex<Option<Message>>>,
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
    /// The project's and the user's custom commands (and the skills), as on disk now.
    pub(crate) commands: Arc<crate::commands::LiveCommands>,
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
            let mut store = wiring.store.lock();
            let history = crate::persist::load(&mut *store, &conversation, &mut warnings)?;
            let turns = store.last_turn(&conversation)?;
            let found = store.conversation(&project_key, &conversation)?;
            (history, turns, found)
        };
        let skill_set = Arc::new(crate::skills::LiveSkills::load(&project));
        warnings.extend(skill_set.current().warnings.iter().cloned());
        let toolbox = toolbox(&config, &builtins, &skill_set);
        let commands = Arc::new(crate::commands::LiveCommands::with_skills(
            &project,
            crate::commands::user_dir_of(&config).as_deref(),
            Arc::clone(&skill_set),
        ));
        warnings.extend(commands.current().warnings.iter().cloned());
        let agents = Arc::new(crate::subagent::LiveAgents::load(
            &project,
            config
                .user_settings
                .as_deref()
                .and_then(std::path::Path::parent)
                .map(crate::subagent::user_dir)
                .as_deref(),
        ));
        warnings.extend(agents.current().warnings.iter().cloned());
        // Hooks and permission rules, from the user's and the project's settings files.
        let settings_paths = crate::settings_files::SettingsPaths {
            user: config.user_settings.clone(),
            project: project.clone(),
        };
        let (settings, read_warnings) = settings_paths.read();
        warnings.extend(read_warnings);
        let hooks = crate::hooks::for_session(
            &config,
            Arc::clone(&wiring.model),
            &settings,
            &project,
            &wiring.session_id,
            &mut warnings,
        );
        let permissions = Arc::new(crate::permissions::LiveRules::new(
            settings_paths,
            config.project_trust.clone(),
            crate::permissions::Rules::from_settings(
                &settings,
                &project,
                config.project_trust.as_deref(),
                &mut warnings,
            ),
        ));

        let summary = found
            .map(crate::conversation::summary)
            .unwrap_or_else(|| untitled(&conversation));
        let call_facts = Arc::new(crate::tool_facts::CallFacts::default());
        wiring
            .journal
            .set_conversation(summary, history::entries(&history, &project, &call_facts));
        let shared = Arc::new(Shared::new(
            Parts {
                model: wiring.model,
                journal: wiring.journal,
                store: wiring.store,
                approvals: wiring.approvals,
                skills: skill_set,
                agents,
                hooks,
                permissions,
                checkpoints: crate::checkpoint::Checkpoints::new(
                    config.checkpoint_dir.as_deref(),
                    &project,
                ),
                call_facts,
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
                prices: config.prices.clone(),
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
            commands,
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
        mut ops: mpsc::Receiver<Incoming>,
        stopped: watch::Sender<bool>,
    ) {
        loop {
            tokio::select! {
                incoming = ops.recv() => {
                    let Some(Incoming { submission, reply }) = incoming else { break };
                    let id = submission.id.clone();
                    let (outcome, go_on) = self.handle(submission).await;
                    self.deliver(id, outcome, reply);
                    if !go_on {
                        break;
                    }
                }
                result = wait_turn(&mut self.running) => self.finish_turn(result).await,
            }
        }
        self.stop_turn().await;
        self.claims.release(&self.conversation, &self.session_id);
        self.shared.journal.close();
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

    /// Sends an operation's one reply to whoever waits for it. A submission nobody waits for
    /// (`Session::submit`) gets its refusal as an `error` event instead, so it is not lost.
    fn deliver(
        &self,
        id: String,
        outcome: Result<ReplyOk, ErrorNotification>,
        reply: Option<oneshot::Sender<Reply>>,
    ) {
        match (reply, outcome) {
            (Some(reply), Ok(ok)) => {
                let _ = reply.send(Reply::ok(id, ok));
            }
            (Some(reply), Err(error)) => {
                let _ = reply.send(Reply::error(id, error));
            }
            (None, Ok(_)) => {}
            (None, Err(error)) => self.shared.emit(&Self::scope(&id), EventMsg::Error(error)),
        }
    }

    pub(crate) fn scope(id: &str) -> Scope {
        Scope {
            id: id.to_owned(),
            depth: 0,
            parent_call_id: None,
        }
    }

    fn ready(&self, scope: &Scope) {
        self.shared
            .emit(scope, EventMsg::Ready(self.ready_notification()));
    }

    fn ready_notification(&self) -> ReadyNotification {
        ReadyNotification {
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
        }
    }

    /// Every server behind the session's tools.
    fn tool_servers(&self) -> ReplyOk {
        let servers = self
            .toolbox
            .servers()
            .into_iter()
            .map(crate::tool_view::tool_server)
            .collect();
        ReplyOk::ToolServers { servers }
    }

    /// Handles one operation: its reply, and false when the engine should stop.
    async fn handle(
        &mut self,
        submission: Submission,
    ) -> (Result<ReplyOk, ErrorNotification>, bool) {
        let scope = Self::scope(&submission.id);
        let busy = || {
            Err(ErrorNotification::invalid("a turn is running")
                .with_next_action("Wait for the turn to finish, or cancel it first."))
        };
        let reply = match submission.op {
            Op::Hello { version, .. } => {
                if corvid_protocol::is_compatible(version) {
                    Ok(ReplyOk::Ready(self.ready_notification()))
                } else {
                    Err(ErrorNotification::invalid(format!(
                        "protocol version {version} is not supported; this engine speaks {PROTOCOL_VERSION}"
                    ))
                    .with_next_action("Update the front end or corvid so both speak the same version."))
                }
            }
            Op::Send(params) => self.send(submission.id, params).await,
            Op::Init => {
                let existing = crate::init::existing_agents_md(&self.config.project);
                let facts = crate::init::project_facts(&self.config.project);
                let text = crate::init::init_prompt(existing.as_deref(), &facts);
                self.send(submission.id, SendParams::text(text)).await
            }
            Op::Cancel => match &self.running {
                Some(running) => {
                    let _ = running.cancel.send(true);
                    Ok(ReplyOk::Done)
                }
                None => Ok(ReplyOk::Nothing {
                    message: "nothing to cancel".to_owned(),
                }),
            },
            Op::SetModel { model } => {
                self.shared.hooks.set_model(&model);
                self.model = model;
                Ok(self.settings_changed(&scope))
            }
            Op::SetApprovalPolicy { policy } => {
                self.shared.set_policy(policy);
                Ok(self.settings_changed(&scope))
            }
            Op::Shutdown => {
                self.stop_turn().await;
                self.shared.emit(&scope, EventMsg::ShutdownComplete);
                return (Ok(ReplyOk::Done), false);
            }
            Op::ListToolServers => Ok(self.tool_servers()),
            Op::ListPermissions => Ok(ReplyOk::Permissions {
                rules: self.shared.permissions.list(),
                message: None,
            }),
            Op::RemovePermission { number } => match self.shared.permissions.remove(number) {
                Ok(message) => Ok(ReplyOk::Permissions {
                    rules: self.shared.permissions.list(),
                    message: Some(message),
                }),
                Err(error) => Err(ErrorNotification::invalid(error.to_string())
                    .with_next_action("/permissions lists the rules with their numbers.")),
            },
            Op::AddPermission { action, rule, file } => {
                match self.shared.permissions.save(action, &rule, file) {
                    Ok((text, shown)) => Ok(ReplyOk::Permissions {
                        rules: self.shared.permissions.list(),
                        message: Some(format!("saved `{text}` to the {} list of {shown}", action.as_str())),
                    }),
                    Err(error) => Err(ErrorNotification::invalid(error.to_string())
                        .with_next_action("Rules look like Bash(npm test:*), Edit(src/**), Read(./.env), WebFetch(domain:docs.rs), mcp__github.")),
                }
            }
            Op::TrustToolServer { name } => match self.toolbox.trust_server(&name) {
                Ok(()) => Ok(self.tool_servers()),
                Err(error) => Err(ErrorNotification::invalid(error.to_string())
                    .with_next_action("/mcp shows which servers wait for trust.")),
            },
            Op::Undo { .. }
            | Op::Diff { .. }
            | Op::Compact
            | Op::ClearConversation
            | Op::Rewind { .. }
            | Op::Fork { .. }
                if self.running.is_some() =>
            {
                busy()
            }
            Op::Undo { turn } => {
                let shared = &self.shared;
                shared
                    .checkpoints
                    .undo(
                        shared.store(),
                        &shared.journal,
                        &scope,
                        &self.conversation,
                        turn,
                    )
                    .await
            }
            Op::Diff { turn } => {
                let shared = &self.shared;
                shared
                    .checkpoints
                    .diff(shared.store(), &self.conversation, turn)
                    .await
            }
            Op::Compact => {
                crate::hooks::session::pre_compact(&self.shared, &scope, "manual").await;
                self.compact(&scope).await
            }
            Op::ListConversations => {
                conversation::list(&self.shared, &self.project_key, &self.conversation).await
            }
            Op::UserMessages => Ok(self.user_messages()),
            Op::Rewind {
                message,
                restore_files,
            } => self.rewind(&scope, message, restore_files).await,
            Op::Fork { message } => self.fork(message).await,
            Op::ClearConversation => {
                let cleared = conversation::clear(&self.shared, &scope, &self.conversation).await;
                if cleared.is_ok() {
                    self.history.clear();
                }
                cleared
            }
            Op::OpenConversation { .. }
            | Op::RenameConversation { .. }
            | Op::DeleteConversation { .. } => Err(ErrorNotification::invalid(
                "opening, renaming and deleting conversations are requests to the session service, not to a session",
            )
            .with_next_action("Send it through the face's transport (corvid_agent::Link).")),
        };
        (reply, true)
    }

    async fn compact(&mut self, scope: &Scope) -> Result<ReplyOk, ErrorNotification> {
        let offer = offer_tools(&self.shared, scope, &self.toolbox).await;
        let (compacted, reply) = self
            .shared
            .compact_now(
                scope,
                &self.model,
                &system_prompt(&self.shared, &offer),
                &self.history,
            )
            .await?;
        if let Some(history) = compacted {
            self.history = history;
            crate::persist::replace_all(&self.shared, &self.conversation, &self.history).await;
            let summary = self.summary().await;
            self.shared.journal.set_conversation(
                summary,
                history::entries(&self.history, &self.config.project, &self.shared.call_facts),
            );
        }
        Ok(reply)
    }

    /// The held conversation as the store describes it now.
    pub(crate) async fn summary(&self) -> ConversationSummary {
        conversation::current_summary(&self.shared, &self.project_key, &self.conversation).await
    }

    fn settings_changed(&self, scope: &Scope) -> ReplyOk {
        let (model, approval_policy) = (self.model.clone(), self.shared.gate().policy);
        self.shared.emit(
            scope,
            EventMsg::SettingsChanged {
                model: model.clone(),
                approval_policy,
            },
        );
        ReplyOk::Settings {
            model,
            approval_policy,
        }
    }
}

/// A session's tool sources, in order of precedence: the built-ins, the skills, then what the
/// composition root plugged in (custom tools, MCP servers), each opened over the built-ins'
/// context so it runs commands through the same runner and sandbox. `task` stays the agent's.
fn toolbox(
    config: &AgentConfig,
    builtins: &ToolRegistry,
    skills: &Arc<crate::skills::LiveSkills>,
) -> ToolBox {
    let mut sources: Vec<Arc<dyn ToolSource>> = vec![
        Arc::new(builtins.clone()),
        Arc::new(crate::skills::SkillSource::new(Arc::clone(skills))),
    ];
    sources.extend(
        config
            .tool_plugins
            .iter()
            .map(|plugin| plugin.open(builtins.shared_context())),
    );
    ToolBox::new(sources).with_reserved(&[crate::subagent::TASK_TOOL])
}

/// This turn's tools (and its custom subagents, read again when their files changed); what the
/// sources have to say about them goes out as warnings.
async fn offer_tools(shared: &Shared, scope: &Scope, toolbox: &ToolBox) -> Offer {
    let offered = toolbox.offer().await;
    let (_, agent_notices) = shared.agents.refresh();
    for message in offered.notices.into_iter().chain(agent_notices) {
        shared.emit(scope, EventMsg::Warning { message });
    }
    shared.call_facts.offered(&offered.offer);
    offered.offer
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

/// The store failed under an operation.
pub(crate) use crate::store_work::failure as store_failure;

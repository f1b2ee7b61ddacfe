//! The engine's turns: a message starts one (or waits behind the running one), the
//! `UserPromptSubmit` hooks may block it, and its end is recorded and announced.

use super::{
    Arc, Engine, ErrorClass, ErrorNotification, EventMsg, Message, Part, ReplyOk, Running, Scope,
    SendParams, TurnFinishedNotification, TurnOutcome, TurnResult, TurnSetup, Verdict,
    conversation, history, offer_tools, run_turn, system_prompt, watch,
};

impl Engine {
    pub(super) async fn send(
        &mut self,
        id: String,
        params: SendParams,
    ) -> Result<ReplyOk, ErrorNotification> {
        // A skill written during the session counts too (read again when the folder changed).
        if let Some(skill) = &params.skill
            && self.shared.skills.current().get(skill).is_none()
            && self.shared.skills.refresh().0.get(skill).is_none()
        {
            return Err(
                ErrorNotification::invalid(format!("this project has no skill `{skill}`"))
                    .with_next_action("The command list shows the project's skills."),
            );
        }
        if let Some(name) = &params.command
            && self.commands.refresh().0.get(name).is_none()
        {
            return Err(
                ErrorNotification::invalid(format!("there is no command `/{name}`"))
                    .with_next_action("The command list shows the project's and your commands."),
            );
        }
        let params = self.attach_images(params).await?;
        if let Some(running) = &mut self.running {
            // A new message closes every waiting proposal as interrupted; it runs next.
            if self.shared.approvals.answer_all(&Verdict::Interrupted) == 0 {
                return Err(ErrorNotification::invalid(
                    "a turn is running; cancel it or wait for it to finish",
                )
                .with_next_action("Wait for the turn to finish, or cancel it first."));
            }
            running.queued = Some((id, params));
            return Ok(ReplyOk::Accepted);
        }
        self.start_turn(id, params).await;
        Ok(ReplyOk::Accepted)
    }

    /// The message with the project images it mentions (`@shot.png`) attached after the ones the
    /// face attached; refused when an image is missing, too large or of another kind, or when
    /// the model the turn would use does not take images (nothing is sent then).
    async fn attach_images(&self, mut params: SendParams) -> Result<SendParams, ErrorNotification> {
        crate::images::check_attached(&params.images)?;
        if params.text.contains('@') {
            // Up to a few megabytes read per image: off the async threads.
            let project = self.config.project.clone();
            let text = params.text.clone();
            let mentioned =
                tokio::task::spawn_blocking(move || crate::images::mentioned(&project, &text))
                    .await
                    .map_err(|join| {
                        ErrorNotification::new(
                            corvid_protocol::ErrorClass::Internal,
                            format!("reading the mentioned images failed: {join}"),
                        )
                    })??;
            params.images.extend(mentioned);
        }
        if params.images.is_empty() {
            return Ok(params);
        }
        let command_model = params.command.as_deref().and_then(|name| {
            self.commands
                .current()
                .get(name)
                .and_then(|c| c.model.clone())
        });
        let model = command_model
            .or_else(|| params.model.clone())
            .unwrap_or_else(|| self.model.clone());
        let takes_images = self.shared.model.takes_images(&model).or_else(|| {
            corvid_config::catalog()
                .model(&model)
                .map(|facts| facts.images)
        });
        crate::images::check_model(&model, takes_images)?;
        Ok(params)
    }

    pub(super) async fn start_turn(&mut self, id: String, params: SendParams) {
        if let Some(model) = params.model.clone() {
            self.model = model;
        }
        let scope = Self::scope(&id);
        let command = params
            .command
            .as_deref()
            .and_then(|name| self.commands.current().get(name).cloned());
        let mut user = crate::conversation::user_message(&params);
        if command.is_some() {
            // The typed arguments are not the message: the command's expansion is, made on the
            // turn's task (its `!` lines may wait for an approval).
            user.parts.remove(0);
        }
        if let Some(skill) = &params.skill {
            // The engine, not the face, says how a skill is used.
            user.parts.insert(
                0,
                Part::Text {
                    text: crate::skills::invocation(skill),
                },
            );
        }
        if !self.hook_prompt(&scope, &params, &mut user).await {
            return;
        }
        let mut text_at = 0;
        if let Some(note) = self.shared.checkpoints.take_note() {
            user.parts.insert(0, Part::Text { text: note });
            text_at = 1;
        }
        let prompt = match &command {
            Some(command) => format!("/{} {}", command.name, params.text)
                .trim_end()
                .to_owned(),
            None => params.text.clone(),
        };
        if command.is_none() {
            // Saved before the turn starts, so a crash in its first step keeps what was asked.
            crate::persist::save(
                &self.shared,
                &self.conversation,
                std::slice::from_ref(&user),
            )
            .await;
            self.history.push(user.clone());
        }
        self.turns += 1;
        self.shared.checkpoints.begin(self.turns).await;
        self.shared.emit(
            &scope,
            EventMsg::TurnStarted {
                conversation_id: self.conversation.clone(),
                model: self.model.clone(),
                prompt: Some(prompt.clone()),
            },
        );
        let (cancel, cancel_rx) = watch::channel(false);
        let shared = Arc::clone(&self.shared);
        let toolbox = self.toolbox.clone();
        let model = command
            .as_ref()
            .and_then(|command| command.model.clone())
            .unwrap_or_else(|| self.model.clone());
        let mut history = self.history.clone();
        let conversation = self.conversation.clone();
        let turn = self.turns;
        let expanded = Arc::new(parking_lot::Mutex::new(None));
        let expanded_slot = Arc::clone(&expanded);
        let arguments = params.text;
        // The sources are asked on the turn's own task, so a slow one never keeps the engine
        // from hearing a cancel.
        let handle = tokio::spawn(async move {
            let mut tools = offer_tools(&shared, &scope, &toolbox).await;
            let mut setup = TurnSetup {
                system: system_prompt(&shared, &tools),
                shared,
                scope,
                tools: tools.clone(),
                is_main: true,
                model,
                cancel: cancel_rx,
            };
            if let Some(command) = &command {
                let expansion = crate::commands::expand_in_turn(&setup, command, &arguments).await;
                let (text, stopped) = match expansion {
                    Ok(text) => (text, None),
                    // What was asked is kept, as typed.
                    Err(outcome) => (prompt, Some(outcome)),
                };
                user.parts.insert(text_at, Part::Text { text });
                crate::persist::save(&setup.shared, &conversation, std::slice::from_ref(&user))
                    .await;
                *expanded_slot.lock() = Some(user.clone());
                history.push(user);
                if let Some(outcome) = stopped {
                    return TurnResult {
                        outcome,
                        steps: 0,
                        usage: Default::default(),
                        added: Vec::new(),
                        final_text: String::new(),
                    };
                }
                tools = crate::commands::narrowed(command, &tools);
                setup.system = system_prompt(&setup.shared, &tools);
                setup.tools = tools;
            }
            run_turn(&setup, &history, Some(&conversation), turn).await
        });
        self.running = Some(Running {
            handle,
            cancel,
            submission: id,
            queued: None,
            expanded,
        });
    }

    /// `SessionStart` and `UserPromptSubmit` hooks: their context joins the user's message; a
    /// blocked prompt is not sent (the turn starts and finishes at once, saying why), false.
    pub(super) async fn hook_prompt(
        &self,
        scope: &Scope,
        params: &SendParams,
        user: &mut Message,
    ) -> bool {
        match crate::hooks::session::before_turn(&self.shared, scope, &params.text).await {
            Ok(context) => {
                for text in context {
                    user.parts.push(Part::Text {
                        text: format!("<hook-context>\n{text}\n</hook-context>"),
                    });
                }
                true
            }
            Err(crate::hooks::session::PromptBlocked(reason)) => {
                self.shared.emit(
                    scope,
                    EventMsg::TurnStarted {
                        conversation_id: self.conversation.clone(),
                        model: self.model.clone(),
                        prompt: Some(params.text.clone()),
                    },
                );
                self.shared.emit(
                    scope,
                    EventMsg::Warning {
                        message: format!("a UserPromptSubmit hook blocked the prompt: {reason}"),
                    },
                );
                self.shared.emit(
                    scope,
                    EventMsg::TurnFinished(TurnFinishedNotification {
                        outcome: TurnOutcome::Completed,
                        steps: 0,
                        usage: Default::default(),
                    }),
                );
                false
            }
        }
    }

    pub(super) async fn finish_turn(&mut self, result: Result<TurnResult, tokio::task::JoinError>) {
        let Some(running) = self.running.take() else {
            return;
        };
        let scope = Self::scope(&running.submission);
        let result = match result {
            Ok(result) => result,
            Err(error) => {
                self.shared.emit(
                    &scope,
                    EventMsg::Error(
                        ErrorNotification::new(
                            ErrorClass::Internal,
                            format!("the turn crashed: {error}"),
                        )
                        .with_next_action("Send the message again; the conversation is intact."),
                    ),
                );
                // Its completed steps were saved as they finished: take them from the store.
                if let Some(history) =
                    conversation::load_history(&self.shared, &scope, &self.conversation).await
                {
                    self.history = history;
                }
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
                EventMsg::Error(ErrorNotification::new(
                    ErrorClass::Cancelled,
                    "the turn was cancelled",
                )),
            );
        }
        // Each step was saved as it completed (`crate::persist`); only memory catches up here,
        // unless the turn compacted the history: then the store gets the compacted one whole.
        let compacted = self.shared.take_compacted();
        // A command's message, made on the turn's task (a compacted history holds it already).
        let expanded = running.expanded.lock().take();
        if let Some(history) = compacted {
            self.history = history;
            self.history.extend(result.added);
            crate::persist::replace_all(&self.shared, &self.conversation, &self.history).await;
        } else {
            self.history.extend(expanded);
            self.history.extend(result.added);
        }
        if result.outcome != TurnOutcome::Completed {
            // Seen to end: reopening the conversation is not a crash to report.
            crate::persist::mark_turn_ended(&self.shared, &self.conversation).await;
        }
        let shared = &self.shared;
        shared
            .checkpoints
            .finish(shared.store(), &shared.journal, &scope, &self.conversation)
            .await;
        conversation::name_after_first_message(
            &self.shared,
            &self.project_key,
            &self.conversation,
            &self.history,
        )
        .await;
        let summary = self.summary().await;
        // The turn's end and the history replays show from now on, in one step.
        self.shared.journal.emit_with_history(
            &scope,
            EventMsg::TurnFinished(TurnFinishedNotification {
                outcome: result.outcome,
                steps: result.steps,
                usage: result.usage,
            }),
            summary,
            history::entries(&self.history, &self.config.project, &self.shared.call_facts),
        );
        if let Some((id, params)) = running.queued {
            Box::pin(self.start_turn(id, params)).await;
        }
    }
}

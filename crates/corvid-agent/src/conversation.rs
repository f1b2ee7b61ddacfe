//! The active conversation and the store: naming, listing, starting, switching, deleting and
//! clearing conversations, reloading a history, and opening one for a new session. Refusals come
//! back as values (`OpError::Refused`); the engine answers them.

use corvid_protocol::{EventMsg, ImageInput, Op, SendParams};
use corvid_store::{Store, StoreError};
use corvid_wire::model::{Image, ImageSource, Message, Part, Role};

use crate::config::AgentError;
use crate::emitter::Scope;
use crate::engine::Engine;
use crate::history;

/// Which conversation a new session holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpenConversation {
    /// The project's current conversation, or a new one when it has none (what `corvid chat`
    /// does).
    Current,
    /// A new, empty conversation.
    New,
    /// A stored conversation of the project, by id.
    Existing(String),
}

/// Why a conversation op was not carried out.
#[derive(Debug, thiserror::Error)]
pub(crate) enum OpError {
    #[error("{0}")]
    Refused(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The conversation a session on `project` opens with (made the project's current one).
pub(crate) fn resolve(
    store: &mut Store,
    project: &std::path::Path,
    model: &str,
    which: &OpenConversation,
) -> Result<String, AgentError> {
    let key = project.display().to_string();
    match which {
        OpenConversation::Current => match store.current_conversation(&key)? {
            Some(id) => Ok(id),
            None => Ok(store.create_conversation(&key, Some(model))?),
        },
        OpenConversation::New => Ok(store.create_conversation(&key, Some(model))?),
        OpenConversation::Existing(id) => {
            if store.switch_conversation(&key, id)? {
                Ok(id.clone())
            } else {
                Err(AgentError::UnknownConversation {
                    project: project.to_owned(),
                    conversation_id: id.clone(),
                })
            }
        }
    }
}

impl Engine {
    /// The active conversation as the store describes it now.
    pub(crate) async fn current_summary(&self) -> corvid_protocol::ConversationSummary {
        let (project, id) = (self.project_key.clone(), self.conversation.clone());
        match self
            .shared
            .with_store(move |store| store.conversation(&project, &id))
            .await
        {
            Ok(Some(found)) => summary(found),
            _ => crate::engine::untitled(&self.conversation),
        }
    }

    pub(crate) async fn reload_history(&mut self, scope: &Scope) {
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

    pub(crate) async fn name_conversation(&self) {
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

    /// Lists, starts, switches, deletes or clears conversations; what cannot be done comes back
    /// as `OpError::Refused`, for the engine to answer.
    pub(crate) async fn conversation_op(&mut self, scope: &Scope, op: Op) -> Result<(), OpError> {
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
                self.take(&id)?;
                self.switch_to(scope, id, Vec::new()).await?;
            }
            Op::SwitchConversation { conversation_id } => {
                self.take(&conversation_id)?;
                let target = conversation_id.clone();
                let switched = self
                    .shared
                    .with_store(move |store| store.switch_conversation(&project, &target))
                    .await?;
                if !switched {
                    if conversation_id != self.conversation {
                        self.claims.release(&conversation_id, &self.session_id);
                    }
                    return Err(OpError::Refused(format!(
                        "no conversation `{conversation_id}` in this project"
                    )));
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
                if let Some(holder) = self.claims.holder(&conversation_id)
                    && holder != self.session_id
                {
                    return Err(OpError::Refused(format!(
                        "conversation `{conversation_id}` is open in another session"
                    )));
                }
                let target = conversation_id.clone();
                let deleted = self
                    .shared
                    .with_store(move |store| store.delete_conversation(&project, &target))
                    .await?;
                if !deleted {
                    return Err(OpError::Refused(format!(
                        "no conversation `{conversation_id}` in this project"
                    )));
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
                    self.take(&id)?;
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

    /// Claims `id` for this session (see `crate::session::Claims`).
    fn take(&self, id: &str) -> Result<(), OpError> {
        self.claims.claim(id, &self.session_id).map_err(|_| {
            OpError::Refused(format!("conversation `{id}` is open in another session"))
        })
    }

    /// Makes `id` (claimed already) the active conversation and releases the one before.
    async fn switch_to(
        &mut self,
        scope: &Scope,
        id: String,
        history: Vec<Message>,
    ) -> Result<(), corvid_store::StoreError> {
        if id != self.conversation {
            self.claims.release(&self.conversation, &self.session_id);
        }
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
        let conversation = found
            .map(summary)
            .unwrap_or_else(|| crate::engine::untitled(&self.conversation));
        self.shared.emit(
            scope,
            EventMsg::ConversationSwitched {
                conversation,
                history: history::entries(&self.history, &self.config.project),
            },
        );
        Ok(())
    }
}

pub(crate) fn summary(
    summary: corvid_store::ConversationSummary,
) -> corvid_protocol::ConversationSummary {
    corvid_protocol::ConversationSummary {
        id: summary.id,
        title: summary.title,
        updated_at: summary.updated_at,
        message_count: summary.message_count,
    }
}

pub(crate) fn user_message(params: &SendParams) -> Message {
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

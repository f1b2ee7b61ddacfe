//! The session's conversation and the store: naming, listing and clearing it, reloading its
//! history, and resolving which one a new session opens (a session keeps it for its whole life;
//! the service opens another session to show another conversation).

use corvid_protocol::{ErrorNotification, EventMsg, ImageInput, ReplyOk, SendParams};
use corvid_store::ConversationStore;
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

/// The conversation a session on `project` opens with (made the project's current one).
pub(crate) fn resolve(
    store: &mut dyn ConversationStore,
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
            Err(error) => self
                .shared
                .emit(scope, EventMsg::Error(crate::engine::store_failure(&error))),
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

    /// The project's conversations, most recently updated first.
    pub(crate) async fn list_conversations(&self) -> Result<ReplyOk, ErrorNotification> {
        let project = self.project_key.clone();
        let list = self
            .shared
            .with_store(move |store| store.list_conversations(&project))
            .await
            .map_err(|error| crate::engine::store_failure(&error))?;
        Ok(ReplyOk::Conversations {
            conversations: list.into_iter().map(summary).collect(),
            current: Some(self.conversation.clone()),
        })
    }

    /// Empties the session's conversation; every listener hears `conversation_cleared`.
    pub(crate) async fn clear_conversation(
        &mut self,
        scope: &Scope,
    ) -> Result<ReplyOk, ErrorNotification> {
        let id = self.conversation.clone();
        self.shared
            .with_store(move |store| store.clear_conversation(&id))
            .await
            .map_err(|error| crate::engine::store_failure(&error))?;
        self.history.clear();
        self.shared.emit(
            scope,
            EventMsg::ConversationCleared {
                conversation_id: self.conversation.clone(),
            },
        );
        Ok(ReplyOk::Done)
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

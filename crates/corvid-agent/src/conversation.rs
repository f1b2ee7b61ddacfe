//! The session's conversation and the store: naming, listing and clearing it, reloading its
//! history, and resolving which one a new session opens (a session keeps it for its whole life;
//! the service opens another session to show another conversation).

use corvid_protocol::{ErrorNotification, EventMsg, ImageInput, ReplyOk, SendParams};
use corvid_store::ConversationStore;
use corvid_wire::model::{Image, ImageSource, Message, Part, Role};

use crate::config::AgentError;
use crate::history;
use crate::scope::Scope;
use crate::session::Shared;

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

/// The conversation `id` of `project_key` as the store describes it now.
pub(crate) async fn current_summary(
    shared: &Shared,
    project_key: &str,
    id: &str,
) -> corvid_protocol::ConversationSummary {
    let (project, key) = (project_key.to_owned(), id.to_owned());
    match shared
        .with_store(move |store| store.conversation(&project, &key))
        .await
    {
        Ok(Some(found)) => summary(found),
        _ => crate::engine::untitled(id),
    }
}

/// The stored history of conversation `id`, its warnings told to `scope`; `None` (the failure
/// told too) when the store could not be read.
pub(crate) async fn load_history(shared: &Shared, scope: &Scope, id: &str) -> Option<Vec<Message>> {
    let id = id.to_owned();
    let loaded = shared
        .with_store(move |store| {
            let mut warnings = Vec::new();
            crate::persist::load(store, &id, &mut warnings).map(|history| (history, warnings))
        })
        .await;
    match loaded {
        Ok((history, warnings)) => {
            for message in warnings {
                shared.emit(scope, EventMsg::Warning { message });
            }
            Some(history)
        }
        Err(error) => {
            shared.emit(scope, EventMsg::Error(crate::engine::store_failure(&error)));
            None
        }
    }
}

/// Titles an untitled conversation after the first line of its first user message.
pub(crate) async fn name_after_first_message(
    shared: &Shared,
    project_key: &str,
    id: &str,
    history: &[Message],
) {
    let Some(first) = history.iter().find(|message| message.role == Role::User) else {
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
    let (id, project) = (id.to_owned(), project_key.to_owned());
    let named = shared
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

/// The project's conversations, most recently updated first, with `current` marked.
pub(crate) async fn list(
    shared: &Shared,
    project_key: &str,
    current: &str,
) -> Result<ReplyOk, ErrorNotification> {
    let project = project_key.to_owned();
    let list = shared
        .with_store(move |store| store.list_conversations(&project))
        .await
        .map_err(|error| crate::engine::store_failure(&error))?;
    Ok(ReplyOk::Conversations {
        conversations: list.into_iter().map(summary).collect(),
        current: Some(current.to_owned()),
    })
}

/// Empties conversation `id` in the store; every listener hears `conversation_cleared`. The
/// caller empties its own copy of the history.
pub(crate) async fn clear(
    shared: &Shared,
    scope: &Scope,
    id: &str,
) -> Result<ReplyOk, ErrorNotification> {
    let key = id.to_owned();
    shared
        .with_store(move |store| store.clear_conversation(&key))
        .await
        .map_err(|error| crate::engine::store_failure(&error))?;
    shared.emit(
        scope,
        EventMsg::ConversationCleared {
            conversation_id: id.to_owned(),
        },
    );
    Ok(ReplyOk::Done)
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

//! Store work off the async threads, and the error a face sees when the store fails under an
//! operation. Shared by the session and the modules it hands the store to (checkpoints), so none
//! of them reaches back into the session for it.

use corvid_protocol::{ErrorClass, ErrorNotification};
use corvid_store::{ConversationStore, SharedConversations, StoreError};

/// Runs `work` on `store` on a blocking thread.
pub(crate) async fn run<T: Send + 'static>(
    store: &SharedConversations,
    work: impl FnOnce(&mut dyn ConversationStore) -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    let store = std::sync::Arc::clone(store);
    tokio::task::spawn_blocking(move || work(&mut *store.lock()))
        .await
        .unwrap_or_else(|join| Err(StoreError::Spawn(std::io::Error::other(join.to_string()))))
}

/// The store failed under an operation.
pub(crate) fn failure(error: &dyn std::fmt::Display) -> ErrorNotification {
    ErrorNotification::new(
        ErrorClass::Internal,
        format!("the conversation store failed: {error}"),
    )
    .with_next_action("Try again; if it persists, check the disk and corvid.db.")
}

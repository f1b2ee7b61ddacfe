//! Key changes pushed to every instance: PostgreSQL announces each change to a key or a team
//! on the channel `corvid_keys` (a trigger, schema step 2), and each instance listens on a
//! connection of its own, dropping the changed key from its cache at once. While that
//! connection is down the cache's TTL still bounds how long a revoked key works; after it
//! comes back the whole cache is dropped (changes may have been missed).

use std::time::Duration;

use tokio_postgres::{AsyncMessage, NoTls};

use super::PgStore;
use crate::team::KeyCache;

/// The channel the trigger notifies.
const CHANNEL: &str = "corvid_keys";
/// How long to wait before listening again after the connection failed.
const RECONNECT: Duration = Duration::from_secs(1);

impl PgStore {
    /// Keeps `cache` in step with the database's key changes, forever; spawn it once.
    pub async fn watch_keys(self, cache: KeyCache) {
        loop {
            match self.config.connect(NoTls).await {
                Ok((client, mut connection)) => {
                    let (sender, mut changes) = tokio::sync::mpsc::unbounded_channel();
                    // The connection must be polled for its notifications to arrive.
                    let driver = tokio::spawn(async move {
                        loop {
                            match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                                Some(Ok(AsyncMessage::Notification(note))) => {
                                    if sender.send(note.payload().to_owned()).is_err() {
                                        break;
                                    }
                                }
                                Some(Ok(_)) => {}
                                Some(Err(_)) | None => break,
                            }
                        }
                    });
                    match client.batch_execute(&format!("LISTEN {CHANNEL}")).await {
                        Ok(()) => {
                            cache.clear();
                            tracing::debug!("listening for key changes");
                            while let Some(public_id) = changes.recv().await {
                                if public_id == "*" {
                                    cache.clear();
                                } else {
                                    cache.forget(&public_id);
                                }
                            }
                            tracing::debug!("the key-change listener lost its connection");
                        }
                        Err(error) => tracing::debug!(%error, "cannot listen for key changes"),
                    }
                    drop(client);
                    driver.abort();
                }
                Err(error) => tracing::debug!(%error, "cannot connect to listen for key changes"),
            }
            tokio::time::sleep(RECONNECT).await;
        }
    }
}

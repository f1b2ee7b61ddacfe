//! A server's life in the session: started in the background, restarted when it dies (at most
//! [`MAX_RESTARTS`] times), started again after a new sign-in, listed again when its tools
//! change.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use corvid_config::McpServer;
use parking_lot::Mutex;

use super::{Live, MAX_RESTARTS, McpManager, Slot, State, seconds};
use crate::connection::{Connection, OpenFailure};

impl McpManager {
    /// Starts slot `index` in the background; its state is `Starting` until it is ready or
    /// has failed (at its startup timeout at the latest).
    pub(super) fn launch(&self, index: usize) {
        let inner = Arc::clone(&self.inner);
        inner.slots[index].state.send_replace(State::Starting);
        let manager = self.clone();
        tokio::spawn(async move {
            let slot = &manager.inner.slots[index];
            let timeout = slot.config.startup_timeout;
            let opened = tokio::time::timeout(timeout, async {
                let connection = Connection::open(&slot.config, &manager.inner.environment).await?;
                match connection.list_tools().await {
                    Ok(tools) => Ok((connection, tools)),
                    Err(err) => {
                        connection.close().await;
                        Err(OpenFailure::Failed(err.to_string()))
                    }
                }
            })
            .await;
            let name = &slot.config.name;
            let state = match opened {
                Ok(Ok((connection, tools))) => State::Ready(Arc::new(Live {
                    connection,
                    tools: Mutex::new(tools),
                })),
                Ok(Err(OpenFailure::NeedsSignIn)) => {
                    State::NeedsSignIn(manager.sign_in_stamp(&slot.config).await)
                }
                Ok(Err(OpenFailure::Failed(reason))) => State::Failed(reason),
                Err(_) => State::Failed(format!(
                    "it did not start within {} (startup_timeout_sec)",
                    seconds(timeout)
                )),
            };
            if let State::Failed(reason) = &state {
                tracing::info!(target: "corvid_mcp", "MCP server `{name}` failed: {reason}");
            }
            if let State::NeedsSignIn(_) = &state {
                tracing::info!(target: "corvid_mcp", "MCP server `{name}` needs a sign-in");
            }
            // A shutdown meanwhile wins.
            slot.state.send_if_modified(|current| {
                if matches!(current, State::Starting) {
                    *current = state;
                    true
                } else {
                    false
                }
            });
        });
    }

    /// Restarts servers whose process or session ended since the last look.
    pub(super) fn restart_dead(&self) {
        for (index, slot) in self.inner.slots.iter().enumerate() {
            let dead =
                matches!(&*slot.state.borrow(), State::Ready(live) if !live.connection.alive());
            if dead {
                self.push_notice(format!(
                    "MCP server `{}` stopped; restarting it",
                    slot.config.name
                ));
                self.restart(index);
            }
        }
    }

    /// Starts again the servers that needed a sign-in and have a new one now (`corvid mcp
    /// login` in another terminal): no new session needed.
    pub(super) async fn start_signed_in(&self) {
        for (index, slot) in self.inner.slots.iter().enumerate() {
            let State::NeedsSignIn(refused) = slot.state.borrow().clone() else {
                continue;
            };
            let now = self.sign_in_stamp(&slot.config).await;
            if now.is_some() && now != refused {
                self.push_notice(format!(
                    "MCP server `{}` has a new sign-in; starting it",
                    slot.config.name
                ));
                self.launch(index);
            }
        }
    }

    /// The stamp of `server`'s stored sign-in, read off the runtime's threads.
    pub(super) async fn sign_in_stamp(&self, server: &McpServer) -> Option<String> {
        let server = server.clone();
        let inner = Arc::clone(&self.inner);
        tokio::task::spawn_blocking(move || {
            crate::launch::sign_in_stamp(&server, &inner.environment)
        })
        .await
        .ok()
        .flatten()
    }

    pub(super) fn restart(&self, index: usize) {
        let slot = &self.inner.slots[index];
        if !matches!(&*slot.state.borrow(), State::Ready(_)) {
            return;
        }
        let restarts = slot.restarts.fetch_add(1, Ordering::SeqCst) + 1;
        if restarts > MAX_RESTARTS {
            let reason = format!("it stopped {restarts} times; not restarted again this session");
            slot.state.send_replace(State::Failed(reason));
            return;
        }
        self.launch(index);
    }

    pub(super) async fn relist(&self, slot: &Slot, live: &Live) {
        match tokio::time::timeout(slot.config.startup_timeout, live.connection.list_tools()).await
        {
            Ok(Ok(tools)) => {
                self.push_notice(format!(
                    "MCP server `{}` changed its tools: it now offers {}",
                    slot.config.name,
                    tools.len()
                ));
                *live.tools.lock() = tools;
            }
            Ok(Err(reason)) => self.push_notice(format!(
                "MCP server `{}` changed its tools, but listing them failed: {reason}",
                slot.config.name
            )),
            Err(_) => self.push_notice(format!(
                "MCP server `{}` changed its tools, but did not list them in time",
                slot.config.name
            )),
        }
    }
}

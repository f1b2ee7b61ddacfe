//! What the manager tells a person: the notices a turn shows and each server's status.

use corvid_config::McpServer;

use super::{McpManager, ServerState, ServerStatus, State, needs_sign_in};
use crate::names::assign;
use crate::trust::describe;

impl McpManager {
    /// What the user should hear now: what happened since the last call (a server stopped and
    /// was restarted, changed its tools), then what stays true (each server that is not
    /// available and why; the tools the cap leaves out), repeated on every call while it holds
    /// (the agent shows each line once).
    pub fn take_notices(&self) -> Vec<String> {
        let mut notices = std::mem::take(&mut *self.inner.notices.lock());
        for slot in &self.inner.slots {
            match &*slot.state.borrow() {
                State::Failed(reason) => notices.push(format!(
                    "MCP server `{}` is not available in this session: {reason}",
                    slot.config.name
                )),
                State::NeedsSignIn(_) => notices.push(format!(
                    "MCP server `{}` is not available in this session: {}",
                    slot.config.name,
                    needs_sign_in(&slot.config.name, slot.config.origin.scope)
                )),
                State::Untrusted => notices.push(untrusted_notice(&slot.config)),
                _ => {}
            }
        }
        if let Some(left_out) = self.inner.left_out.lock().as_ref() {
            notices.push(left_out.clone());
        }
        notices
    }

    /// Every server and its state; ready servers with their tools as last listed, under the
    /// names a listing gives them (MCP names never clash with built-ins: they start `mcp__`),
    /// so the list is right before the first turn too.
    pub fn statuses(&self) -> Vec<ServerStatus> {
        let states: Vec<State> = self
            .inner
            .slots
            .iter()
            .map(|slot| slot.state.borrow().clone())
            .collect();
        let listed = |state: &State| match state {
            State::Ready(live) => live.tools.lock().clone(),
            _ => Vec::new(),
        };
        let mut pairs = Vec::new();
        for (slot, state) in self.inner.slots.iter().zip(&states) {
            for tool in listed(state) {
                if slot.config.offers(&tool.name) {
                    pairs.push((slot.config.name.clone(), tool.name.to_string()));
                }
            }
        }
        let naming = assign(&pairs, self.inner.max_tools, &|_| false);
        self.inner
            .slots
            .iter()
            .zip(states)
            .map(|(slot, state)| {
                let mut filtered = Vec::new();
                let mut tools = Vec::new();
                for tool in listed(&state) {
                    if !slot.config.offers(&tool.name) {
                        filtered.push(tool.name.to_string());
                    } else if let Some(named) = naming
                        .offered
                        .iter()
                        .find(|named| named.server == slot.config.name && named.tool == tool.name)
                    {
                        tools.push((named.name.clone(), named.tool.clone()));
                    }
                }
                ServerStatus {
                    name: slot.config.name.clone(),
                    scope: slot.config.origin.scope,
                    transport: describe(&slot.config),
                    state: match state {
                        State::Idle => ServerState::Idle,
                        State::Disabled => ServerState::Disabled,
                        State::Untrusted => ServerState::Untrusted,
                        State::Starting => ServerState::Starting,
                        State::Ready(_) => ServerState::Ready,
                        State::NeedsSignIn(_) => ServerState::NeedsSignIn,
                        State::Failed(reason) => ServerState::Failed(reason),
                    },
                    tools,
                    filtered,
                }
            })
            .collect()
    }
}

/// Why a project's server is not started, and how to start it.
fn untrusted_notice(server: &McpServer) -> String {
    let name = &server.name;
    format!(
        "MCP server `{name}` from {} is not started: a project's own servers start only once you trust them (it {}). If you do: `/mcp trust {name}` starts it now (in corvid chat, the web page or Zed), `corvid mcp trust {name}` in this project before a session",
        server.origin.file.display(),
        describe(server),
    )
}

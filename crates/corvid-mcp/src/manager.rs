//! The MCP servers of one session: started once, in the background, when the session begins;
//! reused by every turn; restarted when one dies; listed again when one says its tools changed.
//!
//! A turn asks [`McpManager::tools`] before each model step. It waits only for servers still
//! starting, and never longer than their own startup timeout (measured from when they started,
//! so later turns do not wait at all); a server that failed is left out, and says why in every
//! [`McpManager::take_notices`] (the agent shows a notice once while it holds). A dead server is restarted (at most
//! [`MAX_RESTARTS`] times a session); a call in flight when it died fails, saying so, and is
//! not repeated, since it may have done part of its work.

use std::sync::Arc;
use std::sync::atomic::AtomicU32;
use std::time::Duration;

use corvid_config::{McpScope, McpServer};
use corvid_tools::{Cancellation, TrustServerError};
use parking_lot::Mutex;
use rmcp::model::Tool;
use serde_json::Value;
use tokio::sync::watch;

use crate::connection::{CallFailure, Connection};
use crate::content::{McpOutput, map_result};
use crate::launch::McpEnvironment;
use crate::names::{Naming, assign};

mod lifecycle;
mod report;

/// How often a dead server is started again in one session.
pub const MAX_RESTARTS: u32 = 3;

/// One MCP tool as offered to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct McpTool {
    /// `mcp__<server>__<tool>`, within every provider's rules.
    pub name: String,
    /// The server's description, introduced by the server's name.
    pub description: String,
    /// The tool's input schema (an `object` schema).
    pub parameters: Value,
    /// The server's configured name.
    pub server: String,
    /// The server's own name for the tool.
    pub tool: String,
    /// The server says the tool only reads (`readOnlyHint`). A hint from the server, not a
    /// promise: the approval gate still decides.
    pub read_only_hint: bool,
    /// "Always" allows every tool of the server (`always_allow = "server"`), not just this one.
    pub always_allow_server: bool,
}

/// A server's state, for `corvid mcp list` and `/mcp`: the tool seam's own words for it
/// (`NeedsSignIn`: an HTTP server that answered 401 and has no, or no longer a valid, sign-in;
/// see [`sign_in_hint`]).
pub use corvid_tools::ServerHealth as ServerState;

/// What signs a server in [`ServerState::NeedsSignIn`] in: "run `corvid mcp login <name>`"
/// (in this project, for a project's server).
pub fn sign_in_hint(name: &str, scope: McpScope) -> String {
    let place = if scope == McpScope::Project {
        " in this project"
    } else {
        ""
    };
    format!("run `corvid mcp login {name}`{place}")
}

/// Why a server needing a sign-in is not available, and what to do.
fn needs_sign_in(name: &str, scope: McpScope) -> String {
    format!(
        "it needs you to sign in: {}; it starts again at your next message",
        sign_in_hint(name, scope)
    )
}

/// One server as a person sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerStatus {
    pub name: String,
    pub scope: McpScope,
    /// What starting it means (`runs `…``, `connects to …`).
    pub transport: String,
    pub state: ServerState,
    /// The names the model sees, with the server's own names, of the tools offered.
    pub tools: Vec<(String, String)>,
    /// Tools the server has that the configuration (`enabled_tools`/`disabled_tools`) keeps
    /// from the model.
    pub filtered: Vec<String>,
}

impl ServerStatus {
    /// The server as a tool source reports it to the agent (what every face, and `corvid mcp
    /// list`, words through `corvid_protocol::ToolServer`).
    pub fn report(self) -> corvid_tools::ServerReport {
        corvid_tools::ServerReport {
            configured_in: match self.scope {
                McpScope::Global => "config.toml".to_owned(),
                McpScope::Project => corvid_config::PROJECT_MCP_FILE.to_owned(),
                McpScope::Editor => "the editor".to_owned(),
            },
            transport: self.transport,
            health: self.state,
            tools: self.tools.into_iter().map(|(name, _)| name).collect(),
            withheld: self.filtered,
            name: self.name,
        }
    }
}

#[derive(Clone)]
enum State {
    Idle,
    Disabled,
    Untrusted,
    Starting,
    Ready(Arc<Live>),
    /// With the stamp of the sign-in that was refused (none: there was none), so a new one
    /// is noticed.
    NeedsSignIn(Option<String>),
    Failed(String),
}

struct Live {
    connection: Connection,
    tools: Mutex<Vec<Tool>>,
}

struct Slot {
    config: McpServer,
    state: watch::Sender<State>,
    restarts: AtomicU32,
}

struct Inner {
    slots: Vec<Slot>,
    environment: McpEnvironment,
    max_tools: usize,
    /// The names handed out by the last [`McpManager::tools`], to route calls back.
    naming: Mutex<Naming>,
    notices: Mutex<Vec<String>>,
    /// What the cap left out of the last listing, as a notice.
    left_out: Mutex<Option<String>>,
}

/// The MCP servers of one session. Cheap to clone; clones share the servers.
#[derive(Clone)]
pub struct McpManager {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for McpManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self
            .inner
            .slots
            .iter()
            .map(|slot| slot.config.name.as_str())
            .collect();
        f.debug_struct("McpManager")
            .field("servers", &names)
            .finish_non_exhaustive()
    }
}

impl McpManager {
    /// A manager for `servers` (nothing starts until [`McpManager::start`] or the first
    /// [`McpManager::tools`]); at most `max_tools` tools are offered.
    pub fn new(servers: Vec<McpServer>, max_tools: usize, environment: McpEnvironment) -> Self {
        let slots = servers
            .into_iter()
            .map(|config| {
                let initial = if config.enabled {
                    State::Idle
                } else {
                    State::Disabled
                };
                Slot {
                    config,
                    state: watch::Sender::new(initial),
                    restarts: AtomicU32::new(0),
                }
            })
            .collect();
        Self {
            inner: Arc::new(Inner {
                slots,
                environment,
                max_tools,
                naming: Mutex::new(Naming::default()),
                notices: Mutex::new(Vec::new()),
                left_out: Mutex::new(None),
            }),
        }
    }

    /// Keeps the servers named in `names` from starting: a project's servers the user has
    /// not trusted. They stay [`ServerState::Untrusted`], their tools are never listed.
    pub fn hold_untrusted(self, names: &[String]) -> Self {
        for slot in &self.inner.slots {
            if names.contains(&slot.config.name) {
                slot.state.send_replace(State::Untrusted);
            }
        }
        self
    }

    /// Starts the held server `name` (see [`McpManager::hold_untrusted`]) now that the user
    /// trusts it; its tools join from the next model step. `keep` records the trust first
    /// (with the definition that was held); when it fails, nothing starts.
    pub fn admit(
        &self,
        name: &str,
        keep: impl FnOnce(&McpServer) -> Result<(), TrustServerError>,
    ) -> Result<(), TrustServerError> {
        let Some(slot) = self
            .inner
            .slots
            .iter()
            .find(|slot| slot.config.name == name)
        else {
            return Err(TrustServerError::NoServer {
                name: name.to_owned(),
            });
        };
        if !matches!(*slot.state.borrow(), State::Untrusted) {
            return Err(TrustServerError::NotWaiting {
                name: name.to_owned(),
            });
        }
        keep(&slot.config)?;
        // Claimed under the state's lock, so two answers start it once.
        let claimed = slot.state.send_if_modified(|state| {
            let held = matches!(state, State::Untrusted);
            if held {
                *state = State::Idle;
            }
            held
        });
        if claimed {
            self.start();
        }
        Ok(())
    }

    /// Whether a server is configured under `name`.
    pub fn has_server(&self, name: &str) -> bool {
        self.inner.slots.iter().any(|slot| slot.config.name == name)
    }

    /// Whether any server is configured.
    pub fn is_empty(&self) -> bool {
        self.inner.slots.is_empty()
    }

    /// Starts every enabled server not yet started, in the background. Outside a tokio runtime
    /// it does nothing: the first [`McpManager::tools`] starts them.
    pub fn start(&self) {
        if tokio::runtime::Handle::try_current().is_err() {
            return;
        }
        for index in 0..self.inner.slots.len() {
            if matches!(*self.inner.slots[index].state.borrow(), State::Idle) {
                self.launch(index);
            }
        }
    }

    /// The tools to offer for the next model step. `taken` says which names built-in tools
    /// hold (they win a clash). Waits for servers still starting, within their startup timeout.
    pub async fn tools(&self, taken: &(dyn Fn(&str) -> bool + Sync)) -> Vec<McpTool> {
        self.start();
        self.restart_dead();
        self.start_signed_in().await;
        for slot in &self.inner.slots {
            let mut state = slot.state.subscribe();
            // Bounded: the start task gives up at the server's startup timeout.
            let _ = state
                .wait_for(|state| !matches!(state, State::Starting))
                .await;
        }
        let mut pairs = Vec::new();
        let mut schemas = Vec::new();
        for slot in &self.inner.slots {
            let State::Ready(live) = slot.state.borrow().clone() else {
                continue;
            };
            if live.connection.tools_changed() {
                self.relist(slot, &live).await;
            }
            let tools = live.tools.lock().clone();
            for tool in tools {
                if slot.config.offers(&tool.name) {
                    pairs.push((slot.config.name.clone(), tool.name.to_string()));
                    schemas.push(tool);
                }
            }
        }
        let naming = assign(&pairs, self.inner.max_tools, taken);
        self.note_left_out(&naming, pairs.len());
        let offered = naming
            .offered
            .iter()
            .filter_map(|named| {
                let always_allow_server = self
                    .inner
                    .slots
                    .iter()
                    .find(|slot| slot.config.name == named.server)
                    .is_some_and(|slot| slot.config.always_allow_server);
                let tool = pairs
                    .iter()
                    .position(|(server, tool)| *server == named.server && *tool == named.tool)
                    .map(|at| &schemas[at])?;
                let description = tool.description.as_deref().unwrap_or("").trim();
                Some(McpTool {
                    name: named.name.clone(),
                    description: if description.is_empty() {
                        format!("`{}` from the MCP server `{}`.", named.tool, named.server)
                    } else {
                        format!("(MCP server `{}`) {description}", named.server)
                    },
                    parameters: Value::Object((*tool.input_schema).clone()),
                    server: named.server.clone(),
                    tool: named.tool.clone(),
                    read_only_hint: tool
                        .annotations
                        .as_ref()
                        .and_then(|annotations| annotations.read_only_hint)
                        .unwrap_or(false),
                    always_allow_server,
                })
            })
            .collect();
        *self.inner.naming.lock() = naming;
        offered
    }

    /// Calls the tool the model knows as `name`, with `arguments` (a JSON object), within the
    /// server's tool timeout; `cancel` stops waiting (and cancels the request).
    pub async fn call(&self, name: &str, arguments: Value, mut cancel: Cancellation) -> McpOutput {
        let Some((index, tool)) = self.route(name) else {
            return failure(format!(
                "`{name}` is not an MCP tool offered in this session (its server may have stopped or changed its tools)"
            ));
        };
        let slot = &self.inner.slots[index];
        let server = &slot.config.name;
        let arguments = match arguments {
            Value::Object(map) => Some(map),
            Value::Null => None,
            other => {
                return failure(format!(
                    "the arguments must be a JSON object, got {}",
                    kind_of(&other)
                ));
            }
        };
        let live = match slot.state.borrow().clone() {
            State::Ready(live) => live,
            State::Failed(reason) => {
                return failure(format!(
                    "the MCP server `{server}` is not running: {reason}"
                ));
            }
            State::NeedsSignIn(_) => {
                return failure(format!(
                    "the MCP server `{server}` is not running: {}",
                    needs_sign_in(server, slot.config.origin.scope)
                ));
            }
            _ => return failure(format!("the MCP server `{server}` is not running")),
        };
        let timeout = slot.config.tool_timeout;
        let outcome = tokio::select! {
            outcome = tokio::time::timeout(timeout, live.connection.call(&tool, arguments)) => outcome,
            () = cancel.cancelled() => return failure("cancelled by the user".to_owned()),
        };
        match outcome {
            Ok(Ok(result)) => map_result(result),
            Ok(Err(CallFailure::Refused(message))) => failure(format!(
                "the MCP server `{server}` refused the call to `{tool}`: {message}"
            )),
            Ok(Err(CallFailure::SignIn)) => {
                // The sign-in ended mid-session (revoked, or the refresh was refused): the
                // server is of no use until the user signs in again.
                let refused = self.sign_in_stamp(&slot.config).await;
                let previous = slot.state.send_replace(State::NeedsSignIn(refused));
                if let State::Ready(live) = previous
                    && let Some(live) = Arc::into_inner(live)
                {
                    live.connection.close().await;
                }
                failure(format!(
                    "the MCP server `{server}` no longer accepts corvid's sign-in, so `{tool}` did not run: {}",
                    needs_sign_in(server, slot.config.origin.scope)
                ))
            }
            Ok(Err(CallFailure::Broken(message))) => {
                if live.connection.alive() {
                    failure(format!(
                        "the call to `{tool}` on the MCP server `{server}` failed: {message}"
                    ))
                } else {
                    self.push_notice(format!(
                        "MCP server `{server}` stopped during a call to `{tool}`: {message}; restarting it"
                    ));
                    self.restart(index);
                    failure(format!(
                        "the MCP server `{server}` stopped during the call, so `{tool}` may have done part of its work: {message}. corvid restarts the server; call again only if repeating is safe."
                    ))
                }
            }
            Err(_) => failure(format!(
                "`{tool}` on the MCP server `{server}` did not answer within {} (tool_timeout_sec)",
                seconds(timeout)
            )),
        }
    }

    /// Ends every session and process.
    pub async fn shutdown(&self) {
        for slot in &self.inner.slots {
            let previous = slot.state.send_replace(State::Disabled);
            if let State::Ready(live) = previous
                && let Some(live) = Arc::into_inner(live)
            {
                live.connection.close().await;
            }
        }
    }

    /// The server and the server's own tool name behind a name the model was offered.
    pub fn origin_of(&self, name: &str) -> Option<(String, String)> {
        let naming = self.inner.naming.lock();
        let named = naming.resolve(name)?;
        Some((named.server.clone(), named.tool.clone()))
    }

    fn route(&self, name: &str) -> Option<(usize, String)> {
        let naming = self.inner.naming.lock();
        let named = naming.resolve(name)?;
        let index = self
            .inner
            .slots
            .iter()
            .position(|slot| slot.config.name == named.server)?;
        Some((index, named.tool.clone()))
    }

    fn note_left_out(&self, naming: &Naming, total: usize) {
        let note = (!naming.left_out.is_empty()).then(|| {
            let names: Vec<String> = naming
                .left_out
                .iter()
                .map(|(server, tool)| format!("{server}/{tool}"))
                .collect();
            format!(
                "MCP servers offer {total} tools; {} are given to the model (mcp_max_tools = {}), left out: {}",
                naming.offered.len(),
                self.inner.max_tools,
                names.join(", ")
            )
        });
        *self.inner.left_out.lock() = note;
    }

    fn push_notice(&self, notice: String) {
        tracing::info!(target: "corvid_mcp", "{notice}");
        self.inner.notices.lock().push(notice);
    }
}

fn failure(text: String) -> McpOutput {
    McpOutput {
        text,
        images: Vec::new(),
        is_error: true,
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn seconds(duration: Duration) -> String {
    let seconds = duration.as_secs_f64();
    if seconds.fract() == 0.0 {
        format!("{seconds:.0} s")
    } else {
        format!("{seconds:.1} s")
    }
}

//! One live MCP session: the rmcp client over a started transport, the child process behind it
//! (if any), and the words for what went wrong with it.

use std::sync::atomic::Ordering;

use corvid_config::McpServer;
use parking_lot::Mutex;
use rmcp::RoleClient;
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject, Tool};
use rmcp::service::{ClientInitializeError, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpError;
use tokio::process::Child;

use crate::error::StartError;
use crate::handler::Handler;
use crate::launch::{McpEnvironment, Started, StderrTail, Unauthorized, start};

/// Why listing a server's tools failed, in words that already say how the process ended and
/// what it wrote to stderr (see `Connection::explain`).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct ListToolsError(String);

/// Why a server did not start.
#[derive(Debug)]
pub(crate) enum OpenFailure {
    /// It answered 401 and `corvid mcp login` can sign in to it.
    NeedsSignIn,
    Failed(String),
}

impl From<String> for OpenFailure {
    fn from(message: String) -> Self {
        Self::Failed(message)
    }
}

impl From<StartError> for OpenFailure {
    fn from(error: StartError) -> Self {
        Self::Failed(error.to_string())
    }
}

/// Why a call brought no result.
#[derive(Debug)]
pub(crate) enum CallFailure {
    /// The server refused it (a JSON-RPC error): it is still up.
    Refused(String),
    /// The connection failed under it (the server may have died).
    Broken(String),
    /// The server asks for a sign-in corvid no longer has (revoked, refresh refused).
    SignIn,
}

/// A server corvid has finished the MCP handshake with.
pub(crate) struct Connection {
    service: RunningService<RoleClient, Handler>,
    handler: Handler,
    child: Mutex<Option<Child>>,
    stderr: Option<StderrTail>,
}

impl Connection {
    /// Starts the transport and does the handshake. No timeout here: the manager applies the
    /// server's startup timeout around this and the first listing together.
    pub(crate) async fn open(
        server: &McpServer,
        environment: &McpEnvironment,
    ) -> Result<Self, OpenFailure> {
        let handler = Handler::new(&environment.project);
        match start(server, environment)? {
            Started::Stdio {
                mut child,
                stdout,
                stdin,
                stderr,
            } => match handler.clone().serve((stdout, stdin)).await {
                Ok(service) => Ok(Self {
                    service,
                    handler,
                    child: Mutex::new(Some(child)),
                    stderr: Some(stderr),
                }),
                Err(err) => {
                    let _ = child.start_kill();
                    // Let the last words reach the tail before they are read.
                    let _ =
                        tokio::time::timeout(std::time::Duration::from_millis(200), child.wait())
                            .await;
                    Err(OpenFailure::Failed(with_stderr(
                        format!("the MCP handshake failed: {}", handshake_words(&err)),
                        &stderr,
                    )))
                }
            },
            Started::Http(start) => {
                let served = match start.sign_in {
                    Some(sign_in) => {
                        let client =
                            crate::oauth::authorized(sign_in, start.client, server, environment)
                                .await?;
                        handler
                            .clone()
                            .serve(StreamableHttpClientTransport::with_client(
                                client,
                                start.config,
                            ))
                            .await
                    }
                    None => {
                        handler
                            .clone()
                            .serve(StreamableHttpClientTransport::with_client(
                                start.client,
                                start.config,
                            ))
                            .await
                    }
                };
                let service = match served {
                    Ok(service) => service,
                    Err(err) if crate::oauth::is_unauthorized(&err) => {
                        return Err(match start.on_unauthorized {
                            Unauthorized::SignIn => OpenFailure::NeedsSignIn,
                            Unauthorized::Failed(reason) => OpenFailure::Failed(reason),
                        });
                    }
                    Err(err) => {
                        return Err(
                            format!("the MCP handshake failed: {}", handshake_words(&err)).into(),
                        );
                    }
                };
                Ok(Self {
                    service,
                    handler,
                    child: Mutex::new(None),
                    stderr: None,
                })
            }
        }
    }

    /// Every tool the server offers (following pages).
    pub(crate) async fn list_tools(&self) -> Result<Vec<Tool>, ListToolsError> {
        self.handler.tools_changed.store(false, Ordering::SeqCst);
        self.service.list_all_tools().await.map_err(|err| {
            ListToolsError(
                self.explain(format!("listing its tools failed: {}", service_words(&err))),
            )
        })
    }

    /// Whether the server said its tool list changed since the last listing.
    pub(crate) fn tools_changed(&self) -> bool {
        self.handler.tools_changed.load(Ordering::SeqCst)
    }

    /// Calls `tool`; the caller bounds it in time (dropping the future cancels the request).
    pub(crate) async fn call(
        &self,
        tool: &str,
        arguments: Option<JsonObject>,
    ) -> Result<CallToolResult, CallFailure> {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Some(arguments) = arguments {
            params = params.with_arguments(arguments);
        }
        match self.service.call_tool(params).await {
            Ok(result) => Ok(result),
            // The server answered, with a JSON-RPC error (unknown tool, invalid arguments).
            Err(ServiceError::McpError(error)) => {
                Err(CallFailure::Refused(error.message.to_string()))
            }
            Err(error) if error.is_authorization_required() => Err(CallFailure::SignIn),
            Err(error) => {
                // The transport failed: give the process a moment to be seen as ended, so the
                // caller can tell a crash from a hiccup.
                self.wait_for_end(std::time::Duration::from_millis(500))
                    .await;
                Err(CallFailure::Broken(self.explain(service_words(&error))))
            }
        }
    }

    /// Waits up to `limit` for the process to end (returns at once for HTTP servers).
    async fn wait_for_end(&self, limit: std::time::Duration) {
        let deadline = tokio::time::Instant::now() + limit;
        while tokio::time::Instant::now() < deadline {
            let ended = match self.child.lock().as_mut() {
                Some(child) => !matches!(child.try_wait(), Ok(None)),
                None => return,
            };
            if ended {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    /// Whether the session and its process are still up.
    pub(crate) fn alive(&self) -> bool {
        if self.service.is_closed() {
            return false;
        }
        match self.child.lock().as_mut() {
            Some(child) => matches!(child.try_wait(), Ok(None)),
            None => true,
        }
    }

    /// `message`, with how the process ended and its last words when it has.
    pub(crate) fn explain(&self, message: String) -> String {
        let mut message = message;
        if let Some(child) = self.child.lock().as_mut()
            && let Ok(Some(status)) = child.try_wait()
        {
            message.push_str(&format!(" (the server process ended: {status})"));
        }
        match &self.stderr {
            Some(stderr) => with_stderr(message, stderr),
            None => message,
        }
    }

    /// Ends the session and the process.
    pub(crate) async fn close(self) {
        let _ = self.service.cancel().await;
        if let Some(child) = self.child.lock().as_mut() {
            let _ = child.start_kill();
        }
    }
}

/// A failed handshake in words: the transport's causes without rmcp's type names.
fn handshake_words(error: &ClientInitializeError) -> String {
    match error {
        ClientInitializeError::TransportError { error, context } => {
            format!("{} (on: {context})", causes(error.error.as_ref()))
        }
        other => causes(other),
    }
}

/// A failed request in words, as [`handshake_words`].
fn service_words(error: &ServiceError) -> String {
    match error {
        ServiceError::TransportSend(error) => causes(error.error.as_ref()),
        ServiceError::TransportClosed => "the connection to the server closed".to_owned(),
        other => causes(other),
    }
}

/// `error` and its sources, joined; a cause its wrapper already quotes is not repeated.
fn causes(error: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next = Some(error);
    while let Some(mut error) = next {
        // rmcp's HTTP transport wraps the client's error without naming it as the source.
        if let Some(StreamableHttpError::Client(inner)) =
            error.downcast_ref::<StreamableHttpError<reqwest::Error>>()
        {
            error = inner;
        }
        let text = error.to_string();
        if !parts.last().is_some_and(|last| last.contains(&text)) {
            parts.push(text);
        }
        next = error.source();
    }
    parts.join(": ")
}

fn with_stderr(message: String, stderr: &StderrTail) -> String {
    let tail = stderr.text();
    if tail.is_empty() {
        message
    } else {
        let last: Vec<&str> = tail.lines().rev().take(8).collect();
        let last: Vec<&str> = last.into_iter().rev().collect();
        format!("{message}; its last output: {}", last.join(" | "))
    }
}

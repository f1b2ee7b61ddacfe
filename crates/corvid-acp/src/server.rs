//! The ACP agent: the handlers of every method, each answering from a spawned task so the
//! message loop never waits, and one live entry per open session that turns the engine's events
//! into `session/update`s, permission requests into approvals, and turn ends into the prompt's
//! answer.
//!
//! One `impl Server` per concern: `open` (initialize, new, load, resume, list, close),
//! `prompt` (prompts, cancels and slash commands), `options` (modes and config options) and
//! `permission` (proposals as permission requests); `live` is one open session, `events` turns
//! its events into updates.

mod events;
mod live;
mod open;
mod options;
mod permission;
mod plan_edit;
mod prompt;

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;

use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{
    AuthenticateRequest, AuthenticateResponse, CancelNotification, CloseSessionRequest,
    InitializeRequest, ListSessionsRequest, LoadSessionRequest, NewSessionRequest, PromptRequest,
    ResumeSessionRequest, SetSessionConfigOptionRequest, SetSessionModeRequest,
};
use agent_client_protocol::{
    Agent, Error, JsonRpcResponse, Stdio, on_receive_notification, on_receive_request,
};

use crate::sessions::Sessions;
use live::Live;

/// Serves ACP on stdin/stdout until the client closes it.
pub async fn serve(sessions: Arc<dyn Sessions>) -> Result<(), Error> {
    let server = Arc::new(Server {
        sessions,
        fs: Mutex::new(ClientFiles::default()),
        open: Mutex::new(HashMap::new()),
    });
    // Each handler owns its own handle on the server.
    let handle = || Arc::clone(&server);
    Agent
        .v1()
        .name("corvid")
        .on_receive_request(
            {
                let server = handle();
                async move |request: InitializeRequest, responder, _cx| {
                    responder.respond(server.initialize(request))
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            // The only method is a terminal one: the client runs `corvid login` itself.
            async move |_request: AuthenticateRequest, responder, _cx| {
                responder.respond(AuthenticateResponse::new())
            },
            on_receive_request!(),
        )
        .on_receive_request(
            {
                let server = handle();
                async move |request: NewSessionRequest, responder, cx| {
                    server.new_session(request, responder, cx)
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            {
                let server = handle();
                async move |request: LoadSessionRequest, responder, cx| {
                    server.load_session(request, responder, cx)
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            {
                let server = handle();
                async move |request: ResumeSessionRequest, responder, cx| {
                    server.resume_session(request, responder, cx)
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            {
                let server = handle();
                async move |request: ListSessionsRequest, responder, cx| {
                    server.list_sessions(request, responder, cx)
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            {
                let server = handle();
                async move |request: CloseSessionRequest, responder, _cx| {
                    server.close_session(request, responder)
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            {
                let server = handle();
                async move |request: PromptRequest, responder, cx| {
                    server.prompt(request, responder, cx)
                }
            },
            on_receive_request!(),
        )
        .on_receive_notification(
            {
                let server = handle();
                async move |notification: CancelNotification, _cx| {
                    server.cancel(notification);
                    Ok(())
                }
            },
            on_receive_notification!(),
        )
        .on_receive_request(
            {
                let server = handle();
                async move |request: SetSessionConfigOptionRequest, responder, _cx| {
                    server.set_config_option(request, responder)
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            {
                let server = handle();
                async move |request: SetSessionModeRequest, responder, _cx| {
                    server.set_mode(request, responder)
                }
            },
            on_receive_request!(),
        )
        .connect_to(Stdio::new())
        .await
        .or_else(|error| {
            if client_went_away(&error) {
                tracing::info!("the ACP client closed the connection");
                Ok(())
            } else {
                Err(error)
            }
        })
}

/// Whether `error` is a write that found the client's end of stdout closed. That is how an ACP
/// session ends (the editor closes the panel, or quits, while corvid still has an update to
/// send), not a failure to report with exit status 1. The SDK turns I/O errors into internal
/// errors carrying the error's text, so the text is what there is to check.
fn client_went_away(error: &Error) -> bool {
    error
        .data
        .as_ref()
        .and_then(serde_json::Value::as_str)
        .is_some_and(|text| text.contains("Broken pipe") || text.contains("os error 32"))
}

fn invalid(message: impl Into<String>) -> Error {
    let message = message.into();
    Error::invalid_request().data(serde_json::Value::String(message))
}

/// The answer to a request naming a session that is not open.
fn no_session(id: &str) -> Error {
    invalid(format!("no open session `{id}`"))
}

/// Which of the client's file methods the editor offers (its unsaved buffers).
#[derive(Debug, Clone, Copy, Default)]
struct ClientFiles {
    /// `fs/read_text_file`.
    read: bool,
    /// `fs/write_text_file`.
    write: bool,
}

struct Server {
    sessions: Arc<dyn Sessions>,
    fs: Mutex<ClientFiles>,
    open: Mutex<HashMap<String, Arc<Live>>>,
}

impl Server {
    fn live(&self, id: &str) -> Option<Arc<Live>> {
        self.open.lock().get(id).cloned()
    }

    /// Answers a request about the open session `id` with `answer`, or with the error that
    /// there is no such session.
    fn with_live<R: JsonRpcResponse>(
        &self,
        id: &str,
        responder: Responder<R>,
        answer: impl FnOnce(Arc<Live>, Responder<R>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        match self.live(id) {
            Some(live) => answer(live, responder),
            None => responder.respond_with_error(no_session(id)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_closed_pipe_counts_as_the_client_going_away() {
        let closed = Error::internal_error().data("Broken pipe (os error 32)");
        assert!(client_went_away(&closed));
        assert!(!client_went_away(&Error::internal_error()));
        assert!(!client_went_away(
            &Error::internal_error().data("invalid JSON at line 1")
        ));
    }
}

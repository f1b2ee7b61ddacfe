//! The HTTP entry point: records each request and answers it with the next scripted reply, or a
//! default one.

use std::collections::VecDeque;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::response::Response;

use super::control::control;
use super::defaults::default_reply;
use super::recorded::Recorded;
use super::render::render;
use super::reply::Reply;
use super::server::Shared;

pub(super) async fn answer(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let path = parts.uri.path().to_owned();
    if let Some(command) = path.strip_prefix("/__mock/") {
        return control(&shared, command, &body);
    }
    shared.recorded.lock().push(Recorded {
        method: parts.method.to_string(),
        path: path.clone(),
        headers: parts.headers.clone(),
        body: body.clone(),
    });
    let scripted = shared
        .queues
        .lock()
        .get_mut(&path)
        .and_then(VecDeque::pop_front);
    let reply = scripted.unwrap_or_else(|| default_reply(&path, &body));
    if let Reply::Hang = reply {
        // Never answer, not even the status line.
        std::future::pending::<()>().await;
    }
    render(reply, shared)
}

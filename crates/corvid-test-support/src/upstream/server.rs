//! The running mock: its shared state (queues, recordings, stream counters), start-up, and the
//! test-facing [`MockUpstream`] handle.

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use parking_lot::Mutex;

use super::handler::answer;
use super::recorded::Recorded;
use super::reply::Reply;

#[derive(Default)]
pub(super) struct Shared {
    pub(super) queues: Mutex<HashMap<String, VecDeque<Reply>>>,
    pub(super) recorded: Mutex<Vec<Recorded>>,
    pub(super) streams_completed: AtomicUsize,
    pub(super) streams_abandoned: AtomicUsize,
}

/// A running mock upstream; it stops when dropped.
pub struct MockUpstream {
    addr: SocketAddr,
    shared: Arc<Shared>,
    _server: crate::ServerGuard,
}

impl MockUpstream {
    /// Starts on `127.0.0.1:0`.
    pub async fn start() -> Self {
        let shared = Arc::new(Shared::default());
        let app = Router::new().fallback(answer).with_state(shared.clone());
        let (addr, server) = crate::serve(app).await;
        Self {
            addr,
            shared,
            _server: server,
        }
    }

    /// `http://127.0.0.1:<port>/v1`, the value for corvid's `upstream` setting.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The socket address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Queues a reply for `path` (e.g. `/v1/chat/completions`).
    pub fn enqueue(&self, path: &str, reply: Reply) {
        self.shared
            .queues
            .lock()
            .entry(path.to_owned())
            .or_default()
            .push_back(reply);
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.recorded.lock().clone()
    }

    /// Scripted streams the client read to the end.
    pub fn streams_completed(&self) -> usize {
        self.shared.streams_completed.load(Ordering::SeqCst)
    }

    /// Scripted streams dropped before their end because the client went away.
    pub fn streams_abandoned(&self) -> usize {
        self.shared.streams_abandoned.load(Ordering::SeqCst)
    }
}

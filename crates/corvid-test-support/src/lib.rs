//! Local stand-ins for everything corvid talks to, for tests and benchmarks. Every mock listens
//! on an ephemeral loopback port chosen by the OS and records what it received.

#[cfg(feature = "agent")]
pub mod agent;
pub mod anthropic_cache;
pub mod executable;
pub mod installed;
pub mod logs;
pub mod modes;
pub mod oauth;
pub mod props;
pub mod scratch;
pub mod scripted;
pub mod upstream;
pub mod zed_cloud;

pub use upstream::{MockUpstream, Recorded, Reply, StreamEnd, StreamFeed};

use std::net::SocketAddr;

/// Stops a spawned mock server when dropped.
pub struct ServerGuard(tokio::task::JoinHandle<()>);

impl Drop for ServerGuard {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Serves `app` on `127.0.0.1:0` with TCP_NODELAY; returns the address and a guard.
pub async fn serve(app: axum::Router) -> (SocketAddr, ServerGuard) {
    use axum::serve::ListenerExt;
    // Binding loopback port 0 only fails when the machine has no loopback interface, in which
    // case no test here can run anyway.
    #[allow(clippy::expect_used)]
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1:0");
    #[allow(clippy::expect_used)]
    let addr = listener
        .local_addr()
        .expect("local address of a bound listener");
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (addr, ServerGuard(task))
}

//! Binding and serving: the loopback bind policy; TCP_NODELAY on every accepted socket; a
//! header read timeout (which also bounds idle keep-alive connections), a body read deadline and a cap on
//! connections, so a client that trickles bytes or hoards sockets cannot keep them forever;
//! and a graceful shutdown with a bound on how long in-flight streams may keep the process
//! alive, after which they end with an in-stream error.

use std::future::Future;
use std::net::IpAddr;
use std::time::Duration;

use std::sync::Arc;

use tokio::net::TcpListener;

use crate::body_deadline::Deadline;
use tokio::sync::Semaphore;

/// Why corvid refuses to bind an address.
#[derive(Debug, thiserror::Error)]
pub enum BindError {
    #[error(
        "refusing to listen on {host}: it is reachable from other machines. corvid has no auth of its own \
         on the local socket; set CORVID_ALLOW_REMOTE=1 (or pass --allow-remote) if you really mean it"
    )]
    NotLoopback { host: String },
}

/// Loopback hosts are always allowed; anything else (including `0.0.0.0` and `::`) only with
/// `allow_remote`.
pub fn check_bind_address(host: &str, allow_remote: bool) -> Result<(), BindError> {
    let trimmed = host.trim().trim_start_matches('[').trim_end_matches(']');
    let loopback = trimmed.eq_ignore_ascii_case("localhost")
        || trimmed.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback());
    if loopback || allow_remote {
        Ok(())
    } else {
        Err(BindError::NotLoopback {
            host: host.to_owned(),
        })
    }
}

/// Bounds on the connections [`serve`] keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServeLimits {
    /// How long a client may take to send a request's headers, counted from when the
    /// connection is ready for them — so it also closes a keep-alive connection that sits
    /// idle this long between requests, and one that trickles its headers (slowloris).
    pub header_read_timeout: Duration,
    /// How long a request's body may take to arrive, from when it is first waited for.
    pub body_read_timeout: Duration,
    /// Connections served at once; further ones wait in the kernel's accept queue.
    pub max_connections: usize,
}

impl Default for ServeLimits {
    fn default() -> Self {
        Self {
            header_read_timeout: Duration::from_secs(30),
            body_read_timeout: Duration::from_secs(60),
            max_connections: 1024,
        }
    }
}

/// What [`serve`] runs: the gateway's [`crate::App`], or a service wrapping it (corvid-server's,
/// which adds the web page in front of it) that passes the end of the grace on to it.
pub trait Served:
    tower::Service<
        axum::extract::Request,
        Response = axum::response::Response,
        Error = std::convert::Infallible,
    > + Clone
    + Send
    + 'static
{
    /// The grace is over: every body still streaming ends with an in-stream error.
    fn end_streams(&self);
}

impl Served for crate::App {
    fn end_streams(&self) {
        self.closing.close();
    }
}

/// [`serve_with`] with the default [`ServeLimits`].
pub async fn serve<S>(
    listener: TcpListener,
    app: S,
    shutdown: impl Future<Output = ()> + Send + 'static,
    grace: Duration,
) -> std::io::Result<()>
where
    S: Served,
    S::Future: Send + 'static,
{
    serve_with(listener, app, shutdown, grace, ServeLimits::default()).await
}

/// After the grace, how long the bodies still streaming get to send their error event.
const LAST_WORDS: Duration = Duration::from_secs(1);

/// Serves `app` on `listener` until `shutdown` resolves; then stops accepting, lets in-flight
/// requests finish for at most `grace`, ends the streams still running with an in-stream
/// error (their ledger rows are written as for any other end), and returns (dropping the
/// listener frees the port).
pub async fn serve_with<S>(
    listener: TcpListener,
    app: S,
    shutdown: impl Future<Output = ()> + Send + 'static,
    grace: Duration,
    limits: ServeLimits,
) -> std::io::Result<()>
where
    S: Served,
    S::Future: Send + 'static,
{
    // One signal, many listeners: the accept loop and every connection.
    let (signal, stopped) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        shutdown.await;
        let _ = signal.send(true);
    });
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    // Every connection holds a receiver; `closed()` resolves once all are gone.
    let (open, _) = tokio::sync::watch::channel(());
    let anchor = tokio::spawn(crate::anchor::hold());
    let mut stop = stopped.clone();
    loop {
        let slot = tokio::select! {
            slot = Arc::clone(&slots).acquire_owned() => match slot {
                Ok(slot) => slot,
                // The semaphore is never closed.
                Err(_) => break,
            },
            () = stopping(&mut stop) => break,
        };
        let tcp = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => tcp,
                Err(error) => {
                    accept_failed(&error).await;
                    continue;
                }
            },
            () = stopping(&mut stop) => break,
        };
        if let Err(error) = tcp.set_nodelay(true) {
            tracing::warn!(%error, "could not set TCP_NODELAY");
        }
        let service = {
            let app = app.clone();
            let body_limit = limits.body_read_timeout;
            hyper::service::service_fn(move |request: http::Request<hyper::body::Incoming>| {
                let request =
                    request.map(|body| axum::body::Body::new(Deadline::new(body, body_limit)));
                tower::ServiceExt::oneshot(app.clone(), request)
            })
        };
        // With upgrades: the page's WebSocket is an upgraded connection.
        let connection = http
            .serve_connection(hyper_util::rt::TokioIo::new(tcp), service)
            .with_upgrades();
        let mut stop = stopped.clone();
        let held = open.subscribe();
        tokio::spawn(async move {
            let _held = (slot, held);
            tokio::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => return,
                () = stopping(&mut stop) => {}
            }
            // Finish the request in flight, then close instead of keeping alive.
            connection.as_mut().graceful_shutdown();
            let _ = connection.await;
        });
    }
    drop(listener);
    tracing::info!("shutting down: no new connections; waiting for in-flight requests");
    if tokio::time::timeout(grace, open.closed()).await.is_err() {
        tracing::warn!(
            grace_s = grace.as_secs_f64(),
            "in-flight requests did not finish in time; ending them"
        );
        app.end_streams();
        let _ = tokio::time::timeout(LAST_WORDS, open.closed()).await;
    }
    anchor.abort();
    Ok(())
}

/// Resolves once the shutdown signal is given (never, if its sender is gone without one).
async fn stopping(stop: &mut tokio::sync::watch::Receiver<bool>) {
    let gone = stop.wait_for(|stop| *stop).await.is_err();
    if gone {
        std::future::pending::<()>().await;
    }
}

/// A failed `accept`: a connection that went away before it was accepted is nothing; running
/// out of file descriptors (or another lasting error) is logged and waited out a little, so
/// the loop does not spin.
async fn accept_failed(error: &std::io::Error) {
    use std::io::ErrorKind;
    if matches!(
        error.kind(),
        ErrorKind::ConnectionAborted | ErrorKind::ConnectionReset | ErrorKind::Interrupted
    ) {
        return;
    }
    tracing::warn!(%error, "could not accept a connection");
    tokio::time::sleep(Duration::from_millis(100)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bind_policy() {
        for host in ["127.0.0.1", "127.0.0.2", "localhost", "::1", "[::1]"] {
            assert!(check_bind_address(host, false).is_ok(), "{host}");
        }
        for host in ["0.0.0.0", "::", "192.168.1.2", "example.com"] {
            let error = check_bind_address(host, false).unwrap_err().to_string();
            assert!(error.contains("CORVID_ALLOW_REMOTE"), "{error}");
            assert!(
                check_bind_address(host, true).is_ok(),
                "{host} with allow_remote"
            );
        }
    }
}

//! Binding and serving: the loopback bind policy, TCP_NODELAY on every accepted socket, and a
//! graceful shutdown with a bound on how long in-flight streams may keep the process alive.

use std::future::Future;
use std::net::IpAddr;
use std::time::Duration;

use axum::serve::ListenerExt;
use tokio::net::TcpListener;

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

/// Serves `app` on `listener` until `shutdown` resolves; then stops accepting, lets in-flight
/// requests finish for at most `grace`, and returns (dropping the listener frees the port).
///
/// `app` is the gateway's [`crate::App`] or a service wrapping it (corvid-server's, which adds
/// the web page in front of it).
pub async fn serve<S>(
    listener: TcpListener,
    app: S,
    shutdown: impl Future<Output = ()> + Send + 'static,
    grace: Duration,
) -> std::io::Result<()>
where
    S: tower::Service<
            axum::extract::Request,
            Response = axum::response::Response,
            Error = std::convert::Infallible,
        > + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    let listener = listener.tap_io(|tcp| {
        if let Err(error) = tcp.set_nodelay(true) {
            tracing::warn!(%error, "could not set TCP_NODELAY");
        }
    });
    // One signal, two listeners: the server's graceful shutdown and the grace timer.
    let (signal, mut stopped) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        shutdown.await;
        let _ = signal.send(true);
    });
    let mut graceful_signal = stopped.clone();
    let server =
        axum::serve(listener, tower::make::Shared::new(app)).with_graceful_shutdown(async move {
            let _ = graceful_signal.wait_for(|stop| *stop).await;
            tracing::info!("shutting down: no new connections; waiting for in-flight requests");
        });
    let deadline = async move {
        if stopped.wait_for(|stop| *stop).await.is_err() {
            // The sender is gone without a signal: never fire.
            std::future::pending::<()>().await;
        }
        tokio::time::sleep(grace).await;
    };
    let anchor = tokio::spawn(crate::anchor::hold());
    let result = tokio::select! {
        result = server => result,
        () = deadline => {
            tracing::warn!(grace_s = grace.as_secs_f64(), "in-flight requests did not finish in time; closing them");
            Ok(())
        }
    };
    anchor.abort();
    result
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

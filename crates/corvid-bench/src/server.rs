//! The accept loop shared by the mock upstream and the floor proxy.

use std::convert::Infallible;
use std::error::Error as StdError;
use std::future::Future;
use std::time::Duration;

use http::{Request, Response};
use hyper::body::{Body, Incoming};
use hyper::server::conn::{http1, http2};
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::{TcpListener, TcpStream};

/// The streams one HTTP/2 connection to the mock may carry at once.
const MAX_STREAMS: u32 = 100_000;

/// Serves until the process ends: HTTP/1.1 with keep-alive, or with `tls` (an acceptor that
/// offers only `h2`) HTTP/2 over TLS — the shape of a real provider's endpoint, where one
/// connection carries many streams.
pub(crate) async fn serve<F, Fut, B>(
    listener: TcpListener,
    tls: Option<tokio_rustls::TlsAcceptor>,
    handler: F,
) -> anyhow::Result<()>
where
    F: Fn(Request<Incoming>) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = Result<Response<B>, Infallible>> + Send + 'static,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
{
    accept_each(listener, move |stream| {
        let handler = handler.clone();
        let tls = tls.clone();
        async move {
            // Errors here are clients hanging up mid-exchange (the load generator stops at a
            // deadline); there is nobody to tell.
            let Some(acceptor) = tls else {
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service_fn(handler))
                    .await;
                return;
            };
            let Ok(tls) = acceptor.accept(stream).await else {
                return;
            };
            // The stream limit is raised from hyper's 200 so that it never decides what the
            // bench measures (corvid's lanes open a connection per 100 streams in flight).
            let _ = http2::Builder::new(TokioExecutor::new())
                .max_concurrent_streams(MAX_STREAMS)
                .serve_connection(TokioIo::new(tls), service_fn(handler))
                .await;
        }
    })
    .await
}

/// Accepts connections until the process ends and runs `connection` on each, in a task of
/// its own. Every accepted socket gets TCP_NODELAY: without it a response written as headers
/// then body can sit ~40 ms waiting for the client's delayed ACK (Nagle), which would swamp
/// every figure the benchmark reports.
async fn accept_each<C, Fut>(listener: TcpListener, connection: C) -> anyhow::Result<()>
where
    C: Fn(TcpStream) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    loop {
        let (stream, _peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(err) => {
                // Usually EMFILE: back off briefly instead of spinning.
                eprintln!("accept failed: {err}");
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        if let Err(err) = stream.set_nodelay(true) {
            eprintln!("could not set TCP_NODELAY: {err}");
        }
        tokio::spawn(connection(stream));
    }
}

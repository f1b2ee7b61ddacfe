//! The accept loop shared by the mock upstream and the floor proxy.

use std::convert::Infallible;
use std::error::Error as StdError;
use std::future::Future;
use std::time::Duration;

use http::{Request, Response};
use hyper::body::{Body, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

/// Serves HTTP/1.1 with keep-alive until the process ends. Every accepted
/// socket gets TCP_NODELAY: without it a response written as headers then
/// body can sit ~40 ms waiting for the client's delayed ACK (Nagle), which
/// would swamp every figure the benchmark reports.
pub(crate) async fn serve<F, Fut, B>(listener: TcpListener, handler: F) -> anyhow::Result<()>
where
    F: Fn(Request<Incoming>) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = Result<Response<B>, Infallible>> + Send + 'static,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
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
        let handler = handler.clone();
        tokio::spawn(async move {
            // Errors here are clients hanging up mid-exchange (the load
            // generator stops at a deadline); there is nobody to tell.
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service_fn(handler))
                .await;
        });
    }
}

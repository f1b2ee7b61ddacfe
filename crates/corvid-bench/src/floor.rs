//! `corvid-bench floor-proxy`: the cheapest possible forwarding hop. It parses
//! nothing: request and response bodies stream straight through, and only
//! the authority changes. Whatever it costs is the physical floor of one hop.

use std::convert::Infallible;
use std::net::Ipv4Addr;
use std::sync::Arc;

use anyhow::Context as _;
use bytes::Bytes;
use http::header::HOST;
use http::uri::{Authority, Scheme};
use http::{Request, Response, StatusCode, Uri};
use http_body_util::{Either, Full};
use hyper::body::Incoming;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use tokio::net::TcpListener;

use crate::server;

type Upstream = Client<HttpConnector, Incoming>;
type FloorBody = Either<Incoming, Full<Bytes>>;

struct Target {
    scheme: Scheme,
    authority: Authority,
}

pub(crate) fn run(port: u16, upstream: &str, one_thread: bool) -> anyhow::Result<()> {
    crate::procs::exit_when_parent_exits();
    let upstream: Uri = upstream
        .parse()
        .with_context(|| format!("bad upstream {upstream}"))?;
    let target = Arc::new(Target {
        scheme: upstream.scheme().cloned().unwrap_or(Scheme::HTTP),
        authority: upstream
            .authority()
            .cloned()
            .context("upstream needs host:port")?,
    });
    // By default the shape of a typical gateway, one worker per core; with `one_thread` the
    // shape of `corvid serve`.
    let runtime = if one_thread {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?
    };
    runtime.block_on(async move {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await?;
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        // The legacy client keeps idle connections in a pool per authority.
        let client: Upstream = Client::builder(TokioExecutor::new()).build(connector);
        server::serve(listener, None, move |request| {
            let client = client.clone();
            let target = Arc::clone(&target);
            async move { Ok::<_, Infallible>(forward(&client, &target, request).await) }
        })
        .await
    })
}

async fn forward(
    client: &Upstream,
    target: &Target,
    request: Request<Incoming>,
) -> Response<FloorBody> {
    let (mut parts, body) = request.into_parts();
    let mut uri = parts.uri.into_parts();
    uri.scheme = Some(target.scheme.clone());
    uri.authority = Some(target.authority.clone());
    parts.uri = match Uri::from_parts(uri) {
        Ok(uri) => uri,
        Err(err) => return error(StatusCode::BAD_REQUEST, err.to_string()),
    };
    // The client fills Host from the new authority.
    parts.headers.remove(HOST);
    match client.request(Request::from_parts(parts, body)).await {
        Ok(response) => response.map(Either::Left),
        Err(err) => error(StatusCode::BAD_GATEWAY, format!("{err:#}")),
    }
}

fn error(status: StatusCode, message: String) -> Response<FloorBody> {
    let mut response = Response::new(Either::Right(Full::new(Bytes::from(message))));
    *response.status_mut() = status;
    response
}

//! How requests reach an upstream: a hyper client with a keep-alive pool, TLS by rustls with the
//! platform's certificate store, TCP_NODELAY, a connect timeout, and an idle timeout on
//! response headers and on every gap in the body (never a total deadline, which would cut long
//! streams). When a system proxy (`HTTPS_PROXY` and friends) applies to the upstream, requests
//! go through reqwest instead, which implements proxies, `NO_PROXY` and CONNECT tunnels.
//! Either way the caller gets an `http::Response<UpstreamBody>`.
//!
//! The direct client is several pooled clients, "lanes" (`lanes.rs`): hyper's pool keeps one
//! HTTP/2 connection per host and queues requests past the peer's concurrent-stream limit
//! rather than open a second one, so once a lane has 100 requests in flight (from sending
//! until the body ends or is dropped) the next goes to another lane, hence another connection.
//! A provider with fewer requests in flight keeps one client and one connection.

use std::error::Error as StdError;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use tokio::time::Sleep;

use lanes::{InFlight, Lanes};

mod lanes;
#[cfg(test)]
mod tests;

/// Any error from a body or a transport.
pub type BoxError = Box<dyn StdError + Send + Sync>;

/// A response body from any transport, with the idle timeout applied.
pub type UpstreamBody = http_body_util::combinators::UnsyncBoxBody<Bytes, BoxError>;

/// Why a request failed before a response arrived.
#[derive(Debug)]
pub(crate) enum SendError {
    Connect(BoxError),
    Timeout,
    Other(BoxError),
}

type HyperClient = Client<hyper_rustls::HttpsConnector<HttpConnector>, Full<Bytes>>;

/// The shared client for one set of timeouts. Cheap to clone: clones share the lanes (and so
/// the connections).
#[derive(Clone, Debug)]
pub struct Transport {
    kind: TransportKind,
    idle: Duration,
}

#[derive(Clone, Debug)]
enum TransportKind {
    Direct(Arc<Lanes>),
    Proxied(reqwest::Client),
}

/// The body the idle timer reported silent for too long.
#[derive(Debug, thiserror::Error)]
#[error("the upstream sent nothing for {0:?}")]
pub struct IdleTimeout(pub Duration);

impl Transport {
    /// A transport for `upstream_url`. `proxy_env` answers environment lookups (the process
    /// environment in production), so tests decide whether a proxy applies.
    pub fn new(
        connect_timeout: Duration,
        idle: Duration,
        upstream_url: &str,
        proxy_env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, BoxError> {
        if !proxy_applies(upstream_url, proxy_env) {
            let tls = tls_config()?;
            return Ok(Self::direct(
                connect_timeout,
                idle,
                tls,
                lanes::DEFAULT_LIMIT,
            ));
        }
        let client = reqwest::Client::builder()
            .connect_timeout(connect_timeout)
            .tcp_nodelay(true)
            .user_agent(USER_AGENT)
            .build()?;
        Ok(Self {
            kind: TransportKind::Proxied(client),
            idle,
        })
    }

    /// A direct transport: lanes of hyper clients with `tls`, at most `lane_limit` requests in
    /// flight per lane.
    fn direct(
        connect_timeout: Duration,
        idle: Duration,
        tls: rustls::ClientConfig,
        lane_limit: usize,
    ) -> Self {
        let lanes = Lanes::new(connect_timeout, tls, lane_limit);
        Self {
            kind: TransportKind::Direct(Arc::new(lanes)),
            idle,
        }
    }

    /// A direct transport trusting what `tls` trusts, with a lane limit of `lane_limit`: the
    /// same code as production's, with the test's certificate authority and a small limit.
    #[cfg(test)]
    pub(crate) fn direct_for_test(tls: rustls::ClientConfig, lane_limit: usize) -> Self {
        Self::direct(
            Duration::from_secs(5),
            Duration::from_secs(30),
            tls,
            lane_limit,
        )
    }

    /// The lanes of a direct transport.
    #[cfg(test)]
    fn lanes(&self) -> Option<&Lanes> {
        match &self.kind {
            TransportKind::Direct(lanes) => Some(lanes),
            TransportKind::Proxied(_) => None,
        }
    }

    /// Whether requests go through a system proxy.
    pub fn is_proxied(&self) -> bool {
        matches!(self.kind, TransportKind::Proxied(_))
    }

    /// Sends `request`; resolves when the response headers arrive. `deadline` bounds the whole
    /// exchange including the body (for short calls); otherwise only idle gaps are bounded.
    pub(crate) async fn send(
        &self,
        request: http::Request<Bytes>,
        deadline: Option<Duration>,
    ) -> Result<http::Response<UpstreamBody>, SendError> {
        let wait = deadline.unwrap_or(self.idle).min(self.idle);
        // The direct path's place on a lane: dropped with a failed send, else kept by the body.
        let mut in_flight = None;
        let response = match &self.kind {
            TransportKind::Direct(lanes) => {
                let lane = lanes.enter();
                let request = request.map(Full::new);
                let sent = tokio::time::timeout(wait, lane.client().request(request)).await;
                in_flight = Some(lane);
                match sent {
                    Err(_) => return Err(SendError::Timeout),
                    Ok(Err(error)) if error.is_connect() => {
                        return Err(SendError::Connect(Box::new(error)));
                    }
                    Ok(Err(error)) => return Err(SendError::Other(Box::new(error))),
                    Ok(Ok(response)) => {
                        response.map(|body| body.map_err(BoxError::from).boxed_unsync())
                    }
                }
            }
            TransportKind::Proxied(client) => {
                let request = reqwest::Request::try_from(request)
                    .map_err(|error| SendError::Other(Box::new(error)))?;
                match tokio::time::timeout(wait, client.execute(request)).await {
                    Err(_) => return Err(SendError::Timeout),
                    Ok(Err(error)) if error.is_connect() => {
                        return Err(SendError::Connect(Box::new(error)));
                    }
                    Ok(Err(error)) if error.is_timeout() => return Err(SendError::Timeout),
                    Ok(Err(error)) => return Err(SendError::Other(Box::new(error))),
                    Ok(Ok(response)) => http::Response::from(response)
                        .map(|body| body.map_err(BoxError::from).boxed_unsync()),
                }
            }
        };
        let total = deadline.map(|deadline| Box::pin(tokio::time::sleep(deadline)));
        Ok(response.map(|body| IdleBody::new(body, self.idle, total, in_flight).boxed_unsync()))
    }
}

const USER_AGENT: &str = concat!("corvid/", env!("CARGO_PKG_VERSION"));

/// One TLS configuration for every transport: the platform verifier and its certificate
/// store are loaded once per process, not once per provider.
fn tls_config() -> Result<rustls::ClientConfig, BoxError> {
    use rustls_platform_verifier::ConfigVerifierExt;
    static CONFIG: std::sync::OnceLock<rustls::ClientConfig> = std::sync::OnceLock::new();
    if let Some(config) = CONFIG.get() {
        return Ok(config.clone());
    }
    let config = rustls::ClientConfig::with_platform_verifier()?;
    Ok(CONFIG.get_or_init(|| config).clone())
}

/// One lane's client: HTTP/1 and HTTP/2 (by ALPN), its own keep-alive pool.
fn direct_client(connect_timeout: Duration, tls: rustls::ClientConfig) -> HyperClient {
    let mut http = HttpConnector::new();
    http.set_nodelay(true);
    http.set_connect_timeout(Some(connect_timeout));
    http.enforce_http(false);
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_or_http()
        .enable_http1()
        .enable_http2()
        .wrap_connector(http);
    Client::builder(TokioExecutor::new())
        .pool_idle_timeout(Duration::from_secs(90))
        .build(https)
}

/// Whether a system proxy variable is set and the upstream is not on loopback (reqwest then
/// applies `NO_PROXY` itself).
fn proxy_applies(upstream_url: &str, env: impl Fn(&str) -> Option<String>) -> bool {
    let is_loopback = url::Url::parse(upstream_url)
        .ok()
        .and_then(|url| url.host().map(|host| host.to_owned()))
        .is_some_and(|host| match host {
            url::Host::Domain(name) => name.eq_ignore_ascii_case("localhost"),
            url::Host::Ipv4(ip) => ip.is_loopback(),
            url::Host::Ipv6(ip) => ip.is_loopback(),
        });
    let https = upstream_url.starts_with("https://");
    let names: &[&str] = if https {
        &["HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"]
    } else {
        &["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"]
    };
    !is_loopback
        && names
            .iter()
            .any(|name| env(name).is_some_and(|value| !value.trim().is_empty()))
}

/// A body that fails when the upstream goes quiet for `idle`, or when an optional total
/// deadline passes. The idle timer is armed only while waiting: a body whose bytes are already
/// there (most non-streamed replies) never touches the timer wheel.
struct IdleBody {
    inner: UpstreamBody,
    idle: Duration,
    timer: Option<Pin<Box<Sleep>>>,
    /// The timer was set for the current wait.
    armed: bool,
    total: Option<Pin<Box<Sleep>>>,
    /// The request's place on its lane (direct transport only): its HTTP/2 stream is open
    /// until the body ends or is dropped, so the place is held as long.
    in_flight: Option<InFlight>,
}

impl IdleBody {
    fn new(
        inner: UpstreamBody,
        idle: Duration,
        total: Option<Pin<Box<Sleep>>>,
        in_flight: Option<InFlight>,
    ) -> Self {
        Self {
            inner,
            idle,
            timer: None,
            armed: false,
            total,
            in_flight,
        }
    }
}

impl Body for IdleBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = self.get_mut();
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            // Progress: the next wait starts a fresh idle period.
            this.armed = false;
            if !matches!(frame, Some(Ok(_))) {
                // The end or a failure: the stream is over, even if the body is kept.
                this.in_flight = None;
            }
            return Poll::Ready(frame);
        }
        if !this.armed {
            let deadline = tokio::time::Instant::now() + this.idle;
            match &mut this.timer {
                Some(timer) => timer.as_mut().reset(deadline),
                None => this.timer = Some(Box::pin(tokio::time::sleep_until(deadline))),
            }
            this.armed = true;
        }
        if let Some(timer) = &mut this.timer
            && timer.as_mut().poll(cx).is_ready()
        {
            return Poll::Ready(Some(Err(Box::new(IdleTimeout(this.idle)))));
        }
        if let Some(total) = &mut this.total
            && total.as_mut().poll(cx).is_ready()
        {
            return Poll::Ready(Some(Err(Box::new(IdleTimeout(this.idle)))));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

use std::future::Future as _;

/// Whether `error` (from a body or a send) is an idle or deadline timeout.
pub fn is_timeout(error: &(dyn StdError + 'static)) -> bool {
    let mut current: Option<&(dyn StdError + 'static)> = Some(error);
    while let Some(error) = current {
        if error.is::<IdleTimeout>() {
            return true;
        }
        if let Some(reqwest_error) = error.downcast_ref::<reqwest::Error>()
            && reqwest_error.is_timeout()
        {
            return true;
        }
        current = error.source();
    }
    false
}

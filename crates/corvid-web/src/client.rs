//! One HTTP/1.1 request, from URL to capped body: the guard checks the URL, the name is resolved
//! once, every address is checked, the connection goes to a checked address (TLS by rustls with
//! the platform's certificates), and at most `max_body` bytes are read. No proxy, no cookies, no
//! redirects (the caller follows them, checking each hop), no compression (`identity` only, so
//! the byte cap is the real size).

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use http::header::{ACCEPT_ENCODING, CONNECTION, HOST, USER_AGENT};
use http::{HeaderMap, HeaderValue, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use url::{Host, Url};

use crate::guard::{Guard, Refusal, Target};
use crate::net::Network;

/// What corvid calls itself on the web.
pub(crate) const AGENT: &str = concat!("corvid/", env!("CARGO_PKG_VERSION"), " (web_fetch)");

/// Why a request got no response. The text is for the model.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// The guard said no.
    #[error("refused: {0}")]
    Refused(#[from] Refusal),
    /// The name did not resolve.
    #[error("could not resolve {host}: {message}")]
    Lookup {
        /// The host.
        host: String,
        /// The resolver's words.
        message: String,
    },
    /// No address accepted a connection.
    #[error("could not connect to {host}: {message}")]
    Connect {
        /// The host.
        host: String,
        /// The last attempt's error.
        message: String,
    },
    /// The TLS handshake failed (an invalid certificate, no common protocol).
    #[error("TLS with {host} failed: {message}")]
    Tls {
        /// The host.
        host: String,
        /// Why.
        message: String,
    },
    /// The server broke the HTTP exchange.
    #[error("the HTTP exchange with {host} failed: {message}")]
    Protocol {
        /// The host.
        host: String,
        /// Why.
        message: String,
    },
}

/// A response: status, headers and at most the capped number of body bytes.
#[derive(Debug)]
pub(crate) struct Reply {
    /// The status.
    pub(crate) status: StatusCode,
    /// The headers.
    pub(crate) headers: HeaderMap,
    /// The body bytes read.
    pub(crate) body: Vec<u8>,
    /// True when the body was longer than the cap and reading stopped.
    pub(crate) truncated: bool,
}

/// Sends requests through the guard.
#[derive(Debug)]
pub(crate) struct Client {
    guard: Guard,
    network: Arc<dyn Network>,
    connect_timeout: Duration,
    tls: OnceLock<Arc<rustls::ClientConfig>>,
}

/// One request to send.
#[derive(Debug)]
pub(crate) struct Outgoing<'a> {
    /// `GET` or `POST`.
    pub(crate) method: Method,
    /// Where.
    pub(crate) url: &'a Url,
    /// Extra headers (`Accept`, an API key).
    pub(crate) headers: HeaderMap,
    /// The body of a `POST`.
    pub(crate) body: Bytes,
    /// The most body bytes read.
    pub(crate) max_body: usize,
}

impl Client {
    /// A client that connects only where `guard` allows, through `network`.
    pub(crate) fn new(guard: Guard, network: Arc<dyn Network>, connect_timeout: Duration) -> Self {
        Self {
            guard,
            network,
            connect_timeout,
            tls: OnceLock::new(),
        }
    }

    /// Sends one request and reads the response, body capped.
    pub(crate) async fn send(&self, outgoing: Outgoing<'_>) -> Result<Reply, RequestError> {
        let url = outgoing.url;
        let host = url.host_str().unwrap_or_default().to_owned();
        let addresses = self.resolve(url).await?;
        let port = url.port_or_known_default().unwrap_or(80);
        let stream = self.connect(&host, &addresses, port).await?;
        if url.scheme() == "https" {
            let tls = self.tls(&host)?;
            let name = server_name(url).ok_or_else(|| RequestError::Tls {
                host: host.clone(),
                message: "the host is not a valid TLS server name".to_owned(),
            })?;
            let stream = tokio_rustls::TlsConnector::from(tls)
                .connect(name, stream)
                .await
                .map_err(|error| RequestError::Tls {
                    host: host.clone(),
                    message: error.to_string(),
                })?;
            exchange(stream, &host, outgoing).await
        } else {
            exchange(stream, &host, outgoing).await
        }
    }

    /// The checked addresses of the URL's host: the literal, or every address of the name.
    async fn resolve(&self, url: &Url) -> Result<Vec<IpAddr>, RequestError> {
        match self.guard.check_url(url)? {
            Target::Address(address) => Ok(vec![address]),
            Target::Name(name) => {
                let addresses =
                    self.network
                        .lookup(&name)
                        .await
                        .map_err(|error| RequestError::Lookup {
                            host: name.clone(),
                            message: error.to_string(),
                        })?;
                if addresses.is_empty() {
                    return Err(RequestError::Lookup {
                        host: name,
                        message: "no address".to_owned(),
                    });
                }
                self.guard.check_resolved(&name, &addresses)?;
                Ok(addresses)
            }
        }
    }

    async fn connect(
        &self,
        host: &str,
        addresses: &[IpAddr],
        port: u16,
    ) -> Result<TcpStream, RequestError> {
        let mut last = String::from("no address");
        for address in addresses {
            let attempt = self.network.connect(SocketAddr::new(*address, port));
            match tokio::time::timeout(self.connect_timeout, attempt).await {
                Ok(Ok(stream)) => return Ok(stream),
                Ok(Err(error)) => last = format!("{address}: {error}"),
                Err(_) => last = format!("{address}: no answer in {:?}", self.connect_timeout),
            }
        }
        Err(RequestError::Connect {
            host: host.to_owned(),
            message: last,
        })
    }

    /// The TLS configuration, built on the first https request (the platform's certificate
    /// store is read once).
    fn tls(&self, host: &str) -> Result<Arc<rustls::ClientConfig>, RequestError> {
        if let Some(config) = self.tls.get() {
            return Ok(config.clone());
        }
        use rustls_platform_verifier::ConfigVerifierExt;
        let mut config =
            rustls::ClientConfig::with_platform_verifier().map_err(|error| RequestError::Tls {
                host: host.to_owned(),
                message: format!("no certificate store: {error}"),
            })?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(self.tls.get_or_init(|| Arc::new(config)).clone())
    }
}

fn server_name(url: &Url) -> Option<rustls::pki_types::ServerName<'static>> {
    use rustls::pki_types::ServerName;
    match url.host()? {
        Host::Domain(name) => ServerName::try_from(name.trim_end_matches('.').to_owned()).ok(),
        Host::Ipv4(address) => Some(ServerName::IpAddress(IpAddr::V4(address).into())),
        Host::Ipv6(address) => Some(ServerName::IpAddress(IpAddr::V6(address).into())),
    }
}

/// The request line's target: path and query, never the fragment.
fn target(url: &Url) -> String {
    match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_owned(),
    }
}

/// The `Host` header: the host, with the port when it is not the scheme's default.
fn host_header(url: &Url) -> String {
    let host = url.host_str().unwrap_or_default();
    match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    }
}

async fn exchange<S>(io: S, host: &str, outgoing: Outgoing<'_>) -> Result<Reply, RequestError>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let protocol = |message: String| RequestError::Protocol {
        host: host.to_owned(),
        message,
    };
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake::<_, Full<Bytes>>(TokioIo::new(io))
            .await
            .map_err(|error| protocol(error.to_string()))?;
    // The connection is driven beside the request and stopped when the reply is read.
    let driver = tokio::spawn(connection);
    let result = async {
        let mut request = Request::builder()
            .method(outgoing.method)
            .uri(target(outgoing.url))
            .body(Full::new(outgoing.body))
            .map_err(|error| protocol(error.to_string()))?;
        let headers = request.headers_mut();
        let host_value = HeaderValue::from_str(&host_header(outgoing.url))
            .map_err(|error| protocol(error.to_string()))?;
        headers.insert(HOST, host_value);
        headers.insert(USER_AGENT, HeaderValue::from_static(AGENT));
        headers.insert(ACCEPT_ENCODING, HeaderValue::from_static("identity"));
        headers.insert(CONNECTION, HeaderValue::from_static("close"));
        headers.extend(outgoing.headers);
        let response = sender
            .send_request(request)
            .await
            .map_err(|error| protocol(error.to_string()))?;
        let (head, mut body) = response.into_parts();
        let mut collected = Vec::new();
        let mut truncated = false;
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|error| protocol(error.to_string()))?;
            let Ok(data) = frame.into_data() else {
                continue;
            };
            let room = outgoing.max_body - collected.len();
            if data.len() > room {
                collected.extend_from_slice(&data[..room]);
                truncated = true;
                break;
            }
            collected.extend_from_slice(&data);
        }
        Ok(Reply {
            status: head.status,
            headers: head.headers,
            body: collected,
            truncated,
        })
    }
    .await;
    driver.abort();
    result
}

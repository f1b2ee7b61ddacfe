//! A small HTTP/1.1 server on a loopback address that answers from a route function and
//! records every request, and a `Network` that resolves made-up names from a table, records
//! every lookup and connection, and connects only to loopback addresses.

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use corvid_web::net::{Network, Pending};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A request as the server saw it.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    pub(crate) method: String,
    pub(crate) target: String,
    pub(crate) headers: HashMap<String, String>,
    pub(crate) body: Vec<u8>,
}

/// What a route answers.
pub(crate) enum Answer {
    /// These bytes, then close.
    Raw(Vec<u8>),
    /// Nothing, ever (the connection stays open).
    Hang,
}

/// A full response with a `Content-Length`.
pub(crate) fn respond(status: &str, headers: &[(&str, &str)], body: impl AsRef<[u8]>) -> Answer {
    let body = body.as_ref();
    let mut head = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body);
    Answer::Raw(bytes)
}

/// A page with a content type.
pub(crate) fn page(content_type: &str, body: impl AsRef<[u8]>) -> Answer {
    respond("200 OK", &[("Content-Type", content_type)], body)
}

/// A redirect.
pub(crate) fn redirect(status: &str, location: &str) -> Answer {
    respond(status, &[("Location", location)], "")
}

type Route = dyn Fn(&Seen) -> Answer + Send + Sync;

/// The server.
pub(crate) struct Server {
    pub(crate) address: SocketAddr,
    connections: Arc<AtomicUsize>,
    seen: Arc<Mutex<Vec<Seen>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Server {
    /// Listens on `ip` (a loopback address), port chosen by the kernel.
    pub(crate) async fn start(
        ip: &str,
        route: impl Fn(&Seen) -> Answer + Send + Sync + 'static,
    ) -> Self {
        let listener = TcpListener::bind((ip.parse::<IpAddr>().unwrap(), 0))
            .await
            .unwrap();
        let address = listener.local_addr().unwrap();
        assert!(address.ip().is_loopback());
        let connections = Arc::new(AtomicUsize::new(0));
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let route: Arc<Route> = Arc::new(route);
        let task = tokio::spawn({
            let connections = Arc::clone(&connections);
            let seen = Arc::clone(&seen);
            async move {
                while let Ok((stream, _)) = listener.accept().await {
                    connections.fetch_add(1, Ordering::SeqCst);
                    let seen = Arc::clone(&seen);
                    let route = Arc::clone(&route);
                    tokio::spawn(async move {
                        let _ = serve(stream, seen, route).await;
                    });
                }
            }
        });
        Self {
            address,
            connections,
            seen,
            task,
        }
    }

    /// `http://<address><path>`.
    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.address)
    }

    /// Connections accepted so far.
    pub(crate) fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    /// Requests read so far.
    pub(crate) fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(
    mut stream: TcpStream,
    seen: Arc<Mutex<Vec<Seen>>>,
    route: Arc<Route>,
) -> io::Result<()> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        let read = stream.read(&mut chunk).await?;
        if read == 0 {
            return Ok(());
        }
        buffer.extend_from_slice(&chunk[..read]);
        if let Some(at) = buffer.windows(4).position(|window| window == b"\r\n\r\n") {
            break at + 4;
        }
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next().unwrap_or_default().split(' ');
    let method = request_line.next().unwrap_or_default().to_owned();
    let target = request_line.next().unwrap_or_default().to_owned();
    let headers: HashMap<String, String> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let length: usize = headers
        .get("content-length")
        .and_then(|value| value.parse().ok())
        .unwrap_or(0);
    let mut body = buffer[head_end..].to_vec();
    while body.len() < length {
        let read = stream.read(&mut chunk).await?;
        if read == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..read]);
    }
    let request = Seen {
        method,
        target,
        headers,
        body,
    };
    seen.lock().unwrap().push(request.clone());
    match route(&request) {
        Answer::Raw(bytes) => {
            stream.write_all(&bytes).await?;
            stream.shutdown().await
        }
        Answer::Hang => {
            std::future::pending::<()>().await;
            Ok(())
        }
    }
}

/// Names from a table, connections to loopback only, everything recorded.
#[derive(Debug, Default)]
pub(crate) struct TestNetwork {
    names: HashMap<String, Vec<IpAddr>>,
    pub(crate) lookups: Mutex<Vec<String>>,
    pub(crate) connects: Mutex<Vec<SocketAddr>>,
}

impl TestNetwork {
    /// `name` resolves to `addresses`.
    pub(crate) fn with(mut self, name: &str, addresses: &[&str]) -> Self {
        self.names.insert(
            name.to_owned(),
            addresses
                .iter()
                .map(|address| address.parse().unwrap())
                .collect(),
        );
        self
    }

    pub(crate) fn lookups(&self) -> Vec<String> {
        self.lookups.lock().unwrap().clone()
    }

    pub(crate) fn connects(&self) -> Vec<SocketAddr> {
        self.connects.lock().unwrap().clone()
    }
}

impl Network for TestNetwork {
    fn lookup<'a>(&'a self, host: &'a str) -> Pending<'a, Vec<IpAddr>> {
        Box::pin(async move {
            self.lookups.lock().unwrap().push(host.to_owned());
            self.names
                .get(host)
                .cloned()
                .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no such test name"))
        })
    }

    fn connect(&self, address: SocketAddr) -> Pending<'_, TcpStream> {
        Box::pin(async move {
            self.connects.lock().unwrap().push(address);
            if !address.ip().to_canonical().is_loopback() {
                return Err(io::Error::other(format!(
                    "the test network connects only to loopback, not {address}"
                )));
            }
            TcpStream::connect(address).await
        })
    }
}

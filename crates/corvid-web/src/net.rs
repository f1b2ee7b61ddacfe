//! The two network operations a fetch needs — resolve a name, open a TCP connection to one
//! address — behind a trait, so the fetcher connects only to addresses it has checked and tests
//! can resolve made-up names and see every connection attempt without touching the network.

use std::fmt;
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;

use tokio::net::TcpStream;

/// A boxed future, so the trait stays object-safe.
pub type Pending<'a, T> = Pin<Box<dyn Future<Output = io::Result<T>> + Send + 'a>>;

/// Name resolution and TCP connections.
pub trait Network: Send + Sync + fmt::Debug {
    /// The addresses of `host` (a name, never an address literal).
    fn lookup<'a>(&'a self, host: &'a str) -> Pending<'a, Vec<IpAddr>>;
    /// A TCP connection to exactly `address`.
    fn connect(&self, address: SocketAddr) -> Pending<'_, TcpStream>;
}

/// The operating system's resolver and sockets.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemNetwork;

impl Network for SystemNetwork {
    fn lookup<'a>(&'a self, host: &'a str) -> Pending<'a, Vec<IpAddr>> {
        Box::pin(async move {
            let mut addresses: Vec<IpAddr> = tokio::net::lookup_host((host, 0))
                .await?
                .map(|address| address.ip())
                .collect();
            addresses.dedup();
            Ok(addresses)
        })
    }

    fn connect(&self, address: SocketAddr) -> Pending<'_, TcpStream> {
        Box::pin(async move {
            let stream = TcpStream::connect(address).await?;
            stream.set_nodelay(true)?;
            Ok(stream)
        })
    }
}
